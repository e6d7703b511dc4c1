"""CPython's cyclic garbage collector paused over a burst of allocations (costing a plan,
writing one into a document): :func:`collector_paused`.

Costing or writing a 1,000-operation plan allocates tens of thousands of small containers (a
box, a selection, an Application body per shard), none of them in a cycle, and each burst makes
the collector walk every object the process holds, the document included: a third to a half of
the time (``benchmarks/bench_cost.py``). The pause is process-wide, so another thread's cycles
wait until the work is done; the collector is restored as it was (a nested pause leaves it off).

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

__all__ = ["collector_paused"]


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
