"""Sharding: cut an operation's index range into shards and write one Application per shard.

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> g = Graph.from_json(json.loads(text))
>>> op = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
>>> changes = shard(g, op, dim=1, parts=5)
>>> [str(parse_range(a.tags[IPF_INDEX])) for a in g.index.applications_of(op)]
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

:func:`shard_edits` is the rule: a pure function returning the node ops a shard means (the
websocket's ``shard`` op sends them as they are); :func:`shard` applies them. It takes its
parameters as JSON gives them and refuses any malformed one (a wrong type, a dim named twice in a
``grid`` or ``over``, a mesh axis used twice) as a :class:`~geon.core.errors.GeonError` naming
the value and what is valid, so its callers catch nothing else. What a placed plan
costs (bytes per device, transfers, memory) is :mod:`geon.core.plans.cost.cells`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from geon.core.documents import conforms
from geon.core.errors import DocumentError, LimitError, SplitError, quote
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
from geon.core.limits import (
    MAX_MESH_AXES,
    MAX_MESH_DEVICES,
    MAX_PIECES,
    MAX_REPLICATED_SHARDS,
    show_int,
)
from geon.core.ranges import index_range
from geon.core.signatures import ipf_from_json
from geon.core.zspace import IPF, ZRange, parse_range, selection_of

__all__ = [
    "Mesh",
    "replica_devices",
    "resolve_dim",
    "shard",
    "shard_edits",
    "shard_ranges",
]


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
            raise DocumentError(f"node {quote(node.id)} is not a Mesh node; expected a Mesh")
        if len(axes) > MAX_MESH_AXES:
            raise LimitError(
                f"mesh {quote(node.id)} has {len(axes)} axes; expected at most {MAX_MESH_AXES}"
            )
        sizes = []
        devices = 1
        for name, size in axes.items():
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise DocumentError(
                    f'mesh {quote(node.id)} axis {quote(name)} has size "{size}"; '
                    "expected an integer >= 1"
                )
            sizes.append((name, size))
            devices *= size
        if devices > MAX_MESH_DEVICES:
            shape = " x ".join(f"{name}={show_int(size)}" for name, size in sizes)
            raise LimitError(
                f"mesh {quote(node.id)} has {show_int(devices)} devices ({shape}); expected at "
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


def _operation(graph: Graph, op_id: str) -> Node:
    op = graph.get(op_id) if isinstance(op_id, str) else None
    if op is None:
        raise DocumentError(
            f"operation {quote(op_id)} does not exist; expected the id of one of the "
            f"{len(graph.of_type(OPERATION))} operations in the graph"
        )
    if op.type != OPERATION:
        raise DocumentError(
            f"node {quote(op_id)} is a {op.type.rsplit('/', 1)[-1]}; expected an Operation"
        )
    if not conforms(graph.index, op):
        raise DocumentError(
            f"operation {quote(op_id)} is malformed; fix its SchemaConformance issues first"
        )
    return op


def _index_axes(op: Node) -> list[str]:
    tag = op.tags.get(INDEX_AXES) if op.tags else None
    axes = tag.get("axes") if isinstance(tag, dict) else None
    return [a for a in axes if isinstance(a, str)] if isinstance(axes, list) else []


_V = TypeVar("_V")

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
            f'dim "{dim}" is not an index dim of operation {quote(op.id)}; expected 0..{rank - 1}'
            + (f" or one of ({', '.join(quote(n) for n in names)})" if names else "")
        )
    if dim in names:
        return names.index(dim)
    plain = [i for i, n in enumerate(names) if n.split("+")[0].split("-")[0] == dim]
    if len(plain) == 1:
        return plain[0]
    expected = ", ".join(quote(n) for n in names)
    raise SplitError(
        f'axis "{dim}" is not an index axis of operation {quote(op.id)}; expected one of ('
        + expected
        + f") or a dim number 0..{rank - 1}"
        if names
        else f'axis "{dim}" cannot be resolved: operation {quote(op.id)} has no IndexAxes; '
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
) -> list[dict[str, Any]]:
    """The node ops (for :meth:`Graph.apply` or the websocket) that shard operation ``op_id``:
    remove its Applications and add one per shard; ``graph`` does not change.

    Raises :class:`SplitError` or :class:`DocumentError` when the request cannot be met (a
    parameter of the wrong type or value included: the message names it and what is valid), and
    :class:`LimitError` when it would make more than ``limit`` shards or the mesh is too large;
    nothing else, and every refusal comes before any shard is built.
    """
    _check_types(parts=parts, chunk=chunk, sizes=sizes, grid=grid, over=over)
    op = _operation(graph, op_id)
    irange = index_range(graph.index, op)
    if irange is None:
        raise DocumentError(
            f"operation {quote(op_id)} has no index range; expected an IPFIndex tag or IndexAxes "
            "whose axes have bound lengths"
        )
    mesh_obj = None
    if mesh is not None:
        node = graph.get(mesh) if isinstance(mesh, str) else None
        if node is None or node.type != MESH:
            raise DocumentError(
                f"mesh {quote(mesh)} does not exist; expected the id of a Mesh node"
            )
        mesh_obj = Mesh.from_node(node)
    coords: list[tuple[int, ...]] | None = None
    if over is not None:
        if mesh_obj is None:
            raise SplitError("splitting over mesh axes needs a mesh; none was given")
        if dim is not None or parts is not None or chunk is not None or sizes is not None or grid:
            raise SplitError("a split over mesh axes takes no dim, parts, chunk, sizes or grid")
        shards, coords = _split_over(op, irange, mesh_obj, over, limit)
    else:
        grid_dims = _resolve_keys(op, irange.rank, grid, "grid") if grid is not None else None
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
                    f"{len(shards)} shards do not fit on mesh {quote(mesh_obj.id)} of "
                    f"{mesh_obj.size} devices; expected at most one shard per device"
                )
            coords = [mesh_obj.coords(n) for n in range(len(shards))]
    return _application_ops(graph, op, shards, mesh_obj, coords, new_id)


def _check_types(
    *, parts: object, chunk: object, sizes: object, grid: object, over: object
) -> None:
    """Refuse split parameters of the wrong type, naming the value and the type expected
    (:class:`SplitError`). Their values (parts >= 1, sizes summing to the length) are
    :meth:`ZRange.split_count`'s to check; dims are :func:`resolve_dim`'s."""
    for key, value in (("parts", parts), ("chunk", chunk)):
        if value is not None and not _is_int(value):
            raise SplitError(f"{key} {quote(value)} is not an integer; expected an integer >= 1")
    if sizes is not None and not (
        isinstance(sizes, (list, tuple)) and all(_is_int(w) for w in sizes)
    ):
        raise SplitError(
            f"sizes {quote(sizes)} is not a list of integers; expected integers >= 0 that sum "
            "to the length of the split dim"
        )
    for key, value, valid, shape in (
        ("grid", grid, _is_int, '{dim: parts} such as {"H": 2}'),
        ("over", over, _is_text, '{dim: mesh axis} such as {"N": "dp"}'),
    ):
        if value is not None and not (
            isinstance(value, Mapping)
            and all(_is_dim_key(d) and valid(v) for d, v in value.items())
        ):
            raise SplitError(f"{key} {quote(value)} is invalid; expected {shape}")


def _is_dim_key(value: object) -> bool:
    return _is_int(value) or isinstance(value, str)


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _resolve_keys(op: Node, rank: int, by_dim: Mapping[int | str, _V], key: str) -> dict[int, _V]:
    """``by_dim`` (a ``grid`` or ``over``) keyed by index dim number; :class:`SplitError` when
    two of its keys name one dim (``0`` and ``"H"``)."""
    out: dict[int, _V] = {}
    named: dict[int, int | str] = {}
    for d, value in by_dim.items():
        n = resolve_dim(op, d, rank)
        if n in named:
            raise SplitError(
                f"{key} names dim {n} twice ({quote(named[n])} and {quote(d)}); expected "
                "each dim at most once"
            )
        named[n] = d
        out[n] = value
    return out


def _split_over(
    op: Node, irange: ZRange, mesh: Mesh, over: Mapping[int | str, str], limit: int
) -> tuple[tuple[ZRange, ...], list[tuple[int, ...]]]:
    """The shards of a split of index dims over mesh axes (each dim into as many parts as its
    mesh axis has devices), and each shard's coordinates on the mesh (0 on axes not listed)."""
    names = mesh.axis_names()
    sizes_by_axis = dict(mesh.axes)
    for axis in over.values():
        if axis not in sizes_by_axis:
            raise SplitError(
                f"mesh axis {quote(axis)} does not exist in mesh {quote(mesh.id)}; expected one "
                "of (" + ", ".join(quote(n) for n in names) + ")"
            )
    dims = _resolve_keys(op, irange.rank, over, "over")
    taken: dict[str, int] = {}
    for d, axis in sorted(dims.items()):
        if axis in taken:
            raise SplitError(
                f"over puts dims {taken[axis]} and {d} both on mesh axis {quote(axis)}; "
                "expected each mesh axis at most once"
            )
        taken[axis] = d
    order = sorted(dims)
    counts = [sizes_by_axis[dims[d]] for d in order]
    shards = shard_ranges(irange, grid=dict(zip(order, counts, strict=True)), limit=limit)
    coords = []
    for n in range(len(shards)):
        part: dict[str, int] = {}
        rest = n
        for d, c in zip(reversed(order), reversed(counts), strict=True):
            rest, p = divmod(rest, c)
            part[dims[d]] = p
        coords.append(tuple(part.get(a, 0) for a in names))
    return shards, coords


def _application_ops(
    graph: Graph,
    op: Node,
    shards: Sequence[ZRange],
    mesh: Mesh | None,
    coords: Sequence[Sequence[int]] | None,
    new_id: Callable[[], str],
) -> list[dict[str, Any]]:
    """The ops that replace the Applications of ``op`` by one per shard, each selecting the
    projections of its shard (:func:`~geon.core.zspace.selection_of`), placed at ``coords`` of
    ``mesh``."""
    ipfs = _signature(op)
    ops: list[dict[str, Any]] = [
        {"op": "remove_node", "id": app.id} for app in graph.index.applications_of(op.id)
    ]
    ranges: dict[str, ZRange | None] = {}  # each read tensor's range, parsed once per operation
    # equal IPFs are one object (ipf_from_json): a window is projected once per shard for all
    # the selections through it onto tensors of one range (an elementwise op's operands)
    windows: dict[tuple[bool, int, int, ZRange | None], ZRange] = {}

    def selection(side: str, item: Any, ipf: IPF, n: int, shard: ZRange) -> dict[str, Any]:
        tid = item["tensorId"]
        read = side == "inputs"
        if read and tid not in ranges:
            ranges[tid] = _tensor_range(graph, item)
        bounds = ranges.get(tid) if read else None
        window = windows.get((read, id(ipf), n, bounds))
        if window is None:
            window = windows[read, id(ipf), n, bounds] = selection_of(ipf, shard, bounds, read=read)
        return {"tensorId": tid, "range": window.to_json()}

    for n, s in enumerate(shards):
        body: dict[str, Any] = {"operationId": op.id}
        for side in ("inputs", "outputs"):
            selmap = op.body.get(side)
            if selmap is None:
                continue
            out: dict[str, list[dict[str, Any]]] = {}
            for key, items in selmap.items():
                fns = ipfs[side].get(key)
                if fns is None or len(fns) != len(items):
                    raise DocumentError(
                        f"operation {quote(op.id)} IPFSignature has no IPF for each selection "
                        f"of {side} {quote(key)}; expected {len(items)}"
                    )
                out[key] = [
                    selection(side, item, f, n, s) for item, f in zip(items, fns, strict=True)
                ]
            body[side] = out
        tags: dict[str, Any] = {IPF_INDEX: s.to_json()}
        if mesh is not None and coords is not None:
            tags[PLACEMENT] = {"mesh": mesh.id, "coords": list(coords[n])}
        ops.append(
            {
                "op": "add_node",
                "node": {"id": new_id(), "type": APPLICATION, "body": body, "tags": tags},
            }
        )
    return ops


def _signature(op: Node) -> dict[str, dict[str, list[IPF]]]:
    """The IPFs of an operation's ``IPFSignature``, per side and key."""
    sig_tag = op.tags.get(IPF_SIGNATURE) if op.tags else None
    if not isinstance(sig_tag, dict):
        raise DocumentError(
            f"operation {quote(op.id)} has no IPFSignature; expected one to project the shards' "
            "index ranges onto its tensors"
        )
    ipfs: dict[str, dict[str, list[IPF]]] = {}
    for side in ("inputs", "outputs"):
        ipfs[side] = {}
        for key, items in (sig_tag.get(side) or {}).items():
            try:
                ipfs[side][key] = [ipf_from_json(item) for item in items]
            except Exception as exc:
                raise DocumentError(
                    f"operation {quote(op.id)} IPFSignature {side} {quote(key)} is malformed: {exc}"
                ) from None
    return ipfs


def _tensor_range(graph: Graph, item: Any) -> ZRange | None:
    """The range of the tensor a read selects (a padded read is clipped to it), or None."""
    tid = item.get("tensorId") if isinstance(item, dict) else None
    tensor = graph.get(tid) if isinstance(tid, str) else None
    if tensor is not None and tensor.type == TENSOR:
        return parse_range(tensor.body.get("range"))
    return None


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
    """Shard operation ``op_id`` and replace its Applications, in one atomic edit of ``graph``:
    applies :func:`shard_edits` (which names what it refuses; nothing changes then)."""
    edits = shard_edits(
        graph,
        op_id,
        dim=dim,
        parts=parts,
        chunk=chunk,
        sizes=sizes,
        grid=grid,
        mesh=mesh,
        over=over,
        new_id=new_id,
        limit=limit,
    )
    return graph.apply(edits)


def replica_devices(
    used: set[str], meshes: Mapping[str, Mesh | None], whole: int
) -> list[tuple[str, tuple[int, ...]]]:
    """Where an operation that a placed document leaves whole runs: **replicated on every
    device** of the one mesh its Applications are placed on (``used``: the ids of the meshes
    they name), as an SPMD program runs what it does not shard, in row-major order; nowhere
    (unplaced) when they use no mesh or several. So a tensor partitioned over a mesh axis and
    read by a whole operation is gathered to every device, and the whole operation's result is
    on every device for its readers.

    The ``whole`` operations' copies are bounded before they are made: at most
    :data:`~geon.core.limits.MAX_REPLICATED_SHARDS`, else :class:`LimitError` naming the counts.
    """
    mesh = meshes.get(next(iter(used))) if len(used) == 1 else None
    if mesh is None:
        return []
    if whole * mesh.size > MAX_REPLICATED_SHARDS:
        raise LimitError(
            f"the plan leaves {whole} operations whole on mesh {quote(mesh.name or mesh.id)} of "
            f"{mesh.size} devices: each runs on every device, {whole * mesh.size} shards in "
            f"all; at most {MAX_REPLICATED_SHARDS} can be costed. Split more of them, or place "
            "the plan on a smaller mesh"
        )
    return [(mesh.id, mesh.coords(n)) for n in range(mesh.size)]
