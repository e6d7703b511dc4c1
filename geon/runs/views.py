"""HTTP for runs (queue one) and ``/healthz``. Error answers are JSON ``{"error": {...}}``."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from geon.graphs.services import GraphNotFound
from geon.runs import health, services


def error_response(
    status: int, code: str, message: str, issues: list[dict[str, Any]] | None = None
) -> JsonResponse:
    error: dict[str, Any] = {"code": code, "message": message}
    if issues is not None:
        error["issues"] = issues
    return JsonResponse({"error": error}, status=status)


@require_POST
def queue_run(request: HttpRequest, graph_id: uuid.UUID) -> JsonResponse:
    """``POST /graphs/<id>/runs/`` with optional JSON ``{"backend": "numpy"}`` -> 202 ``{run}``."""
    if not request.user.is_authenticated:
        return error_response(401, "not_authenticated", "sign in to run graphs")
    body: Any = {}
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
    try:
        version, backend = services.check_can_run(
            request.user, graph_id, body.get("backend", "numpy")
        )
    except GraphNotFound as error:
        return error_response(404, "not_found", str(error))
    except services.RunRefused as error:
        status = 409 if error.code == "graph_has_errors" else 400
        return error_response(status, error.code, str(error), error.issues)
    run = services.do_queue_run(version, request.user, backend)
    return JsonResponse({"run": services.run_json(run)}, status=202)


@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    """The state of the database, the broker, a worker and the channel layer; 503 if any fails."""
    report = await health.report()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)
