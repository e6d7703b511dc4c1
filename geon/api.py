"""The REST API under ``/api/v1/`` (DESIGN.md §6): one django-ninja instance, its auth and the
one error envelope.

- Auth: the browser's session (with Django's CSRF check on writes) or, for scripts,
  ``Authorization: Bearer <token>`` (``POST /api/v1/tokens`` from a session, or
  ``manage.py create_token``); an expired token answers 401 ``token_expired``.
- OpenAPI at ``/api/v1/openapi.json``, interactive docs at ``/api/v1/docs``.
- Every error under ``/api/`` answers ``{"error": {"code", "message", ...}}``
  (:func:`error_response`; its OpenAPI shape is :class:`ApiError`, declared by :func:`answers`),
  whoever made it: the endpoints' own refusals (400, 401, 403, 404, 409, 413, 415, 422),
  Django's (unknown paths 404, wrong methods 405, CSRF failures 403 ``csrf_failed``:
  :class:`ApiErrorMiddleware`, :func:`csrf_failure`), a database that is briefly unavailable
  (503 ``unavailable`` with ``Retry-After``) and anything unexpected (logged; 500
  ``internal_error`` without details): :func:`failure_response`, also the pages' 500 handler.
- Routers, mounted in :mod:`geon.urls`: :mod:`geon.graphs.api` (graphs, versions, members,
  plans, validate), :mod:`geon.accounts.api` (tokens) and :mod:`geon.runs.api` (runs and
  renders). They import the envelope from here; this module imports none of them.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.deprecation import MiddlewareMixin
from django.views import csrf, defaults
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.docs import DocsBase
from ninja.parser import Parser
from ninja.security import HttpBearer, SessionAuth
from ninja.utils import check_csrf

from geon.accounts.models import ApiToken, token_digest
from geon.core.errors import DocumentError, GeonError
from geon.graphs.edits import EditRefused
from geon.graphs.protocol import InvalidMessage, parse_message
from geon.graphs.services import AccessDenied, GraphNotFound

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


class TokenExpired(Exception):
    """A bearer token past its expiry."""

    def __init__(self, token: ApiToken) -> None:
        super().__init__(
            f'the API token "{token.name}" ({token.prefix}…) expired on '
            f"{token.expires:%Y-%m-%d %H:%M} UTC; create a new one (POST /api/v1/tokens from a "
            "signed-in session, or manage.py create_token)"
        )


class CsrfRefused(Exception):
    """A session write without a valid CSRF token; carries :func:`csrf_failure`'s answer."""

    def __init__(self, response: HttpResponseBase) -> None:
        super().__init__("the CSRF check failed")
        self.response = response


class BearerToken(HttpBearer):
    """``Authorization: Bearer <key>`` with a key from :meth:`ApiToken.issue`; the request's
    ``auth`` is the :class:`ApiToken`."""

    openapi_scheme = "bearer"

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found = ApiToken.objects.select_related("user").filter(digest=token_digest(token)).first()
        if found is None or not found.user.is_active:
            return None
        if found.expired:
            raise TokenExpired(found)
        ApiToken.objects.filter(pk=found.pk).update(last_used=timezone.now())
        request.user = found.user
        return found


class Session(SessionAuth):
    """The browser's session. A write that carries the session cookie must pass Django's CSRF
    check; one without the cookie is simply not signed in (401, not a CSRF failure)."""

    def _get_key(self, request: HttpRequest) -> str | None:
        key = request.COOKIES.get(self.param_name)
        if key and self.csrf and not getattr(request, "_ninja_csrf_exempt", False):
            refused = check_csrf(request)
            if refused is not None:
                raise CsrfRefused(refused)
        return key


class Docs(DocsBase):
    """Swagger UI at ``/api/v1/docs`` under the site's CSP: ``templates/api/docs.html`` loads
    django-ninja's copy of Swagger UI from this site's static files (no CDN) and starts it with
    ``/api/v1/docs.js``, a file rather than an inline script."""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        context = {"api": api, "openapi_url": self.get_openapi_url(api, kwargs)}
        return render(request, "api/docs.html", context)


def docs_script(request: HttpRequest) -> HttpResponse:
    """``/api/v1/docs.js``: starts Swagger UI on the docs page."""
    return render(request, "api/docs.js", content_type="text/javascript")


class StrictJSON(Parser):
    """Request bodies are read like websocket frames (:func:`geon.graphs.protocol.parse_message`):
    ``NaN`` and ``Infinity`` (which Python's ``json`` accepts but no browser can read back),
    integers past Python's digit limit and nesting deeper than its bound are refused with a 400
    that says which."""

    def parse_body(self, request: HttpRequest) -> Any:
        return parse_message(request.body, "the request body")


api = NinjaAPI(
    title="geon",
    version="1",
    description="Graphs with named axes and sharding plans: documents, versions, members, "
    "shard plans, validation, runs and renders. Errors: "
    '{"error": {"code", "message", "issues"?}}.',
    urls_namespace="api",
    auth=[BearerToken(), Session()],
    parser=StrictJSON(),
    docs=Docs(),
    docs_url="/docs",
    openapi_url="/openapi.json",
)


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


@api.exception_handler(GraphNotFound)
def _not_found(request: HttpRequest, exc: GraphNotFound) -> HttpResponse:
    return error_response(404, "not_found", str(exc))


@api.exception_handler(AccessDenied)
def _denied(request: HttpRequest, exc: AccessDenied) -> HttpResponse:
    return error_response(403, "forbidden", str(exc))


@api.exception_handler(EditRefused)
def _refused(request: HttpRequest, exc: EditRefused) -> HttpResponse:
    status = {"conflict": 409, "stale_version": 409, "too_many_ops": 413}.get(exc.reason, 422)
    return error_response(status, exc.reason, str(exc), **exc.details)


@api.exception_handler(DocumentError)
def _document(request: HttpRequest, exc: DocumentError) -> HttpResponse:
    return error_response(422, "invalid_document", str(exc))


@api.exception_handler(GeonError)
def _geon(request: HttpRequest, exc: GeonError) -> HttpResponse:
    return error_response(422, "invalid_request", str(exc))


@api.exception_handler(ValidationError)
def _validation(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    problems = []
    for item in exc.errors:
        where = ".".join(str(p) for p in item.get("loc", ()))
        problems.append(f"{where}: {item.get('msg', 'is not valid')}")
    return error_response(422, "invalid_request", "; ".join(problems) or "the request is not valid")


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(
        401,
        "not_authenticated",
        "sign in, or send an API token as 'Authorization: Bearer <token>'",
    )


@api.exception_handler(TokenExpired)
def _expired(request: HttpRequest, exc: TokenExpired) -> HttpResponse:
    return error_response(401, "token_expired", str(exc))


@api.exception_handler(CsrfRefused)
def _csrf(request: HttpRequest, exc: CsrfRefused) -> HttpResponseBase:
    return exc.response


@api.exception_handler(Http404)
def _no_such(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error_response(404, "not_found", str(exc) or f'nothing at "{request.path}"')


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return too_large()


@api.exception_handler(HttpError)
def _http(request: HttpRequest, exc: HttpError) -> HttpResponse:
    codes = {
        400: "bad_request",
        403: "forbidden",
        404: "not_found",
        405: "not_allowed",
        429: "too_many_requests",
    }
    code = getattr(exc, "code", None) or codes.get(exc.status_code, "error")
    if isinstance(exc.__cause__, InvalidMessage):  # django-ninja wraps the body parser's refusal
        return error_response(400, "invalid_json", str(exc.__cause__))
    return error_response(exc.status_code, code, str(exc))


@api.exception_handler(Exception)
def _unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    return failure_response(request, exc)
