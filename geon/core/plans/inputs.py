"""Where graph inputs live (issue 16 item 2): the :data:`INPUT_PLACEMENT` tag a plan writes on
its input Tensors, and :func:`input_placements`, its reader for the cost model.

A graph input is a Tensor no operation writes (a placeholder or a constant). A plan's ``inputs``
names some of them, by id or by label, and says where each lives: ``"replicated"`` (a copy on
every device of the mesh), ``{"over": {axis: meshAxis}}`` (partitioned along the tensor's axis
into as many equal blocks as the mesh axis has devices; replicated over the other mesh axes) or
``{"device": [coords]}`` (on that one device, broadcast to the others when they read it).
**Every graph input the plan does not name is replicated**: that is the default.

Writing a plan puts ``{"mesh": meshId, "placement": <the plan's value>}`` in the tag of each
input it names, and takes the tag off the other inputs, so the document alone says where its
inputs live. The tag is geon's and kept by loom tools (like ``Constant``); it is not yet one of
the schema-checked :data:`~geon.core.nodes.TAG_TYPES`, so :func:`input_placements` checks it,
naming the tensor, and a mesh axis the mesh does not have.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from geon.core.errors import quote
from geon.core.graph import MESH, TENSOR, TENSOR_AXES, Graph, Node
from geon.core.nodes import GEON_TAG_PREFIX, split_level
from geon.core.plans.model import InputLayout, Plan, PlanError, read_layout, read_mesh
from geon.core.plans.shards import Mesh
from geon.core.zspace import ZRange, parse_range

__all__ = [
    "INPUT_PLACEMENT",
    "InputPlacement",
    "graph_inputs",
    "held_regions",
    "input_ops",
    "input_placements",
]

INPUT_PLACEMENT = GEON_TAG_PREFIX + "InputPlacement"
"""Tag on a graph input Tensor: ``{"mesh": meshId, "placement": "replicated" | {"over": {...}} |
{"device": [...]}}`` (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class InputPlacement:
    """Where one graph input lives: on ``mesh`` (``None``: no plan placed it, so it is
    replicated on whichever mesh reads it) as ``layout`` says."""

    mesh: str | None
    layout: InputLayout = field(default_factory=InputLayout)

    def to_json(self) -> dict[str, Any]:
        return {"mesh": self.mesh, "placement": self.layout.to_json()}


def graph_inputs(graph: Graph) -> list[Node]:
    """The Tensors no operation writes, in document order."""
    return [t for t in graph.of_type(TENSOR) if not graph.index.writers_of(t.id)]


def _tensor_of(
    graph: Graph, key: str, inputs: Sequence[Node], by_label: Mapping[str, list[Node]]
) -> Node:
    """The graph input a plan's ``inputs`` key names: its id, else its (unique) label."""
    node = graph.get(key)
    if node is None:
        found = by_label.get(key, [])
        if len(found) > 1:
            ids = ", ".join(quote(t.id) for t in found[:5])
            raise PlanError(
                f"input {quote(key)} is the label of {len(found)} inputs ({ids}); name one by id"
            )
        if not found:
            labels = ", ".join(quote(t.label or t.id) for t in inputs[:20])
            raise PlanError(
                f"input {quote(key)} is no tensor of the document; expected the label or id of a "
                f"graph input: one of ({labels})"
            )
        return found[0]
    if node.type != TENSOR or graph.index.writers_of(node.id):
        writer = graph.index.writers_of(node.id)
        why = f"is written by operation {quote(writer[0])}" if writer else "is not a Tensor"
        raise PlanError(
            f"input {quote(key)} {why}; expected a graph input (a Tensor no operation writes)"
        )
    return node


def _axis_names(tensor: Node) -> list[str]:
    """The axis names of a tensor's ``TensorAxes``, in order, dual levels dropped."""
    tag = tensor.tags.get(TENSOR_AXES) if tensor.tags else None
    refs = tag.get("axes") if isinstance(tag, dict) else None
    return [split_level(r)[0] if isinstance(r, str) else "" for r in refs or []]


def _check_fits(tensor: Node, layout: InputLayout, key: str, mesh_axes: dict[str, int]) -> None:
    """Refuse an ``over`` naming an axis the tensor does not have, or one with fewer points
    than the mesh axis has devices."""
    names = _axis_names(tensor)
    end = (tensor.body.get("range") or {}).get("end") or []
    start = (tensor.body.get("range") or {}).get("start") or []
    for axis, mesh_axis in layout.over:
        if axis not in names:
            listed = ", ".join(quote(n) for n in names)
            raise PlanError(
                f"input {quote(key)} is placed over axis {quote(axis)}, which it does not have; "
                f"expected one of ({listed})"
            )
        dim = names.index(axis)
        length = end[dim] - start[dim] if dim < min(len(end), len(start)) else None
        if isinstance(length, int) and length < mesh_axes[mesh_axis]:
            raise PlanError(
                f"input {quote(key)} axis {quote(axis)} has {length} points, fewer than the "
                f"{mesh_axes[mesh_axis]} devices of mesh axis {quote(mesh_axis)}; expected a "
                "mesh axis of at most that many devices"
            )


def input_ops(graph: Graph, plan: Plan, mesh_id: str) -> list[dict[str, Any]]:
    """The node ops that write where ``plan`` puts the graph inputs: the tag on each input it
    names, and its removal from the others that have one. :class:`PlanError` names an input key
    that is not a graph input, or a placement that does not fit its tensor."""
    inputs = graph_inputs(graph)
    mesh_axes = dict(plan.mesh_axes)
    by_label: dict[str, list[Node]] = {}
    for tensor in inputs:
        if tensor.label is not None:
            by_label.setdefault(tensor.label, []).append(tensor)
    placed: dict[str, Any] = {}
    for key, layout in plan.inputs:
        tensor = _tensor_of(graph, key, inputs, by_label)
        _check_fits(tensor, layout, key, mesh_axes)
        placed[tensor.id] = {"mesh": mesh_id, "placement": layout.to_json()}
    ops: list[dict[str, Any]] = []
    for tensor in inputs:
        value = placed.get(tensor.id)
        had = tensor.tags.get(INPUT_PLACEMENT) if tensor.tags else None
        if value is not None and had != value:
            # null first: a merge patch would merge the old placement's keys into the new one
            patch = {INPUT_PLACEMENT: None} if had is not None else {}
            if patch:
                ops.append({"op": "update_node", "id": tensor.id, "tags": patch})
            ops.append({"op": "update_node", "id": tensor.id, "tags": {INPUT_PLACEMENT: value}})
        elif value is None and had is not None:
            ops.append({"op": "update_node", "id": tensor.id, "tags": {INPUT_PLACEMENT: None}})
    return ops


def _read_tag(graph: Graph, tensor: Node, tag: Any) -> InputPlacement:
    where = f"tensor {quote(tensor.id)} {INPUT_PLACEMENT.rsplit('/', 1)[-1]}"
    mesh_id = tag.get("mesh") if isinstance(tag, dict) else None
    mesh = graph.get(mesh_id) if isinstance(mesh_id, str) else None
    if mesh is None or mesh.type != MESH or set(tag) != {"mesh", "placement"}:
        raise PlanError(
            f'{where} is {quote(tag)}; expected {{"mesh": the id of a Mesh node, '
            '"placement": "replicated" | {"over": {...}} | {"device": [...]}}'
        )
    name, axes = read_mesh(mesh.body)
    layout = read_layout(tag["placement"], where, name, axes)
    return InputPlacement(mesh.id, layout)


def input_placements(graph: Graph) -> dict[str, InputPlacement]:
    """Where each graph input lives, by tensor id, in document order: as its
    :data:`INPUT_PLACEMENT` tag says, else replicated (``mesh`` ``None``). :class:`PlanError`
    names a tensor whose tag is malformed or names a mesh (or mesh axis) that is not there.

    >>> from geon import core as gc
    >>> N = gc.Axis("N", 4)
    >>> g = gc.graph([gc.relu(gc.placeholder(axes=[N], name="x"))])
    >>> [p.to_json() for p in input_placements(g).values()]
    [{'mesh': None, 'placement': 'replicated'}]
    """
    out: dict[str, InputPlacement] = {}
    for tensor in graph_inputs(graph):
        tag = tensor.tags.get(INPUT_PLACEMENT) if tensor.tags else None
        out[tensor.id] = _REPLICATED if tag is None else _read_tag(graph, tensor, tag)
    return out


_REPLICATED = InputPlacement(None)
"""Where an input no plan placed lives (one value shared: a document has thousands of them)."""


def _held(
    tensor: Node, placement: InputPlacement, mesh: Mesh
) -> list[tuple[tuple[int, ...], ZRange]]:
    """The region of ``tensor`` each device of ``mesh`` holds under ``placement``."""
    full = parse_range(tensor.body.get("range"))
    if full is None:
        raise PlanError(f"tensor {quote(tensor.id)} has no valid range; expected {{start, end}}")
    layout = placement.layout
    if layout.device is not None:
        return [(layout.device, full)]
    names = _axis_names(tensor)
    position = {axis: n for n, axis in enumerate(mesh.axis_names())}
    sizes = dict(mesh.axes)
    out = []
    for device in range(mesh.size):
        coords = mesh.coords(device)
        region = full
        for axis, mesh_axis in layout.over:
            if axis not in names or mesh_axis not in sizes:
                raise PlanError(
                    f"tensor {quote(tensor.id)} is placed over axis {quote(axis)} on mesh axis "
                    f"{quote(mesh_axis)}; expected an axis of the tensor and of mesh "
                    f"{quote(mesh.id)}"
                )
            parts = region.split(names.index(axis), parts=sizes[mesh_axis])
            region = parts[coords[position[mesh_axis]]]
        out.append((coords, region))
    return out


def held_regions(graph: Graph) -> dict[str, tuple[str, list[tuple[tuple[int, ...], ZRange]]]]:
    """For each graph input a plan placed (by tensor id): its mesh id, and the region of the
    tensor each device holding part of it holds — every device the whole tensor when it is
    replicated, one block per coordinate of the mesh axis along each ``over`` axis (cut as
    ``shard`` cuts: sizes differing by at most one, larger first), or the one ``device``.
    Inputs no plan placed are left out: they are replicated on whichever mesh reads them.

    >>> from geon import core as gc
    >>> from geon.core.plans import apply_plan
    >>> g = gc.graph([gc.relu(gc.placeholder(axes=[gc.Axis("N", 5)], name="x"))])
    >>> g = apply_plan(g, {"name": "p", "mesh": {"axes": {"dp": 2}},
    ...     "inputs": {"x": {"over": {"N": "dp"}}}})
    >>> [(coords, str(region)) for _, held in held_regions(g).values() for coords, region in held]
    [((0,), '[0:3]'), ((1,), '[3:5]')]
    """
    out = {}
    for tensor_id, placement in input_placements(graph).items():
        if placement.mesh is None:
            continue
        mesh = Mesh.from_node(graph.node(placement.mesh))
        out[tensor_id] = (mesh.id, _held(graph.node(tensor_id), placement, mesh))
    return out
