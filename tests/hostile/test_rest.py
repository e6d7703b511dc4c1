"""Hostile input over HTTP (issue 13 findings 9 and 12, issue 14 item 5): every error under
``/api/`` (and from the editor's ``/graphs/<id>/runs/``) is the JSON envelope, whoever makes it;
a database that is briefly unavailable answers 503 with ``Retry-After``, never a traceback; every
answer carries the hardening headers. Each refusal is checked to have changed nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client, override_settings

from geon.accounts.models import ApiToken
from geon.graphs.models import Graph, GraphVersion
from geon.runs.models import Run
from tests.database import short_busy_timeout, write_locked

pytestmark = pytest.mark.django_db

API = "/api/v1"
CSRF_MESSAGE = (
    "the CSRF check failed ({reason}): a signed-in browser sends the page's CSRF token (its "
    "csrfmiddlewaretoken field) as the X-CSRFToken header with the session cookie; a script "
    "sends 'Authorization: Bearer <token>' instead"
)
UNAVAILABLE = {
    "error": {
        "code": "unavailable",
        "message": "the database is briefly unavailable; try again in a few seconds",
    }
}
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self'; worker-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def stored() -> tuple[int, int, int, int]:
    """What a refused request must not change: graphs, versions, runs, tokens."""
    return (
        Graph.objects.count(),
        GraphVersion.objects.count(),
        Run.objects.count(),
        ApiToken.objects.count(),
    )


def envelope(response: Any) -> tuple[int, str, dict[str, Any]]:
    return response.status_code, response["Content-Type"], response.json()


# --- Django's own errors under /api/ ---------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "method", "path", "status", "code", "message"),
    [
        (
            "encoded dot-dot",
            "get",
            f"{API}/graphs/..%2F..",
            404,
            "not_found",
            'no API endpoint at "/api/v1/graphs/../.."; /api/v1/docs lists them',
        ),
        (
            "unknown endpoint",
            "get",
            f"{API}/nothing-here",
            404,
            "not_found",
            'no API endpoint at "/api/v1/nothing-here"; /api/v1/docs lists them',
        ),
        (
            "the API's root without a slash",
            "get",
            "/api",
            404,
            "not_found",
            'no API endpoint at "/api"; /api/v1/docs lists them',
        ),
        (
            "unknown API version",
            "post",
            "/api/v2/graphs",
            404,
            "not_found",
            'no API endpoint at "/api/v2/graphs"; /api/v1/docs lists them',
        ),
        (
            "wrong method on a collection",
            "put",
            f"{API}/graphs",
            405,
            "not_allowed",
            'PUT is not allowed on "/api/v1/graphs"; use GET, POST',
        ),
        (
            "wrong method on validate",
            "delete",
            f"{API}/validate",
            405,
            "not_allowed",
            'DELETE is not allowed on "/api/v1/validate"; use POST',
        ),
    ],
)
def test_django_errors_under_the_api_are_the_envelope(
    label: str, method: str, path: str, status: int, code: str, message: str, user: Any
) -> None:
    # given a signed-in user
    client = Client()
    client.force_login(user)
    before = stored()
    # when the request names no endpoint, or a method the endpoint lacks
    response = client.generic(method.upper(), path, "{}", content_type="application/json")
    # then the answer is the JSON envelope saying what is wrong, and nothing changed
    assert envelope(response) == (
        status,
        "application/json",
        {"error": {"code": code, "message": message}},
    )
    assert stored() == before


def test_a_wrong_method_keeps_the_allow_header(user: Any) -> None:
    client = Client()
    client.force_login(user)
    response = client.put(f"{API}/graphs")
    assert (response.status_code, response["Allow"]) == (405, "GET, POST")


def test_a_write_without_the_csrf_token_is_refused_with_the_envelope(
    user: Any, loom_document: dict[str, Any]
) -> None:
    # given a signed-in browser session whose client enforces CSRF like a real browser's
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    before = stored()
    # when it creates a graph without sending the CSRF token
    response = client.post(
        f"{API}/graphs",
        json.dumps({"title": "sneaky", "document": loom_document}),
        content_type="application/json",
    )
    # then it is refused with a message that says what to send, and nothing is stored
    assert envelope(response) == (
        403,
        "application/json",
        {
            "error": {
                "code": "csrf_failed",
                "message": CSRF_MESSAGE.format(reason="CSRF cookie not set"),
            }
        },
    )
    assert stored() == before


def test_a_write_with_the_pages_csrf_token_passes(user: Any, loom_document: dict[str, Any]) -> None:
    # given the token the gallery page hands its script (the cookie is HttpOnly)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    page = client.get("/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    # when the script sends it as X-CSRFToken
    response = client.post(
        f"{API}/graphs",
        json.dumps({"title": "fine", "document": loom_document}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token.group(1),
    )
    # then the graph is made
    assert response.status_code == 201
    assert Graph.objects.filter(title="fine").count() == 1


def test_a_csrf_failure_on_the_editors_run_endpoint_is_the_envelope(user: Any, graph: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/")  # the CSRF cookie, but no token sent
    before = stored()
    response = client.post(
        f"{API}/graphs/{graph.pk}/runs", '{"backend": "numpy"}', content_type="application/json"
    )
    assert envelope(response) == (
        403,
        "application/json",
        {
            "error": {
                "code": "csrf_failed",
                "message": CSRF_MESSAGE.format(reason="CSRF token missing"),
            }
        },
    )
    assert stored() == before


def test_a_wrong_method_on_the_editors_run_endpoint_is_the_envelope(user: Any, graph: Any) -> None:
    client = Client()
    client.force_login(user)
    response = client.delete(f"{API}/graphs/{graph.pk}/runs")
    assert envelope(response) == (
        405,
        "application/json",
        {
            "error": {
                "code": "not_allowed",
                "message": f'DELETE is not allowed on "{API}/graphs/{graph.pk}/runs"; '
                "use GET, POST",
            }
        },
    )


def test_a_write_without_any_credentials_is_not_signed_in_rather_than_a_csrf_failure(
    loom_document: dict[str, Any],
) -> None:
    before = stored()
    response = Client(enforce_csrf_checks=True).post(
        f"{API}/graphs",
        json.dumps({"title": "anon", "document": loom_document}),
        content_type="application/json",
    )
    assert envelope(response) == (
        401,
        "application/json",
        {
            "error": {
                "code": "not_authenticated",
                "message": "sign in, or send an API token as 'Authorization: Bearer <token>'",
            }
        },
    )
    assert stored() == before


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=2048)
def test_a_body_over_the_limit_on_the_editors_run_endpoint_is_413(user: Any, graph: Any) -> None:
    client = Client()
    client.force_login(user)
    before = stored()
    body = json.dumps({"backend": "numpy", "padding": "x" * 4096})
    response = client.post(f"{API}/graphs/{graph.pk}/runs", body, content_type="application/json")
    assert envelope(response) == (
        413,
        "application/json",
        {"error": {"code": "too_large", "message": "the request body is larger than 2048 bytes"}},
    )
    assert stored() == before


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '{"title": "x", "document": {',
            "the request body is not JSON (Expecting property name enclosed in double quotes: "
            "line 1 column 29 (char 28)); expected an object",
        ),
        (
            '{"title": "x", "document": {"id": "g", "nodes": [], "x": NaN}}',
            'the request body holds "NaN"; expected finite numbers only',
        ),
        (
            '{"title": "x", "document": {"id": "g", "nodes": [], "x": -Infinity}}',
            'the request body holds "-Infinity"; expected finite numbers only',
        ),
        (
            '{"title": "x", "document": ' + "[" * 100_000,
            "the request body is nested too deeply; at most 64 levels of arrays and objects are "
            "allowed",
        ),
    ],
    ids=["malformed", "nan", "infinity", "nested"],
)
def test_a_body_that_is_not_plain_json_is_refused_with_the_envelope(
    user: Any, body: str, message: str
) -> None:
    # NaN and Infinity parse in Python but not in a browser: stored, they would make the graph
    # unreadable for every editor
    client = Client()
    client.force_login(user)
    before = stored()
    response = client.post(f"{API}/graphs", body, "application/json")
    assert envelope(response) == (
        400,
        "application/json",
        {"error": {"code": "invalid_json", "message": message}},
    )
    assert stored() == before


def test_an_unexpected_failure_on_the_editors_run_endpoint_is_logged_and_500(
    user: Any, graph: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from geon.runs import api as runs_api

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(runs_api, "queue_checked_run", broken)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    response = client.post(f"{API}/graphs/{graph.pk}/runs", "{}", content_type="application/json")
    assert envelope(response) == (
        500,
        "application/json",
        {
            "error": {
                "code": "internal_error",
                "message": "the server failed unexpectedly; the log has the details",
            }
        },
    )
    assert "secret internals" not in response.content.decode()
    assert "secret internals" in caplog.text


def test_an_unexpected_failure_of_a_page_is_a_plain_500_page(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from geon.graphs import services

    def broken(user: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(services, "visible_graphs", broken)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    response = client.get("/")
    assert (response.status_code, response["Content-Type"]) == (500, "text/html; charset=utf-8")
    assert "secret internals" not in response.content.decode()


# --- a briefly unavailable database ----------------------------------------------------------


@pytest.fixture
def signed_in(user: Any) -> Client:
    """ann's browser, signed in (signing in writes the session, so before any lock)."""
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.fixture
def token(user: Any) -> str:
    """An API token of ann's, made before any lock."""
    return ApiToken.issue(user, "script")[1]


@pytest.fixture
def locked_database() -> Iterator[None]:
    """The SQLite test database write-locked by another connection (as the worker's write
    transaction would) for the length of a test, while this process waits at most 0.2 s."""
    with short_busy_timeout(), write_locked():
        yield


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_a_locked_database_answers_503_to_api_writes(
    signed_in: Client, loom_document: dict[str, Any], locked_database: None
) -> None:
    # given a signed-in user, while another process holds the database's write lock
    body = json.dumps({"title": "later", "document": loom_document})
    before = stored()
    # when they create a graph
    response = signed_in.post(f"{API}/graphs", body, content_type="application/json")
    # then they are told to retry, with Retry-After, and nothing was stored
    assert envelope(response) == (503, "application/json", UNAVAILABLE)
    assert response["Retry-After"] == "5"
    assert stored() == before


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_a_locked_database_answers_503_when_a_token_is_used(
    token: str, graph: Any, locked_database: None
) -> None:
    # when a script reads with its token (using a token records when: a write)
    response = Client().get(f"{API}/graphs/{graph.pk}", HTTP_AUTHORIZATION=f"Bearer {token}")
    # then it is told to retry, and the token's use is not recorded
    assert envelope(response) == (503, "application/json", UNAVAILABLE)
    assert response["Retry-After"] == "5"
    assert ApiToken.objects.get().last_used is None


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_a_locked_database_answers_503_to_the_editors_run_endpoint(
    signed_in: Client, graph: Any, locked_database: None
) -> None:
    before = stored()
    response = signed_in.post(
        f"{API}/graphs/{graph.pk}/runs", "{}", content_type="application/json"
    )
    assert envelope(response) == (503, "application/json", UNAVAILABLE)
    assert response["Retry-After"] == "5"
    assert stored() == before


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_a_locked_database_answers_a_plain_503_page_to_a_sign_in(
    user: Any, password: str, locked_database: None
) -> None:
    # when someone signs in while the database is locked (the session must be written)
    client = Client(raise_request_exception=False)
    response = client.post("/accounts/login/", {"username": "ann", "password": password})
    # then a plain page says so, with Retry-After, and no traceback
    body = response.content.decode()
    assert (response.status_code, response["Retry-After"]) == (503, "5")
    assert "<h1>geon is briefly unavailable</h1>" in body
    assert "Traceback" not in body and "OperationalError" not in body


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_the_refused_write_succeeds_once_the_lock_is_gone(
    signed_in: Client, loom_document: dict[str, Any]
) -> None:
    body = json.dumps({"title": "later", "document": loom_document})
    with short_busy_timeout():
        with write_locked():
            refused = signed_in.post(f"{API}/graphs", body, content_type="application/json")
        response = signed_in.post(f"{API}/graphs", body, content_type="application/json")
    assert (refused.status_code, response.status_code) == (503, 201)
    assert Graph.objects.filter(title="later").count() == 1


# --- hardening headers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "path"),
    [
        ("login page", "/accounts/login/"),
        ("gallery", "/"),
        ("editor", "/graphs/{graph}/"),
        ("API answer", f"{API}/graphs"),
        ("API error", f"{API}/nothing-here"),
    ],
)
def test_every_answer_carries_the_hardening_headers(
    label: str, path: str, user: Any, graph: Any
) -> None:
    client = Client()
    if label != "login page":
        client.force_login(user)
    response = client.get(path.format(graph=graph.pk))
    assert response.status_code in (200, 404)
    assert {
        name: response.get(name)
        for name in (
            "Content-Security-Policy",
            "X-Content-Type-Options",
            "Referrer-Policy",
            "X-Frame-Options",
        )
    } == {
        "Content-Security-Policy": POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "X-Frame-Options": "DENY",
    }


@pytest.mark.parametrize(("label", "path"), [("login", "/accounts/login/"), ("gallery", "/")])
def test_the_csrf_cookie_is_http_only(label: str, path: str, user: Any) -> None:
    client = Client()
    if label == "gallery":
        client.force_login(user)
    response = client.get(path)
    cookie = response.cookies["csrftoken"]
    assert (response.status_code, cookie["httponly"], cookie["samesite"]) == (200, True, "Lax")


@pytest.mark.parametrize(
    ("label", "path", "count"),
    [
        ("login page", "/accounts/login/", 0),
        ("gallery", "/", 1),
        ("editor", "/graphs/{graph}/", 1),
        ("API docs", f"{API}/docs", 2),
    ],
)
def test_no_page_has_inline_script_or_event_handlers(
    label: str, path: str, count: int, user: Any, graph: Any
) -> None:
    client = Client()
    if label != "login page":
        client.force_login(user)
    response = client.get(path.format(graph=graph.pk))
    body = response.content.decode()
    # data for the page (Django's json_script: type application/json, never run) is not script
    scripts = [
        s for s in re.findall(r"<script\b([^>]*)>", body) if 'type="application/json"' not in s
    ]
    assert response.status_code == 200
    assert len(scripts) == count
    assert [s for s in scripts if "src=" not in s] == []
    assert re.findall(r"\son[a-z]+\s*=", body) == []


def test_the_api_docs_page_keeps_the_sites_policy_and_serves_swagger_ui_itself(
    client: Client,
) -> None:
    response = client.get(f"{API}/docs")
    body = response.content.decode()
    assert response.status_code == 200
    assert response["Content-Security-Policy"] == POLICY
    # Swagger UI comes from this site's static files; the page says where the OpenAPI document is
    assert '<script src="/static/ninja/swagger-ui-bundle.js" defer></script>' in body
    assert "https://" not in body  # nothing loaded from elsewhere
    assert '<a href="/api/v1/openapi.json">/api/v1/openapi.json</a>' in body
    script = client.get(f"{API}/docs.js")
    assert (script.status_code, script["Content-Type"]) == (200, "text/javascript")
    assert "SwaggerUIBundle(" in script.content.decode()
