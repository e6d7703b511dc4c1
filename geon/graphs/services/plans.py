"""Shard plans (DESIGN.md §4 and §9): a plan belongs to a graph and holds a mesh, an axis mapping,
where the graph inputs live and per-operation overrides (the shape and every rule:
:mod:`geon.core.plans`; this module keeps what is Django's: storage, versions, publishing).
Saving one tries it on the current document; generating one writes its Applications into a new
version; its cost is the cost model of the plan as generated, with nothing stored. The graph's
websocket clients hear of every change."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import transaction

from geon.accounts.models import Role
from geon.celery import app
from geon.core.errors import GeonError, quote
from geon.core.graph import APPLICATION
from geon.core.graph import Graph as Document
from geon.core.plans import Plan, plan_ops, plan_splits
from geon.core.plans.cost import DEFAULT_PROFILE, cost_report, load_profile, shipped_profiles
from geon.core.plans.cost.cells import transfer_bytes
from geon.core.plans.cost.pipelined import check_stages
from geon.core.plans.cost.report import device_rows
from geon.core.plans.diff import named_collective, operation_placements
from geon.core.plans.table import read_table
from geon.graphs.edits import EditRefused
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.access import GraphNotFound, User, check_can
from geon.graphs.services.documents import kept_live, live_document
from geon.graphs.services.editing import Applied, do_apply_edit
from geon.graphs.services.plan_jobs import (
    PLAN_COST_TASK,
    Pending,
    bounded,
    cost_key,
    document_cost_key,
    summarise_cost,
)
from geon.graphs.services.plan_trials import (
    check_plan,
    core_plan,
    document_work,
    live_trial,
    mesh_id_of,
    plan_trial,
    plan_work,
    refused,
    trial_key,
)
from geon.graphs.services.publishing import publish


class PlanNotFound(GraphNotFound):
    """The graph has no such shard plan."""


def plan_of(graph: Graph, plan_id: int) -> ShardPlan:
    """A plan of the graph; :class:`GraphNotFound` (404) when it has no such plan."""
    plan = ShardPlan.objects.filter(graph=graph, pk=plan_id).first()
    if plan is None:
        raise PlanNotFound(f'plan "{plan_id}" of graph {quote(graph.title)} does not exist')
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
    *,
    axis_mapping: dict[str, Any] | None = None,
    inputs: dict[str, Any] | None = None,
    pipeline: dict[str, Any] | None = None,
) -> ShardPlan:
    """Create (``plan`` None) or change a plan (fields as a request gives them, checked here by
    :func:`check_plan`; no ``axis_mapping``, ``inputs`` or ``pipeline`` means none): refused
    with ``conflict`` when another plan of the graph has the name, and with ``invalid_edit``
    when the plan does not fit the graph's current document (an unknown operation, axis or
    input, a split the operation's index space does not allow, pipeline stages the cost model's
    stage rule refuses: :func:`geon.core.plans.cost.pipelined.check_stages` on the plan written
    into it), changing nothing. A change of how it places the graph (its pipeline's axis too: a
    pipelined plan is written on the mesh less that axis) forgets what it last generated (the
    document is not on it until it is generated again). Once committed, the graph's websocket
    clients hear that its plans changed."""
    core = check_plan(name, mesh, spec, axis_mapping, inputs, pipeline)
    checked = core.to_json()
    checked.setdefault("pipeline", {})
    _unique_plan_name(graph, checked["name"], plan)
    # a pipelined plan is written on its mesh less the pipeline's axis: only that axis places
    axis = checked["pipeline"].get("axis")
    placing = (checked["mesh"], checked["spec"], checked["axisMapping"], checked["inputs"], axis)
    if plan is None:
        plan = ShardPlan(graph=graph)
    elif placing != (
        plan.mesh,
        plan.spec,
        plan.axis_mapping,
        plan.inputs,
        (plan.pipeline or {}).get("axis"),
    ):
        plan.applications = {}  # what it last wrote is not this plan's any more: switch again
    plan.name, plan.mesh, plan.spec = checked["name"], checked["mesh"], checked["spec"]
    plan.axis_mapping, plan.inputs = checked["axisMapping"], checked["inputs"]
    plan.pipeline = checked["pipeline"]
    plan.save()
    trial = plan_trial(live_document(graph).document, plan)
    stages = core.pipeline  # the plan as stored reads back as core (core_plan)
    if stages is not None:
        try:  # the cost model's own stage rule, on the plan as the cost reads it
            check_stages(trial, stages)
        except GeonError as error:
            raise refused(plan, error) from None
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
    ``applied`` message carries ``edit_id``), and record them on the plan, with the operations
    its axis mapping left whole (``notSplit``), in one transaction."""
    graph = check_can(user, graph_id, Role.EDITOR)
    plan = plan_of(graph, plan_id)
    live = live_document(graph)
    document, computed_at = live.document, live.version
    try:
        ops = plan_ops(document, core_plan(plan), mesh_id_of(plan))
        whole = plan_splits(document, core_plan(plan)).not_split
    except GeonError as error:
        raise refused(plan, error) from None
    try:
        applied = do_apply_edit(
            user,
            graph.pk,
            base_version,
            ops,
            edit_id=edit_id,
            message=f'generated shard plan "{plan.name}"',
            max_ops=settings.GEON_MAX_PLAN_OPS,
        )
    except EditRefused as error:
        if error.reason != "too_many_ops":
            raise
        raise EditRefused(
            "too_many_ops",
            f'plan "{plan.name}" writes more than GEON_MAX_PLAN_OPS '
            f"({settings.GEON_MAX_PLAN_OPS:,}) node ops into the document: {error}; split fewer "
            "operations, over fewer devices",
            **error.details,
        ) from None
    plan.applications = {
        "version": applied.version,
        "mesh": mesh_id_of(plan),
        "operations": _applications_by_operation(applied.ops),
        "notSplit": [entry.to_json() for entry in whole],
    }
    plan.save(update_fields=["applications", "updated"])
    written = kept_live(graph.pk)
    if applied.version == computed_at + 1 and written is not None:
        # no other edit came between: the document is the plan written afresh, so its cost
        # (planCost, the REST cost) needs no second writing (copied under the graph's lock)
        written.trial = (trial_key(plan), applied.version, written.document.copy())
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


def check_profile(profile: str | None) -> str:
    """A shipped profile's name (:data:`DEFAULT_PROFILE` for None); a :class:`GeonError` naming
    the shipped ones otherwise (no file is read on a request)."""
    name = DEFAULT_PROFILE if profile is None else profile
    if name not in shipped_profiles():
        raise GeonError(
            f"profile {quote(name)} is not a shipped profile; expected one of "
            f"({', '.join(shipped_profiles())})"
        )
    return name


def plan_cost(graph: Graph, plan: ShardPlan, profile: str | None = None) -> dict[str, Any]:
    """The cost model of a plan as generated on the current document (nothing is stored):
    bytes per device and the bytes that move between devices (:mod:`geon.core.plans.cost.cells`),
    and under a shipped hardware profile (:data:`DEFAULT_PROFILE` for None) its collectives, time
    interval, per-device ledger and memory summary (:func:`geon.core.plans.cost.cost_report`; the
    report's ``devices`` are ``ledger`` here). A profile that is not shipped is a :class:`GeonError`
    naming the shipped ones (no file is read on a request). Whole and unbounded: the REST cost
    is :func:`requested_cost`."""
    name = check_profile(profile)
    document = live_document(graph)
    return costed(live_trial(document, plan), document.version, name, core_plan(plan))


def requested_cost(
    graph: Graph, plan: ShardPlan, profile: str | None = None
) -> dict[str, Any] | Pending:
    """The REST cost of a plan (:mod:`.plan_jobs`): :func:`plan_cost` summarised within the
    answer's bounds, cached per (document version, plan, profile); costed now when its work
    estimate is within ``GEON_PLAN_COST_WEB_MAX_WORK``, else handed to a worker
    (:class:`Pending` until it has answered)."""
    name = check_profile(profile)
    live = live_document(graph)
    version = live.version
    key = cost_key(graph, version, plan, name)
    job = {"kind": "cost", "graph": str(graph.pk), "version": version, "plans": [plan.pk]}
    return bounded(
        key,
        plan_work(live.document, plan),
        lambda: summarise_cost(costed(live_trial(live, plan), version, name, core_plan(plan))),
        lambda: queue_job({**job, "profile": name, "key": key}),
    )


def requested_document_cost(graph: Graph, profile: str | None = None) -> dict[str, Any] | Pending:
    """The REST cost of the graph's current document as it is placed (``GET graphs/<id>/cost``,
    issue 35), whether or not its placement is a saved plan's: bounded, cached per (version,
    profile) and handed to a worker past the web budget as a plan's cost is (its work is
    :func:`~.plan_trials.document_work`)."""
    name = check_profile(profile)
    live = live_document(graph)
    version = live.version
    key = document_cost_key(graph, version, name)
    job = {"kind": "document", "graph": str(graph.pk), "version": version, "plans": []}
    return bounded(
        key,
        document_work(live.document),
        # a copy: nothing reads the live document while it is costed
        lambda: summarise_cost(costed(Document.from_json(live.document.to_json()), version, name)),
        lambda: queue_job({**job, "profile": name, "key": key}),
    )


def costed(trial: Document, version: int, profile: str, plan: Plan | None = None) -> dict[str, Any]:
    """The cost of a plan written into a document (``trial``) of ``version`` under the shipped
    ``profile`` (see :func:`plan_cost`). With the ``plan`` and pipeline stages in it, the
    pipelined step (:func:`geon.core.plans.cost.cost_report`): the ``ledger`` is the whole
    mesh's, the collectives gain each microbatch's ``send`` between stages, the time includes
    the bubble, and ``pipeline`` (``{"schedule", "stages", "microbatches", "bubble",
    "stageSeconds", "grid", ...}``, as ``geon cost`` prints it) says how; ``devices`` and
    ``transfers`` stay those of one stage's devices (the plan as written). ``placements``: how
    each operation runs as placed, ``{"operation", "label", "split", "over", "parts"}``
    (:func:`geon.core.plans.diff.operation_placements`)."""
    table = read_table(trial)  # read once for the bytes, the moves and the report
    moves = [
        {"source": list(source[1]), "target": list(target[1]), "bytes": size}
        for (source, target), size in sorted(transfer_bytes(trial, table).items())
    ]
    report = cost_report(trial, load_profile(profile), table, plan=plan)
    out: dict[str, Any] = {
        "version": version,
        "devices": device_rows(trial, report, table),
        "transfers": moves,
        "transferBytes": sum(m["bytes"] for m in moves),
        "profile": report["profile"],
        "collectives": [named_collective(trial, c) for c in report["collectives"]],
        "ledger": report["devices"],
        "time": report["time"],
        "memory": report["memory"],
        # how each operation runs as placed: Compare reads a mapped plan's splits here (issue 35)
        "placements": operation_placements(trial, table),
    }
    if "pipeline" in report:
        out["pipeline"] = report["pipeline"]
    return out


def queue_job(job: dict[str, Any]) -> None:
    """Ask a worker to cost a plan or a pair of plans (:mod:`geon.graphs.tasks`), on the queue
    ``GEON_PLAN_COST_QUEUE`` (Celery's default queue when empty), within
    ``GEON_PLAN_COST_SECONDS`` as this process reads it: the job carries its bound, and the
    message its time limits (Celery would otherwise send the limits of the task as registered
    here, or the worker's own when it is not)."""
    seconds = settings.GEON_PLAN_COST_SECONDS
    app.send_task(
        PLAN_COST_TASK,
        args=({**job, "seconds": seconds},),
        queue=settings.GEON_PLAN_COST_QUEUE or None,
        soft_time_limit=seconds,
        time_limit=seconds + 10,
    )
