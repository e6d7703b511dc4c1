"""The order of a plan's steps (DESIGN.md §7): operations in topological order, and the groups of
Applications of one operation that may run at the same time.

An operation runs after every operation writing a tensor it reads; document order breaks ties
(one rule for the executor and the cost model: :mod:`geon.core.order`). In a sharded plan an
operation with Applications contributes one unit per Application, in document order;
consecutive Applications of one operation writing pairwise disjoint regions form a *group* that
may run concurrently.

>>> from geon.core.zspace import ZRange
>>> disjoint([ZRange([0], [4]), ZRange([4], [8])]), disjoint([ZRange([0], [5]), ZRange([4], [8])])
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence

from geon.core.errors import ExecutionError, quote
from geon.core.graph import Node
from geon.core.nodes import selected_tensor_ids
from geon.core.order import run_order
from geon.core.zspace import ZRange
from geon.execute.regions import Unit

__all__ = ["concurrent_groups", "disjoint", "topological"]


def topological(ops: list[Node]) -> list[Node]:
    """``ops`` in run order (:func:`geon.core.order.run_order`); an operation reading its own
    output or a cycle is refused."""
    for op in ops:
        written = selected_tensor_ids(op.body, "outputs")
        for tid in (t for t in selected_tensor_ids(op.body, "inputs") if t in written):
            raise ExecutionError(
                f"operation {quote(op.id)} reads tensor {quote(tid)} that it "
                "writes; write the result to a new tensor"
            )
    order, stuck = run_order(ops)
    if stuck:
        raise ExecutionError(
            f"operations ({', '.join(quote(op.id) for op in stuck)}) wait on each other (a "
            "cycle); remove the cycle (geon check reports NoTensorOperationCycles)"
        )
    return order


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
