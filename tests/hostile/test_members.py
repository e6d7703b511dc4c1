"""Roles and members against a hostile member (issue 13, findings 11 and 8 for the graph REST
schemas): an ``owner`` member cannot delete the graph, hand it over or touch its owner; adding a
member does not tell which usernames exist; integers are int64. Every refusal changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Graph, GraphVersion, Membership, ShardPlan

pytestmark = pytest.mark.django_db

API = "/api/v1"
OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
INT64_MAX = 2**63 - 1


def state(graph: Any) -> tuple[Any, ...]:
    """Everything a refused request must leave as it was."""
    fresh = Graph.objects.get(pk=graph.pk)
    members = sorted(Membership.objects.filter(graph=graph).values_list("user__username", "role"))
    return (
        fresh.owner_id,
        fresh.current_version_id,
        GraphVersion.objects.filter(graph=graph).count(),
        members,
        ShardPlan.objects.filter(graph=graph).count(),
    )


def call(user: Any, method: str, path: str, body: Any = None) -> Any:
    client = Client()
    client.force_login(user)
    data = json.dumps(body) if body is not None else None
    return getattr(client, method)(API + path, data, content_type="application/json")


@pytest.fixture
def carl(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("carl")


@pytest.fixture
def owner_member(graph: Any, other_user: Any) -> Any:
    """bob, a member of ann's graph with the role ``owner``."""
    Membership.objects.create(graph=graph, user=other_user, role="owner")
    return other_user


def test_an_owner_member_cannot_delete_hand_over_or_touch_the_owner(
    graph: Any, owner_member: Any, carl: Any
) -> None:
    Membership.objects.create(graph=graph, user=carl, role="editor")
    before = state(graph)
    pk = graph.pk
    only_owner = 'only the owner of graph "{}" ("ann") may {}; your role is "owner"'
    title = graph.title
    refusals = [
        (call(owner_member, "delete", f"/graphs/{pk}"), 403, only_owner.format(title, "delete it")),
        (
            call(owner_member, "post", f"/graphs/{pk}/owner", {"username": "bob"}),
            403,
            only_owner.format(title, "hand it over"),
        ),
        (
            call(owner_member, "post", f"/graphs/{pk}/owner", {"username": "carl"}),
            403,
            only_owner.format(title, "hand it over"),
        ),
        (
            call(owner_member, "delete", f"/graphs/{pk}/members/ann"),
            404,
            f'user "ann" is not a member of graph "{title}"',
        ),
        (
            call(owner_member, "put", f"/graphs/{pk}/members/ann", {"role": "viewer"}),
            422,
            'user "ann" owns the graph; the owner needs no membership (the owner can hand the '
            "graph over with POST /api/v1/graphs/<id>/owner)",
        ),
    ]
    assert [(r.status_code, r.json()["error"]["message"]) for r, _, _ in refusals] == [
        (status, message) for _, status, message in refusals
    ]
    assert state(graph) == before
    # but managing the other members is theirs: carl becomes an owner member, then a viewer
    assert (
        call(owner_member, "put", f"/graphs/{pk}/members/carl", {"role": "owner"}).status_code
        == 202
    )
    assert (
        call(owner_member, "put", f"/graphs/{pk}/members/carl", {"role": "viewer"}).status_code
        == 202
    )
    assert Membership.objects.get(graph=graph, user=carl).role == "viewer"


def test_adding_a_member_does_not_tell_which_usernames_exist(
    graph: Any, user: Any, carl: Any
) -> None:
    # when ann adds carl (who exists) and zed (who does not)
    known = call(user, "put", f"/graphs/{graph.pk}/members/carl", {"role": "viewer"})
    before = state(graph)
    unknown = call(user, "put", f"/graphs/{graph.pk}/members/zed", {"role": "viewer"})
    # then both answers are the same but for the name
    assert (known.status_code, known.json()) == (
        202,
        {"user": "carl", "role": "viewer", "status": "invited"},
    )
    assert (unknown.status_code, unknown.json()) == (
        202,
        {"user": "zed", "role": "viewer", "status": "invited"},
    )
    # and nothing was stored for zed
    assert state(graph) == before


def test_removing_a_stranger_or_an_unknown_name_answers_alike(
    graph: Any, user: Any, carl: Any
) -> None:
    before = state(graph)
    answers = [call(user, "delete", f"/graphs/{graph.pk}/members/{n}") for n in ("carl", "zed")]
    assert [(a.status_code, a.json()["error"]["message"]) for a in answers] == [
        (404, f'user "carl" is not a member of graph "{graph.title}"'),
        (404, f'user "zed" is not a member of graph "{graph.title}"'),
    ]
    assert state(graph) == before


def test_the_owner_hands_the_graph_over_to_a_member(graph: Any, user: Any, other_user: Any) -> None:
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    answer = call(user, "post", f"/graphs/{graph.pk}/owner", {"username": "bob"})
    assert (answer.status_code, answer.json()) == (
        200,
        {"owner": "bob", "members": [{"user": "ann", "role": "editor"}], "team": None},
    )
    # the new owner may delete it; ann, now an editor, may not
    assert call(user, "delete", f"/graphs/{graph.pk}").status_code == 403
    assert call(other_user, "delete", f"/graphs/{graph.pk}").status_code == 204


@pytest.mark.parametrize("username", ["carl", "zed"])
def test_the_graph_goes_only_to_a_member(graph: Any, user: Any, carl: Any, username: str) -> None:
    before = state(graph)
    answer = call(user, "post", f"/graphs/{graph.pk}/owner", {"username": username})
    assert (answer.status_code, answer.json()["error"]["message"]) == (
        404,
        f'user "{username}" is not a member of graph "{graph.title}"; the graph can be handed over '
        "to a member only (give them a role first)",
    )
    assert state(graph) == before


# --- finding 8: integers in the graph REST schemas are int64 ----------------------------------


@pytest.mark.parametrize(
    ("label", "method", "path", "body", "status", "message"),
    [
        (
            "a version number past int64",
            "get",
            f"/graphs/{{pk}}/versions/{2**64}",
            None,
            422,
            f"path.number: Input should be less than or equal to {INT64_MAX}",
        ),
        (
            "an edit based on a version past int64",
            "post",
            "/graphs/{pk}/edits",
            {"baseVersion": 2**64, "ops": [{"op": "remove_node", "id": OP}]},
            422,
            f"body.payload.baseVersion: Input should be less than or equal to {INT64_MAX}",
        ),
        (
            "a mesh axis of 10**12 devices",
            "post",
            "/graphs/{pk}/plans",
            {"name": "huge", "mesh": {"axes": {"x": 10**12}}, "spec": {}},
            422,
            'mesh "" has more than 65536 devices (axis "x" of size 1000000000000); expected at '
            "most 65536 in all",
        ),
        (
            "a mesh whose axes multiply past the limit",
            "post",
            "/graphs/{pk}/plans",
            {"name": "wide", "mesh": {"axes": {"x": 256, "y": 257}}, "spec": {}},
            422,
            'mesh "" has more than 65536 devices (axis "y" of size 257); expected at most 65536 '
            "in all",
        ),
        (
            "a mesh axis past int64",
            "post",
            "/graphs/{pk}/plans",
            {"name": "past", "mesh": {"axes": {"x": 2**64}}, "spec": {}},
            422,
            f"body.payload.mesh.axes.x: Input should be less than or equal to {INT64_MAX}",
        ),
        (
            "a plan id past int64",
            "get",
            f"/graphs/{{pk}}/plans/{2**64}",
            None,
            422,
            f"path.plan_id: Input should be less than or equal to {INT64_MAX}",
        ),
    ],
)
def test_integers_past_int64_are_refused_without_a_500(
    label: str,
    method: str,
    path: str,
    body: Any,
    status: int,
    message: str,
    graph: Any,
    user: Any,
) -> None:
    before = state(graph)
    answer = call(user, method, path.format(pk=graph.pk), body)
    error = answer.json()["error"]
    assert (answer.status_code, error["message"]) == (status, message)
    assert state(graph) == before
