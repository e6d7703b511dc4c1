"""Sharding: cut an operation's index range into shards and write one Application per shard.

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> g = Graph.from_json(json.loads(text))
>>> op = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
>>> changes = shard(g, op, dim=1, parts=5)
>>> [str(index_range_of(a)) for a in g.index.applications_of(op)]
['[0:10, 0:1]', '[0:10, 1:2]', '[0:10, 2:3]', '[0:10, 3:4]', '[0:10, 4:5]']
>>> g.check()
[]

Each Application gets an ``IPFIndex`` tag (its shard of the index range) and selections that are
the projections of that shard through the operation's ``IPFSignature`` (so a window projection,
such as conv2d's over Height, gives overlapping input halos while the outputs still partition the
output range); an input's projection is clipped to its tensor's range, since a padded read (pad,
a padded conv2d) reaches past the tensor and reads zeros there. Sharding an operation again
replaces its old Applications, in one atomic edit.

Shards are cut with :meth:`geon.core.zspace.ZRange.split` (``parts``, ``chunk`` or ``sizes`` along
one dim) or :meth:`~geon.core.zspace.ZRange.split_grid` (``grid``: several dims at once). A dim is
an index dim number or, when the operation has ``IndexAxes``, an index axis name such as ``"H"``.

Bounds (:mod:`geon.core.limits`), each checked before any shard is built: at most
:data:`~geon.core.limits.MAX_PIECES` shards per operation (``limit`` lowers it: an edit passes
what is left of its op budget), no more parts than a split dim has index points (the refusal
counts the empty shards rather than building them), and meshes of at most
:data:`~geon.core.limits.MAX_MESH_AXES` axes and :data:`~geon.core.limits.MAX_MESH_DEVICES`
devices.

Placement: with ``mesh`` (the id of a Mesh node) every Application gets a ``Placement`` tag. With
``over`` (index dim -> mesh axis) each listed dim is split into as many parts as its mesh axis has
devices and a shard's coordinate on that mesh axis is its part number (mesh axes not listed get
coordinate 0); without ``over`` shards are laid out over the devices in row-major order.
:func:`device_bytes` is the first piece of the cost model: the bytes each device reads and writes.

The cost model (DESIGN.md §4 "Shard plans"): a device is ``(mesh id, coords)``, where placed
Applications run.

- :func:`transfers`: per edge, the bytes that must move. For each placed consumer Application
  and each input selection, the region it reads of a tensor is intersected with the output
  selection of every placed Application writing that tensor; a common region on another device
  moves from the producer's device to the consumer's. Tensors no Application writes (graph
  inputs, or the results of operations that run whole) have no producing device and move
  nothing: where inputs start out is not part of a plan. Two consumers on one device that read
  the same region each count it (a runtime may share it).
  :func:`transfer_bytes` sums them per (source, target) pair.
- :func:`device_memory`: per device, bytes resident while its shards run: ``outputs`` — the
  distinct cells its Applications write; ``inputs`` — the distinct cells they read that the
  device does not write itself (received or placed there); ``temporaries`` — the zero-filled
  buffers of padded reads (an input whose projection reaches past its tensor is read into a
  buffer of the projection's full shape, as the executor does).

Tensors of unknown dtype count 0 bytes per element, and nodes that are malformed (see the
checker's issues) are left out.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from geon.core.constraints import index_range, is_well_formed, parse_range
from geon.core.errors import DocumentError, GeonError, LimitError, SplitError
from geon.core.graph import (
    APPLICATION,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    MESH,
    OPERATION,
    PLACEMENT,
    TENSOR,
    Change,
    Graph,
    Node,
)
from geon.core.limits import MAX_MESH_AXES, MAX_MESH_DEVICES, MAX_PIECES, show_int
from geon.core.zspace import IPF, ZRange, union_size

__all__ = [
    "DTYPE_BYTES",
    "Device",
    "DeviceMemory",
    "Mesh",
    "Transfer",
    "device_bytes",
    "device_memory",
    "index_range_of",
    "resolve_dim",
    "shard",
    "shard_edits",
    "shard_ranges",
    "transfer_bytes",
    "transfers",
]

DTYPE_BYTES = {
    "boolean": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "float16": 2,
    "int32": 4,
    "float32": 4,
    "int64": 8,
    "float64": 8,
    "complex64": 8,
    "complex128": 16,
}
"""Bytes per element of each dtype."""


def _q(value: Any) -> str:
    return f'"{value}"'


@dataclass(frozen=True, slots=True)
class Mesh:
    """A device mesh read from a Mesh node: ordered ``(axis name, size)`` pairs.

    >>> m = Mesh("m", "tpu", (("x", 2), ("y", 4)))
    >>> m.size, m.coords(5)
    (8, (1, 1))
    """

    id: str
    name: str
    axes: tuple[tuple[str, int], ...]

    @classmethod
    def from_node(cls, node: Node) -> Mesh:
        """The mesh of a Mesh node; :class:`DocumentError` naming the bad size, or
        :class:`LimitError` when it has more than :data:`~geon.core.limits.MAX_MESH_AXES` axes
        or :data:`~geon.core.limits.MAX_MESH_DEVICES` devices."""
        axes = node.body.get("axes")
        if node.type != MESH or not isinstance(axes, dict):
            raise DocumentError(f"node {_q(node.id)} is not a Mesh node; expected a Mesh")
        if len(axes) > MAX_MESH_AXES:
            raise LimitError(
                f"mesh {_q(node.id)} has {len(axes)} axes; expected at most {MAX_MESH_AXES}"
            )
        sizes = []
        devices = 1
        for name, size in axes.items():
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise DocumentError(
                    f'mesh {_q(node.id)} axis {_q(name)} has size "{size}"; '
                    "expected an integer >= 1"
                )
            sizes.append((name, size))
            devices *= size
        if devices > MAX_MESH_DEVICES:
            shape = " x ".join(f"{name}={show_int(size)}" for name, size in sizes)
            raise LimitError(
                f"mesh {_q(node.id)} has {show_int(devices)} devices ({shape}); expected at "
                f"most {MAX_MESH_DEVICES}"
            )
        return cls(node.id, str(node.body.get("name", "")), tuple(sizes))

    @property
    def size(self) -> int:
        n = 1
        for _, s in self.axes:
            n *= s
        return n

    def axis_names(self) -> tuple[str, ...]:
        return tuple(a for a, _ in self.axes)

    def coords(self, device: int) -> tuple[int, ...]:
        """The coordinates of device number ``device`` in row-major order."""
        out = []
        for _, s in reversed(self.axes):
            device, c = divmod(device, s)
            out.append(c)
        return tuple(reversed(out))


def index_range_of(node: Node) -> ZRange | None:
    """The ``IPFIndex`` of a node as a range (None when it has none or it is malformed)."""
    return parse_range(node.tags.get(IPF_INDEX)) if node.tags else None


def _operation(graph: Graph, op_id: str) -> Node:
    op = graph.get(op_id)
    if op is None:
        raise DocumentError(
            f"operation {_q(op_id)} does not exist; expected the id of one of the "
            f"{len(graph.of_type(OPERATION))} operations in the graph"
        )
    if op.type != OPERATION:
        raise DocumentError(
            f"node {_q(op_id)} is a {op.type.rsplit('/', 1)[-1]}; expected an Operation"
        )
    if not is_well_formed(graph.index, op):
        raise DocumentError(
            f"operation {_q(op_id)} is malformed; fix its SchemaConformance issues first"
        )
    return op


def _index_axes(op: Node) -> list[str]:
    tag = op.tags.get(INDEX_AXES) if op.tags else None
    axes = tag.get("axes") if isinstance(tag, dict) else None
    return [a for a in axes if isinstance(a, str)] if isinstance(axes, list) else []


_DIM_DIGITS = 18
"""Digits of a dim number given as text (longer is no dim: ranks are at most 64)."""


def resolve_dim(op: Node, dim: int | str, rank: int) -> int:
    """An index dim given as a number (``1``, ``"1"``) or an index axis name (``"H"``).

    Raises :class:`SplitError` naming the dim and what would be valid.
    """
    names = _index_axes(op)
    digits = dim.strip().lstrip("-") if isinstance(dim, str) else ""
    if digits.isascii() and digits.isdigit() and len(digits) <= _DIM_DIGITS:
        dim = int(dim)
    if isinstance(dim, int) and not isinstance(dim, bool):
        if 0 <= dim < rank:
            return dim
        raise SplitError(
            f'dim "{dim}" is not an index dim of operation {_q(op.id)}; expected 0..{rank - 1}'
            + (f" or one of ({', '.join(_q(n) for n in names)})" if names else "")
        )
    if dim in names:
        return names.index(dim)
    plain = [i for i, n in enumerate(names) if n.split("+")[0].split("-")[0] == dim]
    if len(plain) == 1:
        return plain[0]
    expected = ", ".join(_q(n) for n in names)
    raise SplitError(
        f'axis "{dim}" is not an index axis of operation {_q(op.id)}; expected one of ('
        + expected
        + f") or a dim number 0..{rank - 1}"
        if names
        else f'axis "{dim}" cannot be resolved: operation {_q(op.id)} has no IndexAxes; '
        f"expected a dim number 0..{rank - 1}"
    )


def shard_ranges(
    op_range: ZRange,
    *,
    dim: int | None = None,
    parts: int | None = None,
    chunk: int | None = None,
    sizes: Sequence[int] | None = None,
    grid: Mapping[int, int] | None = None,
    limit: int = MAX_PIECES,
) -> tuple[ZRange, ...]:
    """The shards of an index range: along ``dim`` (by ``parts``, ``chunk`` or ``sizes``) or a
    ``grid`` (dim -> parts). Refuses shards that would be empty, and more than ``limit``
    shards (:class:`~geon.core.errors.LimitError`), before building any.

    >>> [str(r) for r in shard_ranges(ZRange([0, 0], [4, 6]), grid={0: 2, 1: 3})]
    ['[0:2, 0:2]', '[0:2, 2:4]', '[0:2, 4:6]', '[2:4, 0:2]', '[2:4, 2:4]', '[2:4, 4:6]']
    """
    if grid is not None:
        if dim is not None or parts is not None or chunk is not None or sizes is not None:
            raise SplitError(
                "a grid split takes no dim, parts, chunk or sizes; give one or the other"
            )
        _refuse_empty_parts(op_range, grid)
        shards = op_range.split_grid(parts=grid, limit=limit)
    else:
        if dim is None:
            raise SplitError("a split needs a dim (or a grid); none was given")
        if parts is not None:
            _refuse_empty_parts(op_range, {dim: parts})
        shards = op_range.split(dim, parts=parts, chunk=chunk, sizes=sizes, limit=limit)
    empty = [str(s) for s in shards if s.is_empty]
    if empty and not op_range.is_empty:
        _empty_shards(op_range, len(empty), empty[0])
    return shards


def _empty_shards(op_range: ZRange, count: int, first: object) -> None:
    raise SplitError(
        f"splitting {op_range} gives {show_int(count)} empty shards (such as {first}); "
        "expected fewer parts than index points in the split dims"
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _refuse_empty_parts(op_range: ZRange, parts: Mapping[int, int]) -> None:
    """Refuse a split into more parts than a dim has index points, before building anything:
    the message names the shards it would leave empty, as :func:`shard_ranges` does for
    ``sizes`` with zeros. Bad dims and parts are left to :meth:`ZRange.split_count`."""
    if op_range.is_empty:
        return
    valid = {}
    for d, p in parts.items():
        if _is_int(d) and 0 <= d < op_range.rank and _is_int(p) and p >= 1:
            valid[d] = p
    over = [d for d in sorted(valid) if valid[d] > op_range.shape[d]]
    if not over or len(valid) != len(parts):
        return
    total = kept = 1
    for d, p in valid.items():
        total *= p
        kept *= min(p, op_range.shape[d])
    # the first empty shard in row-major order: the first piece of every split dim but the
    # last one that runs out of points, which is at its first empty piece (at its end)
    start, end = list(op_range.start), list(op_range.end)
    for d in sorted(valid):
        end[d] = start[d] + -(-op_range.shape[d] // valid[d])
    start[over[-1]] = end[over[-1]] = op_range.end[over[-1]]
    _empty_shards(op_range, total - kept, ZRange._raw(tuple(start), tuple(end)))


def shard_edits(
    graph: Graph,
    op_id: str,
    shards: Sequence[ZRange],
    *,
    mesh: str | None = None,
    coords: Sequence[Sequence[int]] | None = None,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> list[dict[str, Any]]:
    """The edit ops (for :meth:`Graph.apply` or the websocket) that replace the Applications of
    operation ``op_id`` by one Application per shard, placed at ``coords`` of ``mesh``."""
    op = _operation(graph, op_id)
    sig_tag = op.tags.get(IPF_SIGNATURE) if op.tags else None
    if not isinstance(sig_tag, dict):
        raise DocumentError(
            f"operation {_q(op_id)} has no IPFSignature; expected one to project the shards' "
            "index ranges onto its tensors"
        )
    irange = index_range(graph.index, op)
    if irange is None:
        raise DocumentError(
            f"operation {_q(op_id)} has no index range; expected an IPFIndex tag or IndexAxes "
            "whose axes have bound lengths"
        )
    for s in shards:
        if s.rank != irange.rank or not irange.contains(s):
            raise SplitError(
                f"shard {_q(s)} is not inside the index range {_q(irange)} of operation {_q(op_id)}"
            )
    if mesh is not None:
        mesh_node = graph.get(mesh)
        if mesh_node is None or mesh_node.type != MESH:
            raise DocumentError(f"mesh {_q(mesh)} does not exist; expected the id of a Mesh node")
        if coords is None or len(coords) != len(shards):
            raise SplitError(f"placing {len(shards)} shards needs {len(shards)} coordinates")
    ipfs: dict[str, dict[str, list[IPF]]] = {}
    for side in ("inputs", "outputs"):
        ipfs[side] = {}
        for key, items in (sig_tag.get(side) or {}).items():
            try:
                ipfs[side][key] = [IPF.from_json(item) for item in items]
            except Exception as exc:
                raise DocumentError(
                    f"operation {_q(op_id)} IPFSignature {side} {_q(key)} is malformed: {exc}"
                ) from None
    ops: list[dict[str, Any]] = [
        {"op": "remove_node", "id": app.id} for app in graph.index.applications_of(op_id)
    ]
    for n, s in enumerate(shards):
        body: dict[str, Any] = {"operationId": op_id}
        for side in ("inputs", "outputs"):
            selmap = op.body.get(side)
            if selmap is None:
                continue
            out: dict[str, list[dict[str, Any]]] = {}
            for key, items in selmap.items():
                fns = ipfs[side].get(key)
                if fns is None or len(fns) != len(items):
                    raise DocumentError(
                        f"operation {_q(op_id)} IPFSignature has no IPF for each selection of "
                        f"{side} {_q(key)}; expected {len(items)}"
                    )
                out[key] = [
                    {"tensorId": item["tensorId"], "range": _selection(graph, side, item, f(s))}
                    for item, f in zip(items, fns, strict=True)
                ]
            body[side] = out
        tags: dict[str, Any] = {IPF_INDEX: s.to_json()}
        if mesh is not None and coords is not None:
            tags[PLACEMENT] = {"mesh": mesh, "coords": list(coords[n])}
        ops.append(
            {
                "op": "add_node",
                "node": {"id": new_id(), "type": APPLICATION, "body": body, "tags": tags},
            }
        )
    return ops


def _selection(graph: Graph, side: str, item: Any, projected: ZRange) -> dict[str, list[int]]:
    """An Application's selection: the projection of its shard, clipped to the tensor for an
    input (a padded read reaches past the tensor; the cells outside are zeros, not reads)."""
    if side == "inputs":
        tid = item.get("tensorId") if isinstance(item, dict) else None
        tensor = graph.get(tid) if isinstance(tid, str) else None
        trange = parse_range(tensor.body.get("range")) if tensor and tensor.type == TENSOR else None
        if trange is not None and trange.rank == projected.rank:
            return projected.clip(trange).to_json()
    return projected.to_json()


def shard(
    graph: Graph,
    op_id: str,
    *,
    dim: int | str | None = None,
    parts: int | None = None,
    chunk: int | None = None,
    sizes: Sequence[int] | None = None,
    grid: Mapping[int | str, int] | None = None,
    mesh: str | None = None,
    over: Mapping[int | str, str] | None = None,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    limit: int = MAX_PIECES,
) -> list[Change]:
    """Shard operation ``op_id`` and replace its Applications (one atomic edit of ``graph``).

    Raises :class:`SplitError` or :class:`DocumentError` (and changes nothing) when the request
    cannot be met, and :class:`LimitError` when it would make more than ``limit`` shards or the
    mesh is too large; every refusal comes before any shard is built.
    """
    op = _operation(graph, op_id)
    irange = index_range(graph.index, op)
    if irange is None:
        raise DocumentError(
            f"operation {_q(op_id)} has no index range; expected an IPFIndex tag or IndexAxes "
            "whose axes have bound lengths"
        )
    mesh_obj = None
    if mesh is not None:
        node = graph.get(mesh)
        if node is None or node.type != MESH:
            raise DocumentError(f"mesh {_q(mesh)} does not exist; expected the id of a Mesh node")
        mesh_obj = Mesh.from_node(node)
    coords: list[tuple[int, ...]] | None = None
    if over is not None:
        if mesh_obj is None:
            raise SplitError("splitting over mesh axes needs a mesh; none was given")
        if dim is not None or parts is not None or chunk is not None or sizes is not None or grid:
            raise SplitError("a split over mesh axes takes no dim, parts, chunk, sizes or grid")
        names = mesh_obj.axis_names()
        sizes_by_axis = dict(mesh_obj.axes)
        dims: dict[int, str] = {}
        for d, axis in over.items():
            if axis not in sizes_by_axis:
                raise SplitError(
                    f"mesh axis {_q(axis)} does not exist in mesh {_q(mesh)}; expected one of ("
                    + ", ".join(_q(n) for n in names)
                    + ")"
                )
            dims[resolve_dim(op, d, irange.rank)] = axis
        order = sorted(dims)
        shards = shard_ranges(irange, grid={d: sizes_by_axis[dims[d]] for d in order}, limit=limit)
        coords = []
        counts = [sizes_by_axis[dims[d]] for d in order]
        for n in range(len(shards)):
            part: dict[str, int] = {}
            rest = n
            for d, c in zip(reversed(order), reversed(counts), strict=True):
                rest, p = divmod(rest, c)
                part[dims[d]] = p
            coords.append(tuple(part.get(a, 0) for a in names))
    else:
        grid_dims = (
            {resolve_dim(op, d, irange.rank): k for d, k in grid.items()}
            if grid is not None
            else None
        )
        one_dim = resolve_dim(op, dim, irange.rank) if dim is not None else None
        shards = shard_ranges(
            irange,
            dim=one_dim,
            parts=parts,
            chunk=chunk,
            sizes=sizes,
            grid=grid_dims,
            limit=limit,
        )
        if mesh_obj is not None:
            if len(shards) > mesh_obj.size:
                raise SplitError(
                    f"{len(shards)} shards do not fit on mesh {_q(mesh)} of {mesh_obj.size} "
                    "devices; expected at most one shard per device"
                )
            coords = [mesh_obj.coords(n) for n in range(len(shards))]
    edits = shard_edits(graph, op_id, shards, mesh=mesh, coords=coords, new_id=new_id)
    return graph.apply(edits)


def device_bytes(graph: Graph) -> dict[tuple[str, tuple[int, ...]], dict[str, int]]:
    """Bytes read (``inputs``) and written (``outputs``) per device by placed Applications.

    Keys are ``(mesh id, coords)``; tensors of unknown dtype count 0 bytes per element.
    """
    out: dict[tuple[str, tuple[int, ...]], dict[str, int]] = {}
    index = graph.index
    for app in graph.of_type(APPLICATION):
        tag = app.tags.get(PLACEMENT) if app.tags else None
        if not isinstance(tag, dict) or not is_well_formed(index, app):
            continue
        key = (tag["mesh"], tuple(int(c) for c in tag["coords"]))
        acc = out.setdefault(key, {"inputs": 0, "outputs": 0})
        for side in ("inputs", "outputs"):
            for items in (app.body.get(side) or {}).values():
                for item in items:
                    tensor = index.get(item["tensorId"])
                    dtype = tensor.body.get("dtype") if tensor and tensor.type == TENSOR else None
                    r = parse_range(item["range"])
                    if r is not None:
                        acc[side] += r.size * DTYPE_BYTES.get(str(dtype), 0)
    return out


Device = tuple[str, tuple[int, ...]]
"""A device of a plan: ``(mesh id, coords)``."""


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


class _Shard(NamedTuple):
    app: Node
    device: Device
    reads: tuple[tuple[str, ZRange], ...]
    writes: tuple[tuple[str, ZRange], ...]


def _placed_shards(graph: Graph) -> list[_Shard]:
    """The well-formed, placed Applications with their selections, in document order."""
    index = graph.index
    out = []
    for app in graph.of_type(APPLICATION):
        tag = app.tags.get(PLACEMENT) if app.tags else None
        if not isinstance(tag, dict) or not is_well_formed(index, app):
            continue
        device = (str(tag["mesh"]), tuple(int(c) for c in tag["coords"]))
        sides: dict[str, list[tuple[str, ZRange]]] = {"inputs": [], "outputs": []}
        for side, found in sides.items():
            for items in (app.body.get(side) or {}).values():
                for item in items:
                    r = parse_range(item["range"])
                    if r is not None:
                        found.append((item["tensorId"], r))
        out.append(_Shard(app, device, tuple(sides["inputs"]), tuple(sides["outputs"])))
    return out


def _element_bytes(graph: Graph, tensor_id: str) -> int:
    tensor = graph.get(tensor_id)
    dtype = tensor.body.get("dtype") if tensor is not None and tensor.type == TENSOR else None
    return DTYPE_BYTES.get(str(dtype), 0)


def transfers(graph: Graph) -> list[Transfer]:
    """Every region a placed consumer shard reads that a placed shard on another device wrote,
    in document order of the consumers (see the module docstring).

    >>> transfers(Graph())
    []
    """
    shards = _placed_shards(graph)
    writers: dict[str, list[tuple[_Shard, ZRange]]] = {}
    for sh in shards:
        for tid, region in sh.writes:
            writers.setdefault(tid, []).append((sh, region))
    out = []
    for consumer in shards:
        for tid, wanted in consumer.reads:
            for producer, written in writers.get(tid, ()):
                if producer.device == consumer.device or written.rank != wanted.rank:
                    continue
                common = wanted.intersection(written)
                if common is None:
                    continue
                out.append(
                    Transfer(
                        tid,
                        common,
                        common.size * _element_bytes(graph, tid),
                        producer.app.id,
                        consumer.app.id,
                        producer.device,
                        consumer.device,
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


def device_memory(graph: Graph) -> dict[Device, DeviceMemory]:
    """Per device, the bytes of inputs, outputs and temporaries (see the module docstring)."""
    reads: dict[Device, dict[str, list[ZRange]]] = {}
    writes: dict[Device, dict[str, list[ZRange]]] = {}
    temporaries: dict[Device, int] = {}
    for sh in _placed_shards(graph):
        for tid, region in sh.reads:
            reads.setdefault(sh.device, {}).setdefault(tid, []).append(region)
        for tid, region in sh.writes:
            writes.setdefault(sh.device, {}).setdefault(tid, []).append(region)
        temporaries[sh.device] = temporaries.get(sh.device, 0) + _padded_buffers(graph, sh.app)
    out = {}
    for device in sorted({*reads, *writes, *temporaries}):
        written = writes.get(device, {})
        outputs = sum(
            union_size(rs) * _element_bytes(graph, tid) for tid, rs in written.items() if rs
        )
        inputs = 0
        for tid, rs in reads.get(device, {}).items():
            own = written.get(tid, [])
            # cells read and not written here: the union of reads and writes minus the writes
            only_read = union_size([*rs, *own]) - union_size(own) if own else union_size(rs)
            inputs += only_read * _element_bytes(graph, tid)
        out[device] = DeviceMemory(inputs, outputs, temporaries.get(device, 0))
    return out


def _padded_buffers(graph: Graph, app: Node) -> int:
    """Bytes of the zero-filled buffers an application's padded reads need: for each input
    whose projection (of the application's IPFIndex through its operation's IPFSignature)
    reaches past its tensor, the projection's full size."""
    op_id = app.body.get("operationId")
    op = graph.get(op_id) if isinstance(op_id, str) else None
    shard_range = index_range_of(app)
    sig = op.tags.get(IPF_SIGNATURE) if op is not None and op.tags else None
    if op is None or shard_range is None or not isinstance(sig, dict):
        return 0
    total = 0
    for key, items in (app.body.get("inputs") or {}).items():
        ipfs = (sig.get("inputs") or {}).get(key)
        if not isinstance(ipfs, list) or len(ipfs) != len(items):
            continue
        for item, raw in zip(items, ipfs, strict=True):
            tensor = graph.get(item["tensorId"])
            trange = parse_range(tensor.body.get("range")) if tensor is not None else None
            try:
                projected = IPF.from_json(raw)(shard_range)
            except GeonError:  # a malformed IPF is the checker's issue, not a cost
                continue
            if trange is None or trange.rank != projected.rank or trange.contains(projected):
                continue
            total += projected.size * _element_bytes(graph, item["tensorId"])
    return total
