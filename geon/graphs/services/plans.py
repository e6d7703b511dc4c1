"""Shard plans (DESIGN.md §4 and §9): a plan belongs to a graph and holds a mesh and, per
operation, how its index space is split. Saving one tries it on the current document;
generating one writes its Applications into a new version; its cost is the cost model of the
plan as generated, with nothing stored. The graph's websocket clients hear of every change."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction

from geon.accounts.models import Role
from geon.core.cost import device_memory, transfer_bytes
from geon.core.errors import DocumentError
from geon.core.graph import APPLICATION, MESH, OPERATION
from geon.core.graph import Graph as Document
from geon.core.limits import MAX_MESH_AXES, MAX_MESH_DEVICES, show_int
from geon.graphs.edits import EditRefused, expand
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.access import GraphNotFound, User, check_can
from geon.graphs.services.documents import live_document
from geon.graphs.services.editing import Applied, do_apply_edit
from geon.graphs.services.publishing import publish

_SPEC_KEYS = ("dim", "parts", "chunk", "sizes", "grid", "over")


class PlanNotFound(GraphNotFound):
    """The graph has no such shard plan."""


def check_plan(name: Any, mesh: Any, spec: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A plan's name, mesh ``{"name", "axes": {axis: size}}`` (at most ``MAX_MESH_AXES`` axes
    and ``MAX_MESH_DEVICES`` devices, :mod:`geon.core.limits`) and spec ``{opId: {...}}`` (its
    numbers are checked when the plan is tried on the document, by the ``shard`` op)."""
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
        raise DocumentError(
            f'plan name "{name}" is not valid; expected a non-empty string of at most 100 '
            "characters"
        )
    axes = _check_mesh(mesh)
    _check_spec(spec)
    return name.strip(), {"name": mesh.get("name", ""), "axes": axes}, spec


def _check_mesh(mesh: Any) -> dict[str, Any]:
    """The axes of a valid mesh; :class:`DocumentError` naming what is wrong with it."""
    axes = mesh.get("axes") if isinstance(mesh, dict) else None
    if not isinstance(axes, dict) or not axes or not isinstance(mesh.get("name", ""), str):
        raise DocumentError(
            f'mesh "{mesh}" is not valid; expected {{"name": "...", "axes": {{"x": 2}}}} with at '
            "least one axis"
        )
    if len(axes) > MAX_MESH_AXES:
        raise DocumentError(
            f'mesh "{mesh.get("name", "")}" has {len(axes)} axes; expected at most {MAX_MESH_AXES}'
        )
    devices = 1
    for axis, size in axes.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise DocumentError(f'mesh axis "{axis}" has size "{size}"; expected an integer >= 1')
        devices *= min(size, MAX_MESH_DEVICES + 1)
        if devices > MAX_MESH_DEVICES:
            raise DocumentError(
                f'mesh "{mesh.get("name", "")}" has more than {MAX_MESH_DEVICES} devices (axis '
                f'"{axis}" of size {show_int(size)}); expected at most {MAX_MESH_DEVICES} in all'
            )
    return axes


def _check_spec(spec: Any) -> None:
    """Refuse a spec that is not ``{operationId: {...}}`` with known keys."""
    if not isinstance(spec, dict):
        raise DocumentError(f'spec "{spec}" is not valid; expected {{operationId: {{...}}}}')
    for op_id, entry in spec.items():
        bad = [k for k in entry if k not in _SPEC_KEYS] if isinstance(entry, dict) else None
        if bad is None or bad:
            expected = ", ".join(f'"{k}"' for k in _SPEC_KEYS)
            raise DocumentError(
                f'spec of operation "{op_id}" is not valid; expected an object with some of '
                f"{expected}"
            )


def plan_of(graph: Graph, plan_id: int) -> ShardPlan:
    """A plan of the graph; :class:`GraphNotFound` (404) when it has no such plan."""
    plan = ShardPlan.objects.filter(graph=graph, pk=plan_id).first()
    if plan is None:
        raise PlanNotFound(f'plan "{plan_id}" of graph "{graph.pk}" does not exist')
    return plan


def _unique_plan_name(graph: Graph, name: str, plan: ShardPlan | None = None) -> None:
    taken = ShardPlan.objects.filter(graph=graph, name=name)
    if plan is not None:
        taken = taken.exclude(pk=plan.pk)
    if taken.exists():
        raise EditRefused(
            "conflict", f'plan name "{name}" is taken on this graph; pick another name'
        )


@transaction.atomic
def do_save_plan(
    user: User,
    graph: Graph,
    name: str,
    mesh: dict[str, Any],
    spec: dict[str, Any],
    plan: ShardPlan | None,
) -> ShardPlan:
    """Create (``plan`` None) or change a plan (inputs already checked): refused with
    ``conflict`` when another plan of the graph has the name, and with ``invalid_edit`` when the
    plan does not fit the graph's current document (an unknown operation, a split the
    operation's index space does not allow), changing nothing. Once committed, the graph's
    websocket clients hear that its plans changed."""
    _unique_plan_name(graph, name, plan)
    if plan is None:
        plan = ShardPlan(graph=graph)
    plan.name, plan.mesh, plan.spec = name, mesh, spec
    plan.save()
    plan_trial(live_document(graph).document, plan)
    _plans_changed(user, graph)
    return plan


@transaction.atomic
def do_delete_plan(user: User, graph: Graph, plan_id: int) -> None:
    """Delete a plan; the Applications it generated stay in the document."""
    plan_of(graph, plan_id).delete()
    _plans_changed(user, graph)


def _plans_changed(user: User, graph: Graph) -> None:
    """Tell the graph's websocket clients, once committed, that its plans changed."""
    pk, author = graph.pk, user.get_username()
    transaction.on_commit(lambda: publish(pk, "graph.plans", {"type": "plans", "author": author}))


def plan_ops(document: Document, plan: ShardPlan) -> list[dict[str, Any]]:
    """The edit ops that write a plan: its Mesh node (added or updated), a ``shard`` op per
    operation of its spec, placed on the mesh, and the removal of the applications of every
    other operation: a plan says how the whole graph is split, and what it does not name runs
    whole (so its cost does not depend on how the document happens to be sharded)."""
    mesh_id = str(uuid.uuid5(uuid.UUID(str(plan.graph_id)), f"geon-plan-{plan.pk}-mesh"))
    body = {"name": plan.mesh.get("name") or plan.name, "axes": plan.mesh["axes"]}
    ops: list[dict[str, Any]] = []
    if document.get(mesh_id) is None:
        ops.append({"op": "add_node", "node": {"id": mesh_id, "type": MESH, "body": body}})
    else:
        ops.append({"op": "update_node", "id": mesh_id, "body": body})
    for op_id, entry in plan.spec.items():
        ops.append({"op": "shard", "operation": op_id, "mesh": mesh_id, **entry})
    for operation in document.of_type(OPERATION):
        if operation.id not in plan.spec:
            apps = document.index.applications_of(operation.id)
            ops.extend({"op": "remove_node", "id": app.id} for app in apps)
    return ops


def plan_trial(document: Document, plan: ShardPlan) -> Document:
    """A copy of ``document`` with the plan written into it; :class:`EditRefused`
    (``invalid_edit``, naming the operation) when the plan does not fit the document."""
    trial = document.copy()
    try:
        trial.apply(expand(trial, plan_ops(document, plan)))
    except DocumentError as error:
        raise EditRefused("invalid_edit", f'plan "{plan.name}": {error}') from None
    return trial


@transaction.atomic
def do_generate_plan(
    user: User,
    graph_id: uuid.UUID | str,
    plan_id: int,
    base_version: int,
    *,
    edit_id: str | None = None,
) -> tuple[Applied, ShardPlan]:
    """Write a plan's Applications into a new version (through :func:`do_apply_edit`; its
    ``applied`` message carries ``edit_id``), and record them on the plan, in one
    transaction."""
    graph = check_can(user, graph_id, Role.EDITOR)
    plan = plan_of(graph, plan_id)
    ops = plan_ops(live_document(graph).document, plan)
    applied = do_apply_edit(
        user,
        graph.pk,
        base_version,
        ops,
        edit_id=edit_id,
        message=f'generated shard plan "{plan.name}"',
    )
    plan.applications = {
        "version": applied.version,
        "mesh": ops[0]["node"]["id"] if ops[0]["op"] == "add_node" else ops[0]["id"],
        "operations": _applications_by_operation(applied.ops),
    }
    plan.save(update_fields=["applications", "updated"])
    _plans_changed(user, graph)
    return applied, plan


def _applications_by_operation(ops: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The ids of the Applications that ``ops`` add, by the id of their operation."""
    made: dict[str, list[str]] = {}
    for op in ops:
        node = op.get("node") if op["op"] == "add_node" else None
        if node is not None and node["type"] == APPLICATION:
            made.setdefault(node["body"]["operationId"], []).append(node["id"])
    return made


def plan_cost(graph: Graph, plan: ShardPlan) -> dict[str, Any]:
    """The cost model of a plan as generated on the current document (nothing is stored):
    bytes per device and the bytes that move between devices."""
    trial = plan_trial(live_document(graph).document, plan)
    devices = [
        {
            "mesh": mesh,
            "coords": list(coords),
            "inputs": memory.inputs,
            "outputs": memory.outputs,
            "temporaries": memory.temporaries,
            "total": memory.total,
        }
        for (mesh, coords), memory in device_memory(trial).items()
    ]
    moves = [
        {"source": list(source[1]), "target": list(target[1]), "bytes": size}
        for (source, target), size in sorted(transfer_bytes(trial).items())
    ]
    return {
        "version": live_document(graph).version,
        "devices": devices,
        "transfers": moves,
        "transferBytes": sum(m["bytes"] for m in moves),
    }
