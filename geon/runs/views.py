"""``/healthz``: the state of the database, the broker, a worker and the channel layer
(:mod:`geon.runs.health`). Runs are queued through the REST API (:mod:`geon.runs.api`)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from geon.runs import health


@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    """The state of the database, the broker, a worker and the channel layer, 503 if any fails:
    in full (with ``geon serve``'s supervision of the worker) for staff, only the status for
    anybody else."""
    body, status = await health.answer(await request.auser())
    return JsonResponse(body, status=status)
