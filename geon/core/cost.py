"""The cost model of a shard plan (DESIGN.md §4 "Shard plans"): the bytes each device reads and
writes, the bytes that move between devices, and the memory each device holds.

>>> transfers(Graph()), device_memory(Graph())
([], {})

A device is ``(mesh id, coords)``, where placed Applications (those with a ``Placement`` tag,
written by :func:`geon.core.sharding.shard`) run.

- :func:`read_shards`: **the one reader of placed shards** (also what
  :func:`geon.core.costmodel.placed.read_placed` builds on): each Application as a
  :class:`Shard` (device, index box, boxes read and written with their cells).

- :func:`device_bytes`: per device, the bytes its Applications read (``inputs``) and write
  (``outputs``).
- :func:`regions_that_move`: **the rule of which regions move** (one implementation, also what
  :mod:`geon.core.costmodel.collectives` classifies): a consumer shard's region read of a tensor
  moves when no shard on its own device wrote all of it; then each region written by a shard of
  another operation on another device, intersected with the region read, moves from the
  producer's device to the consumer's. Writers are found by bisection along dim 0 when they
  split a tensor by rows.
- :func:`transfers`: that rule over the placed shards: per edge, the bytes that must move. An
  operation a placed document leaves whole runs replicated on every device of its mesh
  (:func:`~geon.core.sharding.replica_devices`). Graph inputs have no producing device here
  and move nothing (the cost model counts the inputs a plan placed).
  Two consumers on one device that read the same region each count it (a runtime may share it).
  :func:`transfer_bytes` sums them per (source, target) pair.
- :func:`device_memory`: per device, bytes resident while its shards run: ``outputs`` — the
  distinct cells its Applications write; ``inputs`` — the distinct cells they read that the
  device does not write itself (received or placed there); ``temporaries`` — the zero-filled
  buffers of padded reads (an input whose projection reaches past its tensor is read into a
  buffer of the projection's full shape, as the executor does).

Tensors of unknown dtype count 0 bytes per element; malformed selections, placements naming no
mesh (or coordinates outside it) and Applications of no operation are left out (the checker
reports them).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from operator import le
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from geon.core.collector import collector_paused
from geon.core.dtypes import DTYPE_BYTES
from geon.core.errors import GeonError
from geon.core.graph import (
    APPLICATION,
    IPF_INDEX,
    IPF_SIGNATURE,
    OPERATION,
    PLACEMENT,
    TENSOR,
    Graph,
    Node,
)
from geon.core.sharding import Mesh, replica_devices
from geon.core.zspace import IPF, ZRange, parse_range, union_size

__all__ = [
    "Box",
    "Device",
    "DeviceMemory",
    "PlacedShard",
    "PlacedShards",
    "Shard",
    "Transfer",
    "Written",
    "box_size",
    "boxes_union_size",
    "contains",
    "device_bytes",
    "device_memory",
    "index_range_of",
    "intersect",
    "placement_device",
    "read_shards",
    "regions_that_move",
    "transfer_bytes",
    "transfers",
    "writers_of",
]


_INTS = frozenset({int})
_MEMO = "costmodel.placed"
"""The key of a node's own reading in the graph index's memo."""


def index_range_of(node: Node) -> ZRange | None:
    """The ``IPFIndex`` of a node as a range (None when it has none or it is malformed)."""
    return parse_range(node.tags.get(IPF_INDEX)) if node.tags else None


Device = tuple[str, tuple[int, ...]]
"""A device of a plan: ``(mesh id, coords)``."""

Box = tuple[tuple[int, ...], tuple[int, ...]]
"""A region as ``(start, end)`` tuples (inclusive start, exclusive end): plain tuples, because a
plan of thousands of Applications is costed on every request."""


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


def contains(outer: Box, inner: Box) -> bool:
    """Whether ``outer`` holds every cell of ``inner`` (of one rank).

    >>> contains(((0,), (4,)), ((1,), (3,))), contains(((0,), (4,)), ((3,), (5,)))
    (True, False)
    """
    return all(map(int.__le__, outer[0], inner[0])) and all(map(int.__le__, inner[1], outer[1]))


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


class PlacedShard(Protocol):
    """What the rule of moving regions reads of a shard: its operation, its device (None when
    its operation runs whole) and the boxes it reads and writes, as ``(tensor id, box)``."""

    @property
    def op_id(self) -> str: ...
    @property
    def device(self) -> Device | None: ...
    @property
    def reads(self) -> tuple[tuple[str, Box], ...]: ...
    @property
    def writes(self) -> tuple[tuple[str, Box], ...]: ...


S = TypeVar("S", bound=PlacedShard)


@dataclass(slots=True)
class Written(Generic[S]):
    """The shards writing one tensor, with their boxes per device; ``starts`` holds the boxes'
    starts along dim 0 when, sorted by them (as ``shards`` then is), they are disjoint along it
    (a split by rows), so a read finds its writers by bisection."""

    shards: list[tuple[S, Box]]
    by_device: dict[Device | None, list[Box]]
    starts: list[int] | None = None

    def overlapping(self, wanted: Box) -> list[tuple[S, Box]]:
        """The shards whose box may share cells with ``wanted`` (a superset, in order)."""
        if self.starts is None or not wanted[0]:
            return self.shards
        first = max(bisect_right(self.starts, wanted[0][0]) - 1, 0)
        last = bisect_left(self.starts, wanted[1][0])
        return self.shards[first:last]


def writers_of(shards: Iterable[S]) -> dict[str, Written[S]]:
    """The shards writing each tensor, in the order given (sorted by rows when they split the
    tensor by rows)."""
    out: dict[str, Written[S]] = {}
    for sh in shards:
        for tid, box in sh.writes:
            w = out.get(tid) or out.setdefault(tid, Written([], {}))
            w.shards.append((sh, box))
            w.by_device.setdefault(sh.device, []).append(box)
    for w in out.values():
        ordered = sorted(w.shards, key=lambda item: item[1][0][:1])
        rows = [box for _, box in ordered]
        if rows[0][0] and all(a[1][0] <= b[0][0] for a, b in pairwise(rows)):
            w.shards, w.starts = ordered, [box[0][0] for box in rows]
    return out


def regions_that_move(
    consumers: Sequence[S], writers: dict[str, Written[S]]
) -> Iterator[tuple[str, S, S, Box]]:
    """``(tensor id, producer, consumer, region)`` for every region that moves between devices
    (the rule of the module docstring), in order of the consumers and their reads."""
    for consumer in consumers:
        for tid, wanted in consumer.reads:
            found = writers.get(tid)
            if found is None:
                continue
            if any(contains(b, wanted) for b in found.by_device.get(consumer.device, ())):
                continue  # written on this device: nothing moves
            for producer, written in found.overlapping(wanted):
                if producer.device == consumer.device or producer.op_id == consumer.op_id:
                    continue
                if len(written[0]) == len(wanted[0]):
                    common = intersect(written, wanted)
                    if common is not None:
                        yield tid, producer, consumer, common


@dataclass(frozen=True, slots=True)
class Transfer:
    """Bytes of one region of a tensor that a consumer shard reads and a shard on another
    device produced: they must move from ``source`` to ``target``."""

    tensor_id: str
    region: ZRange
    bytes: int
    producer_id: str
    consumer_id: str
    source: Device
    target: Device


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """Bytes resident on one device: inputs it reads but does not write, outputs it writes, and
    temporaries (zero-filled buffers of padded reads)."""

    inputs: int
    outputs: int
    temporaries: int

    @property
    def total(self) -> int:
        return self.inputs + self.outputs + self.temporaries


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
class PlacedShards:
    """The shards of a document (:func:`read_shards`) and what was read on the way."""

    shards: list[Shard]
    """The placed Applications, in document order, then the replicas of the operations that
    run whole."""
    by_op: dict[str, list[Shard]]
    """Per operation, its placed Applications; for one that has none, its replica on every
    device of :attr:`replicas`, or one unplaced shard when there are none."""
    ops: dict[str, Node]
    meshes: dict[str, Mesh | None]
    element_bytes: dict[str, int]
    dtypes: dict[str, str]
    ranks: dict[str, int]
    replicas: list[Device] = field(default_factory=list)
    """Where an operation that runs whole runs (:func:`~geon.core.sharding.replica_devices`)."""


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


def _selections(
    body: dict[str, Any], side: str, seen: dict[tuple[int, ...], tuple[Box, int]]
) -> Selections:
    """One side's well-formed selections; equal boxes are shared through ``seen`` (starts then
    ends, as one tuple -> the first equal box and its cells), so a plan's many copies of one
    region are held once.

    The loop is the cost model's hot path (tens of thousands of selections per plan): a box is
    looked up by its coordinates first and checked in full (:func:`_box`) only when new; a hit
    checks only that its coordinates are ints (``0.0`` and ``True`` equal ``0`` and ``1`` as
    keys) and that start and end have one rank."""
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
            if type(s) is not list or type(e) is not list or len(s) != len(e):
                continue
            key = (*s, *e)
            known = seen.get(key)
            if known is None:
                box = _box(r)
                if box is None:
                    continue
                known = seen[key] = (box, box_size(box))
            elif not _INTS.issuperset(map(type, key)):
                continue
            found.append((tid, known[0]))
            cells.append(known[1])
    return tuple(found), tuple(cells)


def _local(node: Node, seen: dict[tuple[int, ...], tuple[Box, int]]) -> _Local:
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


def placement_device(
    placement: tuple[str, tuple[int, ...]] | None, meshes: dict[str, Mesh | None], graph: Graph
) -> Device | None:
    """The device of a placement whose mesh exists (``meshes`` caches each mesh read, None when
    it is missing or malformed) and whose coords fit it, else None."""
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
    for t, b in boxes:  # a plain loop: this runs once per side of every shard
        if ranks.get(t) != len(b[0]):
            break
    else:
        return sel
    kept = [n for n, (t, b) in enumerate(boxes) if ranks.get(t) == len(b[0])]
    return tuple(boxes[n] for n in kept), tuple(cells[n] for n in kept)


def read_shards(graph: Graph) -> PlacedShards:
    """The **one reader of placed shards** (this module's costs and
    :func:`geon.core.costmodel.placed.read_placed` build on it). An Application counts when its
    ``Placement`` names a mesh that exists and coordinates that fit it and its operation exists;
    an operation with no placed Application runs whole: replicated, one shard of its own
    selections per device of :func:`~geon.core.sharding.replica_devices` (or one unplaced
    shard, ``device`` None, when no or several meshes are used). Malformed selections (and
    those whose rank is not their tensor's) are left out: the checker reports them. What each
    node says by itself is remembered on the graph's index while the node is unchanged.

    >>> found = read_shards(Graph())
    >>> found.shards, found.by_op
    ([], {})
    """
    found = PlacedShards([], {}, {}, {}, {}, {}, {})
    dtypes, element_bytes, ranks = found.dtypes, found.element_bytes, found.ranks
    for tensor in graph.of_type(TENSOR):
        dtype = str(tensor.body.get("dtype"))
        dtypes[tensor.id] = dtype
        element_bytes[tensor.id] = DTYPE_BYTES.get(dtype, 0)
        whole = _box(tensor.body.get("range"))
        if whole is not None:
            ranks[tensor.id] = len(whole[0])
    ops = found.ops
    ops.update((op.id, op) for op in graph.of_type(OPERATION))
    meshes = found.meshes
    seen: dict[tuple[int, ...], tuple[Box, int]] = {}

    def local(node: Node) -> _Local:
        return _local(node, seen)

    def shard(node: Node, loc: _Local, device: Device | None) -> Shard:
        (reads, read_cells) = _of_rank(loc.reads, ranks)
        (writes, write_cells) = _of_rank(loc.writes, ranks)
        return Shard(
            node.id, loc.op_id, device, loc.index_box, reads, writes, read_cells, write_cells
        )

    index = graph.index
    by_op = found.by_op
    for app in graph.of_type(APPLICATION):
        loc = index.memo(app, _MEMO, local)
        device = placement_device(loc.placement, meshes, graph)
        if device is None or type(loc.op_id) is not str or loc.op_id not in ops:
            continue
        placed = shard(app, loc, device)
        found.shards.append(placed)
        by_op.setdefault(loc.op_id, []).append(placed)
    found.replicas = replicas = replica_devices(
        {s.device[0] for s in found.shards if s.device},
        meshes,
        sum(op.id not in by_op for op in ops.values()),
    )
    for op in ops.values():
        if op.id not in by_op:
            loc = index.memo(op, _MEMO, local)
            if not replicas:
                by_op[op.id] = [shard(op, loc, None)]
                continue
            copies = by_op[op.id] = [shard(op, loc, device) for device in replicas]
            found.shards.extend(copies)
    return found


def device_bytes(graph: Graph) -> dict[Device, dict[str, int]]:
    """Bytes read (``inputs``) and written (``outputs``) per device by placed Applications.

    Keys are ``(mesh id, coords)``; tensors of unknown dtype count 0 bytes per element.
    """
    out: dict[Device, dict[str, int]] = {}
    found = read_shards(graph)
    eb = found.element_bytes
    for sh in found.shards:
        assert sh.device is not None
        acc = out.setdefault(sh.device, {"inputs": 0, "outputs": 0})
        for side, boxes, cells in (
            ("inputs", sh.reads, sh.read_cells),
            ("outputs", sh.writes, sh.write_cells),
        ):
            acc[side] += sum(n * eb.get(t, 0) for (t, _), n in zip(boxes, cells, strict=True))
    return out


@collector_paused()
def transfers(graph: Graph) -> list[Transfer]:
    """Every region a placed consumer shard reads that placed shards on other devices wrote and
    its own device did not (:func:`regions_that_move`), in document order of the consumers.

    >>> transfers(Graph())
    []
    """
    found = read_shards(graph)
    eb = found.element_bytes
    out = []
    for tid, producer, consumer, region in regions_that_move(
        found.shards, writers_of(found.shards)
    ):
        source, target = producer.device, consumer.device
        assert source is not None and target is not None  # placed shards only
        nbytes = box_size(region) * eb.get(tid, 0)
        moved = Transfer(tid, ZRange(*region), nbytes, producer.id, consumer.id, source, target)
        out.append(moved)
    return out


def transfer_bytes(graph: Graph) -> dict[tuple[Device, Device], int]:
    """The bytes that move from each device to each other device: ``(source, target) ->
    bytes``, summed over :func:`transfers`."""
    out: dict[tuple[Device, Device], int] = {}
    for t in transfers(graph):
        out[(t.source, t.target)] = out.get((t.source, t.target), 0) + t.bytes
    return out


@collector_paused()
def device_memory(graph: Graph) -> dict[Device, DeviceMemory]:
    """Per device, the bytes of inputs, outputs and temporaries (see the module docstring)."""
    found = read_shards(graph)
    eb = found.element_bytes
    reads: dict[Device, dict[str, list[Box]]] = {}
    writes: dict[Device, dict[str, list[Box]]] = {}
    temporaries: dict[Device, int] = {}
    padding = _Padding(graph, found)
    for sh in found.shards:
        d = sh.device
        assert d is not None
        mine = reads.get(d) or reads.setdefault(d, {})
        for tid, box in sh.reads:
            (mine.get(tid) or mine.setdefault(tid, [])).append(box)
        mine = writes.get(d) or writes.setdefault(d, {})
        for tid, box in sh.writes:
            (mine.get(tid) or mine.setdefault(tid, [])).append(box)
        temporaries[d] = temporaries.get(d, 0) + padding.bytes(graph.node(sh.id), sh.index_box)
    out = {}
    for device in sorted({*reads, *writes, *temporaries}):
        written = writes.get(device, {})
        outputs = sum(boxes_union_size(bs) * eb.get(tid, 0) for tid, bs in written.items())
        inputs = 0
        for tid, bs in reads.get(device, {}).items():
            own = written.get(tid)
            # cells read and not written here: the union of reads and writes minus the writes
            only_read = (
                boxes_union_size([*bs, *own]) - boxes_union_size(own)
                if own
                else boxes_union_size(bs)
            )
            inputs += only_read * eb.get(tid, 0)
        out[device] = DeviceMemory(inputs, outputs, temporaries.get(device, 0))
    return out


class _Padding:
    """Bytes of the zero-filled buffers an application's padded reads need: for each input
    whose projection (of the application's IPFIndex through its operation's IPFSignature)
    reaches past its tensor, the projection's full size. Each operation's IPFs are parsed once
    (a plan has thousands of applications of few operations), and an input whose projection of
    the operation's whole IPFIndex fits its tensor is not projected again for an application
    whose IPFIndex lies inside the operation's (a projection of a sub-box lies inside the
    projection of the box: affine images and their windows grow with the box)."""

    def __init__(self, graph: Graph, found: PlacedShards) -> None:
        self.graph = graph
        self.ops = found.ops
        self.eb = found.element_bytes
        self.signatures: dict[str, dict[str, list[IPF | None]] | None] = {}
        self.ranges: dict[str, ZRange | None] = {}
        self.op_boxes: dict[str, Box | None] = {}
        self.fits: dict[tuple[str, str, int, str], bool] = {}

    def _signature(self, op_id: str) -> dict[str, list[IPF | None]] | None:
        if op_id in self.signatures:
            return self.signatures[op_id]
        op = self.ops.get(op_id)
        sig = (op.tags or {}).get(IPF_SIGNATURE) if op is not None else None
        parsed: dict[str, list[IPF | None]] | None = None
        inputs = sig.get("inputs") if isinstance(sig, dict) else None
        if isinstance(inputs, dict):
            parsed = {}
            for key, ipfs in inputs.items():
                if isinstance(ipfs, list):
                    parsed[key] = [self._ipf(raw) for raw in ipfs]
        self.signatures[op_id] = parsed
        return parsed

    @staticmethod
    def _ipf(raw: Any) -> IPF | None:
        try:
            return IPF.from_json(raw)
        except GeonError:  # a malformed IPF is the checker's issue, not a cost
            return None

    def _range(self, tid: str) -> ZRange | None:
        if tid not in self.ranges:
            tensor = self.graph.get(tid)
            self.ranges[tid] = (
                parse_range(tensor.body.get("range"))
                if tensor is not None and tensor.type == TENSOR
                else None
            )
        return self.ranges[tid]

    def _fits(self, op_id: str, key: str, n: int, tid: str, ipf: IPF, op_box: Box) -> bool:
        """Whether input ``n`` of ``key`` projects the operation's whole IPFIndex into its
        tensor ``tid`` (remembered per operation, input and tensor)."""
        slot = (op_id, key, n, tid)
        fits = self.fits.get(slot)
        if fits is None:
            trange = self._range(tid)
            try:
                projected = ipf.apply_range(ZRange(*op_box))
            except GeonError:
                projected = None
            fits = self.fits[slot] = (
                projected is not None
                and trange is not None
                and trange.rank == projected.rank
                and trange.contains(projected)
            )
        return fits

    def bytes(self, app: Node, index_box: Box | None) -> int:
        """The padded buffers' bytes of one application, whose IPFIndex is ``index_box``."""
        op_id = app.body.get("operationId")
        inputs = app.body.get("inputs")
        if not isinstance(op_id, str) or index_box is None or not isinstance(inputs, dict):
            return 0
        sig = self._signature(op_id)
        if sig is None:
            return 0
        shard_range = ZRange(*index_box)
        if op_id not in self.op_boxes:
            op = self.ops.get(op_id)
            self.op_boxes[op_id] = _box((op.tags or {}).get(IPF_INDEX)) if op is not None else None
        op_box = self.op_boxes[op_id]
        if op_box is not None and not (
            len(op_box[0]) == len(index_box[0]) and contains(op_box, index_box)
        ):
            op_box = None  # the application reaches past its operation: project it
        total = 0
        for key, items in inputs.items():
            ipfs = sig.get(key)
            if ipfs is None or not isinstance(items, list) or len(ipfs) != len(items):
                continue
            for n, (item, ipf) in enumerate(zip(items, ipfs, strict=True)):
                tid = item.get("tensorId") if isinstance(item, dict) else None
                if ipf is None or not isinstance(tid, str):
                    continue
                if op_box is not None and self._fits(op_id, key, n, tid, ipf, op_box):
                    continue
                trange = self._range(tid)
                try:
                    projected = ipf.apply_range(shard_range)
                except GeonError:  # a malformed IPF is the checker's issue, not a cost
                    continue
                if trange is None or trange.rank != projected.rank or trange.contains(projected):
                    continue
                total += projected.size * self.eb.get(tid, 0)
        return total
