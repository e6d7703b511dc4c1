"""CPython's cyclic garbage collector paused over a burst of allocations (costing a plan,
writing one into a document): :func:`collector_paused`; and tuned for processes that load
documents: :func:`tune_for_documents`.

Costing or writing a 1,000-operation plan allocates tens of thousands of small containers (a
box, a selection, an Application body per shard), none of them in a cycle, and each burst makes
the collector walk every object the process holds, the document included: a third to a half of
the time (``benchmarks/bench_cost.py``). The pause is process-wide, so another thread's cycles
wait until the work is done; the collector is restored as it was (a nested pause leaves it off).
Both are needed: in a tuned Django process the plan-cost request of a 1,000-operation plan takes
1.16-1.25 s without the pauses and 0.91-0.99 s with them (``benchmarks/bench_cost.py --rest``).

>>> import gc
>>> with collector_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["THRESHOLDS", "collector_paused", "tune_for_documents"]

THRESHOLDS = (10_000, 10, 10)
"""The collector's generation thresholds in a process that loads documents (CPython's default
is ``(700, 10, 10)``)."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block (or the decorated call)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def tune_for_documents() -> None:
    """For the web, realtime and worker processes and the CLI: what is loaded so far (modules,
    settings) leaves the collector's generations (``gc.freeze``), and the youngest generation is
    collected after :data:`THRESHOLDS` ``[0]`` allocations rather than 700. A document is parsed
    into hundreds of thousands of dicts and lists, none in a cycle; at 700 the collector walks
    them again and again. Measured on a 1,000-operation, 8,000-Application document (11 MB):
    ``json.loads`` 294 -> 119 ms, the full check 629 -> 371 ms (0.063 s and 0.343 s with the
    collector off). Cycles are still collected, only less often."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
