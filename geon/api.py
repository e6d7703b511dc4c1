"""The REST API under ``/api/v1/`` (DESIGN.md §6): one django-ninja instance, its auth and errors.

- Auth: the browser's session (with Django's CSRF check on writes) or, for scripts,
  ``Authorization: Bearer <token>`` (``POST /api/v1/tokens`` or ``manage.py create_token``).
- OpenAPI at ``/api/v1/openapi.json``, interactive docs at ``/api/v1/docs``.
- Every error answers ``{"error": {"code", "message", "issues"?}}`` with 400, 401, 403, 404,
  409, 413 or 422; anything unexpected is logged and answers 500 with no traceback.
- Routers: :mod:`geon.graphs.api` (graphs, versions, members, plans, validate, tokens) and
  :mod:`geon.runs.api` (runs and renders).
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer, SessionAuth

from geon.accounts.models import ApiToken, token_digest
from geon.core.errors import DocumentError, GeonError
from geon.graphs.api import router as graphs_router
from geon.graphs.edits import EditRefused
from geon.graphs.services import AccessDenied, GraphNotFound
from geon.runs.api import router as runs_router

log = logging.getLogger(__name__)


class BearerToken(HttpBearer):
    """``Authorization: Bearer <key>`` with a key from :meth:`ApiToken.issue`."""

    openapi_scheme = "bearer"

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found = ApiToken.objects.select_related("user").filter(digest=token_digest(token)).first()
        if found is None or not found.user.is_active:
            return None
        ApiToken.objects.filter(pk=found.pk).update(last_used=timezone.now())
        request.user = found.user
        return found.user


api = NinjaAPI(
    title="geon",
    version="1",
    description="Graphs with named axes and sharding plans: documents, versions, members, "
    "shard plans, validation, runs and renders. Errors: "
    '{"error": {"code", "message", "issues"?}}.',
    urls_namespace="api",
    auth=[BearerToken(), SessionAuth()],
    docs_url="/docs",
    openapi_url="/openapi.json",
)


def error(
    status: int, code: str, message: str, issues: list[Any] | None = None, **extra: Any
) -> HttpResponse:
    """The JSON error envelope."""
    body: dict[str, Any] = {"code": code, "message": message}
    if issues is not None:
        body["issues"] = issues
    body.update(extra)
    return JsonResponse({"error": body}, status=status)


@api.exception_handler(GraphNotFound)
def _not_found(request: HttpRequest, exc: GraphNotFound) -> HttpResponse:
    return error(404, "not_found", str(exc))


@api.exception_handler(AccessDenied)
def _denied(request: HttpRequest, exc: AccessDenied) -> HttpResponse:
    return error(403, "forbidden", str(exc))


@api.exception_handler(EditRefused)
def _refused(request: HttpRequest, exc: EditRefused) -> HttpResponse:
    status = {"conflict": 409, "stale_version": 409, "too_many_ops": 413}.get(exc.reason, 422)
    return error(status, exc.reason, str(exc), **exc.details)


@api.exception_handler(DocumentError)
def _document(request: HttpRequest, exc: DocumentError) -> HttpResponse:
    return error(422, "invalid_document", str(exc))


@api.exception_handler(GeonError)
def _geon(request: HttpRequest, exc: GeonError) -> HttpResponse:
    return error(422, "invalid_request", str(exc))


@api.exception_handler(ValidationError)
def _validation(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    problems = []
    for item in exc.errors:
        where = ".".join(str(p) for p in item.get("loc", ()))
        problems.append(f"{where}: {item.get('msg', 'is not valid')}")
    return error(422, "invalid_request", "; ".join(problems) or "the request is not valid")


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error(
        401,
        "not_authenticated",
        "sign in, or send an API token as 'Authorization: Bearer <token>'",
    )


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    from django.conf import settings

    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error(413, "too_large", f"the request body is larger than {limit} bytes")


@api.exception_handler(HttpError)
def _http(request: HttpRequest, exc: HttpError) -> HttpResponse:
    code = {400: "bad_request", 403: "forbidden", 404: "not_found", 405: "not_allowed"}
    return error(exc.status_code, code.get(exc.status_code, "error"), str(exc))


@api.exception_handler(Exception)
def _unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    log.exception("unexpected error in %s %s", request.method, request.path)
    return error(500, "internal_error", "the server failed unexpectedly; the log has the details")


api.add_router("", graphs_router)
api.add_router("", runs_router)
