"""HTTP for runs (queue one) and ``/healthz``. Error answers are JSON ``{"error": {...}}``."""

from __future__ import annotations

import json
import uuid
from typing import IO, Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from geon.graphs.services import AccessDenied, GraphNotFound
from geon.runs import health, services
from geon.runs.models import Run


def error_response(
    status: int, code: str, message: str, issues: list[Any] | None = None, **extra: Any
) -> JsonResponse:
    """The JSON error envelope of every error answer, ``{"error": {"code", "message",
    "issues"?, ...extra}}``: this endpoint's, the REST API's (:mod:`geon.api`) and the ones
    :class:`geon.api.ApiErrorMiddleware` makes of Django's pages."""
    error: dict[str, Any] = {"code": code, "message": message}
    if issues is not None:
        error["issues"] = issues
    error.update(extra)
    return JsonResponse({"error": error}, status=status)


def too_large() -> JsonResponse:
    """413 ``too_large``: the request body is over ``DATA_UPLOAD_MAX_MEMORY_SIZE``."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error_response(413, "too_large", f"the request body is larger than {limit} bytes")


def queue_checked_run(
    request: HttpRequest,
    graph_id: uuid.UUID,
    fields: dict[str, Any],
    inputs: IO[bytes] | None = None,
    inputs_name: str = "inputs.npz",
) -> Run | JsonResponse:
    """Check a run request (access, fields, inputs, limits) and queue it: the run, or the JSON
    error answer. The page endpoint and ``POST /api/v1/graphs/<id>/runs`` both come here."""
    try:
        checked = services.check_can_run(
            request.user,
            graph_id,
            fields.get("backend", "numpy"),
            version=fields.get("version"),
            sharded=fields.get("sharded"),
            seed=fields.get("seed"),
            plan=fields.get("plan"),
            inputs=inputs,
            inputs_name=inputs_name,
        )
    except GraphNotFound as error:
        return error_response(404, "not_found", str(error))
    except AccessDenied as error:
        return error_response(403, "forbidden", str(error))
    except services.RunRefused as error:
        return error_response(error.status, error.code, str(error), error.issues)
    return services.do_queue_run(checked, request.user)


@require_POST
def queue_run(request: HttpRequest, graph_id: uuid.UUID) -> JsonResponse:
    """``POST /graphs/<id>/runs/`` with optional JSON ``{"backend": "numpy", "sharded": false,
    "seed": 0, "version": 1}`` -> 202 ``{run}``: the service of ``POST /api/v1/graphs/<id>/runs``,
    which also takes uploaded inputs."""
    if not request.user.is_authenticated:
        return error_response(401, "not_authenticated", "sign in to run graphs")
    body: Any = {}
    if request.content_type not in ("application/json", "text/plain", ""):
        return error_response(
            415,
            "unsupported_media_type",
            f'the request body is "{request.content_type}"; expected application/json '
            f"(upload inputs with POST /api/v1/graphs/{graph_id}/runs)",
        )
    if request.body:
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return error_response(
                400,
                "invalid_body",
                'the request body is not a JSON object; expected e.g. {"backend": "numpy"}',
            )
    run = queue_checked_run(request, graph_id, body)
    if isinstance(run, JsonResponse):
        return run
    return JsonResponse({"run": services.run_json(run)}, status=202)


@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    """The state of the database, the broker, a worker and the channel layer, 503 if any fails:
    in full (with ``geon serve``'s supervision of the worker) for staff, only the status for
    anybody else."""
    body, status = await health.answer(await request.auser())
    return JsonResponse(body, status=status)
