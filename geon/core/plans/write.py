"""Writing a plan into a document (DESIGN.md §4, §9): :func:`plan_ops` (the edit ops, which the
server sends as one edit) and :func:`apply_plan` (a copy of the document with them applied, for
the CLI and the cost model).

A plan says how the whole graph is split. Its ops, in order (after the rewrite of the dots
whose contracted axis it splits, and the restoration of those an earlier plan split:
:func:`~geon.core.plans.contract.contract_plan`):

0. the Mesh node (added, or updated when the document already has one with that id: its axes
   cleared first when they change, so the mesh has exactly the plan's axes, in its order);
1. a ``shard`` op per operation it splits (:func:`~geon.core.plans.mapping.plan_splits`: its
   ``spec`` entries, then the operations the axis mapping splits), placed on the mesh;
2. the removal of the Applications of every other operation (what a plan does not split runs
   whole, so its cost does not depend on how the document happened to be sharded);
3. where the graph inputs live (:func:`~geon.core.plans.inputs.input_ops`).

A plan with pipeline stages is written as one stage's plan (:meth:`Plan.stage_plan`: the mesh
without the pipeline's axis); the stages and their schedule are the cost model's
(:mod:`geon.core.plans.cost.pipelined`), read from the plan.

A ``shard`` op's refusal is reported as ``edit op <n> (shard): <why>`` — the number of the op in
that list, as the server's edit expansion numbers it — naming the axis mapping when the
operation was split by it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from geon.core.collector import collector_paused
from geon.core.errors import GeonError, quote
from geon.core.graph import MESH, OPERATION, Graph
from geon.core.plans.contract import contract_plan
from geon.core.plans.inputs import input_ops
from geon.core.plans.mapping import PlanSplits, plan_splits
from geon.core.plans.model import Plan, PlanError, read_plan
from geon.core.plans.shards import shard_edits

__all__ = ["apply_plan", "default_mesh_id", "plan_ops"]

_MESH_NAMESPACE = uuid.UUID("6f1d2a57-3c0e-5b8a-9d47-2e6c1f0b9a31")


def default_mesh_id(plan: Plan) -> str:
    """The id of a plan's Mesh node when the caller has none: the same for the same plan name,
    so writing a plan again updates its mesh rather than adding another."""
    return str(uuid.uuid5(_MESH_NAMESPACE, plan.name))


def _ops(graph: Graph, plan: Plan, splits: PlanSplits, mesh_id: str) -> list[dict[str, Any]]:
    body = {"name": plan.mesh_name or plan.name, "axes": dict(plan.mesh_axes)}
    ops: list[dict[str, Any]] = []
    mesh = graph.get(mesh_id)
    if mesh is None:
        ops.append({"op": "add_node", "node": {"id": mesh_id, "type": MESH, "body": body}})
    else:
        if list((mesh.body.get("axes") or {}).items()) != list(plan.mesh_axes):
            # a merge patch keeps the old axes (and their order): clear them first
            ops.append({"op": "update_node", "id": mesh_id, "body": {"axes": None}})
        ops.append({"op": "update_node", "id": mesh_id, "body": body})
    split = {op_id for op_id, _ in splits.splits}
    for op_id, entry in splits.splits:
        ops.append({"op": "shard", "operation": op_id, "mesh": mesh_id, **entry.to_json()})
    for operation in graph.of_type(OPERATION):
        if operation.id not in split:
            apps = graph.index.applications_of(operation.id)
            ops.extend({"op": "remove_node", "id": app.id} for app in apps)
    ops.extend(input_ops(graph, plan, mesh_id))
    return ops


def plan_ops(graph: Graph, plan: Plan, mesh_id: str) -> list[dict[str, Any]]:
    """The edit ops that write ``plan`` into ``graph`` with its Mesh node ``mesh_id`` (see the
    module docstring); ``graph`` does not change. :class:`PlanError` when the axis mapping or the
    inputs do not fit the document; a ``shard`` op that does not fit is refused when applied."""
    work, plan, rewrite = contract_plan(graph, plan.stage_plan())
    return rewrite + _ops(work, plan, plan_splits(work, plan), mesh_id)


def _as_plan(plan: Plan | Mapping[str, Any]) -> Plan:
    return plan if isinstance(plan, Plan) else read_plan(plan)


@collector_paused()
def apply_plan(
    graph: Graph, plan: Plan | Mapping[str, Any], *, mesh_id: str | None = None
) -> Graph:
    """A copy of ``graph`` with ``plan`` (a :class:`Plan` or its REST JSON) written into it;
    ``graph`` does not change (the cyclic collector is paused meanwhile:
    :mod:`geon.core.collector`). :class:`PlanError` naming the operation (or input) and why when
    the plan is malformed or does not fit the document.

    >>> from geon import core as gc
    >>> from geon.core.graph import APPLICATION
    >>> N, D = gc.Axis("N", 4), gc.Axis("D", 3)
    >>> g = gc.graph([gc.relu(gc.placeholder(axes=[N, D], name="x"), name="h")])
    >>> out = apply_plan(g, {"name": "dp", "mesh": {"axes": {"dp": 2}}, "axisMapping": {"N": "dp"}})
    >>> len(out.of_type(APPLICATION)), out.check(), len(g.of_type(APPLICATION))
    (2, [], 0)
    """
    trial, plan, _ = contract_plan(graph, _as_plan(plan).stage_plan())
    splits = plan_splits(trial, plan)
    ops = _ops(trial, plan, splits, mesh_id or default_mesh_id(plan))
    rest: list[dict[str, Any]] = []
    for number, op in enumerate(ops):
        if op["op"] != "shard":
            rest.append(op)
            continue
        trial.apply(rest)
        rest = []
        trial.apply(_shard_ops(trial, op, number, mapped=op["operation"] in splits.mapped))
    trial.apply(rest)
    return trial


def _shard_ops(
    graph: Graph, op: Mapping[str, Any], number: int, *, mapped: bool
) -> list[dict[str, Any]]:
    """The node ops of one ``shard`` op of a plan; :class:`PlanError` naming it."""
    op_id = op["operation"]
    kwargs = {k: v for k, v in op.items() if k not in ("op", "operation")}
    try:
        return shard_edits(graph, op_id, **kwargs)
    except GeonError as error:
        why = str(error)
        if mapped:
            pairs = ", ".join(f"{quote(a)} -> {quote(m)}" for a, m in kwargs["over"].items())
            why = (
                f"operation {quote(op_id)}, split by the axis mapping ({pairs}): {why}; drop that "
                "mapping or give the operation a spec entry"
            )
        raise PlanError(f"edit op {number} (shard): {why}") from None
