"""A stored plan tried on a document (:func:`plan_trial`), and the collectives of the plan a
live document holds, which the last ``applied`` of each commit carries while the document has at
most ``GEON_LIVE_COST_MAX_APPLICATIONS`` Applications (:func:`live_plan_cost`; issue 16: the
editor's edge labels follow an edit within one animation frame, with no request of their own).

The **current plan** of a document is the stored plan whose last generation wrote exactly the
document's Applications. (The editor's Plans panel also calls current a per-operation plan that
the document matches without its being generated; for that one the editor asks the REST cost.)
Its collectives are those of :func:`geon.graphs.services.plans.plan_cost` (the plan generated
on the document as it is now), under every shipped profile, so each editor reads its chosen one.
"""

from __future__ import annotations

import itertools
import math
import uuid
from typing import Any

from django.conf import settings

from geon.core.collector import collector_paused
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION, OPERATION
from geon.core.graph import Graph as Document
from geon.core.limits import MAX_PIECES
from geon.core.nodes import MESH
from geon.core.plans import Plan, apply_plan, plan_splits, read_plan
from geon.core.plans.cost import cost_report, load_profile, shipped_profiles
from geon.core.plans.cost.collectives import collectives_by_profile
from geon.core.plans.cost.pipelined import send_count
from geon.core.plans.cost.placed import read_placed
from geon.core.plans.diff import named_collective
from geon.core.plans.model import ShardSpec
from geon.graphs.edits import EditRefused
from geon.graphs.models import ShardPlan
from geon.graphs.services.documents import LiveDocument


def check_plan(
    name: Any,
    mesh: Any,
    spec: Any,
    axis_mapping: Any = None,
    inputs: Any = None,
    pipeline: Any = None,
) -> Plan:
    """A plan's fields from a request, checked (:func:`geon.core.plans.read_plan`: a
    :class:`~geon.core.plans.PlanError`, answered 422, names the field, the bad value and what
    is valid; ``pipeline`` None or ``{}`` is none). Whether it fits the graph's document is
    decided when it is saved."""
    return read_plan(
        {
            "name": name,
            "mesh": mesh,
            "axisMapping": {} if axis_mapping is None else axis_mapping,
            "inputs": {} if inputs is None else inputs,
            "spec": spec,
            "pipeline": None if pipeline == {} else pipeline,
        }
    )


def core_plan(plan: ShardPlan) -> Plan:
    """The stored plan as the core reads it."""
    return check_plan(
        plan.name, plan.mesh, plan.spec, plan.axis_mapping, plan.inputs, plan.pipeline
    )


def mesh_id_of(plan: ShardPlan) -> str:
    """The id of the Mesh node a plan writes: one per plan, so generating it again updates it."""
    return str(uuid.uuid5(uuid.UUID(str(plan.graph_id)), f"geon-plan-{plan.pk}-mesh"))


def refused(plan: ShardPlan, error: GeonError) -> EditRefused:
    """The refusal of a plan that does not fit the document, naming the plan."""
    return EditRefused("invalid_edit", f'plan "{plan.name}": {error}')


def plan_trial(document: Document, plan: ShardPlan) -> Document:
    """A copy of ``document`` with the plan written into it
    (:func:`geon.core.plans.apply_plan`); :class:`EditRefused` (``invalid_edit``, naming the
    operation or input) when the plan does not fit the document."""
    try:
        return apply_plan(document, core_plan(plan), mesh_id=mesh_id_of(plan))
    except GeonError as error:
        raise refused(plan, error) from None


def _pieces(spec: ShardSpec, mesh: dict[str, int]) -> int:
    """The shards one spec entry makes, at most :data:`MAX_PIECES` (a chunk's count needs the
    range: counted as the most a split may make)."""
    if spec.over:
        count = math.prod(mesh.get(axis, 1) for _, axis in spec.over)
    elif spec.grid:
        count = math.prod(parts for _, parts in spec.grid)
    elif spec.parts is not None:
        count = spec.parts
    elif spec.sizes is not None:
        count = len(spec.sizes)
    elif spec.chunk is not None:
        count = MAX_PIECES
    else:
        count = 1
    return max(1, min(count, MAX_PIECES))


def plan_work(document: Document, plan: ShardPlan) -> int:
    """What costing ``plan`` on ``document`` will do, counted before anything is built, in
    units of about one shard read (~60 us of the web process): the shards (each split
    operation's pieces, each operation left whole once per device of the mesh), plus the pairs
    of a read and a write of one tensor that the moving rule compares (an operation's pieces
    times its producer's, estimated as its pieces squared) / 256, plus the devices (each a row
    of the ledger and of the bytes) / 2. Linear in the document's operations. A plan that does
    not fit the document counts its devices only (the trial refuses it at once)."""
    core = core_plan(plan)
    mesh = dict(core.mesh_axes)
    devices = math.prod(mesh.values())
    try:
        splits = plan_splits(document, core).splits
    except GeonError:
        return devices
    operations = sum(1 for _ in document.of_type(OPERATION))
    pieces = [_pieces(spec, mesh) for _, spec in splits]
    whole = max(0, operations - len({op_id for op_id, _ in splits}))
    shards = sum(pieces) + whole * devices
    pairs = sum(n * n for n in pieces) + whole * devices * devices
    return shards + pairs // 256 + devices // 2


def document_work(document: Document) -> int:
    """:func:`plan_work` of a document as it is placed (the current document's cost, issue 35):
    its Applications (one shard each), the read/write pairs of each operation's Applications
    (squared) / 256, and the devices of its meshes / 2. A mesh whose size cannot be read counts
    nothing (the cost refuses the document at once)."""
    per_operation: dict[Any, int] = {}
    for node in document.of_type(APPLICATION):
        operation = node.body.get("operationId")
        key = operation if isinstance(operation, str) else None
        per_operation[key] = per_operation.get(key, 0) + 1
    devices = 0
    for node in document.of_type(MESH):
        sizes = node.body.get("axes")
        if isinstance(sizes, dict) and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in sizes.values()
        ):
            devices += math.prod(sizes.values())
    shards = sum(per_operation.values())
    pairs = sum(n * n for n in per_operation.values())
    return shards + pairs // 256 + devices // 2


def trial_key(plan: ShardPlan) -> tuple[int, Any]:
    """What a remembered trial is of: the plan, as last saved."""
    return (plan.pk, plan.updated)


def live_trial(live: LiveDocument, plan: ShardPlan) -> Document:
    """:func:`plan_trial` of a live document, remembered on it for its version, refusal
    included (the last plan tried only: the ``planCost`` of an ``applied`` and the REST cost
    asked right after share it). The trial is a copy: nothing reads the live document while it
    is costed."""
    key = trial_key(plan)
    kept = live.trial
    if kept is None or kept[0] != key or kept[1] != live.version:
        version = live.version
        try:
            found: Document | EditRefused = plan_trial(live.document, plan)
        except EditRefused as error:
            found = error
        kept = live.trial = (key, version, found)
    if isinstance(kept[2], EditRefused):
        raise kept[2]
    return kept[2]


def generated_applications(plan: ShardPlan) -> set[str]:
    """The ids of the Applications the plan's last generation wrote (none if never)."""
    operations = (plan.applications or {}).get("operations") or {}
    return set(itertools.chain.from_iterable(operations.values()))


def current_plan(graph_id: uuid.UUID, held: set[str]) -> ShardPlan | None:
    """The stored plan whose last generation wrote exactly the Applications ``held`` (the ids
    of a document's; see the module docstring), or None."""
    if not held:
        return None
    for plan in ShardPlan.objects.filter(graph_id=graph_id).order_by("pk"):
        if generated_applications(plan) == held:
            return plan
    return None


@collector_paused()
def live_plan_cost(
    graph_id: uuid.UUID, live: LiveDocument, *, moved_since: int | None = None
) -> dict[str, Any] | None:
    """What an ``applied`` of the live document's version carries as ``planCost``:
    ``{"planId", "plan", "version", "collectives": {profile: [collective, ...]}}`` for the
    document's current plan (each collective as the plan's REST cost names it; a pipelined
    plan's with its sends, and ``"pipeline": {profile: the cost's pipeline less its grid}``),
    ``{"planId", "plan", "version", "error"}`` when that plan does not fit the document any
    more (its pipeline's stages included), and None when it has no current plan, more
    Applications than ``GEON_LIVE_COST_MAX_APPLICATIONS`` (or a pipeline listing more sends:
    :func:`~geon.core.plans.cost.pipelined.send_count`, microbatches x tensors crossing a stage
    boundary x passes, counted before the work), or a plan whose :func:`plan_work` is past
    ``GEON_PLAN_COST_WEB_MAX_WORK`` (a few Applications on a mesh of many devices; the editor
    then asks the plan's REST cost, as for any plan it finds current itself).

    ``moved_since``: the edits since that version only moved nodes, so a trial remembered for
    it (or its refusal) holds now: a layout changes no cost."""
    document, version = live.document, live.version
    held = {node.id for node in document.of_type(APPLICATION)}
    if len(held) > settings.GEON_LIVE_COST_MAX_APPLICATIONS:
        return None
    plan = current_plan(graph_id, held)
    if plan is None or plan_work(document, plan) > settings.GEON_PLAN_COST_WEB_MAX_WORK:
        return None  # past the web's budget, the editor's REST cost goes to the worker
    core = core_plan(plan)
    head = {"planId": plan.pk, "plan": plan.name, "version": version}
    kept = live.trial
    if moved_since is not None and kept is not None and kept[:2] == (trial_key(plan), moved_since):
        live.trial = (kept[0], version, kept[2])
    try:
        trial = live_trial(live, plan)
    except EditRefused as error:
        return {**head, "error": str(error)}
    names = shipped_profiles()
    if core.pipeline is not None:
        try:
            # the sends it would list, counted before the work: as many as Applications
            if send_count(trial, core.pipeline) > settings.GEON_LIVE_COST_MAX_APPLICATIONS:
                return None
            return {**head, **_pipelined(trial, core, names)}
        except GeonError as error:  # its stages no longer fit the document
            return {**head, "error": str(refused(plan, error))}
    timed = collectives_by_profile(read_placed(trial), [load_profile(name) for name in names])
    by_profile = {
        name: [named_collective(trial, c.to_json()) for c in found]
        for name, found in zip(names, timed, strict=True)
    }
    return {**head, "collectives": by_profile}


def _pipelined(trial: Document, plan: Plan, names: tuple[str, ...]) -> dict[str, Any]:
    """The live cost of a pipelined plan, as its REST cost has it under each profile: the
    collectives with each microbatch's ``send`` between stages, and the ``pipeline`` section
    less its ``grid`` (the schedule chart asks the REST cost for that)."""
    collectives: dict[str, list[dict[str, Any]]] = {}
    pipelines: dict[str, dict[str, Any]] = {}
    for name in names:
        report = cost_report(trial, load_profile(name), plan=plan)
        collectives[name] = [named_collective(trial, c) for c in report["collectives"]]
        pipelines[name] = {k: v for k, v in report["pipeline"].items() if k != "grid"}
    return {"collectives": collectives, "pipeline": pipelines}
