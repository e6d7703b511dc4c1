"""The order of a plan's steps (DESIGN.md §7): operations in topological order, and the groups of
Applications of one operation that may run at the same time.

An operation runs after every operation writing a tensor it reads; document order breaks ties.
In a sharded plan an operation with Applications contributes one unit per Application, in
document order; consecutive Applications of one operation writing pairwise disjoint regions form
a *group* that may run concurrently.

>>> from geon.core.zspace import ZRange
>>> disjoint([ZRange([0], [4]), ZRange([4], [8])]), disjoint([ZRange([0], [5]), ZRange([4], [8])])
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence

from geon.core.errors import ExecutionError, quote
from geon.core.graph import Node, iter_selections
from geon.core.zspace import ZRange
from geon.execute.regions import Unit

__all__ = ["concurrent_groups", "disjoint", "topological"]


def topological(ops: list[Node]) -> list[Node]:
    """``ops`` so that each runs after the operations writing what it reads (document order
    breaks ties); an operation reading its own output or a cycle is refused."""
    writers: dict[str, list[int]] = {}
    for n, op in enumerate(ops):
        for sel in iter_selections(op.body, ("outputs",)):
            writers.setdefault(str(sel.tensor_id), []).append(n)
    after: list[set[int]] = [set() for _ in ops]
    for n, op in enumerate(ops):
        for sel in iter_selections(op.body, ("inputs",)):
            after[n].update(w for w in writers.get(str(sel.tensor_id), ()) if w != n)
        for sel in iter_selections(op.body, ("inputs",)):
            if sel.tensor_id in writers and n in writers[str(sel.tensor_id)]:
                raise ExecutionError(
                    f"operation {quote(op.id)} reads tensor {quote(sel.tensor_id)} that it "
                    "writes; write the result to a new tensor"
                )
    order: list[int] = []
    done: set[int] = set()
    while len(order) < len(ops):
        ready = [n for n in range(len(ops)) if n not in done and after[n] <= done]
        if not ready:
            stuck = [ops[n].id for n in range(len(ops)) if n not in done]
            raise ExecutionError(
                f"operations ({', '.join(quote(i) for i in stuck)}) wait on each other (a "
                "cycle); remove the cycle (geon check reports NoTensorOperationCycles)"
            )
        for n in ready:
            order.append(n)
            done.add(n)
    return [ops[n] for n in order]


def concurrent_groups(units: Sequence[Unit]) -> list[tuple[int, int]]:
    """The ``[first, stop)`` runs of two or more consecutive Applications of one operation
    whose output regions are pairwise disjoint: they may run concurrently. (A graph whose
    Applications overlap has error issues and is refused before it runs; were one to get here,
    its Applications would run one after another.)"""
    out: list[tuple[int, int]] = []
    n = 0
    while n < len(units):
        u = units[n]
        stop = n + 1
        while (
            u.app is not None
            and stop < len(units)
            and units[stop].op is u.op
            and units[stop].app is not None
        ):
            stop += 1
        if stop - n > 1 and disjoint([units[k].out[1] for k in range(n, stop)]):
            out.append((n, stop))
        n = stop
    return out


def disjoint(regions: Sequence[ZRange]) -> bool:
    """Whether no two of ``regions`` share a cell."""
    return not any(
        r.intersection(other) is not None for n, r in enumerate(regions) for other in regions[:n]
    )
