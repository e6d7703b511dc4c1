"""The per-graph "strict broadcasting" setting (issue 19 item 2): off, the seed's
``[C1, N] + [C2, N]`` pitfall is an ``AccidentalBroadcast`` warning; an editor's PATCH turns it
on and the same issue comes back as an error (REST and the live document) and a run is refused
for it; a bad value is refused by name and changes nothing; a viewer cannot change it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon import core as gc
from geon.graphs.models import Graph, Membership
from geon.graphs.services import do_create_graph, live_document

pytestmark = pytest.mark.django_db

API = "/api/v1"


def pitfall() -> dict[str, Any]:
    C1, C2, N = gc.Axis("C1", 3), gc.Axis("C2", 3), gc.Axis("N", 4)
    a = gc.placeholder(axes=[C1, N], name="a")
    b = gc.placeholder(axes=[C2, N], name="b")
    return gc.graph([gc.add(a, b, name="a+b")]).to_json()


@pytest.fixture
def graph(user: Any) -> Graph:
    return do_create_graph(owner=user, title="pitfall", document=pitfall())


def patch(client: Client, graph: Graph, body: dict[str, Any]) -> Any:
    return client.patch(
        f"{API}/graphs/{graph.pk}",
        json.dumps({"baseVersion": 1, **body}),
        content_type="application/json",
    )


def severities(issues: list[dict[str, Any]]) -> list[str]:
    return [i["severity"] for i in issues if i["constraint"] == "AccidentalBroadcast"]


def test_an_editor_makes_accidental_broadcasts_errors(
    client: Client, user: Any, graph: Graph
) -> None:
    client.force_login(user)
    # given the pitfall, checked with the default setting: one warning
    body = client.get(f"{API}/graphs/{graph.pk}").json()
    assert (body["strictBroadcasting"], severities(body["issues"])) == (False, ["warning"])
    # when ann turns strict broadcasting on
    answer = patch(client, graph, {"strictBroadcasting": True})
    # then the same issue is an error, in the answer, the stored setting and the live document
    assert answer.status_code == 200, answer.json()
    assert (answer.json()["strictBroadcasting"], severities(answer.json()["issues"])) == (
        True,
        ["error"],
    )
    graph.refresh_from_db()
    assert graph.strict_broadcasting is True
    assert severities(live_document(graph).issues()) == ["error"]
    assert answer.json()["version"] == 1  # a setting, not a new version of the document
    # and turning it off again makes it a warning
    off = patch(client, graph, {"strictBroadcasting": False})
    assert severities(off.json()["issues"]) == ["warning"]


def test_a_bad_value_is_refused_by_name_and_changes_nothing(
    client: Client, user: Any, graph: Graph
) -> None:
    client.force_login(user)
    answer = patch(client, graph, {"strictBroadcasting": "yes", "title": "renamed"})
    assert answer.status_code == 422
    assert answer.json()["error"]["message"] == (
        'strictBroadcasting "yes" is not valid; expected true or false'
    )
    graph.refresh_from_db()
    assert (graph.strict_broadcasting, graph.title) == (False, "pitfall")


def test_a_viewer_cannot_change_it(client: Client, graph: Graph, other_user: Any) -> None:
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    client.force_login(other_user)
    assert patch(client, graph, {"strictBroadcasting": True}).status_code == 403
    graph.refresh_from_db()
    assert graph.strict_broadcasting is False


def test_a_strict_graph_with_an_accidental_broadcast_is_not_run(
    client: Client, user: Any, graph: Graph
) -> None:
    client.force_login(user)
    patch(client, graph, {"strictBroadcasting": True})
    answer = client.post(
        f"{API}/graphs/{graph.pk}/runs", json.dumps({"version": 1}), content_type="application/json"
    )
    assert answer.status_code == 409, answer.json()
    error = answer.json()["error"]
    assert error["code"] == "graph_has_errors"
    assert error["message"] == (
        'graph "pitfall" version 1 has 1 error issue(s); fix them before running'
    )
