"""Collectives inferred on every edge of a placed document (DESIGN.md §9, issue 16 item 3).

An **edge** is a tensor written by the placed Applications of one operation (the producer) and
read by the placed Applications of another (the consumer). The regions that move are
:func:`geon.core.cost.regions_that_move`'s (a region read that the consumer's device did not
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

Graph inputs move only once a plan has placed them (:func:`geon.core.plans.held_regions`:
replicated, sharded over a mesh axis, or on one device): the region each device holds counts as
written there by the input tensor itself, which is then the collective's ``producer`` (a sharded
weight read whole is an all-gather, as in FSDP; an input on one device read by the others, sends).
Inputs no plan placed are replicated wherever they are read: nothing moves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from geon.core.cost import Box, Device, Written, box_size, regions_that_move, writers_of
from geon.core.costmodel.formulas import Kind, collective_seconds, slowest_link
from geon.core.costmodel.placed import PlacedDocument, Shard, boxes_union_size
from geon.core.costmodel.profiles import Link, Profile
from geon.core.graph import IPF_SIGNATURE
from geon.core.ops import REDUCTIONS
from geon.core.sharding import Mesh

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

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tensor": self.tensor,
            "producer": self.producer,
            "consumer": self.consumer,
            "meshAxes": list(self.mesh_axes),
            "devices": self.devices,
            "bytes": self.bytes,
            "seconds": self.seconds,
        }


@dataclass(slots=True)
class _Edge:
    tensor: str
    producer: str
    consumer: str
    moves: list[tuple[Device, Device, Box]]
    """Regions moving from a source device to a target device."""


Entries = Sequence[tuple[Device, Box]]


def _writers(doc: PlacedDocument) -> dict[str, Written[Shard]]:
    """The placed shards writing each tensor; a graph input a plan placed is "written" where it
    is held, by its own tensor id (its ``producer`` in a collective)."""
    inputs = [
        Shard(tid, tid, device, None, (), ((tid, box),), (), (box_size(box),))
        for tid, held in doc.held.items()
        for device, box in held
    ]
    return writers_of([*doc.shards, *inputs])


def _edges(doc: PlacedDocument, writers: dict[str, Written[Shard]]) -> list[_Edge]:
    """The edges that move data (:func:`geon.core.cost.regions_that_move`), each with its
    moves, in document order of the consumers."""
    edges: dict[tuple[str, str, str], _Edge] = {}
    for tid, producer, consumer, common in regions_that_move(doc.shards, writers):
        key = (tid, producer.op_id, consumer.op_id)
        edge = edges.get(key) or edges.setdefault(key, _Edge(*key, []))
        assert producer.device is not None and consumer.device is not None
        edge.moves.append((producer.device, consumer.device, common))
    return list(edges.values())


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


def _reduced_dims(doc: PlacedDocument, op_id: str, tensor_id: str) -> frozenset[int]:
    """The dims of ``tensor_id`` that operation ``op_id`` reduces: the zero rows of the
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
) -> tuple[int, float]:
    """``n`` and the slowest group's seconds of a collective over ``axes``: groups are the
    devices sharing their coordinates on the other mesh axes, each holding the union of its
    entries' boxes."""
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
    return n, seconds


def _point_to_point(
    kind: Kind, edge: _Edge, axes: Sequence[str], eb: int, profile: Profile
) -> Collective:
    link = _link(profile, axes)
    received: dict[Device, int] = {}
    for _, target, box in edge.moves:
        received[target] = received.get(target, 0) + box_size(box) * eb
    seconds = max(collective_seconds(kind, 2, b, link) for b in received.values())
    devices = sorted({d for s, t, _ in edge.moves for d in (s, t)})
    nbytes = boxes_union_size(box for _, _, box in edge.moves) * eb
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
    )


def _classify(
    doc: PlacedDocument,
    edge: _Edge,
    writers: dict[str, Written[Shard]],
    profile: Profile,
) -> Collective:
    tid = edge.tensor
    eb = doc.element_bytes.get(tid, 0)
    meshes = {d[0] for s, t, _ in edge.moves for d in (s, t)}
    if len(meshes) != 1:
        return _point_to_point("send", edge, (), eb, profile)
    mesh = doc.meshes[meshes.pop()]
    names = mesh.axis_names()
    moved = sorted(
        {names[m] for s, t, _ in edge.moves for m in range(len(names)) if s[1][m] != t[1][m]},
        key=names.index,
    )
    made = [(p.device, b) for p, b in writers[tid].shards if p.op_id == edge.producer and p.device]
    consumers = doc.by_op[edge.consumer]
    read = [(c.device, b) for c in consumers for t, b in c.reads if t == tid and c.device]
    pc, _ = _carried(made, mesh)
    cc, spans = _carried(read, mesh)
    everyone = tuple(sorted({d for d, _ in [*made, *read]}))

    def collective(kind: Kind, axes: Sequence[str], entries: Entries, eb: int) -> Collective:
        link = _link(profile, axes)
        n, seconds = _group_seconds(kind, entries, mesh, axes, eb, link)
        nbytes = boxes_union_size(b for _, b in entries) * eb
        return Collective(
            kind, tid, edge.producer, edge.consumer, tuple(axes), n, nbytes, seconds, everyone
        )

    reduced = _reduced_dims(doc, edge.consumer, tid)
    partial = [a for a in names if pc[a] & reduced]
    if partial:
        results = [(c.device, b) for c in consumers for _, b in c.writes if c.device]
        rc, _ = _carried(results, mesh)
        kind: Kind = "reduce-scatter" if any(rc[a] for a in partial) else "all-reduce"
        written = [doc.element_bytes.get(t, 0) for c in consumers for t, _ in c.writes]
        out_eb = max(written, default=0)
        return collective(kind, partial, results, out_eb)
    if moved and all(pc[a] and not cc[a] and spans[a] for a in moved):
        return collective("all-gather", moved, read, eb)
    if moved and all(pc[a] and cc[a] and pc[a] != cc[a] and spans[a] for a in moved):
        return collective("all-to-all", moved, read, eb)
    if len(moved) == 1 and pc[moved[0]] and pc[moved[0]] == cc[moved[0]]:
        m = names.index(moved[0])
        if all(abs(s[1][m] - t[1][m]) == 1 for s, t, _ in edge.moves):
            return _point_to_point("permute", edge, moved, eb, profile)
    return _point_to_point("send", edge, moved, eb, profile)


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
    found once, and only the classification, which times each collective, runs per profile."""
    writers = _writers(doc)
    edges = _edges(doc, writers)
    return [
        _fuse_all_reduces([_classify(doc, edge, writers, profile) for edge in edges])
        for profile in profiles
    ]
