"""Collectives inferred on every edge of a placed document (DESIGN.md §9, issue 16 item 3).

An **edge** is a tensor written by the placed Applications of one operation (the producer) and
read by the placed Applications of another (the consumer). The regions that move are
:func:`geon.core.plans.table.regions_that_move`'s (a region read that the consumer's device did not
write, intersected with each producer shard's region written on another device). What moves is
classified from the regions and mesh coordinates of both sides. A mesh axis *carries* a tensor
dim on one side when that dim's extent is a function of the coordinate on the mesh axis taking
more than one value (the producers of ``h[N, F]`` split over ``N`` on ``dp``: ``dp`` carries ``N``):

- ``reduce-scatter`` / ``all-reduce``: the consumer reduces (``op:sum``, ``op:mean``, ...) dims
  of the tensor that the producers' mesh axes carry (partial sums); a reduce-scatter when the
  consumer's result is partitioned over those mesh axes, an all-reduce when it is not. A
  reduce-scatter whose result is then all-gathered over the same mesh axes is one all-reduce.
- ``all-gather``: every mesh axis the data moves along carries a dim on the producers' side and
  none on the consumers' (each consumer device needs the whole of the partitioned region), and
  the consumers sit on every coordinate of it.
- ``all-to-all``: every such mesh axis carries dims on both sides, but other dims (re-partition).
- ``permute``: the data moves along one mesh axis that carries the same dims on both sides,
  between neighbours only (a conv or stencil halo).
- ``send``: anything else, point to point (also any move between meshes).

``bytes`` is the logical tensor region gathered or reduced (the union of the consumers' regions
read, or for a reduction of the regions they write), not the per-device traffic; for a permute or
a send, the union of the regions moved. ``seconds`` applies :func:`collective_seconds` with the
profile's link of the mesh axes (the slowest, over several): the collective's groups (devices
that share their other coordinates) run at once, so it is the slowest group's time; for a permute
or a send, the device receiving the most bytes. ``devices`` is ``n``, the devices in one group
(for a permute or a send, the devices sending or receiving). Every device that takes part spends
``seconds`` on it.

``groups`` is how many groups run it at once (the devices sharing their coordinates on the mesh
axes it does not run over; for a permute or a send, 1). ``bytesPerDevice`` is one device's result
buffer of the collective, XLA's convention (issue 31, so that ``geon verify`` compares it with the
compiled program's shapes): the reduced tensor of an all-reduce, the piece of a reduce-scatter, the
gathered result of an all-gather, the region a device reads after an all-to-all — each the largest
over the devices — and for a permute or a send what the device receiving the most receives.

Graph inputs move only once a plan has placed them (:func:`geon.core.plans.held_regions`:
replicated, sharded over a mesh axis, or on one device): the region each device holds counts as
written there by the input tensor itself, which is then the collective's ``producer`` (a sharded
weight read whole is an all-gather, as in FSDP; an input on one device read by the others, sends).
Inputs no plan placed are replicated wherever they are read: nothing moves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from geon.core.graph import IPF_SIGNATURE
from geon.core.ops import REDUCTIONS
from geon.core.plans.cost.formulas import Kind, collective_seconds, slowest_link
from geon.core.plans.cost.placed import PlacedDocument, boxes_union_size
from geon.core.plans.cost.profiles import Link, Profile
from geon.core.plans.shards import Mesh
from geon.core.plans.table import Box, Device, Writes, box_size, group_keys, regions_that_move

__all__ = ["Collective", "collectives_by_profile", "infer_collectives"]


@dataclass(frozen=True, slots=True)
class Collective:
    """One collective on an edge (see the module docstring); ``participants`` are the devices
    that spend ``seconds`` on it."""

    kind: Kind
    tensor: str
    producer: str
    consumer: str
    mesh_axes: tuple[str, ...]
    devices: int
    bytes: int
    seconds: float
    participants: tuple[Device, ...]
    bytes_per_device: int = 0
    groups: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tensor": self.tensor,
            "producer": self.producer,
            "consumer": self.consumer,
            "meshAxes": list(self.mesh_axes),
            "devices": self.devices,
            "bytes": self.bytes,
            "bytesPerDevice": self.bytes_per_device,
            "groups": self.groups,
            "seconds": self.seconds,
        }


Entries = Sequence[tuple[Device, Box]]


@dataclass(slots=True)
class _Edge:
    """An edge that moves data, and the regions its classification reads, as rows of
    :class:`_Rows` matrices: the moves (source and target device, region), the regions the
    producer writes of the tensor (``made``), those the consumer reads of it, and, when the
    consumer reduces dims of it (``reduced``), those it writes (``results``); with the element
    bytes of the tensor and of the consumer's results."""

    tensor: str
    producer: str
    consumer: str
    groups: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    eb: int
    out_eb: int
    reduced: frozenset[int]

    def key(self) -> tuple[Any, ...]:
        """What the classification reads: two edges with one key are classified alike."""
        return (self.eb, self.out_eb, self.reduced, *(g.tobytes() for g in self.groups))


class _Rows:
    """Regions as rows ``[device..., rank, lo..., hi...]`` of one int64 matrix, sorted by a
    group key, so that a group's regions are one contiguous slice (compared as bytes)."""

    def __init__(self, keys: np.ndarray, columns: list[np.ndarray]) -> None:
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.matrix = np.ascontiguousarray(np.column_stack(columns)[order])

    def bounds(self, keys: np.ndarray) -> tuple[list[int], list[int]]:
        """Where the group of each of ``keys`` starts and ends."""
        starts = np.searchsorted(self.keys, keys)
        return starts.tolist(), np.searchsorted(self.keys, keys, side="right").tolist()


def _entries(matrix: np.ndarray, devices: list[Device], first: int = 1) -> list[Any]:
    """Rows ``[device..., rank, lo..., hi...]`` (``first`` device columns) as ``(device...,
    box)`` tuples."""
    width = (matrix.shape[1] - first - 1) // 2
    out = []
    for row in matrix.tolist():
        rank, lo = row[first], first + 1
        box = (tuple(row[lo : lo + rank]), tuple(row[lo + width : lo + width + rank]))
        out.append((*(devices[d] for d in row[:first]), box))
    return out


def _edges(doc: PlacedDocument) -> list[_Edge]:
    """The edges that move data (:func:`geon.core.plans.table.regions_that_move`), in order of
    the consumers' first shard that reads across devices."""
    table = doc.table
    rows = table.rows
    writes = Writes.of(table, doc.held)
    moves = regions_that_move(table, writes)
    if not len(moves):
        return []
    n_ops, n_tensors = len(table.op_ids), len(table.tensor_ids)
    n_producers = n_ops + n_tensors
    producer = writes.producer[moves.write]
    consumer_op = table.op[moves.consumer]
    keys, first, at = group_keys((moves.tensor * n_producers + producer) * n_ops + consumer_op)
    ranks = table.ranks
    moved = _Rows(
        at,
        [
            writes.device[moves.write],
            table.device[moves.consumer],
            ranks[moves.tensor],
            moves.lo,
            moves.hi,
        ],
    )
    w = writes.rows
    made = _Rows(
        w.tensor * n_producers + writes.producer, [writes.device, ranks[w.tensor], w.lo, w.hi]
    )
    shard_op, shard_device = table.op[rows.shard], table.device[rows.shard]
    on_device = shard_device >= 0
    r = np.flatnonzero(~rows.write & on_device)
    read = _Rows(
        rows.tensor[r] * n_ops + shard_op[r],
        [shard_device[r], ranks[rows.tensor[r]], rows.lo[r], rows.hi[r]],
    )
    r = np.flatnonzero(rows.write & on_device)
    results = _Rows(shard_op[r], [shard_device[r], ranks[rows.tensor[r]], rows.lo[r], rows.hi[r]])
    eb = table.element_bytes
    out_eb = np.zeros(n_ops, dtype=np.int64)
    r = np.flatnonzero(rows.write)
    np.maximum.at(out_eb, shard_op[r], eb[rows.tensor[r]])
    in_order = np.argsort(first, kind="stable")
    ordered = keys[in_order]
    cs, rest = ordered % n_ops, ordered // n_ops
    ps, ts = rest % n_producers, rest // n_producers
    spans = (
        moved.bounds(in_order),
        made.bounds(ts * n_producers + ps),
        read.bounds(ts * n_ops + cs),
        results.bounds(cs),
    )
    reducing = {
        c for c in group_keys(cs)[0].tolist() if doc.operation(c).body.get("kernel") in REDUCTIONS
    }
    names = [*table.op_ids, *table.tensor_ids]
    matrices = (moved.matrix, made.matrix, read.matrix, results.matrix)
    out: list[_Edge] = []
    for n, (c, p, t) in enumerate(zip(cs.tolist(), ps.tolist(), ts.tolist(), strict=True)):
        reduced = _reduced_dims(doc, c, table.tensor_ids[t]) if c in reducing else frozenset()
        moving, making, reading, resulting = (
            m[a[n] : b[n]] for m, (a, b) in zip(matrices, spans, strict=True)
        )
        edge = _Edge(
            table.tensor_ids[t],
            names[p],
            table.op_ids[c],
            (moving, making, reading, resulting if reduced else resulting[:0]),
            int(eb[t]),
            int(out_eb[c]),
            reduced,
        )
        out.append(edge)
    return out


def _carried(entries: Entries, mesh: Mesh) -> tuple[dict[str, frozenset[int]], dict[str, bool]]:
    """Per mesh axis, the tensor dims it carries (see the module docstring), and whether the
    entries sit on every coordinate of it."""
    carried: dict[str, frozenset[int]] = {}
    spans: dict[str, bool] = {}
    rank = len(entries[0][1][0]) if entries else 0
    for m, (axis, size) in enumerate(mesh.axes):
        seen: dict[int, list[set[tuple[int, int]]]] = {}
        for (_, coords), (start, end) in entries:
            per = seen.setdefault(coords[m], [set() for _ in range(rank)])
            for d in range(rank):
                per[d].add((start[d], end[d]))
        dims = set()
        for d in range(rank):
            one_each = all(len(per[d]) == 1 for per in seen.values())
            if one_each and len({next(iter(per[d])) for per in seen.values()}) > 1:
                dims.add(d)
        carried[axis] = frozenset(dims)
        spans[axis] = len(seen) == size
    return carried, spans


def _reduced_dims(doc: PlacedDocument, op_id: int, tensor_id: str) -> frozenset[int]:
    """The dims of ``tensor_id`` that operation ``op_id`` (an index) reduces: the zero rows of the
    projection its IPFSignature reads the tensor through (none unless it is a reduction)."""
    op = doc.operation(op_id)
    sig = (op.tags or {}).get(IPF_SIGNATURE)
    if op.body.get("kernel") not in REDUCTIONS or not isinstance(sig, dict):
        return frozenset()
    inputs, ipf_inputs = op.body.get("inputs"), sig.get("inputs")
    if not isinstance(inputs, dict) or not isinstance(ipf_inputs, dict):
        return frozenset()
    for key, items in inputs.items():
        ipfs = ipf_inputs.get(key)
        if not isinstance(items, list) or not isinstance(ipfs, list):
            continue
        for item, ipf in zip(items, ipfs, strict=False):
            if isinstance(item, dict) and item.get("tensorId") == tensor_id:
                try:
                    rows = ipf["affineMap"]["projection"]
                    return frozenset(r for r, row in enumerate(rows) if not any(row))
                except (KeyError, TypeError):
                    return frozenset()
    return frozenset()


def _link(profile: Profile, axes: Iterable[str]) -> Link:
    links = [profile.link(a) for a in axes]
    return slowest_link(links) if links else profile.default_link


def _group_seconds(
    kind: Kind, entries: Entries, mesh: Mesh, axes: Sequence[str], eb: int, link: Link
) -> tuple[int, float, int]:
    """``n``, the slowest group's seconds and the number of groups of a collective over
    ``axes``: groups are the devices sharing their coordinates on the other mesh axes, each
    holding the union of its entries' boxes."""
    names = mesh.axis_names()
    inside = {names.index(a) for a in axes}
    n = 1
    for m in inside:
        n *= mesh.axes[m][1]
    groups: dict[tuple[int, ...], list[Box]] = {}
    for (_, coords), box in entries:
        key = tuple(c for m, c in enumerate(coords) if m not in inside)
        groups.setdefault(key, []).append(box)
    seconds = max(
        (collective_seconds(kind, n, boxes_union_size(bs) * eb, link) for bs in groups.values()),
        default=0.0,
    )
    return n, seconds, len(groups)


def _per_device(entries: Entries, eb: int) -> int:
    """The largest union of one device's boxes among ``entries``, in bytes."""
    boxes: dict[Device, list[Box]] = {}
    for device, box in entries:
        boxes.setdefault(device, []).append(box)
    return max((boxes_union_size(bs) * eb for bs in boxes.values()), default=0)


@dataclass(slots=True)
class _Regions:
    """An edge's regions as tuples (:class:`_Edge`'s groups), read when it is classified."""

    moves: list[tuple[Device, Device, Box]]
    made: list[tuple[Device, Box]]
    read: list[tuple[Device, Box]]
    results: list[tuple[Device, Box]]

    @classmethod
    def of(cls, edge: _Edge, devices: list[Device]) -> _Regions:
        moves, made, read, results = edge.groups
        return cls(
            _entries(moves, devices, first=2),
            _entries(made, devices),
            _entries(read, devices),
            _entries(results, devices),
        )


def _point_to_point(
    kind: Kind, edge: _Edge, moves: list[tuple[Device, Device, Box]], axes: Sequence[str],
    profile: Profile,
) -> Collective:  # fmt: skip
    link = _link(profile, axes)
    received: dict[Device, int] = {}
    for _, target, box in moves:
        received[target] = received.get(target, 0) + box_size(box) * edge.eb
    seconds = max(collective_seconds(kind, 2, b, link) for b in received.values())
    devices = sorted({d for s, t, _ in moves for d in (s, t)})
    nbytes = boxes_union_size(box for _, _, box in moves) * edge.eb
    return Collective(
        kind,
        edge.tensor,
        edge.producer,
        edge.consumer,
        tuple(axes),
        len(devices),
        nbytes,
        seconds,
        tuple(devices),
        max(received.values(), default=0),
        1,
    )


def _classify(doc: PlacedDocument, edge: _Edge, profile: Profile) -> Collective:
    regions = _Regions.of(edge, doc.table.devices)
    moves, made, read = regions.moves, regions.made, regions.read
    meshes = {d[0] for s, t, _ in moves for d in (s, t)}
    if len(meshes) != 1:
        return _point_to_point("send", edge, moves, (), profile)
    mesh = doc.meshes[meshes.pop()]
    names = mesh.axis_names()
    moved = sorted(
        {names[m] for s, t, _ in moves for m in range(len(names)) if s[1][m] != t[1][m]},
        key=names.index,
    )
    pc, _ = _carried(made, mesh)
    cc, spans = _carried(read, mesh)
    everyone = tuple(sorted({d for d, _ in [*made, *read]}))

    def collective(kind: Kind, axes: Sequence[str], entries: Entries, eb: int) -> Collective:
        link = _link(profile, axes)
        n, seconds, groups = _group_seconds(kind, entries, mesh, axes, eb, link)
        nbytes = boxes_union_size(b for _, b in entries) * eb
        return Collective(
            kind,
            edge.tensor,
            edge.producer,
            edge.consumer,
            tuple(axes),
            n,
            nbytes,
            seconds,
            everyone,
            _per_device(entries, eb),
            groups,
        )

    partial = [a for a in names if pc[a] & edge.reduced]
    if partial:
        rc, _ = _carried(regions.results, mesh)
        kind: Kind = "reduce-scatter" if any(rc[a] for a in partial) else "all-reduce"
        return collective(kind, partial, regions.results, edge.out_eb)
    if moved and all(pc[a] and not cc[a] and spans[a] for a in moved):
        return collective("all-gather", moved, read, edge.eb)
    if moved and all(pc[a] and cc[a] and pc[a] != cc[a] and spans[a] for a in moved):
        return collective("all-to-all", moved, read, edge.eb)
    if len(moved) == 1 and pc[moved[0]] and pc[moved[0]] == cc[moved[0]]:
        m = names.index(moved[0])
        if all(abs(s[1][m] - t[1][m]) == 1 for s, t, _ in moves):
            return _point_to_point("permute", edge, moves, moved, profile)
    return _point_to_point("send", edge, moves, moved, profile)


def _fuse_all_reduces(found: list[Collective]) -> list[Collective]:
    """A reduce-scatter whose result is all-gathered over the same mesh axes becomes one
    all-reduce (on the reduce-scatter's edge; the all-gather is dropped)."""
    gathers = {(c.producer, c.mesh_axes): n for n, c in enumerate(found) if c.kind == "all-gather"}
    dropped: set[int] = set()
    out = list(found)
    for n, c in enumerate(found):
        if c.kind != "reduce-scatter":
            continue
        g = gathers.get((c.consumer, c.mesh_axes))
        if g is None or g in dropped:
            continue
        dropped.add(g)
        gather = found[g]
        participants = tuple(sorted({*c.participants, *gather.participants}))
        out[n] = Collective(
            "all-reduce",
            c.tensor,
            c.producer,
            c.consumer,
            c.mesh_axes,
            c.devices,
            c.bytes,
            c.seconds + gather.seconds,
            participants,
            max(c.bytes_per_device, gather.bytes_per_device),
            c.groups,
        )
    return [c for n, c in enumerate(out) if n not in dropped]


def infer_collectives(doc: PlacedDocument, profile: Profile) -> list[Collective]:
    """The collective of every edge that moves data, in document order of the consumers' first
    shard that reads across devices (see the module docstring)."""
    [found] = collectives_by_profile(doc, [profile])
    return found


def collectives_by_profile(
    doc: PlacedDocument, profiles: Sequence[Profile]
) -> list[list[Collective]]:
    """:func:`infer_collectives` under each of ``profiles``, in order: the regions that move are
    found once, and only the classification, which times each collective, runs per profile.
    Edges that read the same regions (a model's layers, placed alike) are classified once per
    profile: the others take its collective with their own tensor and operations."""
    edges = _edges(doc)
    keys = [edge.key() for edge in edges]
    out = []
    for profile in profiles:
        classified: dict[tuple[Any, ...], Collective] = {}
        found = []
        for edge, key in zip(edges, keys, strict=True):
            known = classified.get(key)
            if known is None:
                found.append(classified.setdefault(key, _classify(doc, edge, profile)))
            else:
                found.append(
                    replace(
                        known, tensor=edge.tensor, producer=edge.producer, consumer=edge.consumer
                    )
                )
        out.append(_fuse_all_reduces(found))
    return out
