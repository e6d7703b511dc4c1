"""The cells of a shard plan (DESIGN.md §4 "Shard plans"): the bytes each device reads and
writes, and the bytes that move between devices. How much a device *holds* (its memory, by kind)
is the ledger's alone (:mod:`geon.core.plans.cost.ledger`, issue 37: one memory model), built on
:func:`resident`, :func:`cells_only_read` and :func:`padded_bytes` here.

>>> transfers(Graph()), device_bytes(Graph())
([], {})

A device is ``(mesh id, coords)``, where placed Applications (those with a ``Placement`` tag,
written by :func:`geon.core.plans.shards.shard`) run; a document no plan placed runs on the one
device :data:`~geon.core.plans.table.UNPLACED`.

The shards are :func:`geon.core.plans.table.read_table`'s (the one reader of placed shards);
each rule here takes the table when its caller has read it already.

- :func:`device_bytes`: per device, the distinct bytes its Applications read that it does not
  write itself (``inputs``: received or placed there) and the distinct bytes they write
  (``outputs``). These count what a device touches, not what it holds at once (that is the
  ledger's peak).
- :func:`transfers`: :func:`geon.core.plans.table.regions_that_move` (the rule of which
  regions move, also what :mod:`geon.core.plans.cost.collectives` classifies) over the placed
  shards: per edge, the bytes that must move. An
  operation a placed document leaves whole runs replicated on every device of its mesh
  (:func:`~geon.core.plans.shards.replica_devices`). Graph inputs have no producing device here
  and move nothing (the cost model counts the inputs a plan placed).
  Two consumers on one device that read the same region each count it (a runtime may share it).
  :func:`transfer_bytes` sums them per (source, target) pair.
- :func:`padded_bytes`: per shard, the zero-filled buffers of its padded reads (an input whose
  projection reaches past its tensor is read into a buffer of the projection's full shape, as the
  executor does): the ledger's ``temporaries`` while the shard runs.

Tensors of unknown dtype count 0 bytes per element; malformed selections, placements naming no
mesh (or coordinates outside it) and Applications of no operation are left out (the checker
reports them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import le, lt
from typing import Any

import numpy as np

from geon.core.collector import collector_paused
from geon.core.errors import GeonError
from geon.core.graph import IPF_INDEX, IPF_SIGNATURE, OPERATION, TENSOR, Graph, Node
from geon.core.plans.table import (
    Box,
    Device,
    ShardTable,
    Writes,
    box_size,
    group_keys,
    index_boxes,
    operation_boxes,
    parse_box,
    read_table,
    regions_that_move,
)
from geon.core.signatures import ipf_from_json
from geon.core.zspace import IPF, ZRange, parse_range, union_size

_INTS = frozenset({int})

__all__ = [
    "Box",
    "Device",
    "Resident",
    "Transfer",
    "box_size",
    "boxes_union_size",
    "cells_only_read",
    "contains",
    "device_bytes",
    "intersect",
    "padded_bytes",
    "resident",
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


@dataclass(slots=True)
class Resident:
    """The regions one side (reads or writes) holds, grouped per device and tensor
    (:func:`resident`): each group's device, tensor, first and last step, and its distinct
    cells; ``single`` when all its regions are one box (then ``lo``/``hi`` are that box)."""

    device: np.ndarray
    tensor: np.ndarray
    first: np.ndarray
    last: np.ndarray
    cells: np.ndarray
    single: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    boxes: dict[int, list[Box]]
    """The distinct boxes of each group that is not single."""

    def boxes_of(self, group: int, rank: int) -> list[Box]:
        """The distinct boxes of ``group``, of ``rank`` dims."""
        if not self.single[group]:
            return self.boxes[group]
        lo, hi = self.lo[group, :rank].tolist(), self.hi[group, :rank].tolist()
        return [(tuple(lo), tuple(hi))]


def resident(
    device: np.ndarray,
    tensor: np.ndarray,
    step: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    cells: np.ndarray,
    n_tensors: int,
    ranks: np.ndarray,
) -> Resident:
    """Rows (their device, tensor, step, ``lo``/``hi`` padded as :class:`Rows` are, and cells)
    grouped per device and tensor, in that order: a group of one distinct box is read off the
    arrays; only one of several boxes is unioned (:func:`boxes_union_size`)."""
    keys, first_row, at = group_keys(device * n_tensors + tensor)
    n = len(keys)
    first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int64)
    np.minimum.at(first, at, step)
    np.maximum.at(last, at, step)
    g_lo, g_hi = lo[first_row], hi[first_row]
    differs = np.any(lo != g_lo[at], axis=1) | np.any(hi != g_hi[at], axis=1)
    single = np.bincount(at, weights=differs, minlength=n) == 0
    g_cells = cells[first_row].copy()
    boxes: dict[int, list[Box]] = {}
    several = np.flatnonzero(~single)
    if len(several):
        by_group = np.argsort(at, kind="stable")
        ends = np.cumsum(np.bincount(at, minlength=n))
        for g in several.tolist():
            r = int(ranks[tensor[first_row[g]]])
            mine = by_group[(ends[g - 1] if g else 0) : ends[g]]
            found = zip(lo[mine, :r].tolist(), hi[mine, :r].tolist(), strict=True)
            boxes[g] = list({(tuple(a), tuple(b)) for a, b in found})
            g_cells[g] = boxes_union_size(boxes[g])
    return Resident(
        keys // n_tensors, keys % n_tensors, first, last, g_cells, single, g_lo, g_hi, boxes
    )


def cells_only_read(
    reads: Resident, writes: Resident, n_tensors: int, ranks: np.ndarray
) -> np.ndarray:
    """Per group of ``reads``, the distinct cells it reads that the writes of its device and
    tensor do not hold: the cells of the union of both less those of the writes (when each is
    one box, the read box's cells less its overlap with the written box)."""
    w_keys = writes.device * n_tensors + writes.tensor
    r_keys = reads.device * n_tensors + reads.tensor
    own = np.minimum(np.searchsorted(w_keys, r_keys), max(len(w_keys) - 1, 0))
    has_own = w_keys[own] == r_keys if len(w_keys) else np.zeros(len(r_keys), dtype=bool)
    only_read = reads.cells.copy()
    both_single = has_own.copy()
    both_single[has_own] &= reads.single[has_own] & writes.single[own[has_own]]
    one, theirs = np.flatnonzero(both_single), own[both_single]
    overlap = np.minimum(reads.hi[one], writes.hi[theirs]) - np.maximum(
        reads.lo[one], writes.lo[theirs]
    )
    only_read[one] -= np.prod(np.clip(overlap, 0, None), axis=1)
    for g in np.flatnonzero(has_own & ~both_single).tolist():
        w, r = int(own[g]), int(ranks[reads.tensor[g]])
        seen, mine = reads.boxes_of(g, r), writes.boxes_of(w, r)
        only_read[g] = boxes_union_size([*seen, *mine]) - int(writes.cells[w])
    return only_read


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


@collector_paused()
def device_bytes(graph: Graph, table: ShardTable | None = None) -> dict[Device, dict[str, int]]:
    """Per device, the distinct bytes its shards read that it does not write (``inputs``) and
    the distinct bytes they write (``outputs``); see the module docstring (``table``: the
    document's :func:`~geon.core.plans.table.read_table`, when already read)."""
    table = read_table(graph) if table is None else table
    rows = table.rows
    device = table.device[rows.shard]
    n_tensors, ranks, eb = len(table.tensor_ids), table.ranks, table.element_bytes
    at_once = np.zeros(len(rows), dtype=np.int64)  # no schedule here: one step

    def side(mask: np.ndarray) -> Resident:
        lo, hi, cells = rows.lo[mask], rows.hi[mask], rows.cells[mask]
        return resident(
            device[mask], rows.tensor[mask], at_once[mask], lo, hi, cells, n_tensors, ranks
        )

    placed = device >= 0
    writes, reads = side(placed & rows.write), side(placed & ~rows.write)
    outputs = np.zeros(len(table.devices), dtype=np.int64)
    np.add.at(outputs, writes.device, writes.cells * eb[writes.tensor])
    inputs = np.zeros(len(table.devices), dtype=np.int64)
    only_read = cells_only_read(reads, writes, n_tensors, ranks)
    np.add.at(inputs, reads.device, only_read * eb[reads.tensor])
    return {
        table.devices[d]: {"inputs": int(inputs[d]), "outputs": int(outputs[d])}
        for d in _used_devices(table)
    }


def _used_devices(table: ShardTable) -> list[int]:
    """The devices (indices of the table's) that placed shards run on, in device order."""
    return sorted(set(table.device[table.placed].tolist()), key=table.devices.__getitem__)


@collector_paused()
def transfers(graph: Graph, table: ShardTable | None = None) -> list[Transfer]:
    """Every region a placed consumer shard reads that placed shards on other devices wrote and
    its own device did not (:func:`geon.core.plans.table.regions_that_move`), in document order
    of the consumers (``table``: the document's :func:`~geon.core.plans.table.read_table`, when
    already read).

    >>> transfers(Graph())
    []
    """
    table = read_table(graph) if table is None else table
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


def transfer_bytes(
    graph: Graph, table: ShardTable | None = None
) -> dict[tuple[Device, Device], int]:
    """The bytes that move from each device to each other device: ``(source, target) ->
    bytes``, summed over :func:`transfers`."""
    out: dict[tuple[Device, Device], int] = {}
    for t in transfers(graph, table):
        out[(t.source, t.target)] = out.get((t.source, t.target), 0) + t.bytes
    return out


def padded_bytes(graph: Graph, table: ShardTable) -> np.ndarray:
    """Per placed shard of ``table`` (``int64``, 0 for the others), the bytes of the zero-filled
    buffers its padded reads need (see the module docstring)."""
    out = np.zeros(len(table.ids), dtype=np.int64)
    padding = _Padding(graph, table)
    for n in _may_pad(table, padding).tolist():
        out[n] = padding.bytes(graph.node(table.ids[n]), table.index_box(n))
    return out


def _may_pad(table: ShardTable, padding: _Padding) -> np.ndarray:
    """The placed shards whose reads may reach past their tensors, in bulk: all but those
    whose ``IPFIndex`` lies inside their operation's, of an operation every input of which
    projects its whole ``IPFIndex`` into its tensor, reading only tensors their operation
    reads (a projection of a sub-box lies inside the projection of the box). A training step
    has tens of thousands of shards and hardly any padded read."""
    placed = table.placed
    n_ops = len(table.op_ids)
    op_valid, op_rank, op_lo, op_hi = operation_boxes(table)
    whole_fits = np.zeros(n_ops, dtype=bool)
    op_reads: list[int] = []
    n_tensors = len(table.tensor_ids)
    for k, op_id in enumerate(table.op_ids):
        inputs = table.ops[op_id].body.get("inputs")
        sig = padding.signature(op_id)
        if not op_valid[k] or sig is None or not isinstance(inputs, dict):
            continue
        r = int(op_rank[k])
        box = (tuple(op_lo[k, :r].tolist()), tuple(op_hi[k, :r].tolist()))
        fits = True
        for key, items in inputs.items():
            ipfs = sig.get(key)
            if ipfs is None or not isinstance(items, list) or len(ipfs) != len(items):
                fits = False
                break
            for n, (item, ipf) in enumerate(zip(items, ipfs, strict=True)):
                tid = item.get("tensorId") if isinstance(item, dict) else None
                if (
                    not isinstance(tid, str)
                    or tid not in table.tensor_index
                    or (ipf is not None and not padding.fits_whole(op_id, key, n, tid, ipf, box))
                ):
                    fits = False
                else:
                    op_reads.append(k * n_tensors + table.tensor_index[tid])
        whole_fits[k] = fits
    valid, rank, lo, hi = index_boxes(table)
    width = max(lo.shape[1], op_lo.shape[1])
    lo, hi, op_lo, op_hi = (_widen(a, width, fill) for a, fill in
                            ((lo, 0), (hi, 1), (op_lo, 0), (op_hi, 1)))  # fmt: skip
    op = table.op
    inside = (
        valid
        & op_valid[op]
        & (rank == op_rank[op])
        & np.all(lo >= op_lo[op], axis=1)
        & np.all(hi <= op_hi[op], axis=1)
    ) if len(op) else np.zeros(0, dtype=bool)  # fmt: skip
    rows = table.rows
    reading = ~rows.write
    known = np.isin(op[rows.shard[reading]] * n_tensors + rows.tensor[reading], op_reads)
    strange = np.bincount(rows.shard[reading][~known], minlength=len(op)) > 0
    return np.flatnonzero(placed & ~(inside & whole_fits[op] & ~strange))


def _widen(rows: np.ndarray, width: int, fill: int) -> np.ndarray:
    """``rows`` padded on the right to ``width`` columns with ``fill``."""
    extra = width - rows.shape[1]
    return np.pad(rows, ((0, 0), (0, extra)), constant_values=fill) if extra else rows


class _Padding:
    """Bytes of the zero-filled buffers an application's padded reads need: for each input
    whose projection (of the application's IPFIndex through its operation's IPFSignature)
    reaches past its tensor, the projection's full size. Each operation's IPFs are parsed once
    (a plan has thousands of applications of few operations), and an input whose projection of
    the operation's whole IPFIndex fits its tensor is not projected again for an application
    whose IPFIndex lies inside the operation's (a projection of a sub-box lies inside the
    projection of the box: affine images and their windows grow with the box)."""

    def __init__(self, graph: Graph, table: ShardTable) -> None:
        self.graph = graph
        self.ops = table.ops
        self.eb = dict(zip(table.tensor_ids, table.element_bytes.tolist(), strict=True))
        self.signatures: dict[str, dict[str, list[IPF | None]] | None] = {}
        self.ranges: dict[str, ZRange | None] = {}
        self.op_boxes: dict[str, Box | None] = {}
        self.fits: dict[tuple[str, str, int, str], bool] = {}
        self.bounds: dict[str, tuple[tuple[int, ...], tuple[int, ...]] | None] = {}
        self.hulls: dict[tuple[int, tuple[int, ...], tuple[int, ...], Box], bool] = {}
        """By the IPF's ``id`` (a frozen dataclass hashes its fields on every call): the parsed
        IPFs live in :attr:`signatures` as long as this cache, and equal IPFs are one object
        (:func:`~geon.core.signatures.ipf_from_json`); another equal one only misses."""

    def signature(self, op_id: str) -> dict[str, list[IPF | None]] | None:
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
            return ipf_from_json(raw)
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

    def fits_whole(self, op_id: str, key: str, n: int, tid: str, ipf: IPF, op_box: Box) -> bool:
        """Whether input ``n`` of ``key`` projects the operation's whole IPFIndex into its
        tensor ``tid`` (remembered per operation, input and tensor)."""
        slot = (op_id, key, n, tid)
        fits = self.fits.get(slot)
        if fits is None:
            fits = self._hull_fits(tid, ipf, op_box)
        if fits is None:
            trange = self._range(tid)
            try:
                projected = ipf.apply_range(ZRange(*op_box))
            except GeonError:
                projected = None
            fits = (
                projected is not None
                and trange is not None
                and trange.rank == projected.rank
                and trange.contains(projected)
            )
        self.fits[slot] = fits
        return fits

    def _hull_fits(self, tid: str, ipf: IPF, box: Box) -> bool | None:
        """Whether the image of the non-empty ``box`` through ``ipf`` lies inside tensor
        ``tid``'s range, by the corner rule on plain tuples (:meth:`IPF.hull`, what
        :meth:`IPF.apply_range` returns as a range); None when the box is empty, of another
        rank than the map's, or the tensor's range is not plain ints (then ranges decide)."""
        start, end = box
        in_dim = ipf.map.in_dim
        if (in_dim is not None and in_dim != len(start)) or not all(map(lt, start, end)):
            return None
        if tid not in self.bounds:
            tensor = self.graph.get(tid)
            found = tensor.body.get("range") if tensor is not None else None
            t = (found.get("start"), found.get("end")) if type(found) is dict else (None, None)
            plain = all(type(v) is list and _INTS.issuperset(map(type, v)) for v in t)
            self.bounds[tid] = (tuple(t[0]), tuple(t[1])) if plain else None  # type: ignore[arg-type]
        bounds = self.bounds[tid]
        if bounds is None or len(bounds[0]) != len(ipf.shape) or len(bounds[1]) != len(ipf.shape):
            return None
        key = (id(ipf), start, end, bounds)  # the layers of a stack repeat each of these
        fits = self.hulls.get(key)
        if fits is None:
            lo, hi = ipf.hull(start, end)
            fits = self.hulls[key] = all(map(le, bounds[0], lo)) and all(map(le, hi, bounds[1]))
        return fits

    def bytes(self, app: Node, index_box: Box | None) -> int:
        """The padded buffers' bytes of one application, whose IPFIndex is ``index_box``."""
        # a placed Application names its operation; an operation run whole is its own shard
        op_id = app.id if app.type == OPERATION else app.body.get("operationId")
        inputs = app.body.get("inputs")
        if not isinstance(op_id, str) or index_box is None or not isinstance(inputs, dict):
            return 0
        sig = self.signature(op_id)
        if sig is None:
            return 0
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
        shard_range = None
        total = 0
        for key, items in inputs.items():
            ipfs = sig.get(key)
            if ipfs is None or not isinstance(items, list) or len(ipfs) != len(items):
                continue
            for n, (item, ipf) in enumerate(zip(items, ipfs, strict=True)):
                tid = item.get("tensorId") if isinstance(item, dict) else None
                if ipf is None or not isinstance(tid, str):
                    continue
                if op_box is not None and self.fits_whole(op_id, key, n, tid, ipf, op_box):
                    continue
                trange = self._range(tid)
                if shard_range is None:  # projected only when an input may reach past
                    shard_range = ZRange(*index_box)
                try:
                    projected = ipf.apply_range(shard_range)
                except GeonError:  # a malformed IPF is the checker's issue, not a cost
                    continue
                if trange is None or trange.rank != projected.rank or trange.contains(projected):
                    continue
                total += projected.size * self.eb.get(tid, 0)
        return total
