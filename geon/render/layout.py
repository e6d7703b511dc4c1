"""How a diagram is arranged (DESIGN.md §7): the direction of the data flow and which
Applications sit in which operation's cluster, in what order.

Data flows left to right, or top to bottom when the longest chain has more than
:data:`MAX_LR_DEPTH` operations (a wide strip reads badly). An operation's Applications are
drawn in index order (those without a readable ``IPFIndex`` last, as they come); an Application
whose operation does not exist is drawn on its own.

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> graph = Graph.from_json(json.loads(text))
>>> depth(graph), rank_direction(graph)
(1, 'LR')
"""

from __future__ import annotations

from geon.core.graph import APPLICATION, IPF_INDEX, OPERATION, Graph, Node, iter_selections
from geon.core.zspace import parse_range

__all__ = ["MAX_LR_DEPTH", "applications_by_operation", "depth", "rank_direction"]

MAX_LR_DEPTH = 4
"""Graphs whose longest chain has more operations than this are laid out top to bottom."""


def rank_direction(graph: Graph) -> str:
    """Graphviz's ``rankdir``: ``"LR"``, or ``"TB"`` for chains longer than
    :data:`MAX_LR_DEPTH`."""
    return "TB" if depth(graph) > MAX_LR_DEPTH else "LR"


def depth(graph: Graph) -> int:
    """The number of operations on the longest tensor -> operation -> tensor path (cycles are
    cut where they close; the checker reports them)."""
    ops = graph.of_type(OPERATION)
    producers: dict[str, list[str]] = {}
    reads: dict[str, list[str]] = {}
    for op in ops:
        reads[op.id] = []
        for sel in iter_selections(op.body):
            if isinstance(sel.tensor_id, str):
                if sel.side == "outputs":
                    producers.setdefault(sel.tensor_id, []).append(op.id)
                else:
                    reads[op.id].append(sel.tensor_id)
    found: dict[str, int] = {}
    for root in reads:
        stack = [(root, False)]
        on_path: set[str] = set()
        while stack:
            op_id, done = stack.pop()
            if done:
                on_path.discard(op_id)
                before = [found.get(p, 0) for t in reads[op_id] for p in producers.get(t, ())]
                found[op_id] = 1 + max(before, default=0)
                continue
            if op_id in found or op_id in on_path:
                continue
            on_path.add(op_id)
            stack.append((op_id, True))
            for t in reads[op_id]:
                stack.extend((p, False) for p in producers.get(t, ()) if p not in found)
    return max(found.values(), default=0)


def applications_by_operation(graph: Graph) -> tuple[dict[str, list[Node]], list[Node]]:
    """The Applications of each operation (by id) in index order, and the Applications whose
    operation does not exist (in document order)."""
    apps_of: dict[str, list[Node]] = {}
    loose: list[Node] = []
    for node in graph.of_type(APPLICATION):
        op_id = node.body.get("operationId")
        op = graph.get(op_id) if isinstance(op_id, str) else None
        if op is not None and op.type == OPERATION:
            apps_of.setdefault(op.id, []).append(node)
        else:
            loose.append(node)
    for apps in apps_of.values():
        apps.sort(key=_index_order)
    return apps_of, loose


def _index_order(app: Node) -> tuple[int, tuple[int, ...]]:
    r = parse_range(app.tags.get(IPF_INDEX)) if app.tags else None
    return (0, r.start) if r is not None else (1, ())
