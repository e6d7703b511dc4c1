"""The run order of a document's operations (DESIGN.md §7): one rule, used by the executor's
schedule (:mod:`geon.execute.schedule`) and by the cost model (:mod:`geon.core.plans.cost`).

An operation runs after every other operation writing a tensor it reads. The order is made of
*waves*: first the operations that wait on none, then those whose writers are all in earlier
waves, and so on; inside a wave, the order given (document order) breaks ties. Operations in a
cycle, and those after one, never become ready: they are returned apart (the checker reports
NoTensorOperationCycles). An operation reading its own output does not wait on itself.

>>> from geon.core.nodes import Node
>>> def op(name, reads, writes):
...     sel = lambda ids: {"x": [{"tensorId": t} for t in ids]}
...     return Node(name, "Operation", None, {"inputs": sel(reads), "outputs": sel(writes)})
>>> order, stuck = run_order([op("b", ["t"], ["u"]), op("a", [], ["t"]), op("c", [], ["v"])])
>>> [o.id for o in order], stuck
(['a', 'c', 'b'], [])
"""

from __future__ import annotations

from collections.abc import Sequence

from geon.core.nodes import Node, selected_tensor_ids

__all__ = ["run_order"]


def run_order(ops: Sequence[Node]) -> tuple[list[Node], list[Node]]:
    """``ops`` in run order, and the operations left waiting (in a cycle or after one), each in
    the order given (see the module docstring)."""
    writers: dict[str, list[int]] = {}
    for n, op in enumerate(ops):
        for tid in selected_tensor_ids(op.body, "outputs"):
            writers.setdefault(tid, []).append(n)
    waiting = [0] * len(ops)
    followers: list[list[int]] = [[] for _ in ops]
    for n, op in enumerate(ops):
        before = {w for t in selected_tensor_ids(op.body, "inputs") for w in writers.get(t, ())}
        before.discard(n)
        waiting[n] = len(before)
        for w in before:
            followers[w].append(n)
    wave = [n for n in range(len(ops)) if waiting[n] == 0]
    order: list[int] = []
    while wave:
        order.extend(wave)
        ready = []
        for n in wave:
            for f in followers[n]:
                waiting[f] -= 1
                if waiting[f] == 0:
                    ready.append(f)
        wave = sorted(ready)
    placed = set(order)
    return [ops[n] for n in order], [op for n, op in enumerate(ops) if n not in placed]
