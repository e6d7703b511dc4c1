"""Roles: who sees a graph, and what each role may do (services and pages)."""

from __future__ import annotations

import http.client
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client, override_settings

from geon.accounts.models import Team, TeamMembership
from geon.cli.serve import daphne_command
from geon.graphs import services
from geon.graphs.models import Membership

pytestmark = pytest.mark.django_db

CHECKS = {
    "view": services.check_can_view,
    "review": services.check_can_review,
    "edit": services.check_can_edit,
    "manage": services.check_can_manage,
}


def denied(role: str, graph: Any, needed: list[str]) -> str:
    return f'your role on graph "{graph.title}" is "{role}"; this needs ' + " or ".join(
        f'"{r}"' for r in needed
    )


@pytest.mark.parametrize(
    ("label", "role", "allowed"),
    [
        ("viewer", "viewer", ["view"]),
        ("reviewer", "reviewer", ["view", "review"]),
        ("editor", "editor", ["view", "review", "edit"]),
        ("owner member", "owner", ["view", "review", "edit", "manage"]),
    ],
)
@pytest.mark.parametrize("through", ["membership", "team"])
def test_each_role_allows_what_it_should(
    label: str, role: str, allowed: list[str], through: str, graph: Any, other_user: Any
) -> None:
    # given bob holds a role on ann's graph, directly or through the graph's team
    if through == "membership":
        Membership.objects.create(graph=graph, user=other_user, role=role)
    else:
        team = Team.objects.create(name="lab")
        TeamMembership.objects.create(team=team, user=other_user, role=role)
        graph.team = team
        graph.save()
    needed = {
        "view": ["viewer", "reviewer", "editor", "owner"],
        "review": ["reviewer", "editor", "owner"],
        "edit": ["editor", "owner"],
        "manage": ["owner"],
    }
    # then each check passes or says which roles it needs
    for name, check in CHECKS.items():
        if name in allowed:
            assert check(other_user, graph.pk) == graph
        else:
            with pytest.raises(services.AccessDenied) as refused:
                check(other_user, graph.pk)
            assert str(refused.value) == denied(role, graph, needed[name])
    assert list(services.visible_graphs(other_user)) == [graph]


def test_the_highest_role_wins(graph: Any, other_user: Any) -> None:
    team = Team.objects.create(name="lab")
    TeamMembership.objects.create(team=team, user=other_user, role="editor")
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    graph.team = team
    graph.save()
    assert services.role_on(other_user, graph) == "editor"
    assert list(services.visible_graphs(other_user)) == [graph]


@pytest.mark.parametrize("name", list(CHECKS))
@pytest.mark.parametrize("target", ["graph", "unknown", "not a uuid"])
def test_a_stranger_gets_not_found_never_denied(
    name: str, target: str, graph: Any, other_user: Any
) -> None:
    graph_id = {
        "graph": str(graph.pk),
        "unknown": "00000000-0000-4000-8000-000000000000",
        "not a uuid": "nope",
    }[target]
    with pytest.raises(services.GraphNotFound) as refused:
        CHECKS[name](other_user, graph_id)
    assert str(refused.value) == (
        f'graph "{graph_id}" does not exist or you do not have access to it'
    )
    assert list(services.visible_graphs(other_user)) == []


def test_a_member_sees_the_graph_in_the_gallery_and_opens_it(
    client: Client, graph: Any, other_user: Any
) -> None:
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    client.force_login(other_user)
    assert f'<a href="/graphs/{graph.pk}/">Loom add</a>' in client.get("/").content.decode()
    assert client.get(f"/graphs/{graph.pk}/").status_code == 200


def test_create_token_prints_a_working_token(user: Any, graph: Any) -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("create_token", "ann", "--name", "ci", stdout=out)
    key = out.getvalue().strip()
    response = Client().get(f"/api/v1/graphs/{graph.pk}", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert (response.status_code, response.json()["id"]) == (200, str(graph.pk))


def test_create_token_names_an_unknown_user() -> None:
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError) as refused:
        call_command("create_token", "zed")
    assert str(refused.value) == 'user "zed" does not exist; create it first'


@pytest.mark.parametrize(
    "path",
    [
        "graphs/graph",
        "graphs/graphversion",
        "graphs/membership",
        "graphs/shardplan",
        "accounts/team",
        "accounts/teammembership",
        "accounts/apitoken",
        "runs/run",
    ],
)
def test_every_model_is_in_the_admin(
    path: str, client: Client, graph: Any, django_user_model: Any
) -> None:
    admin = django_user_model.objects.create_superuser("root", password="x")
    client.force_login(admin)
    assert client.get(f"/admin/{path}/").status_code == 200


# --- behind a TLS proxy: the sign-in throttle counts the client's address -----------------------


@pytest.fixture
def daphne_behind_proxy(subprocess_env: dict[str, str]) -> Iterator[int]:
    """A real Daphne started as ``serve`` starts it with ``GEON_HTTPS`` on (behind a TLS proxy),
    refusing an address after 3 failed sign-ins; yields its port."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port: int = free.getsockname()[1]
    with override_settings(HTTPS=True):
        command = daphne_command("127.0.0.1", port)
    env = {**subprocess_env, "GEON_HTTPS": "1", "GEON_SIGNIN_FAILURES_PER_ADDRESS": "3"}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    try:
        for _ in range(300):  # at most 30 s to start
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None, "Daphne exited"
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=15)


def proxied_sign_in(port: int, client_address: str, username: str) -> int:
    """A wrong password for ``username`` as the proxy forwards it from ``client_address``: the
    sign-in page, then the form posted back; the status of the post."""
    proxy = {"X-Forwarded-Proto": "https", "X-Forwarded-For": client_address}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.request("GET", "/accounts/login/", headers=proxy)
        page = connection.getresponse()
        html = page.read().decode()
        cookie = SimpleCookie()
        for header in page.headers.get_all("Set-Cookie") or []:
            cookie.load(header)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
        assert page.status == 200 and token is not None and "csrftoken" in cookie
        form = urlencode(
            {"csrfmiddlewaretoken": token[1], "username": username, "password": "wrong"}
        )
        connection.request(
            "POST",
            "/accounts/login/",
            body=form,
            headers={
                **proxy,
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"csrftoken={cookie['csrftoken'].value}",
                "Referer": f"https://127.0.0.1:{port}/accounts/login/",
            },
        )
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def test_behind_a_proxy_the_sign_in_throttle_counts_each_clients_address(
    daphne_behind_proxy: int,
) -> None:
    port = daphne_behind_proxy
    # when one client fails to sign in three times (three usernames: the address is counted)
    tries = [proxied_sign_in(port, "203.0.113.7", f"guess{n}") for n in range(3)]
    # then its fourth try is refused, while another client behind the same proxy is not
    refused = proxied_sign_in(port, "203.0.113.7", "guess3")
    other = proxied_sign_in(port, "198.51.100.20", "guess4")
    assert (tries, refused, other) == ([200, 200, 200], 429, 200)
