"""Plans by axis mapping (issue 16 item 2): which operations a plan splits, and how.

The rule. An ``axisMapping`` entry ``{"N": "dp"}`` applies to every operation that has ``N``
among its index axes (its ``IndexAxes`` tag; ``N`` matches an index axis ``N`` or a dual level
of it such as ``N-1``, not a composite ``N*H``): the operation is split along that axis into as
many parts as mesh axis ``dp`` has devices, part ``k`` on coordinate ``k`` of ``dp`` (the
``shard`` op's ``over``). An operation whose index axes match several entries is split over all
of them at once (a grid), unless two of them name the same mesh axis: that is refused, naming
the entries to drop. A ``spec`` entry for an operation overrides the mapping for it.

A dot whose *contracted* axis is mapped (the ``F`` of ``dot(h[N, F], W2[F-1, D])``), or a
reduction whose *reduced* axis is (``sum(h[N, R])`` over ``R``), is first rewritten into partial
products (partial reductions) and their sum (:mod:`.contract`, done by
:func:`~.write.apply_plan` and :func:`~.write.plan_ops` before this rule runs): the partials are
split over the parts axis ``F_over_tp``, and the sum reads its parts axis whole. Any other
operation that *reads* a mapped axis that is not one of its index axes (a ``softmax`` or
``layer_norm`` over it) runs whole, and is listed in :attr:`PlanSplits.not_split` with the
reason, never silently.
So is an operation without ``IndexAxes`` that reads a mapped axis. Operations that neither
have nor read a mapped axis run whole, as every operation a plan does not name does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from geon.core.errors import quote
from geon.core.graph import INDEX_AXES, OPERATION, TENSOR_AXES, Graph, Node
from geon.core.nodes import axis_names_of_ref, selected_tensor_ids, split_level
from geon.core.plans.contract import CONTRACTED_SPLIT, contracted_axes
from geon.core.plans.model import Plan, PlanError, ShardSpec

__all__ = ["NotSplit", "PlanSplits", "plan_splits"]


@dataclass(frozen=True, slots=True)
class NotSplit:
    """An operation the axis mapping leaves whole, with the mapped ``axes`` it reads but cannot
    be split over, and why."""

    operation: str
    axes: tuple[str, ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"operation": self.operation, "axes": list(self.axes), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class PlanSplits:
    """How a plan splits a document's operations: ``splits`` (operation id -> its ``shard``
    arguments, spec entries first, then mapped operations in document order), ``mapped`` (the
    ids split by the axis mapping) and ``not_split``."""

    splits: tuple[tuple[str, ShardSpec], ...]
    mapped: frozenset[str]
    not_split: tuple[NotSplit, ...]


def _index_axes(op: Node) -> list[str]:
    tag = op.tags.get(INDEX_AXES) if op.tags else None
    axes = tag.get("axes") if isinstance(tag, dict) else None
    return [a for a in axes if isinstance(a, str)] if isinstance(axes, list) else []


def _read_axes(graph: Graph, op: Node) -> set[str]:
    """The axis names of the tensors an operation reads."""
    names: set[str] = set()
    for tensor_id in selected_tensor_ids(op.body, "inputs"):
        tensor = graph.get(tensor_id)
        tag = tensor.tags.get(TENSOR_AXES) if tensor is not None and tensor.tags else None
        refs = tag.get("axes") if isinstance(tag, dict) else None
        for ref in refs if isinstance(refs, list) else ():
            names.update(axis_names_of_ref(ref))
    return names


def _parts_axes(op: Node) -> set[str]:
    """The axes a contracted split's operations read but are split by design: the sum reads the
    parts axis whole, the partial products read ``F`` one chunk per part."""
    tag = op.tags.get(CONTRACTED_SPLIT) if op.tags else None
    if not isinstance(tag, dict):
        return set()
    params = op.body.get("params", {})
    if "original" in tag:  # the sum: it reads the parts axis whole
        return set(params.get("reduction_axes", []))
    return {params.get("parts", {}).get("axis")}  # the partial products: F is cut by the parts


def _axes_in_use(graph: Graph) -> set[str]:
    names = set(graph.index.axis_names())
    for node in graph.nodes:
        for url in (TENSOR_AXES, INDEX_AXES):
            tag = node.tags.get(url) if node.tags else None
            refs = tag.get("axes") if isinstance(tag, dict) else None
            for ref in refs if isinstance(refs, list) else ():
                names.update(axis_names_of_ref(ref))
    return names


def _check_mapped_axes_exist(graph: Graph, plan: Plan) -> None:
    known = _axes_in_use(graph)
    for axis, mesh_axis in plan.axis_mapping:
        if axis not in known:
            listed = ", ".join(quote(n) for n in sorted(known)[:20])
            raise PlanError(
                f"axis mapping {quote(axis)} -> {quote(mesh_axis)}: no tensor or operation of the "
                f"document has axis {quote(axis)}; expected one of ({listed})"
            )


def _mapped_split(
    graph: Graph, mapping: dict[str, tuple[int, str]], op: Node
) -> ShardSpec | NotSplit | None:
    """How the axis mapping (axis -> (its position in the plan, mesh axis)) splits one
    operation: a spec, a refusal to split, or nothing. Linear in the operation's axes."""
    index = _index_axes(op)
    bases = {split_level(ref)[0] for ref in index}
    read = _read_axes(graph, op) - _parts_axes(op) - set(contracted_axes(graph, op))
    reduced = sorted(
        (mapping[a][0], a, mapping[a][1]) for a in read if a in mapping and a not in bases
    )
    if reduced:
        shown = ", ".join(f"{quote(a)} (mesh axis {quote(m)})" for _, a, m in reduced)
        if not index:
            why = f"it reads {shown} but has no IndexAxes tag to split along"
        else:
            listed = ", ".join(quote(r) for r in index)
            why = (
                f"it contracts or reduces {shown}: reads it, but its index axes are ({listed}); "
                "only a dot or a reduction (sum, prod, max, min, mean) can be split over an axis "
                "it contracts or reduces, so it runs whole"
            )
        return NotSplit(op.id, tuple(a for _, a, _ in reduced), why)
    hits = sorted(
        (mapping[split_level(ref)[0]], n, ref)
        for n, ref in enumerate(index)
        if split_level(ref)[0] in mapping
    )
    if not hits:
        return None
    seen: dict[str, str] = {}
    for (_, mesh_axis), _, ref in hits:
        if mesh_axis in seen:
            raise PlanError(
                f"operation {quote(op.id)}: the axis mapping splits its index axes "
                f"{quote(seen[mesh_axis])} and {quote(ref)} both over mesh axis "
                f"{quote(mesh_axis)}; drop the mapping of one of them, or give the operation a "
                "spec entry"
            )
        seen[mesh_axis] = ref
    return ShardSpec(over=tuple((ref, mesh_axis) for (_, mesh_axis), _, ref in hits))


def plan_splits(graph: Graph, plan: Plan) -> PlanSplits:
    """The operations ``plan`` splits on ``graph`` (see the module docstring for the rule);
    :class:`PlanError` when a mapped axis is nowhere in the document or an operation would be
    split twice over one mesh axis."""
    splits = list(plan.spec)
    mapped: set[str] = set()
    not_split: list[NotSplit] = []
    if plan.axis_mapping:
        _check_mapped_axes_exist(graph, plan)
        named = {op_id for op_id, _ in plan.spec}
        mapping = {a: (n, m) for n, (a, m) in enumerate(plan.axis_mapping)}
        for op in graph.of_type(OPERATION):
            if op.id in named:
                continue
            found = _mapped_split(graph, mapping, op)
            if isinstance(found, NotSplit):
                not_split.append(found)
            elif found is not None:
                splits.append((op.id, found))
                mapped.add(op.id)
    return PlanSplits(tuple(splits), frozenset(mapped), tuple(not_split))
