"""REST endpoints for runs and renders under ``/api/v1/`` (mounted in :mod:`geon.urls`).

- ``POST /graphs/<id>/runs``: queue a run (JSON, or multipart with an ``inputs`` ``.npz``);
- ``GET /graphs/<id>/runs``: the graph's runs, newest first;
- ``GET /runs/<id>``: a run's status, progress, timings, result summary and ``max_abs_diff``;
- ``GET /runs/<id>/results.npz``: the outputs of a done run;
- ``GET /runs/<id>/results/<key>[?at=i,j]``: one output as JSON (a 1-D or 2-D view);
- ``GET /graphs/<id>/render.{svg,png,dot}``: the diagram, or 202 with a ``Location`` to poll.

Views only translate HTTP: every check and write is in :mod:`geon.runs.services`. Errors answer
:mod:`geon.api`'s envelope ``{"error": {"code", "message", "issues"?}}``; authentication (session
or bearer token) and the errors of other layers are handled there, the refusals of the services
are answered here with the status each carries.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import IO, Any

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from ninja import Router, Schema

from geon.envelope import answers, error_response, too_large
from geon.graphs.services import AccessDenied, GraphNotFound
from geon.runs import services
from geon.runs.models import Render, Run

router = Router(tags=["runs"])

#: Fields of a run request (a JSON object, or the fields of a multipart form).
RUN_FIELDS = ("backend", "engine", "version", "sharded", "seed", "plan", "intermediates")
#: Form fields a browser may add that are not part of the request.
IGNORED_FORM_FIELDS = ("csrfmiddlewaretoken",)
INPUTS_FIELD = "inputs"
#: The error statuses these endpoints answer (each with the JSON error envelope).
ERRORS = (400, 401, 403, 404, 409, 413, 415, 422)


class RunOut(Schema):
    id: int
    graphId: str
    version: int
    backend: str
    engine: str
    sharded: bool
    plan: int | None
    planName: str | None
    intermediates: bool
    seed: int | None
    uploadedInputs: bool
    status: str
    progress: float
    step: dict[str, Any]
    created: str | None
    started: str | None
    finished: str | None
    timings: dict[str, Any]
    result: dict[str, Any]
    max_abs_diff: dict[str, Any] | None
    results: str | None
    error: str
    workerPid: int | None
    # How many times the run was handed to a worker (more than 1: a worker stopped under it).
    attempts: int


class RunListOut(Schema):
    runs: list[RunOut]


class RenderPendingOut(Schema):
    status: str
    message: str
    location: str
    render: dict[str, Any]


def refused(error: services.RunRefused) -> JsonResponse:
    """The refusal's JSON error answer, with ``Retry-After`` when it asks the client to wait."""
    response = error_response(error.status, error.code, str(error), error.issues)
    if error.retry_after is not None:
        response["Retry-After"] = str(error.retry_after)
    return response


def not_found(error: Exception) -> JsonResponse:
    return error_response(404, "not_found", str(error))


_RUN_BODY_SCHEMA = {
    "type": "object",
    "properties": {
        "backend": {"type": "string", "enum": ["numpy", "cupy"], "default": "numpy"},
        "engine": {
            "type": "string",
            "enum": ["numpy", "jax"],
            "default": "numpy",
            "description": "jax: the placed plan on JAX, beside the logical run (jax installed)",
        },
        "version": {"type": "integer", "minimum": 1},
        "sharded": {"type": "boolean", "default": False},
        "seed": {"type": "integer", "minimum": 0},
        "plan": {"type": "integer", "minimum": 1, "description": "a shard plan id (sharded)"},
        "intermediates": {
            "type": "boolean",
            "default": False,
            "description": "keep and return every tensor, not only the outputs",
        },
    },
    "additionalProperties": False,
}
_RUN_FORM_SCHEMA = {
    "type": "object",
    "properties": {
        **_RUN_BODY_SCHEMA["properties"],  # type: ignore[dict-item]
        INPUTS_FIELD: {
            "type": "string",
            "format": "binary",
            "description": "an .npz whose keys are tensor labels or ids (no pickles)",
        },
    },
}
_FILE = {"schema": {"type": "string", "format": "binary"}}


def queue_checked_run(
    request: HttpRequest,
    graph_id: uuid.UUID,
    fields: dict[str, Any],
    inputs: IO[bytes] | None = None,
    inputs_name: str = "inputs.npz",
) -> Run | JsonResponse:
    """Check a run request (access, fields, inputs, limits) and queue it: the run, or the JSON
    error answer."""
    try:
        checked = services.check_can_run(
            request.user,
            graph_id,
            fields.get("backend", "numpy"),
            engine=fields.get("engine", "numpy"),
            version=fields.get("version"),
            sharded=fields.get("sharded"),
            seed=fields.get("seed"),
            plan=fields.get("plan"),
            intermediates=fields.get("intermediates"),
            inputs=inputs,
            inputs_name=inputs_name,
        )
    except GraphNotFound as error:
        return not_found(error)
    except AccessDenied as error:
        return error_response(403, "forbidden", str(error))
    except services.RunRefused as error:
        return refused(error)
    return services.do_queue_run(checked, request.user)


def _run_request_fields(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    """The run request's fields (JSON object or multipart form), or the error answer."""
    try:
        return _read_run_request(request)
    except RequestDataTooBig:  # as geon.api answers it, before the file's own limits apply
        return too_large()
    except (SuspiciousOperation, MultiPartParserError) as error:
        return error_response(
            400, "invalid_body", f"the request body cannot be read ({error}); expected a JSON "
            "object or a multipart form",
        )  # fmt: skip


def _read_run_request(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    if request.content_type == "multipart/form-data":
        fields: dict[str, Any] = {
            k: v for k, v in request.POST.items() if k not in IGNORED_FORM_FIELDS
        }
        extra_files = sorted(set(request.FILES) - {INPUTS_FIELD})
        if extra_files:
            return error_response(
                400,
                "invalid_request",
                f'file field "{extra_files[0]}" is not known; expected "{INPUTS_FIELD}" (an .npz)',
            )
    elif request.content_type in ("application/json", "", None) or not request.body:
        try:
            fields = json.loads(request.body) if request.body else {}
        except (ValueError, RecursionError):
            fields = None  # type: ignore[assignment]
        if not isinstance(fields, dict):
            return error_response(
                400,
                "invalid_body",
                'the request body is not a JSON object; expected e.g. {"sharded": true}',
            )
    else:
        return error_response(
            415,
            "unsupported_media_type",
            f'content type "{request.content_type}" is not accepted; expected '
            '"application/json" or "multipart/form-data"',
        )
    unknown = sorted(set(fields) - set(RUN_FIELDS))
    if unknown:
        expected = ", ".join(f'"{f}"' for f in RUN_FIELDS)
        return error_response(
            400,
            "invalid_request",
            f'field "{unknown[0]}" is not known; expected any of {expected}',
        )
    return fields


@router.post(
    "/graphs/{graph_id}/runs",
    response=answers({202: RunOut}, ERRORS),
    summary="Queue a run of a graph version",
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {
                "application/json": {"schema": _RUN_BODY_SCHEMA},
                "multipart/form-data": {"schema": _RUN_FORM_SCHEMA},
            },
        }
    },
)
def create_run(request: HttpRequest, graph_id: uuid.UUID) -> Any:
    """Queue a logical or sharded run of the graph's current version (or ``version``), with
    inputs from an uploaded ``.npz`` and/or a seed. Everything is checked before the run is
    stored: the inputs' keys, shapes and dtypes, and the executor's limits (413). Answers 202
    with the run and a ``Location`` to poll; editors and owners may run a graph."""
    fields = _run_request_fields(request)
    if isinstance(fields, JsonResponse):
        return fields
    multipart = request.content_type == "multipart/form-data"
    upload = request.FILES.get(INPUTS_FIELD) if multipart else None
    run = queue_checked_run(
        request,
        graph_id,
        fields,
        inputs=upload,
        inputs_name=upload.name if upload is not None and upload.name else "inputs.npz",
    )
    if isinstance(run, JsonResponse):
        return run
    response = JsonResponse(services.run_json(run), status=202)
    response["Location"] = f"/api/v1/runs/{run.pk}"
    return response


class VerifyPendingOut(Schema):
    status: str
    message: str
    location: str


@router.post(
    "/graphs/{graph_id}/verify",
    response=answers({200: dict[str, Any], 202: VerifyPendingOut}, ERRORS),
    summary="Verify the placed plan with XLA (geon verify)",
)
def request_verify(request: HttpRequest, graph_id: uuid.UUID, version: int | None = None) -> Any:
    """Compile the version's placed plan with XLA in a worker and match its collectives with
    geon's predictions (docs/engines.md): 200 with the report once a worker answered, else 202
    with the ``location`` to poll."""
    return _verify(request, graph_id, version, queue=True)


@router.get(
    "/graphs/{graph_id}/verify",
    response=answers({200: dict[str, Any], 202: VerifyPendingOut}, ERRORS),
    summary="The verify report of a placed plan (poll after POST)",
)
def get_verify(request: HttpRequest, graph_id: uuid.UUID, version: int | None = None) -> Any:
    """The report once a worker answered (200), 202 while it is pending, 404 when nobody asked."""
    return _verify(request, graph_id, version, queue=False)


def _verify(request: HttpRequest, graph_id: uuid.UUID, version: int | None, *, queue: bool) -> Any:
    from geon.runs.services.verifying import check_can_verify, verify_answer

    try:
        graph, number, _ = check_can_verify(request.user, graph_id, version)
        status, body = verify_answer(graph, number, queue=queue)
    except GraphNotFound as error:
        return not_found(error)
    except services.RunRefused as error:
        return refused(error)
    return JsonResponse(body, status=status)


class EnginesOut(Schema):
    engines: list[str]


@router.get(
    "/engines",
    response=answers({200: EnginesOut}, ERRORS),
    summary="The engines a run may ask for",
    auth=None,
)
def list_engines(request: HttpRequest) -> Any:
    """``numpy`` always, and ``jax`` where jax is installed (the web process and the workers
    share one environment): the run panel offers what this lists (docs/engines.md). Open to
    visitors too (the try page's run panel asks it): it reads no data and imports nothing."""
    from geon.interop.jax_engine import jax_available

    return {"engines": ["numpy", *(["jax"] if jax_available() else [])]}


@router.get(
    "/graphs/{graph_id}/runs",
    response=answers({200: RunListOut}, ERRORS),
    summary="The runs of a graph",
)
def list_runs(request: HttpRequest, graph_id: uuid.UUID) -> Any:
    """Every run of the graph (all versions), newest first."""
    try:
        runs = services.graph_runs(request.user, graph_id)
    except GraphNotFound as error:
        return not_found(error)
    return {"runs": [services.run_json(run) for run in runs]}


@router.get(
    "/runs/{run_id}",
    response=answers({200: RunOut}, ERRORS),
    summary="A run: status, progress, timings, result summary",
)
def get_run(request: HttpRequest, run_id: int) -> Any:
    """The run's status and progress (``step``: the last operation or Application done), its
    timings (``operations``; for sharded runs ``applications`` too), the result summary, the
    sharded run's ``max_abs_diff`` per output and the error of a failed run."""
    try:
        run = services.check_can_view_run(request.user, run_id)
    except services.RunNotFound as error:
        return not_found(error)
    return services.run_json(run)


@router.get(
    "/runs/{run_id}/results.npz",
    response=answers({}, ERRORS),
    summary="The outputs of a done run as .npz",
    openapi_extra={
        "responses": {
            200: {"description": "keys: tensor labels (ids where missing or not unique)",
                  "content": {"application/octet-stream": _FILE}},
        }
    },
)  # fmt: skip
def run_results(request: HttpRequest, run_id: int) -> Any:
    """The ``.npz`` of every output, keyed as the CLI keys them; 409 until the run is done."""
    try:
        run = services.check_results(services.check_can_view_run(request.user, run_id))
    except services.RunNotFound as error:
        return not_found(error)
    except services.RunRefused as error:
        return refused(error)
    return FileResponse(
        run.results.open("rb"),
        as_attachment=True,
        filename=f"run-{run.pk}-results.npz",
        content_type="application/octet-stream",
    )


@router.get(
    "/runs/{run_id}/results/{key}",
    response=answers({200: dict[str, Any]}, ERRORS),
    summary="One output of a done run as JSON (a 1-D or 2-D view, for heat maps)",
)
def run_result(request: HttpRequest, run_id: int, key: str, at: str | None = None) -> Any:
    """Shape, dtype, axes, min/max and the values of one output (``key`` as in results.npz):
    the whole tensor for rank 1 or 2, else the 2-D slice ``at`` picks (``at=i,j``: one index
    per leading dim). At most ``limit`` values; a larger view is refused with 413 before any is
    read. ``maxAbsDiff``: the sharded run's difference from the logical run for this output."""
    try:
        run = services.check_can_view_run(request.user, run_id)
        return services.result_view(run, key, at)
    except services.RunNotFound as error:
        return not_found(error)
    except services.RunRefused as error:
        return refused(error)


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower() or "graph"


@router.get(
    "/graphs/{graph_id}/render.{format}",
    response=answers({202: RenderPendingOut}, ERRORS),
    summary="The diagram of a graph version as SVG, PNG or DOT",
    openapi_extra={
        "responses": {
            200: {"description": "the diagram",
                  "content": {"image/svg+xml": _FILE, "image/png": _FILE,
                              "text/vnd.graphviz": _FILE}},
        }
    },
)  # fmt: skip
def get_render(
    request: HttpRequest,
    graph_id: uuid.UUID,
    format: str,
    version: int | None = None,
    download: bool = False,
) -> Any:
    """The diagram (``svg``, ``png`` or ``dot``) of the current version or ``version``, with its
    issues highlighted. Drawn by a worker and cached per document: until it is ready the answer
    is 202 with a ``Location`` to poll; then the file (``download=1``: as an attachment)."""
    try:
        stored, fmt = services.check_can_render(request.user, graph_id, format, version)
    except GraphNotFound as error:
        return not_found(error)
    except services.RunRefused as error:
        return refused(error)
    found = services.do_request_render(stored, fmt)
    if found.status == Render.Status.FAILED:
        return error_response(422, "render_failed", found.error)
    if found.status != Render.Status.DONE:
        query = f"?version={stored.number}" + ("&download=1" if download else "")
        location = f"/api/v1/graphs/{graph_id}/render.{fmt}{query}"
        body = {
            "status": found.status,
            "message": f"version {stored.number} is being rendered as {fmt}; poll the Location "
            "until it answers 200 with the file",
            "location": location,
            "render": services.render_json(found, stored),
        }
        response = JsonResponse(body, status=202)
        response["Location"] = location
        response["Retry-After"] = "1"
        return response
    with found.file.open("rb") as f:
        data = f.read()
    answer = HttpResponse(data, content_type=services.CONTENT_TYPES[fmt])
    answer["ETag"] = f'"{found.content_hash}.{fmt}"'
    if download:
        name = f"{_slug(stored.graph.title)}-v{stored.number}.{fmt}"
        answer["Content-Disposition"] = f'attachment; filename="{name}"'
    return answer
