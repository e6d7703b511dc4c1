"""The cost model of a shard plan (DESIGN.md §4 "Shard plans"): the bytes each device reads and
writes, the bytes that move between devices, and the memory each device holds.

>>> transfers(Graph()), device_memory(Graph())
([], {})

A device is ``(mesh id, coords)``, where placed Applications (those with a ``Placement`` tag,
written by :func:`geon.core.sharding.shard`) run.

The shards are :func:`geon.core.shard_table.read_table`'s (the one reader of placed shards);
:func:`read_shards` gives them as :class:`Shard` records (device, index box, boxes read and
written with their cells) for the rules here that walk them one by one.

- :func:`device_bytes`: per device, the bytes its Applications read (``inputs``) and write
  (``outputs``).
- :func:`transfers`: :func:`geon.core.shard_table.regions_that_move` (the rule of which
  regions move, also what :mod:`geon.core.costmodel.collectives` classifies) over the placed
  shards: per edge, the bytes that must move. An
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

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from geon.core.collector import collector_paused
from geon.core.errors import GeonError
from geon.core.graph import IPF_INDEX, IPF_SIGNATURE, TENSOR, Graph, Node
from geon.core.shard_table import (
    Box,
    Device,
    Writes,
    box_size,
    parse_box,
    read_table,
    regions_that_move,
)
from geon.core.sharding import Mesh
from geon.core.zspace import IPF, ZRange, parse_range, union_size

__all__ = [
    "Box",
    "Device",
    "DeviceMemory",
    "PlacedShards",
    "Shard",
    "Transfer",
    "box_size",
    "boxes_union_size",
    "contains",
    "device_bytes",
    "device_memory",
    "intersect",
    "read_shards",
    "transfer_bytes",
    "transfers",
]


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
    """The shards of a document as records (:func:`read_shards`)."""

    shards: list[Shard]
    """The placed Applications, in document order, then the replicas of the operations that
    run whole."""
    by_op: dict[str, list[Shard]]
    """Per operation, its placed Applications; for one that has none, its replica on every
    device of :attr:`replicas`, or one unplaced shard when there are none."""
    ops: dict[str, Node]
    meshes: dict[str, Mesh | None]
    element_bytes: dict[str, int]
    replicas: list[Device] = field(default_factory=list)
    """Where an operation that runs whole runs (:func:`~geon.core.sharding.replica_devices`)."""


def read_shards(graph: Graph) -> PlacedShards:
    """The shards of :func:`geon.core.shard_table.read_table` (the one reader of placed shards)
    as records, for rules that walk them one by one (memory with padding, plan comparison).

    >>> found = read_shards(Graph())
    >>> found.shards, found.by_op
    ([], {})
    """
    table = read_table(graph)
    rows = table.rows
    tids = [table.tensor_ids[t] for t in rows.tensor.tolist()]
    ranks = table.ranks[rows.tensor].tolist()
    boxes = [
        (tuple(lo[:r]), tuple(hi[:r]))
        for lo, hi, r in zip(rows.lo.tolist(), rows.hi.tolist(), ranks, strict=True)
    ]
    selected = list(zip(tids, boxes, strict=True))
    cells, write, offsets = rows.cells.tolist(), rows.write.tolist(), table.offsets.tolist()
    found = PlacedShards(
        [],
        {},
        table.ops,
        table.meshes,
        dict(zip(table.tensor_ids, table.element_bytes.tolist(), strict=True)),
        table.replicas,
    )
    for n, (op, d) in enumerate(zip(table.op.tolist(), table.device.tolist(), strict=True)):
        a, b = offsets[n], offsets[n + 1]
        k = a
        while k < b and not write[k]:  # reads come before writes
            k += 1
        sh = Shard(
            table.ids[n],
            table.op_ids[op],
            table.devices[d] if d >= 0 else None,
            table.index_box(n),
            tuple(selected[a:k]),
            tuple(selected[k:b]),
            tuple(cells[a:k]),
            tuple(cells[k:b]),
        )
        found.by_op.setdefault(sh.op_id, []).append(sh)
        if sh.device is not None:
            found.shards.append(sh)
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
    its own device did not (:func:`geon.core.shard_table.regions_that_move`), in document order
    of the consumers.

    >>> transfers(Graph())
    []
    """
    table = read_table(graph)
    writes = Writes.of(table)
    moves = regions_that_move(table, writes)
    ranks = table.ranks[moves.tensor].tolist()
    nbytes = (np.prod(moves.hi - moves.lo, axis=1) * table.element_bytes[moves.tensor]).tolist()
    producers = writes.rows.shard[moves.write].tolist()
    out = []
    for n, (t, lo, hi, r) in enumerate(
        zip(moves.tensor.tolist(), moves.lo.tolist(), moves.hi.tolist(), ranks, strict=True)
    ):
        p, c = producers[n], int(moves.consumer[n])
        out.append(
            Transfer(
                table.tensor_ids[t],
                ZRange(lo[:r], hi[:r]),
                nbytes[n],
                table.ids[p],
                table.ids[c],
                table.devices[table.device[p]],
                table.devices[table.device[c]],
            )
        )
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
            self.op_boxes[op_id] = (
                parse_box((op.tags or {}).get(IPF_INDEX)) if op is not None else None
            )
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
