"""Roles: who sees a graph, and what each role may do (services and pages)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from geon.accounts.models import Team, TeamMembership
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
    return f'your role on graph "{graph.pk}" is "{role}"; this needs ' + " or ".join(
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
