"""The one JSON error envelope of geon's HTTP answers, ``{"error": {"code", "message", ...}}``.

Every error under ``/api/`` answers it, whoever made it: the endpoints' own refusals
(:func:`error_response`; its OpenAPI shape is :class:`ApiError`, declared by :func:`answers`),
Django's pages (unknown paths 404, wrong methods 405: :class:`ApiErrorMiddleware`; CSRF failures
403 ``csrf_failed``: :func:`csrf_failure`), a database that is briefly unavailable (503
``unavailable`` with ``Retry-After``) and anything unexpected (logged; 500 ``internal_error``
without details): :func:`failure_response`, also the pages' 500 handler.

The apps' routers import it from here; :mod:`geon.api` (the django-ninja instance, above the
apps) maps their exceptions onto it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.template.loader import render_to_string
from django.utils.deprecation import MiddlewareMixin
from django.views import csrf, defaults
from ninja import Schema

log = logging.getLogger(__name__)

#: Seconds a client is asked to wait when the database is briefly unavailable.
RETRY_AFTER_SECONDS = 5
#: The message of every 500: no detail of the failure reaches the client.
INTERNAL_ERROR = "the server failed unexpectedly; the log has the details"
#: The error statuses every endpoint may answer, each with the envelope (:func:`answers`).
ERROR_STATUSES = (400, 401, 403, 404, 409, 413, 422)


def error_response(
    status: int, code: str, message: str, issues: list[Any] | None = None, **extra: Any
) -> JsonResponse:
    """The JSON error envelope of every error answer, ``{"error": {"code", "message",
    "issues"?, ...extra}}``: the endpoints' and the ones :class:`ApiErrorMiddleware` makes of
    Django's pages."""
    error: dict[str, Any] = {"code": code, "message": message}
    if issues is not None:
        error["issues"] = issues
    error.update(extra)
    return JsonResponse({"error": error}, status=status)


def too_large() -> JsonResponse:
    """413 ``too_large``: the request body is over ``DATA_UPLOAD_MAX_MEMORY_SIZE``."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error_response(413, "too_large", f"the request body is larger than {limit} bytes")


class ApiErrorBody(Schema):
    code: str
    message: str
    issues: list[dict[str, Any]] | None = None
    version: int | None = None
    conflicts: list[dict[str, Any]] | None = None


class ApiError(Schema):
    """The envelope's shape in the OpenAPI document."""

    error: ApiErrorBody


def answers(ok: dict[int, Any], errors: Iterable[int] = ERROR_STATUSES) -> dict[int, Any]:
    """A response map: the success shapes and the error envelope for every error status."""
    return {**ok, **{status: ApiError for status in errors}}


def wants_json(request: HttpRequest) -> bool:
    """Whether errors of this request answer the JSON envelope rather than a page."""
    path = request.path_info
    return path == "/api" or path.startswith("/api/")


def failure_response(request: HttpRequest, exc: BaseException | None) -> HttpResponse:
    """The answer to an exception nothing else handled: 503 ``unavailable`` with
    ``Retry-After`` when the database is briefly unavailable (a lost connection, a lock held
    past the timeout), else 500 ``internal_error``; the envelope under ``/api/``, a plain page
    elsewhere. No detail of the failure reaches the client; the log has it."""
    if isinstance(exc, OperationalError | InterfaceError):
        log.warning("database unavailable in %s %s", request.method, request.path, exc_info=exc)
        if wants_json(request):
            response: HttpResponse = error_response(
                503,
                "unavailable",
                "the database is briefly unavailable; try again in a few seconds",
            )
        else:
            response = HttpResponse(render_to_string("503.html"), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    log.error("unexpected error in %s %s", request.method, request.path, exc_info=exc)
    if wants_json(request):
        return error_response(500, "internal_error", INTERNAL_ERROR)
    return defaults.server_error(request)


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's 500 handler (``handler500``): called while the exception is being handled."""
    return failure_response(request, sys.exc_info()[1])


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 400 handler (``handler400``): a body over the limit read under ``/api/`` before
    an endpoint runs (by a middleware) answers 413 ``too_large`` like the endpoints."""
    if wants_json(request) and isinstance(exception, RequestDataTooBig):
        return too_large()
    return defaults.bad_request(request, exception)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: 403 ``csrf_failed`` saying what to send, or Django's page."""
    if not wants_json(request):
        return csrf.csrf_failure(request, reason)
    return error_response(
        403,
        "csrf_failed",
        f"the CSRF check failed ({reason.rstrip('.') or 'no reason given'}): a signed-in "
        "browser sends the page's CSRF token (its csrfmiddlewaretoken field) as the X-CSRFToken "
        "header with the session cookie; a script sends 'Authorization: Bearer <token>' instead",
    )


class ApiErrorMiddleware(MiddlewareMixin):
    """Error answers under ``/api/`` that are not JSON yet (Django's 404 page, a 405 from a
    method the path lacks, a 500 page) become the envelope; their headers (``Allow``,
    ``Retry-After``, the hardening headers) and cookies stay."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        content_type = response.get("Content-Type", "")
        if (
            response.status_code < 400
            or content_type.startswith("application/json")
            or not isinstance(response, HttpResponse)
            or not wants_json(request)
        ):
            return response
        envelope = error_response(*_envelope_of(request, response))
        response.status_code = envelope.status_code
        response.content = envelope.content
        response["Content-Type"] = envelope["Content-Type"]
        if "Content-Length" in response:
            response["Content-Length"] = str(len(response.content))
        return response


def _envelope_of(request: HttpRequest, response: HttpResponseBase) -> tuple[int, str, str]:
    """Status, code and message for an error answer that is not JSON."""
    status, path = response.status_code, request.path
    if status == 404:
        return 404, "not_found", f'no API endpoint at "{path}"; /api/v1/docs lists them'
    if status == 405:
        # django-ninja lists the methods in set order, which changes from process to process
        allowed = ", ".join(sorted(m.strip() for m in response.get("Allow", "").split(",")))
        response["Allow"] = allowed
        return 405, "not_allowed", f'{request.method} is not allowed on "{path}"; use {allowed}'
    if status == 503:
        message = "the server is briefly unavailable; try again in a few seconds"
        return 503, "unavailable", message
    if status >= 500:
        return status, "internal_error", INTERNAL_ERROR
    reason = getattr(response, "reason_phrase", "") or "refused"
    return status, reason.lower().replace(" ", "_"), f'{request.method} "{path}": {reason}'
