"""REST endpoints of ONNX model imports under ``/api/v1/`` (mounted in :mod:`geon.urls`; issue #20).

- ``POST /imports``: a multipart form with the file ``model`` (an ``.onnx``) and optionally
  ``dims`` (``"batch=8, seq=16"``) and ``review`` (``true``: stop for the axes' names before the
  graph is made, issue 35): 202 with the import and a ``Location`` to poll;
- ``GET /imports/<id>``: ``{"id", "name", "status", "step", "error", "graph", "weights",
  "review", "axes": [{"name", "length", "role", "proposed", "seen"}], "names"}``;
- ``POST /imports/<id>/names``: ``{"names": {"d4": "heads", ...}}`` for an import in
  ``review``: the graph is made with them (an axis not named keeps its proposed name);
- ``GET /imports/<id>/weights``: the initializers' values as ``.npz`` (keys: ONNX names).

Only the uploader sees an import (anyone else gets 404, as for a graph they cannot see);
anonymous callers get :mod:`geon.api`'s 401. Checks and writes are in
:mod:`geon.runs.services.imports`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import FileResponse, HttpRequest, JsonResponse
from django.http.multipartparser import MultiPartParserError
from ninja import Router, Schema
from pydantic import Field

from geon.envelope import answers, error_response
from geon.execute.limits import format_bytes
from geon.runs.api import not_found, refused
from geon.runs.services import RunNotFound, RunRefused
from geon.runs.services import imports as services

router = Router(tags=["imports"])

MODEL_FIELD = "model"
#: Bytes a multipart request may carry beyond the model itself (boundaries, headers, fields).
FORM_OVERHEAD_BYTES = 64 * 1024
#: The error statuses these endpoints answer (each with the JSON error envelope).
ERRORS = (400, 401, 403, 404, 409, 413, 415, 429)


class AxisOut(Schema):
    name: str = Field(description="the axis's name as imported (d<length>, or a dim_param)")
    length: int
    role: str = Field(description='batch, sequence, heads, head_size, hidden, ffn, or ""')
    proposed: str = Field(description="the name the importer proposes")
    seen: str = Field(description="where the model shows the role, by ONNX node names")


class ImportOut(Schema):
    id: int
    name: str
    status: str
    step: str
    error: str
    graph: str | None
    weights: str | None
    review: bool
    axes: list[AxisOut]
    names: dict[str, str] | None


class NamesIn(Schema):
    names: dict[str, Any] = Field(
        description='the axes\' names by their names as imported, e.g. {"d4": "heads"}'
    )


_FORM_SCHEMA = {
    "type": "object",
    "required": [MODEL_FIELD],
    "properties": {
        MODEL_FIELD: {"type": "string", "format": "binary", "description": "an .onnx model"},
        "dims": {
            "type": "string",
            "description": 'lengths of the inputs\' dim_params, e.g. "batch=8" (default 2)',
        },
        "review": {
            "type": "string",
            "enum": ["true", "false", "1", "0"],
            "description": "true: stop in review with the axes proposed before the graph is made",
        },
    },
}


def _declared_size(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


@router.post(
    "/imports",
    response=answers({202: ImportOut}, ERRORS),
    summary="Import an ONNX model as a new graph (converted by a worker)",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": _FORM_SCHEMA}},
        }
    },
)
def create_import(request: HttpRequest) -> Any:
    """Upload an ``.onnx`` model: a worker names its axes and stores it as a graph of yours
    with its initializers' values as an ``.npz``. Bounded before anything is stored: the size
    (413, ``GEON_IMPORT_MAX_BYTES``, from the declared length before the body is read), the
    name (415 unless ``*.onnx``), ``dims`` (400) and your imports still converting (429 with
    ``Retry-After``, ``GEON_IMPORTS_PER_USER``). Poll the ``Location``."""
    declared, limit = _declared_size(request), settings.GEON_IMPORT_MAX_BYTES
    if declared > limit + FORM_OVERHEAD_BYTES:  # refused before the body is read
        return error_response(
            413,
            "model_too_large",
            f"the request has {format_bytes(declared)}; a model may have at most "
            f"{format_bytes(limit)} (GEON_IMPORT_MAX_BYTES)",
        )
    try:
        if request.content_type != "multipart/form-data":
            return error_response(
                415,
                "unsupported_media_type",
                f'content type "{request.content_type}" is not accepted; expected '
                f'"multipart/form-data" with the file "{MODEL_FIELD}"',
            )
        upload = request.FILES.get(MODEL_FIELD)
        name = upload.name if upload is not None and upload.name else "model.onnx"
        dims = services.check_can_import(request.user, upload, name, request.POST.get("dims"))
        review = services.parse_review(request.POST.get("review"))
    except RunRefused as error:
        return refused(error)
    except RequestDataTooBig:
        return error_response(413, "too_large", "the form's fields are too large")
    except (SuspiciousOperation, MultiPartParserError) as error:
        return error_response(
            400, "invalid_body", f"the request body cannot be read ({error}); expected a "
            f'multipart form with the file "{MODEL_FIELD}"',
        )  # fmt: skip
    assert upload is not None
    found = services.do_queue_import(request.user, upload, name, dims, review)  # type: ignore[arg-type]
    response = JsonResponse(services.import_json(found), status=202)
    response["Location"] = f"/api/v1/imports/{found.pk}"
    return response


@router.get(
    "/imports/{import_id}",
    response=answers({200: ImportOut}, ERRORS),
    summary="A model import: status, step, error, the graph and weights once done",
)
def get_import(request: HttpRequest, import_id: int) -> Any:
    """The import's ``status`` (``queued``, ``running``, ``review``: read, waiting for its
    axes' names at ``POST /imports/<id>/names``; ``done``, ``failed``, or ``expired``: left in
    review over ``GEON_IMPORT_REVIEW_HOURS``, its upload deleted), the ``step`` the worker is at
    (``reading the model``, ``naming axes``, ``storing the graph``), why a failed or expired one
    was not imported (``error``), and once done the new ``graph``'s id and the ``weights``
    download."""
    try:
        return services.import_json(services.check_can_view_import(request.user, import_id))
    except RunNotFound as error:
        return not_found(error)


@router.post(
    "/imports/{import_id}/names",
    response=answers({202: ImportOut}, ERRORS),
    summary="Accept names for the axes of an import in review; the graph is made with them",
)
def name_axes(request: HttpRequest, import_id: int, payload: NamesIn) -> Any:
    """For an import in ``review``: ``names`` by the axes' names as imported (an axis not named
    keeps its proposed name), checked like every axis name (400 ``invalid_names`` naming the bad
    value, nothing changed); 409 ``not_in_review`` otherwise; 429 ``too_many_imports`` (with
    ``Retry-After``) while ``GEON_IMPORTS_PER_USER`` of your other imports are converting (queued
    or on a worker): it stays in review, send the names again once one is done. The import is
    queued again and the worker makes the graph: poll the ``Location``."""
    try:
        found = services.do_name_axes(request.user, import_id, payload.names)
    except RunNotFound as error:
        return not_found(error)
    except RunRefused as error:
        return refused(error)
    response = JsonResponse(services.import_json(found), status=202)
    response["Location"] = f"/api/v1/imports/{found.pk}"
    return response


@router.get(
    "/imports/{import_id}/weights",
    response=answers({}, ERRORS),
    summary="The initializers of an imported model as .npz",
    openapi_extra={
        "responses": {
            200: {
                "description": "keys: the ONNX initializer names (the graph's tensor labels)",
                "content": {
                    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
                },
            }
        }
    },
)
def import_weights(request: HttpRequest, import_id: int) -> Any:
    """The weights ``.npz`` of a done import (``geon run --inputs`` reads it by label); 409
    until it is done."""
    try:
        found = services.check_weights(services.check_can_view_import(request.user, import_id))
    except RunNotFound as error:
        return not_found(error)
    except RunRefused as error:
        return refused(error)
    title = services.import_title(found.name)
    return FileResponse(
        found.weights.open("rb"),
        as_attachment=True,
        filename=f"{title}-weights.npz",
        content_type="application/octet-stream",
    )
