"""The REST API under ``/api/v1/`` (DESIGN.md §6): one django-ninja instance, its auth and the
the exceptions it maps onto the one error envelope.

- Auth: the browser's session (with Django's CSRF check on writes) or, for scripts,
  ``Authorization: Bearer <token>`` (``POST /api/v1/tokens`` from a session, or
  ``manage.py create_token``); an expired token answers 401 ``token_expired``.
- OpenAPI at ``/api/v1/openapi.json``, interactive docs at ``/api/v1/docs``.
- Every error under ``/api/`` answers :mod:`geon.envelope`'s ``{"error": {"code", "message",
  ...}}``: the handlers below map the services' refusals onto it (400, 401, 403, 404, 409, 413,
  415, 422), and anything unexpected to :func:`geon.envelope.failure_response`.
- Routers, mounted in :mod:`geon.urls`: :mod:`geon.graphs.api` (graphs, versions, members,
  plans, validate), :mod:`geon.accounts.api` (tokens) and :mod:`geon.runs.api` (runs and
  renders). They import the envelope from :mod:`geon.envelope`; this module sits above them.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.utils import timezone
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.docs import DocsBase
from ninja.parser import Parser
from ninja.security import HttpBearer, SessionAuth
from ninja.utils import check_csrf

from geon.accounts.models import ApiToken, token_digest
from geon.core.errors import DocumentError, GeonError
from geon.envelope import error_response, failure_response, too_large
from geon.graphs.edits import EditRefused
from geon.graphs.protocol import InvalidMessage, parse_message
from geon.graphs.services import AccessDenied, GraphNotFound

log = logging.getLogger(__name__)


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


#: A JSON escape that may stand for NUL or half of a surrogate pair (a cheap test on raw bytes:
#: browsers send other text as UTF-8, so most bodies skip the walk of :func:`_unstorable`).
_SUSPECT_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


def _unstorable(value: Any) -> str | None:
    """The first string of ``value`` (keys too) that no database text can hold: one with a NUL
    character, or a lone UTF-16 surrogate (not UTF-8); None when there is none."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if "\x00" in item:
                return "a NUL character (\\u0000)"
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return "an unpaired surrogate (a \\ud800-\\udfff escape without its pair)"
    return None


class StrictJSON(Parser):
    """Request bodies are read like websocket frames (:func:`geon.graphs.protocol.parse_message`):
    ``NaN`` and ``Infinity`` (which Python's ``json`` accepts but no browser can read back),
    integers past Python's digit limit and nesting deeper than its bound are refused with a 400
    that says which. So are strings no database column can store (PostgreSQL refuses NUL in
    text, and a lone surrogate is not UTF-8): refused here, once, rather than failing later."""

    def parse_body(self, request: HttpRequest) -> Any:
        value = parse_message(request.body, "the request body")
        if _SUSPECT_ESCAPE.search(request.body):
            found = _unstorable(value)
            if found is not None:
                raise InvalidMessage(
                    f"the request body holds a string with {found}; expected text without NUL "
                    "characters or unpaired surrogates"
                )
        return value


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
