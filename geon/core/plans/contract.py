"""Splitting a contracted or reduced axis (issue 16 item 1): a dot becomes partial products and
a sum; a reduction (sum, prod, max, min, mean) becomes partial reductions and the same reduction
over their parts.

A dot ``out = dot(x, y)`` whose contracted axis ``F`` is split into ``P`` parts over mesh axis
``tp`` is rewritten, in valid LoomGraph form, into two operations:

- ``op:dot_partial`` (a new Operation) with ``params.parts = {"axis": "F", "into": "F_over_tp"}``
  writing a new partial tensor ``[F_over_tp, <out's axes>]``; ``F_over_tp`` is a new declared Axis
  of length ``P``; the operands' ``F`` dims read ``chunk = len(F) / P`` elements from
  ``chunk·p`` (row coefficient ``chunk``, see :func:`geon.core.ops.arithmetic.infer_dot_partial`);
- ``op:sum`` over ``F_over_tp`` writing the ORIGINAL output tensor, with the ORIGINAL operation's
  id, so its consumers are untouched.

A reduction ``out = sum(x[N, R])`` whose reduced axis ``R`` is split the same way becomes
``op:sum`` with ``params.parts = {"axis": "R", "into": "R_over_tp"}`` (a new Operation writing
``[R_over_tp, N]``, each part reducing its chunk of ``R``, see
:func:`geon.core.ops.arithmetic.infer_reduction`) and the original ``op:sum`` over ``R_over_tp``
with the original id. ``prod``, ``max``, ``min`` and ``mean`` likewise: the same kernel reduces
the parts (a mean of equal parts' means is the mean). The split axis is ``contracted`` below for
both.

Equal parts only: ``len(F) % P`` must be 0, else :class:`PlanError` naming ``F``, its length and
``P``. The sum carries the :data:`CONTRACTED_SPLIT` tag with the original operation (label, body,
tags) and the ids the rewrite added, so :func:`restore_ops` puts the dot back exactly; a plan
written without the split restores it first (switching plans is lossless).

>>> from geon import core as gc
>>> N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
>>> h = gc.placeholder(axes=[N, F], name="h")
>>> y = gc.dot(h, gc.placeholder(axes=[F - 1, D], name="w2"), name="y")
>>> g = gc.graph([y])
>>> op = g.of_type(OPERATION)[0].id
>>> split = g.copy(); _ = split.apply(contract_ops(split, op, "F", "tp", 2))
>>> sorted(n.body["kernel"] for n in split.of_type(OPERATION)), split.check()
(['op:dot_partial', 'op:sum'], [])
>>> back = split.copy(); _ = back.apply(restore_ops(back))
>>> back.to_json() == g.to_json()
True
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from geon.core.axes import Axes, Axis, AxisRef
from geon.core.errors import GeonError, SplitError, quote
from geon.core.graph import (
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    Graph,
    Node,
)
from geon.core.limits import MAX_PIECES
from geon.core.nodes import GEON_TAG_PREFIX, MESH, selected_tensor_ids
from geon.core.ops import Inference, infer
from geon.core.ops.catalogue import REDUCTIONS
from geon.core.plans.model import Plan, PlanError, ShardSpec
from geon.core.plans.shards import Mesh, shard_edits

__all__ = [
    "CONTRACTED_SPLIT",
    "contract_ops",
    "contract_plan",
    "contracted_axes",
    "contracted_shard_edits",
    "parts_axis_name",
    "restore_ops",
    "shard_op_edits",
]

CONTRACTED_SPLIT = GEON_TAG_PREFIX + "ContractedSplit"
"""The tag on the ``op:sum`` of a rewritten dot: ``{"original": {"label", "body", "tags"},
"partial": {"operation", "tensor"}, "axis": {"id", "added"}, "meshAxis"}``."""

_NAMESPACE = uuid.UUID("0b7f3c2e-58a1-5d4e-9c6a-1f2e3d4c5b6a")


def parts_axis_name(axis: str, mesh_axis: str) -> str:
    """The generated name of the parts axis: ``F`` over ``tp`` -> ``F_over_tp``."""
    return f"{axis}_over_{mesh_axis}"


def _declared(graph: Graph) -> dict[str, Axis]:
    return {n.body["name"]: Axis.from_json(n.body) for n in graph.of_type(AXIS)}


def _axes_of(graph: Graph, tensor_id: str, declared: dict[str, Axis]) -> Axes:
    node = graph.get(tensor_id)
    tag = node.tags.get(TENSOR_AXES) if node is not None and node.tags else None
    if not isinstance(tag, dict):
        raise PlanError(
            f"tensor {quote(tensor_id)} has no TensorAxes tag; a split needs named axes"
        )
    return Axes.parse(tag["axes"], declared)


def contracted_axes(graph: Graph, op: Node) -> list[str]:
    """The names of the axes a plain ``op:dot`` contracts, or the plain axes a reduction that no
    split has rewritten reduces ([] for any other operation)."""
    kernel = op.body.get("kernel")
    if kernel != "op:dot" and (kernel not in REDUCTIONS or CONTRACTED_SPLIT in (op.tags or {})):
        return []
    declared = _declared(graph)
    try:
        if kernel != "op:dot":
            a = _axes_of(graph, op.body["inputs"]["tensor"][0]["tensorId"], declared)
            inf = infer(kernel, {"tensor": [a]}, op.body.get("params") or None, declared)
            return [a[i].axis.name for i in inf.plan["reduced"] if isinstance(a[i], AxisRef)]
        x = _axes_of(graph, op.body["inputs"]["x"][0]["tensorId"], declared)
        y = _axes_of(graph, op.body["inputs"]["y"][0]["tensorId"], declared)
        inf = infer("op:dot", {"x": [x], "y": [y]}, None, declared)
    except (GeonError, KeyError, IndexError, TypeError):
        return []
    return [x[i].axes[0].name for i, _ in inf.plan["pairs"]]


def _partial(
    graph: Graph, op: Node, parts: dict[str, str], declared: dict[str, Axis]
) -> tuple[Inference, str]:
    """The partial operation of a split (a dot's partial products, or the same reduction with
    ``parts``) and the kernel that reduces its parts (``op:sum`` for a dot)."""
    kernel = op.body["kernel"]
    if kernel == "op:dot":
        x = _axes_of(graph, op.body["inputs"]["x"][0]["tensorId"], declared)
        y = _axes_of(graph, op.body["inputs"]["y"][0]["tensorId"], declared)
        return infer("op:dot_partial", {"x": [x], "y": [y]}, {"parts": parts}, declared), "op:sum"
    a = _axes_of(graph, op.body["inputs"]["tensor"][0]["tensorId"], declared)
    params = {**(op.body.get("params") or {}), "parts": parts}
    return infer(kernel, {"tensor": [a]}, params, declared), kernel


def contract_ops(
    graph: Graph, op_id: str, axis: str, mesh_axis: str, parts: int
) -> list[dict[str, Any]]:
    """The edit ops rewriting dot (or reduction) ``op_id`` into partial products over ``parts``
    equal parts of its contracted (or reduced) axis ``axis`` and their sum (module docstring);
    :class:`PlanError` naming the operation, the axis, its length and ``parts`` when it does not
    fit."""
    op = graph.get(op_id)
    if op is None or op.type != OPERATION:
        raise PlanError(f"operation {quote(op_id)} is not in the document")
    if axis not in contracted_axes(graph, op):
        raise PlanError(
            f"operation {quote(op.label or op_id)} does not contract or reduce axis "
            f"{quote(axis)}; only an op:dot or a reduction (sum, prod, max, min, mean) can be "
            "split over an axis it contracts or reduces (it contracts or reduces "
            f"({', '.join(quote(a) for a in contracted_axes(graph, op))}))"
        )
    declared = _declared(graph)
    length = declared[axis].length
    if length is None or parts < 1 or length % parts:
        raise PlanError(
            f"operation {quote(op.label or op_id)}: contracted axis {quote(axis)} of length "
            f"{length} cannot be split into {parts} equal parts over mesh axis {quote(mesh_axis)}; "
            f"use a mesh axis size that divides {length}"
        )
    name = parts_axis_name(axis, mesh_axis)
    ops: list[dict[str, Any]] = []
    found = declared.get(name)
    axis_node = next((n for n in graph.of_type(AXIS) if n.body.get("name") == name), None)
    added = axis_node is None
    if found is not None and found.length != parts:
        raise PlanError(
            f"axis {quote(name)} is declared with length {found.length}; the split of "
            f"{quote(axis)} over {quote(mesh_axis)} needs {parts} parts; rename that axis"
        )
    axis_id = (
        axis_node.id if axis_node is not None else str(uuid.uuid5(_NAMESPACE, f"{op_id}:{name}"))
    )
    parts_axis = Axis(name, parts)
    declared[name] = parts_axis
    if added:
        body = parts_axis.to_json()
        ops.append(
            {"op": "add_node", "node": {"id": axis_id, "type": AXIS, "label": name, "body": body}}
        )
    partial, total_kernel = _partial(graph, op, {"axis": axis, "into": name}, declared)
    out_sel = op.body["outputs"]["result"][0]
    out = graph.get(out_sel["tensorId"])
    assert out is not None
    tensor_id = str(uuid.uuid5(_NAMESPACE, f"{op_id}:partial-tensor"))
    partial_id = str(uuid.uuid5(_NAMESPACE, f"{op_id}:partial-op"))
    shape = [parts, *[r.length or 0 for r in partial.result[1:]]]
    whole = {"start": [0] * len(shape), "end": shape}
    tensor_body = {"dtype": out.body.get("dtype", "float32"), "range": whole}
    ops.append(
        {
            "op": "add_node",
            "node": {
                "id": tensor_id,
                "type": TENSOR,
                "label": f"{out.label or 'out'} partial",
                "body": tensor_body,
                "tags": {TENSOR_AXES: {"axes": list(partial.result.names)}},
            },
        }
    )
    ops.append(
        {
            "op": "add_node",
            "node": {
                "id": partial_id,
                "type": OPERATION,
                "label": partial.kernel,
                "body": {
                    "kernel": partial.kernel,
                    "params": partial.params,
                    "inputs": copy.deepcopy(op.body["inputs"]),
                    "outputs": {"result": [{"tensorId": tensor_id, "range": whole}]},
                },
                "tags": {
                    INDEX_AXES: partial.index_json(),
                    IPF_INDEX: partial.index_range(),
                    IPF_SIGNATURE: partial.signature(),
                    CONTRACTED_SPLIT: {"sum": op_id},
                },
            },
        }
    )
    total = infer(total_kernel, {"tensor": [partial.result]}, {"reduction_axes": [name]}, declared)
    original = {"label": op.label, "body": copy.deepcopy(op.body), "tags": copy.deepcopy(op.tags)}
    ops.extend({"op": "remove_node", "id": a.id} for a in graph.index.applications_of(op_id))
    ops.append(
        _replace(
            op,
            {
                "label": total_kernel,
                "body": {
                    "kernel": total_kernel,
                    "params": total.params,
                    "inputs": {"tensor": [{"tensorId": tensor_id, "range": whole}]},
                    "outputs": {"result": [copy.deepcopy(out_sel)]},
                },
                "tags": {
                    INDEX_AXES: total.index_json(),
                    IPF_INDEX: total.index_range(),
                    IPF_SIGNATURE: total.signature(),
                    CONTRACTED_SPLIT: {
                        "original": original,
                        "partial": {"operation": partial_id, "tensor": tensor_id},
                        "axis": {"id": axis_id, "added": added},
                        "meshAxis": mesh_axis,
                    },
                },
            },
        )
    )
    return ops


def _patch(old: Any, new: Any) -> Any:
    """The JSON merge patch (RFC 7386) turning ``old`` into ``new``."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return copy.deepcopy(new)
    out: dict[str, Any] = {k: None for k in old if k not in new}
    for k, v in new.items():
        if k not in old or old[k] != v:
            out[k] = _patch(old[k], v) if k in old else copy.deepcopy(v)
    return out


def _replace(op: Node, new: dict[str, Any]) -> dict[str, Any]:
    """An ``update_node`` giving ``op`` the label, body and tags of ``new`` in place (same id,
    same position in the document)."""
    return {
        "op": "update_node",
        "id": op.id,
        "label": new["label"],
        "body": _patch(op.body, new["body"]),
        "tags": _patch(op.tags or {}, new["tags"] or {}),
    }


def _rewrite_record(op: Node, tag: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The ContractedSplit tag's record of what ``op`` was and what the rewrite added, checked:
    the tag has no schema (any editor can store one), so a malformed record is refused naming
    the operation, never read blindly."""
    original, partial, axis = tag.get("original"), tag.get("partial"), tag.get("axis", {})
    problem = None
    if not (
        isinstance(original, dict)
        and isinstance(original.get("label"), str)
        and isinstance(original.get("body"), dict)
        and isinstance(original.get("tags"), dict | None)
    ):
        problem = '"original" must be {"label": text, "body": {...}, "tags": {...} or null}'
    elif not (
        isinstance(partial, dict)
        and isinstance(partial.get("operation"), str)
        and isinstance(partial.get("tensor"), str)
    ):
        problem = '"partial" must be {"operation": id, "tensor": id}'
    elif not (
        isinstance(axis, dict) and (not axis.get("added") or isinstance(axis.get("id"), str))
    ):
        problem = '"axis" must be {"id": id, "added": true or false}'
    if problem is not None:
        raise PlanError(
            f"operation {quote(op.label or op.id)} has a malformed {CONTRACTED_SPLIT} tag, so "
            f"its split dot cannot be put back: {problem}"
        )
    return cast(dict[str, Any], original), cast(dict[str, str], partial)


def restore_ops(graph: Graph) -> list[dict[str, Any]]:
    """The edit ops that put every rewritten dot back exactly as it was (same id, label, body and
    tags), removing its partial operation, partial tensor and (when the rewrite added it) the
    parts axis; [] when nothing is rewritten. Applications of the removed nodes go too; a
    malformed rewrite record is a :class:`PlanError` naming its operation."""
    ops: list[dict[str, Any]] = []
    for op in graph.of_type(OPERATION):
        tag = op.tags.get(CONTRACTED_SPLIT) if op.tags else None
        if not isinstance(tag, dict) or "original" not in tag:
            continue
        original, partial = _rewrite_record(op, tag)
        for node_id in (op_id for op_id in (partial["operation"], op.id)):
            ops.extend(
                {"op": "remove_node", "id": a.id} for a in graph.index.applications_of(node_id)
            )
        ops.append(_replace(op, original))
        ops.append({"op": "remove_node", "id": partial["operation"]})
        ops.append({"op": "remove_node", "id": partial["tensor"]})
    axes_added = {
        t["axis"]["id"]
        for o in graph.of_type(OPERATION)
        for t in [o.tags.get(CONTRACTED_SPLIT) if o.tags else None]
        if isinstance(t, dict) and isinstance(t.get("axis"), dict) and t["axis"].get("added")
    }
    ops.extend({"op": "remove_node", "id": a} for a in sorted(axes_added))
    return ops


def contract_plan(graph: Graph, plan: Plan) -> tuple[Graph, Plan, list[dict[str, Any]]]:
    """Rewrite for ``plan``: a copy of ``graph`` with every earlier contracted split restored and
    the plan's own applied, the plan as it reads on that copy, and the edit ops that did it.

    A dot is rewritten when the plan maps one of its contracted axes: its ``spec`` entry's
    ``over`` names it, or (without a spec entry) the ``axisMapping`` does. Its partial products
    are then split over the parts axis (``F_over_tp`` -> ``tp``) and the dot's other mapped
    index axes; its sum keeps the dot's index-axis entries; or, when the dot has no ``spec``
    entry and every operation reading its result is split (by its ``spec`` entry) over one index
    axis of the sum on the mesh axis the partials are split over, the sum is split that way too:
    each device sums only the piece its readers read, so the partials are **reduce-scattered**
    rather than all-reduced (issue 32: fully sharded data parallelism, where a weight's gradient
    contracts the batch split over ``dp`` and the weight's update runs on its own shard over
    ``dp``). :class:`PlanError` when one dot would be split over two contracted axes."""
    work = graph.copy()
    ops = restore_ops(work)
    work.apply(ops)
    sizes = dict(plan.mesh_axes)
    mapping = dict(plan.axis_mapping)
    spec = dict(plan.spec)
    extra_mapping: list[tuple[str, str]] = []
    new_spec: list[tuple[str, ShardSpec]] = []
    readers: dict[str, list[str]] | None = None
    for op in work.of_type(OPERATION):
        contracted = contracted_axes(work, op)
        if not contracted:
            continue
        entry = spec.get(op.id)
        if entry is not None:
            over = dict(entry.over or ())
        else:
            over = {a: m for a, m in mapping.items() if a in contracted}
        hits = [(a, m) for a, m in over.items() if a in contracted]
        if not hits:
            continue
        if len(hits) > 1:
            shown = ", ".join(f"{quote(a)} -> {quote(m)}" for a, m in hits)
            raise PlanError(
                f"operation {quote(op.label or op.id)}: the plan splits two of its contracted "
                f"axes ({shown}); split at most one contracted axis per dot"
            )
        axis, mesh_axis = hits[0]
        if mesh_axis not in sizes:
            raise PlanError(
                f"operation {quote(op.label or op.id)}: mesh axis {quote(mesh_axis)} is not in "
                f"the mesh; expected one of ({', '.join(quote(m) for m in sizes)})"
            )
        rewrite = contract_ops(work, op.id, axis, mesh_axis, sizes[mesh_axis])
        work.apply(rewrite)
        ops.extend(rewrite)
        partial = next(
            o for o in rewrite if o["op"] == "add_node" and o["node"]["type"] == OPERATION
        )
        name = parts_axis_name(axis, mesh_axis)
        # the sum is split over the entry's other axes, or runs whole: replicated on every
        # device (geon.core.plans.shards.replica_devices), so the partials are all-reduced to it
        if entry is not None:
            rest = tuple((a, m) for a, m in over.items() if a != axis)
            new_spec.append((partial["node"]["id"], ShardSpec(over=((name, mesh_axis), *rest))))
            spec.pop(op.id)
            if rest:
                new_spec.append((op.id, ShardSpec(over=rest)))
            continue
        if name not in mapping:
            extra_mapping.append((name, mesh_axis))
            mapping[name] = mesh_axis
        if readers is None:
            readers = _readers(work)
        follow = _split_like_readers(work, work.node(op.id), readers, spec, mapping, mesh_axis)
        if follow is not None:
            along, views = follow
            for node_id in (op.id, *views):
                new_spec.append((node_id, ShardSpec(over=((along, mesh_axis),))))
    out = replace(
        plan,
        axis_mapping=plan.axis_mapping + tuple(extra_mapping),
        spec=tuple(spec.items()) + tuple(new_spec),
    )
    return work, out, ops


def _readers(graph: Graph) -> dict[str, list[str]]:
    """The operations reading each tensor (ids, in document order)."""
    out: dict[str, list[str]] = {}
    for op in graph.of_type(OPERATION):
        for tid in dict.fromkeys(selected_tensor_ids(op.body, "inputs")):
            out.setdefault(tid, []).append(op.id)
    return out


_PERMUTATIONS = frozenset({"op:dimshuffle", "op:transpose"})
"""Views that only reorder their input's axes (names kept): a sum's split follows through them."""


def _split_like_readers(
    graph: Graph,
    total: Node,
    readers: Mapping[str, list[str]],
    spec: Mapping[str, ShardSpec],
    mapping: Mapping[str, str],
    mesh_axis: str,
) -> tuple[str, list[str]] | None:
    """The index axis of the sum ``total`` (a contracted split's, with the dot's id) that every
    operation reading its result splits over ``mesh_axis`` by its ``spec`` entry, looking
    through readers that only reorder axes (``dimshuffle``, ``transpose``: no ``spec`` entry,
    the axis among theirs), with those views to split the same way; None when there is no one
    such axis, a reader is left to the axis mapping, or the mapping splits an index axis of the
    sum or of a view (the sum keeps the dot's entries: whole, all-reduced)."""
    index = set(((total.tags or {}).get(INDEX_AXES) or {}).get("axes") or ())
    if any(a in mapping for a in index):
        return None
    found: set[str] = set()
    views: list[str] = []
    pending = list(selected_tensor_ids(total.body, "outputs"))
    while pending:
        for reader in readers.get(pending.pop(), ()):
            entry = spec.get(reader)
            if entry is None:
                node = graph.node(reader)
                axes = set(((node.tags or {}).get(INDEX_AXES) or {}).get("axes") or ())
                if node.body.get("kernel") not in _PERMUTATIONS or axes != index:
                    return None
                if len(views) >= MAX_PIECES:  # bounded: a chain of views this long is no plan's
                    return None
                views.append(reader)
                pending.extend(selected_tensor_ids(node.body, "outputs"))
                continue
            over = dict(entry.over or ())
            on_axis = [a for a, m in over.items() if m == mesh_axis and a in index]
            if len(on_axis) != 1:
                return None
            found.add(on_axis[0])
    return (found.pop(), views) if len(found) == 1 else None


def contracted_shard_edits(
    graph: Graph,
    op: Node,
    mesh: Mesh,
    over: Mapping[int | str, str],
    new_id: Callable[[], str],
    limit: int,
) -> list[dict[str, Any]] | None:
    """A split over a dot's *contracted* axis (``over={"F": "tp"}`` on ``dot(h[N, F],
    W2[F-1, D])``): the dot becomes partial products over ``F_over_tp`` and a sum with its id
    (:func:`contract_ops`), the partial products split over ``F_over_tp`` and the
    other entries, the sum over the other entries or whole (replicated). None when ``over`` names
    no contracted axis of ``op``. :func:`shard_op_edits` calls it, so the editor's ``shard``
    edit takes the same rewrite."""
    names = contracted_axes(graph, op)
    hits = [k for k in over if isinstance(k, str) and k in names]
    if not hits:
        return None
    if len(hits) > 1:
        raise SplitError(
            f"operation {quote(op.label or op.id)}: split at most one contracted axis of a dot; "
            f"got {', '.join(quote(h) for h in hits)}"
        )
    axis, mesh_axis = hits[0], over[hits[0]]
    sizes = dict(mesh.axes)
    if mesh_axis not in sizes:
        raise SplitError(
            f"mesh axis {quote(mesh_axis)} is not in mesh {quote(mesh.id)}; expected one of "
            f"({', '.join(quote(a) for a in sizes)})"
        )
    try:
        ops = contract_ops(graph, op.id, axis, mesh_axis, sizes[mesh_axis])
    except PlanError as error:
        raise SplitError(str(error)) from None
    work = graph.copy()
    work.apply(ops)
    partial = next(
        o["node"]["id"] for o in ops if o["op"] == "add_node" and o["node"]["type"] == OPERATION
    )
    rest = {k: v for k, v in over.items() if k != axis}
    more = shard_edits(
        work,
        partial,
        mesh=mesh.id,
        over={parts_axis_name(axis, mesh_axis): mesh_axis, **rest},
        new_id=new_id,
        limit=limit,
    )
    work.apply(more)
    ops += more
    if rest:  # else the sum runs whole: replicated, the partials all-reduced to it
        ops += shard_edits(work, op.id, mesh=mesh.id, new_id=new_id, limit=limit, over=rest)
    return ops


def shard_op_edits(
    graph: Graph,
    op_id: str,
    *,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    limit: int = MAX_PIECES,
    **split: Any,
) -> list[dict[str, Any]]:
    """The node ops of the ``shard`` edit: :func:`geon.core.plans.shards.shard_edits`, except that
    a split ``over`` a dot's contracted axis is the rewrite of :func:`contracted_shard_edits`.
    Malformed requests are left to ``shard_edits``, which refuses them by name."""
    op = graph.get(op_id) if isinstance(op_id, str) else None
    mesh, over = split.get("mesh"), split.get("over")
    node = graph.get(mesh) if isinstance(mesh, str) else None
    named = isinstance(over, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in over.items()
    )
    on_mesh = node is not None and node.type == MESH and set(split) <= {"mesh", "over"}
    if named and on_mesh and op is not None and op.type == OPERATION:
        assert node is not None and isinstance(over, Mapping)
        found = contracted_shard_edits(graph, op, Mesh.from_node(node), over, new_id, limit)
        if found is not None:
            return found
    return shard_edits(graph, op_id, new_id=new_id, limit=limit, **split)
