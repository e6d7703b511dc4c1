"""Pages: anonymous visitors see the login; signed-in users see their graphs and the editor."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("label", "path"),
    [("gallery", "/"), ("editor", "/graphs/{graph}/")],
)
def test_anonymous_visitors_are_sent_to_the_login(
    label: str, path: str, client: Client, graph: Any
) -> None:
    target = path.format(graph=graph.pk)
    response = client.get(target)
    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={target}")


def test_the_login_page_has_the_form(client: Client) -> None:
    response = client.get("/accounts/login/?next=/")
    body = response.content.decode()
    assert response.status_code == 200
    assert '<input type="text" name="username" id="id_username"' in body
    assert '<input type="hidden" name="next" value="/">' in body


def test_signing_in_opens_the_gallery(client: Client, user: Any, graph: Any, password: str) -> None:
    response = client.post("/accounts/login/", {"username": "ann", "password": password})
    assert (response.status_code, response["Location"]) == (302, "/")
    gallery = client.get("/").content.decode()
    assert f'<a href="/graphs/{graph.pk}/">Loom add</a>' in gallery


def test_a_wrong_password_is_refused_and_signs_nobody_in(client: Client, user: Any) -> None:
    response = client.post("/accounts/login/", {"username": "ann", "password": "wrong"})
    assert response.status_code == 200
    assert "Your username and password did not match." in response.content.decode()
    assert client.get("/").status_code == 302


def test_the_gallery_lists_only_the_users_own_graphs(
    client: Client, graph: Any, other_user: Any
) -> None:
    client.force_login(other_user)
    body = client.get("/").content.decode()
    assert "Loom add" not in body
    assert "No graphs yet" in body


def test_the_editor_page_mounts_the_bundle(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    body = client.get(f"/graphs/{graph.pk}/").content.decode()
    assert (
        f'<div id="geon-editor" data-graph-id="{graph.pk}" data-ws-path="/ws/graphs/{graph.pk}/" '
    ) in body
    assert '<script type="module" src="/static/editor/editor.js"></script>' in body
    assert '<link rel="stylesheet" href="/static/editor/editor.css">' in body


@pytest.mark.parametrize(
    ("label", "path", "content_type"),
    [
        ("script", "/static/editor/editor.js", "text/javascript"),
        ("styles", "/static/editor/editor.css", "text/css"),
    ],
)
def test_the_built_bundle_is_served(label: str, path: str, content_type: str) -> None:
    # the Makefile builds the bundle before the tests; whitenoise serves it
    response = Client().get(path)
    assert response.status_code == 200
    assert response["Content-Type"].split(";")[0] == content_type


def test_another_users_graph_is_not_found(client: Client, graph: Any, other_user: Any) -> None:
    client.force_login(other_user)
    assert client.get(f"/graphs/{graph.pk}/").status_code == 404
