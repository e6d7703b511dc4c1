"""A placed document read once for the cost model (DESIGN.md §9): its Applications as
:class:`Shard` records (device, index box, boxes read and written), its operations in run order,
its meshes and the dtype, bytes per element and rank of each tensor.

>>> doc = read_placed(Graph())
>>> doc.shards, doc.order, doc.meshes
([], [], {})

A **box** is a region as ``(start, end)`` tuples (inclusive start, exclusive end): plain tuples,
because a plan of thousands of Applications is read on every cost request. A device is
``(mesh id, coords)``, as in :mod:`geon.core.cost`. An Application counts when its ``Placement``
names a mesh and coordinates; an operation with no placed Application runs whole (as one
unplaced :class:`Shard` of its own selections, ``device`` None). Malformed selections (and those
whose rank is not their tensor's), placements and meshes are left out (the checker reports them).

The **run order** is the executor's (:func:`geon.execute.schedule.topological`): waves of the
operations whose inputs are all written, each wave in document order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import le
from typing import Any, NamedTuple

from geon.core.dtypes import DTYPE_BYTES
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION, IPF_INDEX, MESH, OPERATION, PLACEMENT, TENSOR, Graph
from geon.core.nodes import Node
from geon.core.sharding import Mesh
from geon.core.zspace import ZRange, union_size

__all__ = [
    "Box",
    "Device",
    "PlacedDocument",
    "Shard",
    "box_size",
    "boxes_union_size",
    "intersect",
    "read_placed",
]

Box = tuple[tuple[int, ...], tuple[int, ...]]
"""A region: ``(start, end)``."""

Device = tuple[str, tuple[int, ...]]
"""A device of a plan: ``(mesh id, coords)``."""

_INTS = frozenset({int})


class Shard(NamedTuple):
    """One Application (or an unplaced operation, run whole): where it runs and what it reads
    and writes."""

    id: str
    op_id: str
    device: Device | None
    index_box: Box | None
    reads: tuple[tuple[str, Box], ...]
    writes: tuple[tuple[str, Box], ...]


@dataclass(slots=True)
class PlacedDocument:
    """What the cost model reads of a document (see the module docstring)."""

    graph: Graph
    shards: list[Shard] = field(default_factory=list)
    by_op: dict[str, list[Shard]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    meshes: dict[str, Mesh] = field(default_factory=dict)
    element_bytes: dict[str, int] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)

    def operation(self, op_id: str) -> Node:
        return self.graph.node(op_id)

    def devices(self) -> list[Device]:
        """Every device of every mesh a shard is placed on (idle ones too), mesh by mesh in
        document order, coordinates in row-major order."""
        out: list[Device] = []
        for mesh in self.meshes.values():
            out.extend((mesh.id, mesh.coords(n)) for n in range(mesh.size))
        return out


def box_size(box: Box) -> int:
    """The cells of a box.

    >>> box_size(((0, 2), (4, 5)))
    12
    """
    n = 1
    for a, b in zip(box[0], box[1], strict=True):
        n *= b - a
    return n


def intersect(a: Box, b: Box) -> Box | None:
    """The common box of two boxes of one rank, or None when they share no cell.

    >>> intersect(((0,), (4,)), ((2,), (6,))), intersect(((0,), (2,)), ((2,), (6,)))
    (((2,), (4,)), None)
    """
    start = tuple(map(max, a[0], b[0]))
    end = tuple(map(min, a[1], b[1]))
    if any(s >= e for s, e in zip(start, end, strict=True)):
        return None
    return start, end


def boxes_union_size(boxes: Iterable[Box]) -> int:
    """The cells of the union of boxes of one rank, each counted once.

    >>> boxes_union_size([((0,), (6,)), ((4,), (8,))])
    8
    """
    distinct = list(dict.fromkeys(boxes))
    if len(distinct) == 1:
        return box_size(distinct[0])
    return union_size(ZRange(s, e) for s, e in distinct)


def _box(data: Any) -> Box | None:
    if type(data) is not dict:
        return None
    s, e = data.get("start"), data.get("end")
    if type(s) is not list or type(e) is not list or len(s) != len(e):
        return None
    if not _INTS.issuperset(map(type, s + e)) or not all(map(le, s, e)):
        return None
    return tuple(s), tuple(e)


def _selections(
    body: dict[str, Any], side: str, ranks: dict[str, int]
) -> Iterator[tuple[str, Box]]:
    """The well-formed selections of one side whose rank is their tensor's."""
    selmap = body.get(side)
    if not isinstance(selmap, dict):
        return
    for items in selmap.values():
        if not isinstance(items, list):
            continue
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("tensorId"), str):
                box = _box(item.get("range"))
                if box is not None and len(box[0]) == ranks.get(item["tensorId"]):
                    yield item["tensorId"], box


def _device(tag: Any, meshes: dict[str, Mesh], graph: Graph) -> Device | None:
    """The device of a Placement tag whose mesh exists and whose coords fit it, else None."""
    if not isinstance(tag, dict):
        return None
    mesh_id, coords = tag.get("mesh"), tag.get("coords")
    if not isinstance(mesh_id, str) or type(coords) is not list:
        return None
    mesh = meshes.get(mesh_id)
    if mesh is None:
        node = graph.get(mesh_id)
        if node is None or node.type != MESH:
            return None
        try:
            mesh = meshes[mesh_id] = Mesh.from_node(node)
        except GeonError:  # a malformed mesh is the checker's issue, not a cost
            return None
    fits = len(coords) == len(mesh.axes) and _INTS.issuperset(map(type, coords))
    if not fits or not all(0 <= c < s for c, (_, s) in zip(coords, mesh.axes, strict=True)):
        return None
    return mesh_id, tuple(coords)


def _shard(
    doc: PlacedDocument, node: Node, op_id: str, device: Device | None, index: Box | None
) -> Shard:
    return Shard(
        node.id,
        op_id,
        device,
        index,
        tuple(_selections(node.body, "inputs", doc.ranks)),
        tuple(_selections(node.body, "outputs", doc.ranks)),
    )


def read_placed(graph: Graph) -> PlacedDocument:
    """The placed document of ``graph`` (see the module docstring)."""
    doc = PlacedDocument(graph)
    for tensor in graph.of_type(TENSOR):
        dtype = str(tensor.body.get("dtype"))
        doc.dtypes[tensor.id] = dtype
        doc.element_bytes[tensor.id] = DTYPE_BYTES.get(dtype, 0)
        whole = _box(tensor.body.get("range"))
        if whole is not None:
            doc.ranks[tensor.id] = len(whole[0])
    ops = {op.id: op for op in graph.of_type(OPERATION)}
    for app in graph.of_type(APPLICATION):
        op_id = app.body.get("operationId")
        tags = app.tags or {}
        device = _device(tags.get(PLACEMENT), doc.meshes, graph)
        if device is None or not isinstance(op_id, str) or op_id not in ops:
            continue
        shard = _shard(doc, app, op_id, device, _box(tags.get(IPF_INDEX)))
        doc.shards.append(shard)
        doc.by_op.setdefault(op_id, []).append(shard)
    for op in ops.values():
        if op.id not in doc.by_op:
            whole = _box((op.tags or {}).get(IPF_INDEX))
            doc.by_op[op.id] = [_shard(doc, op, op.id, None, whole)]
    doc.order = _run_order(ops, doc.by_op)
    return doc


def _run_order(ops: dict[str, Node], by_op: dict[str, list[Shard]]) -> list[str]:
    """Operation ids in run order (waves of ready operations in document order); operations
    in a cycle are left out (the checker reports NoTensorOperationCycles)."""
    writers: dict[str, set[str]] = {}
    for op_id in ops:
        for sh in by_op[op_id]:
            for tid, _ in sh.writes:
                writers.setdefault(tid, set()).add(op_id)
    waiting: dict[str, int] = {}
    followers: dict[str, list[str]] = {}
    for op_id in ops:
        before = {w for sh in by_op[op_id] for tid, _ in sh.reads for w in writers.get(tid, ())}
        before.discard(op_id)
        waiting[op_id] = len(before)
        for w in before:
            followers.setdefault(w, []).append(op_id)
    position = {op_id: n for n, op_id in enumerate(ops)}
    wave = [op_id for op_id in ops if waiting[op_id] == 0]
    order: list[str] = []
    while wave:
        order.extend(wave)
        ready = []
        for op_id in wave:
            for f in followers.get(op_id, ()):
                waiting[f] -= 1
                if waiting[f] == 0:
                    ready.append(f)
        wave = sorted(ready, key=position.__getitem__)
    return order
