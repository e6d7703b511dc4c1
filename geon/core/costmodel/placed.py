"""A placed document read once for the cost model (DESIGN.md §9): its Applications as
:class:`Shard` records (device, index box, boxes read and written), its operations in run order,
its meshes, the dtype, bytes per element and rank of each tensor, and the regions of the graph
inputs a plan placed.

>>> doc = read_placed(Graph())
>>> doc.shards, doc.order, doc.meshes
([], [], {})

Boxes (regions as ``(start, end)`` tuples) and devices (``(mesh id, coords)``) are
:mod:`geon.core.cost`'s. An Application counts when its ``Placement``
names a mesh and coordinates; an operation with no placed Application runs whole (as one
unplaced :class:`Shard` of its own selections, ``device`` None). Malformed selections (and those
whose rank is not their tensor's), placements and meshes are left out (the checker reports them).

The **run order** is the executor's (:func:`geon.core.order.run_order`): waves of the operations
whose inputs are all written, each wave in document order; operations in a cycle are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import le
from typing import Any, NamedTuple

from geon.core.cost import Box, Device, box_size, intersect
from geon.core.dtypes import DTYPE_BYTES
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION, IPF_INDEX, OPERATION, PLACEMENT, TENSOR, Graph
from geon.core.nodes import Node
from geon.core.order import run_order
from geon.core.plans import held_regions
from geon.core.sharding import Mesh
from geon.core.zspace import ZRange, union_size

__all__ = ["PlacedDocument", "Shard", "boxes_union_size", "read_placed"]

_INTS = frozenset({int})
_MEMO = "costmodel.placed"
"""The key of a node's own reading in the graph index's memo."""


class Shard(NamedTuple):
    """One Application (or an unplaced operation, run whole): where it runs and what it reads
    and writes."""

    id: str
    op_id: str
    device: Device | None
    index_box: Box | None
    reads: tuple[tuple[str, Box], ...]
    writes: tuple[tuple[str, Box], ...]
    read_cells: tuple[int, ...]
    """The cells of each region read, in the order of ``reads``."""
    write_cells: tuple[int, ...]


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
    held: dict[str, list[tuple[Device, Box]]] = field(default_factory=dict)
    """Graph inputs a plan placed: the region each device holds (on one device, sharded or
    replicated: :func:`geon.core.plans.held_regions`)."""

    def operation(self, op_id: str) -> Node:
        return self.graph.node(op_id)

    def devices(self) -> list[Device]:
        """Every device of every mesh a shard is placed on (idle ones too), mesh by mesh in
        document order, coordinates in row-major order."""
        out: list[Device] = []
        for mesh in self.meshes.values():
            out.extend((mesh.id, mesh.coords(n)) for n in range(mesh.size))
        return out


def boxes_union_size(boxes: Iterable[Box]) -> int:
    """The cells of the union of boxes of one rank, each counted once: the sum of their sizes
    when they are pairwise disjoint (the common case: the shards of a split), else
    :func:`geon.core.zspace.union_size`.

    >>> overlapping, touching = [((0,), (6,)), ((4,), (8,))], [((0,), (4,)), ((4,), (8,))]
    >>> boxes_union_size(overlapping), boxes_union_size(touching)
    (8, 8)
    """
    distinct = list(dict.fromkeys(boxes))
    if len(distinct) <= 1:
        return box_size(distinct[0]) if distinct else 0
    if _disjoint(distinct):
        return sum(map(box_size, distinct))
    return union_size(ZRange(s, e) for s, e in distinct)


def _disjoint(boxes: list[Box]) -> bool:
    """Whether no two boxes share a cell: ordered along some dim, each starts where the ones
    before it end; else pair by pair."""
    for d in range(len(boxes[0][0])):
        ordered = sorted(boxes, key=lambda b: b[0][d])
        reach = ordered[0][1][d]
        for b in ordered[1:]:
            if b[0][d] < reach:
                break
            reach = max(reach, b[1][d])
        else:
            return True
    return all(intersect(a, b) is None for n, a in enumerate(boxes) for b in boxes[n + 1 :])


def _box(data: Any) -> Box | None:
    if type(data) is not dict:
        return None
    s, e = data.get("start"), data.get("end")
    if type(s) is not list or type(e) is not list or len(s) != len(e):
        return None
    start, end = tuple(s), tuple(e)
    if not (_INTS.issuperset(map(type, start)) and _INTS.issuperset(map(type, end))):
        return None
    return (start, end) if all(map(le, start, end)) else None


Selections = tuple[tuple[tuple[str, Box], ...], tuple[int, ...]]
"""Well-formed selections of one side as ``(tensor id, box)``, and the cells of each."""


class _Local(NamedTuple):
    """What one Application (or Operation) node says by itself, unchecked against others."""

    op_id: Any
    placement: tuple[str, tuple[int, ...]] | None
    index_box: Box | None
    reads: Selections
    writes: Selections


def _selections(body: dict[str, Any], side: str, seen: dict[Box, tuple[Box, int]]) -> Selections:
    """One side's well-formed selections; equal boxes are shared through ``seen`` (box -> the
    first equal box and its cells), so a plan's many copies of one region are held once.

    The loop is the cost model's hot path (tens of thousands of selections per plan): a box is
    looked up by its tuples first and checked in full (:func:`_box`) only when new; a hit checks
    only that its coordinates are ints (``0.0`` and ``True`` equal ``0`` and ``1`` as keys)."""
    found: list[tuple[str, Box]] = []
    cells: list[int] = []
    selmap = body.get(side)
    if type(selmap) is not dict:
        return (), ()
    for items in selmap.values():
        if type(items) is not list:
            continue
        for item in items:
            if type(item) is not dict:
                continue
            tid = item.get("tensorId")
            r = item.get("range")
            if type(tid) is not str or type(r) is not dict:
                continue
            s, e = r.get("start"), r.get("end")
            if type(s) is not list or type(e) is not list:
                continue
            key = (tuple(s), tuple(e))
            known = seen.get(key)
            if known is None:
                box = _box(r)
                if box is None:
                    continue
                known = seen[key] = (box, box_size(box))
            else:
                for x in s:
                    if type(x) is not int:
                        break
                else:
                    for x in e:
                        if type(x) is not int:
                            break
                    else:
                        found.append((tid, known[0]))
                        cells.append(known[1])
                continue
            found.append((tid, known[0]))
            cells.append(known[1])
    return tuple(found), tuple(cells)


def _local(node: Node, seen: dict[Box, tuple[Box, int]]) -> _Local:
    tags = node.tags or {}
    tag = tags.get(PLACEMENT)
    placement = None
    if isinstance(tag, dict):
        mesh_id, coords = tag.get("mesh"), tag.get("coords")
        if type(mesh_id) is str and type(coords) is list and _INTS.issuperset(map(type, coords)):
            placement = (mesh_id, tuple(coords))
    body = node.body if isinstance(node.body, dict) else {}
    return _Local(
        body.get("operationId", node.id),
        placement,
        _box(tags.get(IPF_INDEX)),
        _selections(body, "inputs", seen),
        _selections(body, "outputs", seen),
    )


def _device(
    placement: tuple[str, tuple[int, ...]] | None, meshes: dict[str, Mesh | None], graph: Graph
) -> Device | None:
    """The device of a placement whose mesh exists and whose coords fit it, else None."""
    if placement is None:
        return None
    mesh_id, coords = placement
    if mesh_id not in meshes:
        node = graph.get(mesh_id)
        try:
            meshes[mesh_id] = Mesh.from_node(node) if node is not None else None
        except GeonError:  # a malformed mesh is the checker's issue, not a cost
            meshes[mesh_id] = None
    mesh = meshes[mesh_id]
    if mesh is None or len(coords) != len(mesh.axes):
        return None
    if not all(0 <= c < s for c, (_, s) in zip(coords, mesh.axes, strict=True)):
        return None
    return placement


def _of_rank(sel: Selections, ranks: dict[str, int]) -> Selections:
    """The selections whose rank is their tensor's."""
    boxes, cells = sel
    if all(ranks.get(t) == len(b[0]) for t, b in boxes):
        return sel
    kept = [n for n, (t, b) in enumerate(boxes) if ranks.get(t) == len(b[0])]
    return tuple(boxes[n] for n in kept), tuple(cells[n] for n in kept)


def read_placed(graph: Graph) -> PlacedDocument:
    """The placed document of ``graph`` (see the module docstring). What each node says by
    itself is remembered on the graph's index while the node is unchanged, so costing a plan
    again after an edit reads only the nodes the edit changed."""
    doc = PlacedDocument(graph)
    for tensor in graph.of_type(TENSOR):
        dtype = str(tensor.body.get("dtype"))
        doc.dtypes[tensor.id] = dtype
        doc.element_bytes[tensor.id] = DTYPE_BYTES.get(dtype, 0)
        whole = _box(tensor.body.get("range"))
        if whole is not None:
            doc.ranks[tensor.id] = len(whole[0])
    ops = {op.id: op for op in graph.of_type(OPERATION)}
    meshes: dict[str, Mesh | None] = {}
    seen: dict[Box, tuple[Box, int]] = {}

    def local(node: Node) -> _Local:
        return _local(node, seen)

    def shard(node: Node, loc: _Local, device: Device | None) -> Shard:
        (reads, read_cells) = _of_rank(loc.reads, doc.ranks)
        (writes, write_cells) = _of_rank(loc.writes, doc.ranks)
        return Shard(
            node.id, loc.op_id, device, loc.index_box, reads, writes, read_cells, write_cells
        )

    index = graph.index
    for app in graph.of_type(APPLICATION):
        loc = index.memo(app, _MEMO, local)
        device = _device(loc.placement, meshes, graph)
        if device is None or type(loc.op_id) is not str or loc.op_id not in ops:
            continue
        placed = shard(app, loc, device)
        doc.shards.append(placed)
        doc.by_op.setdefault(loc.op_id, []).append(placed)
    for tid, (mesh_id, regions) in held_regions(graph).items():
        doc.held[tid] = [
            (device, (r.start, r.end))
            for coords, r in regions
            if (device := _device((mesh_id, coords), meshes, graph)) is not None
        ]
    doc.meshes = {mid: m for mid, m in meshes.items() if m is not None}
    for op in ops.values():
        if op.id not in doc.by_op:
            doc.by_op[op.id] = [shard(op, index.memo(op, _MEMO, local), None)]
    doc.order = [op.id for op in run_order(list(ops.values()))[0]]
    return doc
