"""REST endpoints for graphs under ``/api/v1/`` (mounted in :mod:`geon.urls`).

- ``GET/POST /graphs``; ``GET/PATCH/DELETE /graphs/<id>`` (a write names ``baseVersion``;
  a stale one answers 409 with the current ``version``);
- ``POST /graphs/<id>/edits``: the websocket's edit ops over HTTP (rebased like live edits);
- ``GET /graphs/<id>/versions`` (each with its summary), ``GET /graphs/<id>/versions/<n>``,
  ``POST /graphs/<id>/versions/<n>/restore`` (its document as a new version),
  ``GET /graphs/<id>/versions/<a>/diff/<b>``: node-level differences;
- ``GET /graphs/<id>/export`` and ``POST /graphs/import``: LoomGraph JSON as it is, with the
  graph's title and description in a top-level ``About`` tag (:mod:`.services.copies`), saved
  as ``<title slug>.json``; import takes the tag off and uses it; ``export?to=onnx|numpy|
  einsum|python``: the document as ONNX or code (:mod:`.services.exporting`);
- ``POST /graphs/<id>/duplicate``: a copy of yours, with the description;
- ``GET /graphs/<id>/members``, ``PUT/DELETE /graphs/<id>/members/<username>`` (role
  ``owner``), ``POST /graphs/<id>/owner`` (the owner hands the graph over);
- ``GET /graphs/<id>/plans/<a>/diff/<b>``: plan ``a`` against plan ``b`` on the current
  document: placements, collectives, devices and step time (:mod:`.services.plan_diff`);
  a plan's cost and a plan diff past the web budget answer 202 with a ``location`` to poll
  (:mod:`.services.plan_jobs`);
- ``POST /validate``: check a posted document without storing it;

Views only translate HTTP; checks and writes are in :mod:`geon.graphs.services`.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.text import slugify
from ninja import Body, Path, Router, Schema, Status
from pydantic import Field
from pydantic.json_schema import JsonDict

from geon.core.checks import check_document as check_raw_document
from geon.core.errors import DocumentError
from geon.core.graph import Graph as Document
from geon.core.limits import INT64_MAX
from geon.envelope import answers, error_response
from geon.graphs import services
from geon.graphs.edits import diff
from geon.graphs.models import Graph, GraphVersion, Membership
from geon.graphs.plan_schemas import (
    CostPending,
    PlanCost,
    PlanDiffOut,
    PlanIn,
    PlanList,
    PlanOut,
    PlanPatch,
)
from geon.graphs.services import copies, exporting, plan_diff
from geon.graphs.services.graphs import DESCRIPTION_MAX, TITLE_MAX
from geon.graphs.services.plan_jobs import Pending
from geon.graphs.services.plans import requested_cost

router = Router(tags=["graphs"])

#: A parameter that is the whole JSON body (a LoomGraph document).
RAW_BODY = Body(...)
#: Version numbers: integers the database can hold (int64), 1 or more.
Positive = Annotated[int, Field(ge=1, le=INT64_MAX)]
#: A version number or plan id in a path (int64, 1 or more).
PATH_NUMBER = Path(..., ge=1, le=INT64_MAX)


class GraphIn(Schema):
    title: str = Field(max_length=200)
    description: str = Field(default="", max_length=20_000)
    document: dict[str, Any]


class GraphSummary(Schema):
    id: uuid.UUID
    title: str
    version: int
    role: str
    owner: str
    team: str | None
    created: datetime
    updated: datetime


class GraphOut(GraphSummary):
    description: str
    strictBroadcasting: bool
    document: dict[str, Any]
    issues: list[dict[str, Any]]


class GraphList(Schema):
    graphs: list[GraphSummary]


#: The OpenAPI shape of a title and of a description; the service checks them (and its refusal
#: names the value, which pydantic's would not).
TITLE_SCHEMA: JsonDict = {"type": "string", "maxLength": TITLE_MAX}
DESCRIPTION_SCHEMA: JsonDict = {"type": "string", "maxLength": DESCRIPTION_MAX}


class GraphPatch(Schema):
    baseVersion: Positive
    title: Any = Field(default=None, json_schema_extra=TITLE_SCHEMA)
    description: Any = Field(default=None, json_schema_extra=DESCRIPTION_SCHEMA)
    # checked by the service, which names a bad value (like title and description)
    strictBroadcasting: Any = Field(default=None, json_schema_extra={"type": "boolean"})
    document: dict[str, Any] | None = None
    message: str = Field(default="", max_length=500)


class EditIn(Schema):
    baseVersion: Positive
    ops: list[dict[str, Any]]
    message: str = Field(default="", max_length=500)
    # the client's name for the edit, as on the websocket: sent again with the same id (by the
    # same user), the edit is answered with the version it made and not applied twice
    id: str | None = Field(default=None, min_length=1, max_length=100)


class IssueCounts(Schema):
    error: int
    warning: int


class EditOut(Schema):
    version: int
    ops: list[dict[str, Any]]
    # at most GEON_WS_MAX_ISSUES, errors first (as the websocket's ``applied``); the counts
    # are of all; ``GET /graphs/<id>`` has the whole list
    issues: list[dict[str, Any]]
    issueCounts: IssueCounts
    author: str


class VersionSummary(Schema):
    number: int
    author: str | None
    message: str
    # what the version did by name, and whether it only moved nodes (geon.core.history)
    summary: str
    layoutOnly: bool
    created: datetime


class VersionList(Schema):
    versions: list[VersionSummary]


class VersionOut(VersionSummary):
    document: dict[str, Any]


class ChangedNode(Schema):
    id: str
    fields: list[str]


class DiffOut(Schema):
    base: int
    target: int
    added: list[str]
    removed: list[str]
    changed: list[ChangedNode]


class MemberOut(Schema):
    user: str
    role: str


class MemberList(Schema):
    owner: str
    members: list[MemberOut]
    #: The team the graph is given to (its members have their team role on it), if any.
    team: str | None = None


class MemberIn(Schema):
    role: str


class MemberSet(Schema):
    user: str
    role: str
    status: str


class OwnerIn(Schema):
    username: str = Field(min_length=1, max_length=150)


class ValidateOut(Schema):
    issues: list[dict[str, Any]]


def summary(graph: Graph, user: Any) -> dict[str, Any]:
    version = graph.current_version
    assert version is not None
    return {
        "id": graph.pk,
        "title": graph.title,
        "version": version.number,
        "role": services.role_on(user, graph) or "viewer",
        "owner": graph.owner.get_username(),
        "team": graph.team.name if graph.team else None,
        "created": graph.created,
        "updated": graph.updated,
    }


def detail(graph: Graph, user: Any) -> dict[str, Any]:
    live = services.live_document(graph)
    return {
        **summary(graph, user),
        "description": graph.description,
        "strictBroadcasting": graph.strict_broadcasting,
        "document": live.document.to_json(),
        "issues": live.issues(),
    }


def version_summary(version: GraphVersion) -> dict[str, Any]:
    return {
        "number": version.number,
        "author": version.author.get_username() if version.author else None,
        "message": version.message,
        "summary": version.summary,
        "layoutOnly": version.layout_only,
        "created": version.created,
    }


@router.get("/graphs", response=answers({200: GraphList}))
def list_graphs(request: HttpRequest) -> dict[str, Any]:
    """The graphs you have a role on, most recently changed first."""
    graphs = services.visible_graphs(request.user).select_related("owner", "team")
    return {"graphs": [summary(g, request.user) for g in graphs.order_by("-updated")]}


@router.post("/graphs", response=answers({201: GraphOut}))
def create_graph(request: HttpRequest, payload: GraphIn) -> Status[dict[str, Any]]:
    """Store a new graph (you own it) with ``document`` as version 1."""
    title = services.check_title(payload.title)
    services.parse_document(payload.document)
    graph = services.do_create_graph(
        owner=request.user,  # type: ignore[arg-type]
        title=title,
        document=payload.document,
        description=payload.description,
    )
    return Status(201, detail(graph, request.user))


@router.post("/graphs/import", response=answers({201: GraphOut}))
def import_graph(
    request: HttpRequest, title: str | None = None, document: dict[str, Any] = RAW_BODY
) -> Status[dict[str, Any]]:
    """Store a LoomGraph JSON document (the request body, as exported) as a new graph. Its
    top-level ``About`` tag, when there, gives the description and the title (``title``, when
    given, wins) and is not stored."""
    document, about_title, description = copies.split_about(document)
    if title is None and about_title is None:
        raise DocumentError(
            f'the document has no "{copies.ABOUT_TAG}" tag with a title; expected a title '
            "(?title=...) or that tag"
        )
    clean = services.check_title(about_title if title is None else title)
    services.parse_document(document)
    graph = services.do_create_graph(
        owner=request.user,  # type: ignore[arg-type]
        title=clean,
        document=document,
        description=description,
    )
    return Status(201, detail(graph, request.user))


@router.get("/graphs/{graph_id}", response=answers({200: GraphOut}))
def get_graph(request: HttpRequest, graph_id: str) -> dict[str, Any]:
    """The current document of a graph with its version and issues."""
    return detail(services.check_can_view(request.user, graph_id), request.user)


@router.patch("/graphs/{graph_id}", response=answers({200: GraphOut}))
def update_graph(request: HttpRequest, graph_id: str, payload: GraphPatch) -> dict[str, Any]:
    """Rename and/or replace the document (editors); ``baseVersion`` must be current."""
    graph = services.do_update_graph(
        request.user,
        graph_id,
        base_version=payload.baseVersion,
        title=payload.title,
        document=payload.document,
        message=payload.message,
        description=payload.description,
        strict_broadcasting=payload.strictBroadcasting,
    )
    graph = services.check_can_view(request.user, graph.pk)
    return detail(graph, request.user)


@router.delete("/graphs/{graph_id}", response=answers({204: None}))
def delete_graph(request: HttpRequest, graph_id: str) -> Status[None]:
    """Delete a graph with its versions, plans and runs: its owner only (403 for an owner
    *member*). Its open websockets get ``error access_removed`` and close with 4404."""
    services.do_delete_graph(request.user, graph_id)
    return Status(204, None)


@router.post("/graphs/{graph_id}/edits", response=answers({200: EditOut}))
def edit_graph(request: HttpRequest, graph_id: str, payload: EditIn) -> dict[str, Any]:
    """Apply edit ops (as on the websocket) as one new version; live clients get ``applied``.
    An ``id`` the user already gave an edit of this graph answers that edit's version and ops
    again, and nothing is stored or sent to live clients."""
    applied = services.do_apply_edit(
        request.user,
        graph_id,
        payload.baseVersion,
        payload.ops,
        edit_id=payload.id,
        message=payload.message,
    )
    return {
        "version": applied.version,
        "ops": applied.ops,
        "issues": applied.issues,
        "issueCounts": applied.issue_counts,
        "author": applied.author,
    }


@router.get("/graphs/{graph_id}/export", response=answers({200: dict[str, Any]}))
def export_graph(request: HttpRequest, graph_id: str, to: str = "json") -> HttpResponse:
    """The current document as a file named after the title: LoomGraph JSON (``to=json``, the
    default) with the title and description in its top-level ``About`` tag (``graph.json`` when
    nothing of the title is left in ASCII), or ``to=onnx|numpy|einsum|python`` as the CLI's
    ``geon export`` writes it (400 naming the valid formats, or the exporter's refusal). A
    placed document exports its logical model (the plan's partial products put back whole, its
    Applications left out) and the answer's ``X-Geon-Export-Notice`` header says so."""
    graph = services.check_can_view(request.user, graph_id)
    try:
        if exporting.check_format(to) != "json":
            content, name, kind, notice = exporting.export_file(
                services.live_document(graph).document, graph.title, to
            )
            answer = HttpResponse(content, content_type=kind)
            answer["Content-Disposition"] = f'attachment; filename="{name}"'
            if notice is not None:
                answer[exporting.NOTICE_HEADER] = notice
            return answer
    except exporting.ExportRefused as error:
        return error_response(error.status, error.code, str(error))
    document = services.live_document(graph).document.to_json()
    response = JsonResponse(copies.with_about(document, graph.title, graph.description))
    name = slugify(graph.title) or "graph"
    response["Content-Disposition"] = f'attachment; filename="{name}.json"'
    return response


@router.post("/graphs/{graph_id}/duplicate", response=answers({201: GraphOut}))
def duplicate_graph(request: HttpRequest, graph_id: str) -> Status[dict[str, Any]]:
    """A new graph of yours with the current document and description of one you may view,
    titled "<title> (copy)"."""
    graph = copies.do_duplicate_graph(request.user, graph_id)
    return Status(201, detail(graph, request.user))


@router.get("/graphs/{graph_id}/versions", response=answers({200: VersionList}))
def list_versions(request: HttpRequest, graph_id: str) -> dict[str, Any]:
    """Every version of a graph, newest first (documents not included)."""
    graph = services.check_can_view(request.user, graph_id)
    rows = (
        GraphVersion.objects.filter(graph=graph).select_related("author").defer("snapshot", "ops")
    )
    return {"versions": [version_summary(v) for v in rows.order_by("-number")]}


@router.get("/graphs/{graph_id}/versions/{number}", response=answers({200: VersionOut}))
def get_version(request: HttpRequest, graph_id: str, number: int = PATH_NUMBER) -> dict[str, Any]:
    """One version with its document."""
    graph = services.check_can_view(request.user, graph_id)
    version = services.version_of(graph, number)
    return {**version_summary(version), "document": version.document}


class RestoreIn(Schema):
    baseVersion: Positive


@router.post("/graphs/{graph_id}/versions/{number}/restore", response=answers({200: GraphOut}))
def restore_version(
    request: HttpRequest, graph_id: str, payload: RestoreIn, number: int = PATH_NUMBER
) -> dict[str, Any]:
    """Store version ``number``'s document as a new version based on ``baseVersion`` (editor
    and up; a stale base is 409): nothing is lost, the restore is itself a version."""
    graph = services.check_can_edit(request.user, graph_id)
    old = services.version_of(graph, number)
    services.do_update_graph(
        request.user,
        graph_id,
        base_version=payload.baseVersion,
        document=old.document,
        message=f"restored version {number}",
    )
    return detail(services.check_can_view(request.user, graph_id), request.user)


@router.get("/graphs/{graph_id}/versions/{base}/diff/{target}", response=answers({200: DiffOut}))
def diff_versions(
    request: HttpRequest, graph_id: str, base: int = PATH_NUMBER, target: int = PATH_NUMBER
) -> dict[str, Any]:
    """The nodes added, removed and changed (with the fields) from ``base`` to ``target``."""
    graph = services.check_can_view(request.user, graph_id)
    old = Document.from_json(services.version_of(graph, base).document)
    new = Document.from_json(services.version_of(graph, target).document)
    return {"base": base, "target": target, **diff(old, new)}


@router.get("/graphs/{graph_id}/members", response=answers({200: MemberList}))
def list_members(request: HttpRequest, graph_id: str) -> dict[str, Any]:
    """The owner and the members with their roles."""
    graph = services.check_can_view(request.user, graph_id)
    rows = Membership.objects.filter(graph=graph).select_related("user").order_by("user__username")
    return {
        "owner": graph.owner.get_username(),
        "members": [{"user": m.user.get_username(), "role": m.role} for m in rows],
        "team": graph.team.name if graph.team is not None else None,
    }


@router.put("/graphs/{graph_id}/members/{username}", response=answers({202: MemberSet}))
def set_member(
    request: HttpRequest, graph_id: str, username: str, payload: MemberIn
) -> Status[dict[str, Any]]:
    """Give a user a role on the graph (role ``owner`` needed; the graph's owner cannot be
    given one: 422).

    The answer does not tell whether the username exists: it is 202 ``{"user", "role",
    "status": "invited"}`` for an existing account (which gets the role at once, and its open
    websockets an ``access`` message) and for a name nobody has (nothing is stored). The
    members list shows who holds a role.
    """
    graph, member, role = services.check_member(request.user, graph_id, username, payload.role)
    services.do_set_member(graph, member, role)
    return Status(202, {"user": username, "role": role, "status": "invited"})


@router.delete("/graphs/{graph_id}/members/{username}", response=answers({204: None}))
def remove_member(request: HttpRequest, graph_id: str, username: str) -> Status[None]:
    """Take a member's role away (role ``owner`` needed); a name that is not a member's,
    known or not, is 404. Their open websockets get ``error access_removed`` and close (4404).
    """
    services.do_remove_member(request.user, graph_id, username)
    return Status(204, None)


@router.post("/graphs/{graph_id}/owner", response=answers({200: MemberList}))
def transfer_graph(request: HttpRequest, graph_id: str, payload: OwnerIn) -> dict[str, Any]:
    """Hand the graph over to a member (its owner only; 403 for anyone else with a role): the
    member becomes the owner and the old owner an ``editor`` member. A username that is not a
    member's, known or not, is 404. Answers the new owner and members."""
    services.do_transfer_graph(request.user, graph_id, payload.username)
    return list_members(request, graph_id)


# --- shard plans ------------------------------------------------------------------------------


class GenerateIn(Schema):
    baseVersion: Positive
    # the ``id`` of the ``applied`` message the graph's websocket clients get, so the editor
    # that asked can tell the edit as its own (and make it one undo step)
    editId: str | None = Field(default=None, min_length=1, max_length=100)


class NotSplitOut(Schema):
    operation: str
    axes: list[str]
    reason: str


class GenerateOut(Schema):
    version: int
    issues: list[dict[str, Any]]
    issueCounts: IssueCounts
    plan: PlanOut
    notSplit: list[NotSplitOut]


def plan_json(plan: Any) -> dict[str, Any]:
    return {
        "id": plan.pk,
        "name": plan.name,
        "mesh": plan.mesh,
        "axisMapping": plan.axis_mapping,
        "inputs": plan.inputs,
        "spec": plan.spec,
        "pipeline": plan.pipeline or None,  # stored {} when none; null here, as plans read it
        "applications": plan.applications,
        "created": plan.created,
        "updated": plan.updated,
    }


@router.get("/graphs/{graph_id}/plans", response=answers({200: PlanList}))
def list_plans(request: HttpRequest, graph_id: str) -> dict[str, Any]:
    """The graph's shard plans."""
    graph = services.check_can_view(request.user, graph_id)
    return {"plans": [plan_json(p) for p in graph.shard_plans.order_by("name")]}


@router.post("/graphs/{graph_id}/plans", response=answers({201: PlanOut}))
def create_plan(request: HttpRequest, graph_id: str, payload: PlanIn) -> Status[dict[str, Any]]:
    """A new shard plan (editors): a mesh, an axis mapping (``{"N": "dp"}``: every operation
    with index axis ``N`` split over mesh axis ``dp``), where graph inputs live (``"replicated"``,
    the default, ``{"over": {axis: meshAxis}}`` or ``{"device": [coords]}``) and, per operation
    id, how to split it (``{"over": {indexAxis: meshAxis}}``, ``{"dim", "parts"}``,
    ``{"grid": {...}}``...), overriding the mapping; and its ``pipeline`` stages, if any
    (``{"axis", "microbatches", "schedule", "virtualStages"?, "stages"}``, DESIGN.md §12)."""
    graph = services.check_can_edit(request.user, graph_id)
    fields = (
        payload.name,
        payload.mesh.dict(),
        payload.spec,
        payload.axisMapping,
        payload.inputs,
        payload.pipeline,
    )
    return Status(201, plan_json(_save_plan(request, graph, fields, None)))


def _save_plan(request: HttpRequest, graph: Any, fields: tuple[Any, ...], plan: Any) -> Any:
    """Save a plan's fields (name, mesh, spec, axis mapping, inputs, pipeline), which
    :func:`~geon.graphs.services.do_save_plan` checks."""
    name, mesh, spec, axis_mapping, inputs, pipeline = fields
    return services.do_save_plan(
        request.user,
        graph,
        name,
        mesh,
        spec,
        plan,
        axis_mapping=axis_mapping,
        inputs=inputs,
        pipeline=pipeline,
    )


@router.get("/graphs/{graph_id}/plans/{plan_id}", response=answers({200: PlanOut}))
def get_plan(request: HttpRequest, graph_id: str, plan_id: int = PATH_NUMBER) -> dict[str, Any]:
    """One shard plan."""
    graph = services.check_can_view(request.user, graph_id)
    return plan_json(services.plan_of(graph, plan_id))


@router.patch("/graphs/{graph_id}/plans/{plan_id}", response=answers({200: PlanOut}))
def update_plan(
    request: HttpRequest, graph_id: str, payload: PlanPatch, plan_id: int = PATH_NUMBER
) -> dict[str, Any]:
    """Change a plan's name, mesh, axis mapping, inputs, spec or pipeline (editors); a field
    left out keeps its value (``"pipeline": null`` or ``{}`` removes the pipeline)."""
    graph = services.check_can_edit(request.user, graph_id)
    plan = services.plan_of(graph, plan_id)
    fields = (
        payload.name if payload.name is not None else plan.name,
        payload.mesh.dict() if payload.mesh is not None else plan.mesh,
        payload.spec if payload.spec is not None else plan.spec,
        payload.axisMapping if payload.axisMapping is not None else plan.axis_mapping,
        payload.inputs if payload.inputs is not None else plan.inputs,
        payload.pipeline if "pipeline" in payload.model_fields_set else plan.pipeline,
    )
    return plan_json(_save_plan(request, graph, fields, plan))


@router.delete("/graphs/{graph_id}/plans/{plan_id}", response=answers({204: None}))
def delete_plan(request: HttpRequest, graph_id: str, plan_id: int = PATH_NUMBER) -> Status[None]:
    """Delete a plan (editors); Applications it generated stay in the document."""
    graph = services.check_can_edit(request.user, graph_id)
    services.do_delete_plan(request.user, graph, plan_id)
    return Status(204, None)


@router.post("/graphs/{graph_id}/plans/{plan_id}/generate", response=answers({200: GenerateOut}))
def generate_plan(
    request: HttpRequest, graph_id: str, payload: GenerateIn, plan_id: int = PATH_NUMBER
) -> dict[str, Any]:
    """Write the plan's Mesh, Applications and input placements into a new version (editors),
    one atomic edit; ``notSplit`` lists the operations its axis mapping left whole, and why."""
    applied, plan = services.do_generate_plan(
        request.user, graph_id, plan_id, payload.baseVersion, edit_id=payload.editId
    )
    return {
        "version": applied.version,
        "issues": applied.issues,
        "issueCounts": applied.issue_counts,
        "plan": plan_json(plan),
        "notSplit": plan.applications["notSplit"],
    }


@router.get(
    "/graphs/{graph_id}/plans/{plan_id}/cost",
    response=answers({200: PlanCost, 202: CostPending}),
    exclude_unset=True,
    by_alias=True,  # CollectiveCost's "pass" (one component for every endpoint)
)
def plan_cost(
    request: HttpRequest, graph_id: str, plan_id: int = PATH_NUMBER, profile: str | None = None
) -> Any:
    """What the plan would cost on the current document: bytes per device (inputs, outputs,
    temporaries) and bytes moved between devices; under the hardware profile ``profile`` (a
    shipped name, ``h100-sxm-8`` by default) its collectives, time interval (seconds), per-device
    ``ledger`` (flops, compute and communication seconds, peak memory) and memory summary, as
    ``geon cost`` prints them. Nothing is stored in the database; the answer is cached per
    (version, plan, profile). Past ``GEON_PLAN_COST_DEVICE_ROWS`` devices, equal ones are one
    row with ``count`` and ``omitted`` counts what is not listed; a plan whose work is past the
    web budget is costed by a worker: 202 with a ``location`` to poll until it answers 200."""
    graph = services.check_can_view(request.user, graph_id)
    found = requested_cost(graph, services.plan_of(graph, plan_id), profile)
    return _answer_or_pending(request, found, "the plan's cost")


@router.get(
    "/graphs/{graph_id}/plans/{base}/diff/{target}",
    response=answers({200: PlanDiffOut, 202: CostPending}),
    exclude_unset=True,
    by_alias=True,  # CollectiveCost's "pass" (one component for every endpoint)
)
def diff_plans(
    request: HttpRequest,
    graph_id: str,
    base: int = PATH_NUMBER,
    target: int = PATH_NUMBER,
    profile: str | None = None,
) -> Any:
    """Plan ``base`` (before) against plan ``target`` (after), both as generated on the current
    document and costed under the hardware profile ``profile`` (as a plan's cost): operations
    placed differently, collectives added, removed and changed (bytes, seconds, deltas), each
    device's peak memory and busy seconds, and the step time. Nothing is stored in the
    database; bounded, cached and handed to a worker as a plan's cost is."""
    graph = services.check_can_view(request.user, graph_id)
    old, new = services.plan_of(graph, base), services.plan_of(graph, target)
    found = plan_diff.requested_diff(graph, old, new, profile)
    return _answer_or_pending(request, found, "the comparison of the plans")


def _answer_or_pending(request: HttpRequest, found: Any, what: str) -> Any:
    """An answer as it is; a job handed to a worker as 202 with the ``location`` to poll (the
    same request: it answers 200 once the worker has answered)."""
    if not isinstance(found, Pending):
        return found
    response = JsonResponse(found.to_json(what, request.get_full_path()), status=202)
    response["Location"], response["Retry-After"] = request.get_full_path(), "1"
    return response


@router.get("/profiles", response=answers({200: dict[str, Any]}), auth=None)
def list_profiles(request: HttpRequest) -> dict[str, Any]:
    """The shipped hardware profiles (device FLOP/s, memory capacity, links) by name, and the
    default one, so an editor can offer them as the ``?profile=`` of a plan's cost."""
    from geon.core.plans.cost.profiles import DEFAULT_PROFILE, load_profile, shipped_profiles

    return {
        "default": DEFAULT_PROFILE,
        "profiles": [load_profile(name).to_json() for name in shipped_profiles()],
    }


@router.post("/validate", response=answers({200: ValidateOut}), auth=None)
def validate(request: HttpRequest, document: Any = RAW_BODY) -> dict[str, Any]:
    """Check a LoomGraph document without storing it: every issue (none means it is clean).

    The body is the document itself, or ``{"document": ...}``; any JSON is answered with the
    issues that say what is wrong with it.
    """
    if isinstance(document, dict) and "document" in document and "nodes" not in document:
        document = document["document"]
    return {"issues": [issue.to_json() for issue in check_raw_document(document)]}
