"""The placed shards of a document as columns (DESIGN.md §9, "Shard plans"): **the one reader of
placed shards**, and **the rule of which regions move**. :mod:`geon.core.plans.cost.cells` (bytes,
transfers, memory) and :mod:`geon.core.plans.cost` (collectives, time, ledger) build on both.

>>> table = read_table(Graph())
>>> table.ids, table.rows.cells.tolist()
([], [])

A device is ``(mesh id, coords)``. An Application counts when its ``Placement`` names a mesh that
exists and coordinates that fit it, and its operation exists. An operation with no placed
Application runs whole: replicated, one shard of its own selections per device of
:func:`~geon.core.plans.shards.replica_devices`; in a document no plan placed (no Application is
placed on any mesh) on the one device :data:`UNPLACED` (issue 35: an unplaced document runs whole
on one device, and is costed so); and as one unplaced shard, device ``-1``, when several meshes
are used. Selections that are malformed, or whose rank is not their tensor's, are left
out (the checker reports them).

A plan of a thousand operations has tens of thousands of selections and is costed on every
request, so they are read column by column: the JSON's fields are gathered with C-level maps and
checked in bulk (one set of types for all coordinates; a selection is checked on its own only
when the bulk check fails), and every region is a row of NumPy arrays: ``lo`` and ``hi``
(inclusive start, exclusive end), padded past its rank with ``[0, 1)`` so that sizes, containment
and intersections of rows of different ranks need no masks.

**Which regions move** (:func:`regions_that_move`): a consumer shard's region read moves when no
region written on its own device holds all of it; then each region written by a shard of another
operation on another device, intersected with the region read, moves from the producer's device
to the consumer's. Two consumers on one device that read the same region each count it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter, le, methodcaller
from typing import Any

import numpy as np

from geon.core.dtypes import DTYPE_BYTES
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION, IPF_INDEX, OPERATION, PLACEMENT, TENSOR, Graph, Node
from geon.core.plans.shards import Mesh, replica_devices

__all__ = [
    "UNPLACED",
    "Box",
    "Device",
    "Moves",
    "Rows",
    "ShardTable",
    "Writes",
    "box_size",
    "group_keys",
    "index_boxes",
    "operation_boxes",
    "parse_box",
    "placement_device",
    "read_table",
    "regions_that_move",
]

Device = tuple[str, tuple[int, ...]]
"""A device of a plan: ``(mesh id, coords)``."""

UNPLACED: Device = ("", ())
"""The one device a document no plan placed runs on: no mesh, no coordinates."""

Box = tuple[tuple[int, ...], tuple[int, ...]]
"""A region as ``(start, end)`` tuples (inclusive start, exclusive end)."""

_INTS = frozenset({int})
_INT64 = (-(2**63), 2**63)
_TID, _RANGE = itemgetter("tensorId"), itemgetter("range")
_START_END = itemgetter("start", "end")
_EMPTY: dict[str, list[int]] = {"start": [], "end": []}
_MESH, _COORDS = itemgetter("mesh"), itemgetter("coords")
_ID, _BODY, _TAGS = attrgetter("id"), attrgetter("body"), attrgetter("tags")
_PAIRS_PER_CHUNK = 1 << 18
"""Reads paired with the writes of their tensor at once by :func:`regions_that_move` (the
pairs' arrays stay a few MiB however many shards share a tensor)."""


def box_size(box: Box) -> int:
    """The cells of a box.

    >>> box_size(((0, 2), (4, 5)))
    12
    """
    n = 1
    for a, b in zip(box[0], box[1], strict=True):
        n *= b - a
    return n


def parse_box(data: Any) -> Box | None:
    """A ``{"start", "end"}`` region of ints as a box, or None when it is not one."""
    if type(data) is not dict:
        return None
    s, e = data.get("start"), data.get("end")
    if type(s) is not list or type(e) is not list or len(s) != len(e):
        return None
    start, end = tuple(s), tuple(e)
    if not (_INTS.issuperset(map(type, start)) and _INTS.issuperset(map(type, end))):
        return None
    return (start, end) if all(map(le, start, end)) else None


@dataclass(slots=True)
class Rows:
    """Regions as rows: the shard (or producer) each belongs to, whether it is written, its
    tensor (an index of :attr:`ShardTable.tensor_ids`), ``lo``/``hi`` (rows padded past their
    rank with ``[0, 1)``) and its cells."""

    shard: np.ndarray
    write: np.ndarray
    tensor: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cells: np.ndarray

    def take(self, which: np.ndarray) -> Rows:
        """The rows ``which`` selects (a boolean mask or indices), in its order."""
        return Rows(
            self.shard[which],
            self.write[which],
            self.tensor[which],
            self.lo[which],
            self.hi[which],
            self.cells[which],
        )

    def box(self, n: int, rank: int) -> Box:
        """Row ``n`` as a box of ``rank`` dims."""
        return tuple(self.lo[n, :rank].tolist()), tuple(self.hi[n, :rank].tolist())

    def __len__(self) -> int:
        return len(self.shard)


def group_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``keys`` (sorted), the index of each one's first occurrence, and each key's
    group: ``np.unique(keys, return_index=True, return_inverse=True)`` by one stable sort (NumPy
    2's hashing ``unique`` is several times slower on the integer keys of a plan).

    >>> [a.tolist() for a in group_keys(np.array([5, 3, 5, 1]))]
    [[1, 3, 5], [3, 1, 0], [2, 1, 2, 0]]
    """
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(len(keys), dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], order[new], inverse


def _rows(
    shard: np.ndarray, write: np.ndarray, tensor: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> Rows:
    cells = np.prod(hi - lo, axis=1, dtype=np.int64) if lo.shape[1] else np.ones(len(lo), np.int64)
    return Rows(shard, write, tensor, lo, hi, cells)


@dataclass(slots=True)
class ShardTable:
    """The shards of a document (see the module docstring), as columns."""

    ids: list[str]
    """Per shard, its node's id (an Application's; an operation's for its copies run whole)."""
    op: np.ndarray
    """Per shard, its operation (an index of :attr:`op_ids`)."""
    device: np.ndarray
    """Per shard, its device (an index of :attr:`devices`), -1 when unplaced."""
    index_tags: list[Any]
    """Per shard, its ``IPFIndex`` tag as the document has it (:meth:`index_box` reads it)."""
    rows: Rows
    """Every region read and written, by shard in order, its reads before its writes."""
    offsets: np.ndarray
    """Shard ``n``'s rows are ``rows[offsets[n]:offsets[n + 1]]``."""
    op_ids: list[str]
    op_index: dict[str, int]
    ops: dict[str, Node]
    devices: list[Device]
    device_index: dict[Device, int]
    meshes: dict[str, Mesh | None]
    tensor_ids: list[str]
    tensor_index: dict[str, int]
    dtypes: list[str]
    element_bytes: np.ndarray
    ranks: np.ndarray
    """Per tensor, its rank (-1 when its range is malformed)."""
    replicas: list[Device]
    """Where an operation that runs whole runs (:func:`~geon.core.plans.shards.replica_devices`)."""

    @property
    def placed(self) -> np.ndarray:
        """Whether each shard has a device."""
        return self.device >= 0

    def index_box(self, shard: int) -> Box | None:
        """Shard ``shard``'s ``IPFIndex`` (None when it has none or it is malformed)."""
        return parse_box(self.index_tags[shard])

    def device_number(self, device: Device) -> int:
        """The index of ``device`` in :attr:`devices`, added when it is new."""
        return _Devices(self.devices, self.device_index).number(device)

    def box(self, row: int) -> Box:
        """Row ``row`` of :attr:`rows` as a box of its tensor's rank."""
        return self.rows.box(row, int(self.ranks[self.rows.tensor[row]]))


def index_boxes(table: ShardTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every shard's ``IPFIndex`` as a box, read in bulk: ``(valid, rank, lo, hi)``, rows
    padded past their rank with ``[0, 1)`` (:meth:`ShardTable.index_box` reads one). Each
    distinct tag object is read once: an operation run whole has one per copy, the same one."""
    tags = table.index_tags
    distinct = {id(t): t for t in tags}
    if len(distinct) == len(tags):
        return _boxes(tags)
    number = {key: n for n, key in enumerate(distinct)}
    at = np.fromiter(map(number.__getitem__, map(id, tags)), np.intp, len(tags))
    valid, rank, lo, hi = _boxes(list(distinct.values()))
    return valid[at], rank[at], lo[at], hi[at]


def operation_boxes(table: ShardTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every operation's own ``IPFIndex`` (in :attr:`ShardTable.op_ids` order) as a box, as
    :func:`index_boxes` reads the shards'."""
    return _boxes([(table.ops[o].tags or {}).get(IPF_INDEX) for o in table.op_ids])


def placement_device(placement: Any, meshes: dict[str, Mesh | None], graph: Graph) -> Device | None:
    """The device of a ``Placement`` tag whose mesh exists (``meshes`` caches each mesh read,
    None when it is missing or malformed) and whose coords fit it, else None."""
    if type(placement) is not dict:
        return None
    mesh_id, coords = placement.get("mesh"), placement.get("coords")
    if type(mesh_id) is not str or type(coords) is not list:
        return None
    if mesh_id not in meshes:
        node = graph.get(mesh_id)
        try:
            meshes[mesh_id] = Mesh.from_node(node) if node is not None else None
        except GeonError:  # a malformed mesh is the checker's issue, not a cost
            meshes[mesh_id] = None
    mesh = meshes[mesh_id]
    if mesh is None or len(coords) != len(mesh.axes) or not _INTS.issuperset(map(type, coords)):
        return None
    if not all(0 <= c < s for c, (_, s) in zip(coords, mesh.axes, strict=True)):
        return None
    return mesh_id, tuple(coords)


def _is_box(data: Any) -> bool:
    """Whether ``data`` is ``{"start", "end"}`` with int coordinates of one rank that NumPy's
    ``int64`` holds (checked one by one only when the bulk check of :func:`_boxes` fails)."""
    if type(data) is not dict:
        return False
    s, e = data.get("start"), data.get("end")
    if type(s) is not list or type(e) is not list or len(s) != len(e):
        return False
    coords = [*s, *e]
    return _INTS.issuperset(map(type, coords)) and all(_INT64[0] <= c < _INT64[1] for c in coords)


def _boxes(ranges: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each of ``ranges`` as a box when it is one (:func:`parse_box`): ``(valid, rank, lo,
    hi)``, rows padded past their rank with ``[0, 1)``. Checked in bulk first (one set of the
    types of every coordinate, with C-level maps: a plan has tens of thousands of regions);
    one by one only when that fails."""
    m = len(ranges)
    valid = np.ones(m, dtype=bool)
    try:
        ends = list(chain.from_iterable(map(_START_END, ranges)))  # start, end, start, ...
        lens = list(map(len, ends))
        coords = list(chain.from_iterable(ends))
        bulk = (
            set(map(type, ends)) <= {list}
            and lens[0::2] == lens[1::2]
            and set(map(type, coords)) <= _INTS
        )
        if bulk:
            flat = np.array(coords, dtype=np.int64)
    except (KeyError, TypeError, OverflowError):
        bulk = False
    if not bulk:
        ok = list(map(_is_box, ranges))
        valid[:] = ok
        ends = [c for r, k in zip(ranges, ok, strict=True) for c in _START_END(r if k else _EMPTY)]
        lens = list(map(len, ends))
        flat = np.fromiter(chain.from_iterable(ends), np.int64, sum(lens))
    sides = np.array(lens, dtype=np.intp)
    width = int(sides.max()) if m else 0
    if m and int(sides.min()) == width:  # one rank, as a plan's regions mostly are
        lo, hi = flat.reshape(m, 2, width).transpose(1, 0, 2)
        return valid & np.all(lo <= hi, axis=1), sides[0::2], lo, hi
    both = np.zeros((2 * m, width), dtype=np.int64)
    both[1::2] = 1
    if len(flat):
        row = np.repeat(np.arange(2 * m), sides)
        both[row, np.arange(len(flat)) - np.repeat(np.cumsum(sides) - sides, sides)] = flat
    lo, hi = both[0::2], both[1::2]
    valid &= np.all(lo <= hi, axis=1)
    return valid, sides[0::2], lo, hi


def _selections(
    bodies: list[dict[str, Any]], side: str, tensors: dict[str, int], ranks: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The well-formed selections of one side of ``bodies`` whose rank is their tensor's:
    ``(owner, tensor, lo, hi)`` with ``owner`` the index of the body."""
    maps = [b.get(side) for b in bodies]
    try:  # C-level maps when every side is a dict of lists, as documents have them
        lists: list[Any] = list(chain.from_iterable(map(dict.values, maps)))  # type: ignore[arg-type]
        if not set(map(type, lists)) <= {list}:
            raise TypeError
        per_body = np.repeat(np.arange(len(maps)), list(map(len, maps)))  # type: ignore[arg-type]
    except TypeError:
        found = [(n, x) for n, m in enumerate(maps) if type(m) is dict for x in m.values()]
        found = [(n, x) for n, x in found if type(x) is list]
        lists = [x for _, x in found]
        per_body = np.array([n for n, _ in found], dtype=np.intp)
    items = list(chain.from_iterable(lists))
    owner = np.repeat(per_body, list(map(len, lists)))
    try:
        tids, ranges = list(map(_TID, items)), list(map(_RANGE, items))
    except (KeyError, TypeError):
        tids = [i.get("tensorId") if type(i) is dict else None for i in items]
        ranges = [i.get("range") if type(i) is dict else None for i in items]
    valid, rank, lo, hi = _boxes(ranges)
    try:
        found_ids = list(map(tensors.get, tids))  # None for ids no tensor has
    except TypeError:  # an id that is not even hashable
        found_ids = [tensors.get(t) if type(t) is str else None for t in tids]
    if None in found_ids:
        found_ids = [-1 if n is None else n for n in found_ids]
    tensor = np.array(found_ids, dtype=np.intp)
    keep = valid & (tensor >= 0) & (ranks[tensor] == rank)
    return owner[keep], tensor[keep], lo[keep], hi[keep]


def _side_rows(
    bodies: list[dict[str, Any]], tensors: dict[str, int], ranks: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Both sides' selections of ``bodies`` as ``(owner, write, tensor, lo, hi)`` padded to
    ``width`` dims, by owner, each owner's reads before its writes."""
    sides = [_selections(bodies, side, tensors, ranks) for side in ("inputs", "outputs")]
    owner = np.concatenate([s[0] for s in sides])
    write = np.concatenate([np.full(len(s[0]), n == 1) for n, s in enumerate(sides)])
    tensor = np.concatenate([s[1] for s in sides])
    los, his = [], []
    for _, _, lo, hi in sides:  # kept rows have their tensor's rank: at most ``width``
        pad = width - min(lo.shape[1], width)
        los.append(np.pad(lo[:, :width], ((0, 0), (0, pad)), constant_values=0))
        his.append(np.pad(hi[:, :width], ((0, 0), (0, pad)), constant_values=1))
    order = np.argsort(owner, kind="stable")
    lo, hi = np.concatenate(los), np.concatenate(his)
    return owner[order], write[order], tensor[order], lo[order], hi[order]


def _placed_devices(
    placements: list[Any], meshes: dict[str, Mesh | None], graph: Graph, table: _Devices
) -> list[int]:
    """The device (an index of ``table``) of each ``Placement`` tag, -1 when it names none
    (:func:`placement_device`, once per distinct placement when all are well-formed)."""
    try:
        mesh_ids, coords = list(map(_MESH, placements)), list(map(_COORDS, placements))
        bulk = (
            set(map(type, mesh_ids)) <= {str}
            and set(map(type, coords)) <= {list}
            and set(map(type, chain.from_iterable(coords))) <= _INTS
        )
    except (KeyError, TypeError):
        bulk = False
    if not bulk:
        found = [placement_device(p, meshes, graph) for p in placements]
        return [table.number(d) if d is not None else -1 for d in found]
    keys = list(zip(mesh_ids, map(tuple, coords), strict=True))
    known: dict[Device, int] = {}
    for key in dict.fromkeys(keys):
        device = placement_device({"mesh": key[0], "coords": list(key[1])}, meshes, graph)
        known[key] = table.number(device) if device is not None else -1
    return list(map(known.__getitem__, keys))


@dataclass(slots=True)
class _Devices:
    """Devices numbered in the order first seen."""

    devices: list[Device]
    index: dict[Device, int]

    def number(self, device: Device) -> int:
        n = self.index.get(device)
        if n is None:
            n = self.index[device] = len(self.devices)
            self.devices.append(device)
        return n


def read_table(graph: Graph) -> ShardTable:
    """The shards of ``graph`` (see the module docstring)."""
    tensor_nodes = graph.of_type(TENSOR)
    tensor_ids = list(map(_ID, tensor_nodes))
    tensor_bodies = list(map(_BODY, tensor_nodes))
    dtypes = list(map(str, map(methodcaller("get", "dtype"), tensor_bodies)))
    valid, rank, _, _ = _boxes(list(map(methodcaller("get", "range"), tensor_bodies)))
    rank_of = np.where(valid, rank, -1)
    tensors = {tid: n for n, tid in enumerate(tensor_ids)}
    ranks = np.append(rank_of, -2).astype(np.intp)  # -2: what unknown tensors (-1) look up
    width = int(rank_of.max(initial=0))
    ops = {op.id: op for op in graph.of_type(OPERATION)}
    op_index = {op_id: n for n, op_id in enumerate(ops)}
    meshes: dict[str, Mesh | None] = {}
    numbered = _Devices([], {})
    apps = graph.of_type(APPLICATION)
    ids, bodies, tags = list(map(_ID, apps)), list(map(_BODY, apps)), list(map(_TAGS, apps))
    device_of = np.array(
        _placed_devices(list(map(methodcaller("get", PLACEMENT), tags)), meshes, graph, numbered),
        dtype=np.intp,
    )
    try:  # operations named by id, as documents name them; else the checker's issue
        found_ops = list(map(op_index.get, map(methodcaller("get", "operationId"), bodies)))
    except TypeError:  # an id that is not even hashable
        named = [b.get("operationId") for b in bodies]
        found_ops = [op_index.get(o) if type(o) is str else None for o in named]
    op_of = np.array([-1 if o is None else o for o in found_ops], dtype=np.intp)
    kept = np.flatnonzero((device_of >= 0) & (op_of >= 0))
    if len(kept) < len(apps):
        ids, bodies, tags = ([column[n] for n in kept.tolist()] for column in (ids, bodies, tags))
    shard_op, shard_device = op_of[kept].tolist(), device_of[kept].tolist()
    index_tags = list(map(methodcaller("get", IPF_INDEX), tags))
    devices, device_index = numbered.devices, numbered.index
    owner, write, tensor, lo, hi = _side_rows(bodies, tensors, ranks, width)
    has_apps = set(shard_op)
    whole = [op for n, op in enumerate(ops.values()) if n not in has_apps]
    replicas = replica_devices({d[0] for d in devices}, meshes, len(whole))
    if whole:
        copies = max(len(replicas), 1)
        if replicas:
            replica_index = [numbered.number(d) for d in replicas]
        else:  # no mesh is used: the document runs on one device; several: unplaced
            replica_index = [-1 if devices else numbered.number(UNPLACED)]
        base = len(ids)
        for op in whole:
            ids.extend([op.id] * copies)
            shard_op.extend([op_index[op.id]] * copies)
            shard_device.extend(replica_index)
            index_tags.extend([(op.tags or {}).get(IPF_INDEX)] * copies)
        w_owner, w_write, w_tensor, w_lo, w_hi = _side_rows(
            [op.body if type(op.body) is dict else {} for op in whole], tensors, ranks, width
        )
        # each operation's rows once per copy: copy k of operation p is shard base + p*copies + k
        counts = np.bincount(w_owner, minlength=len(whole))
        first = np.cumsum(counts) - counts
        per_op = counts * copies
        n_out = int(per_op.sum())
        p = np.repeat(np.arange(len(whole)), per_op)
        within = np.arange(n_out) - np.repeat(np.cumsum(per_op) - per_op, per_op)
        k, r = within // np.maximum(counts[p], 1), within % np.maximum(counts[p], 1)
        source = first[p] + r
        owner = np.concatenate([owner, base + p * copies + k])
        write = np.concatenate([write, w_write[source]])
        tensor = np.concatenate([tensor, w_tensor[source]])
        lo = np.concatenate([lo, w_lo[source]])
        hi = np.concatenate([hi, w_hi[source]])
    n = len(ids)
    offsets = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(np.bincount(owner, minlength=n), out=offsets[1:])
    return ShardTable(
        ids=ids,
        op=np.array(shard_op, dtype=np.intp),
        device=np.array(shard_device, dtype=np.intp),
        index_tags=index_tags,
        rows=_rows(owner, write, tensor, lo, hi),
        offsets=offsets,
        op_ids=list(ops),
        op_index=op_index,
        ops=ops,
        devices=devices,
        device_index=device_index,
        meshes=meshes,
        tensor_ids=tensor_ids,
        tensor_index=tensors,
        dtypes=dtypes,
        element_bytes=np.array([DTYPE_BYTES.get(d, 0) for d in dtypes], dtype=np.int64),
        ranks=ranks[:-1],
        replicas=replicas,
    )


@dataclass(slots=True)
class Writes:
    """Regions written where data lives, for :func:`regions_that_move`: the placed shards'
    write rows (``shard`` their shard), and regions of graph inputs a plan placed (``shard``
    ``-1 - k`` for the ``k``-th); ``producer`` is the shard's operation index, or for an input
    region ``len(op_ids)`` plus its tensor's index (a graph input is its own producer)."""

    rows: Rows
    producer: np.ndarray
    device: np.ndarray

    @classmethod
    def of(cls, table: ShardTable, held: list[tuple[int, int, Box]] | None = None) -> Writes:
        """The placed shards' write rows, then ``held``: ``(tensor, device, box)`` regions of
        graph inputs (devices as indices of the table's)."""
        mask = table.rows.write & table.placed[table.rows.shard]
        rows = table.rows.take(mask)
        producer = table.op[rows.shard]
        device = table.device[rows.shard]
        if held:
            width = rows.lo.shape[1]
            lo = np.zeros((len(held), width), dtype=np.int64)
            hi = np.ones((len(held), width), dtype=np.int64)
            for n, (_, _, (start, end)) in enumerate(held):
                lo[n, : len(start)], hi[n, : len(end)] = start, end
            k = np.arange(len(held))
            extra = _rows(
                -1 - k,
                np.ones(len(held), dtype=bool),
                np.array([t for t, _, _ in held], dtype=np.intp),
                lo,
                hi,
            )
            rows = Rows(
                *(
                    np.concatenate([a, b])
                    for a, b in zip(_fields(rows), _fields(extra), strict=True)
                )
            )
            producer = np.concatenate([producer, len(table.op_ids) + extra.tensor])
            device = np.concatenate([device, np.array([d for _, d, _ in held], dtype=np.intp)])
        return cls(rows, producer, device)


def _fields(rows: Rows) -> tuple[np.ndarray, ...]:
    return rows.shard, rows.write, rows.tensor, rows.lo, rows.hi, rows.cells


@dataclass(slots=True)
class Moves:
    """Regions that move (:func:`regions_that_move`): per move, its tensor, the write row of
    :class:`Writes` it comes from, the consumer shard, and the region (``lo``/``hi`` padded
    as rows are)."""

    tensor: np.ndarray
    write: np.ndarray
    consumer: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def __len__(self) -> int:
        return len(self.tensor)


def regions_that_move(table: ShardTable, writes: Writes) -> Moves:
    """Every region that moves between devices (the rule of the module docstring), in order of
    the consumers' reads, then of the writes."""
    rows = table.rows
    reads = np.flatnonzero(~rows.write & table.placed[rows.shard])
    n_tensors = len(table.tensor_ids)
    w_order = np.argsort(writes.rows.tensor, kind="stable")
    w_count = np.bincount(writes.rows.tensor, minlength=n_tensors)
    w_start = np.cumsum(w_count) - w_count
    reads = reads[w_count[rows.tensor[reads]] > 0]
    reads = reads[~_written_here(table, writes, reads)]
    counts = w_count[rows.tensor[reads]]
    found: list[tuple[np.ndarray, ...]] = []
    ends = np.cumsum(counts)
    start = 0
    while start < len(reads):
        limit = ends[start] - counts[start] + _PAIRS_PER_CHUNK
        stop = max(int(np.searchsorted(ends, limit, side="right")), start + 1)
        chunk = slice(start, stop)
        found.append(_moves_of(table, writes, reads[chunk], w_order, w_start, counts[chunk]))
        start = stop
    if not found:
        none, box = np.zeros(0, dtype=np.intp), np.zeros((0, rows.lo.shape[1]), np.int64)
        return Moves(none, none, none, box, box)
    return Moves(*(np.concatenate(column) for column in zip(*found, strict=True)))


def _written_here(table: ShardTable, writes: Writes, reads: np.ndarray) -> np.ndarray:
    """Whether each of ``reads`` (rows of the table) is exactly a region written on its own
    device: such a read is held, so nothing moves for it and it need not be paired with every
    write of its tensor (a step's operations run whole read what they wrote on each device: an
    8-device mesh's copies made 64 pairs per read, 8 of them on its device). The ``(tensor,
    device, lo, hi)`` keys are sorted by a hash of them and equal neighbours grouped; keys that
    share a hash but differ are not grouped, so a collision only leaves a read to be paired."""
    rows, w = table.rows, writes.rows
    keys = np.concatenate(
        [
            np.column_stack([rows.tensor[reads], table.device[rows.shard[reads]],
                             rows.lo[reads], rows.hi[reads]]),
            np.column_stack([w.tensor, writes.device, w.lo, w.hi]),
        ]
    ).astype(np.uint64)  # fmt: skip
    if not len(reads):
        return np.zeros(0, dtype=bool)
    factors = np.uint64(0x9E3779B97F4A7C15) ** np.arange(1, keys.shape[1] + 1, dtype=np.uint64)
    order = np.argsort(keys @ factors, kind="stable")  # wraps modulo 2**64
    ordered = keys[order]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    group = np.cumsum(new) - 1
    has_write = np.zeros(int(group[-1]) + 1, dtype=bool)
    has_write[group[order >= len(reads)]] = True
    out = np.empty(len(keys), dtype=bool)
    out[order] = has_write[group]
    return out[: len(reads)]


def _moves_of(
    table: ShardTable,
    writes: Writes,
    reads: np.ndarray,
    w_order: np.ndarray,
    w_start: np.ndarray,
    counts: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """:func:`regions_that_move` for some reads, each paired with every write of its tensor."""
    rows, w = table.rows, writes.rows
    total = int(counts.sum())
    pair_read = np.repeat(np.arange(len(reads)), counts)
    first = np.repeat(w_start[rows.tensor[reads]] - (np.cumsum(counts) - counts), counts)
    ww = w_order[first + np.arange(total)]
    rr = reads[pair_read]
    consumer = rows.shard[rr]
    r_lo, r_hi, w_lo, w_hi = rows.lo[rr], rows.hi[rr], w.lo[ww], w.hi[ww]
    here = writes.device[ww] == table.device[consumer]
    holds = here & np.all(w_lo <= r_lo, axis=1) & np.all(r_hi <= w_hi, axis=1)
    covered = np.bincount(pair_read, weights=holds, minlength=len(reads)) > 0
    lo, hi = np.maximum(r_lo, w_lo), np.minimum(r_hi, w_hi)
    moves = (
        ~covered[pair_read]
        & ~here
        & (writes.producer[ww] != table.op[consumer])
        & np.all(lo < hi, axis=1)
    )
    return rows.tensor[rr][moves], ww[moves], consumer[moves], lo[moves], hi[moves]
