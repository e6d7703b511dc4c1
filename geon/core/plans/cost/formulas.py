"""The time of one collective (DESIGN.md §9, issue 16 item 4): ring formulas, the nccl-tests
convention, for ``n`` devices on a link of ``bandwidth`` bytes/s (one direction) and ``latency``
seconds per step, moving a logical tensor region of ``bytes``:

- ``all-gather``, ``reduce-scatter``: ``(n-1)·latency + (n-1)/n · bytes/bandwidth``
- ``all-reduce``: twice that (a reduce-scatter, then an all-gather)
- ``all-to-all``: ``(n-1)·latency + (n-1)/n² · bytes/bandwidth``
- ``permute``, ``send``: ``latency + bytes/bandwidth``

>>> link = Link(bandwidth=1e9, latency=1e-6)
>>> collective_seconds("all-gather", 4, 4e9, link)
3.000003
>>> collective_seconds("all-reduce", 4, 4e9, link), collective_seconds("all-to-all", 4, 4e9, link)
(6.000006, 0.750003)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from geon.core.errors import GeonError, quote
from geon.core.plans.cost.profiles import Link

__all__ = ["KINDS", "Kind", "collective_seconds", "slowest_link"]

Kind = Literal["all-gather", "reduce-scatter", "all-reduce", "all-to-all", "permute", "send"]
KINDS: tuple[Kind, ...] = get_args(Kind)


def collective_seconds(kind: Kind, n: int, nbytes: float, link: Link) -> float:
    """Seconds of one collective of ``kind`` over ``n`` devices moving ``nbytes`` (see the module
    docstring); a collective over one device takes no time, except a permute or send."""
    if kind in ("permute", "send"):
        return link.latency + nbytes / link.bandwidth
    if kind not in KINDS:
        raise GeonError(f"collective kind {quote(kind)} is unknown; expected one of {KINDS}")
    if n <= 1:
        return 0.0
    if kind == "all-to-all":
        return (n - 1) * link.latency + (n - 1) / (n * n) * nbytes / link.bandwidth
    ring = (n - 1) * link.latency + (n - 1) / n * nbytes / link.bandwidth
    return 2 * ring if kind == "all-reduce" else ring


def slowest_link(links: Iterable[Link]) -> Link:
    """One link as slow as the slowest of ``links``: the least bandwidth, the largest latency
    (a collective over several mesh axes waits for its slowest hop).

    >>> slowest_link([Link(2e9, 1e-6), Link(1e9, 5e-7)])
    Link(bandwidth=1000000000.0, latency=1e-06)
    """
    chosen = list(links)
    return Link(min(x.bandwidth for x in chosen), max(x.latency for x in chosen))
