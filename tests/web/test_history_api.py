"""The history of a graph over ``/api/v1/`` (issue 21, "No history"): each version says what it
did by name and whether it only moved nodes; any version is restored as a new version, by
editors only, on the current version only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.core.graph import LAYOUT
from geon.graphs.models import GraphVersion
from geon.graphs.services import do_apply_edit

pytestmark = pytest.mark.django_db

API = "/api/v1"
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"


def test_versions_say_what_they_did_by_name(client: Client, people: Any, graph: Any) -> None:
    ann = people["owner"]
    do_apply_edit(ann, graph.pk, 1, [{"op": "update_node", "id": T0, "label": "lhs"}])
    move = {"op": "update_node", "id": T1, "tags": {LAYOUT: {"x": 10.0, "y": 20.0}}}
    do_apply_edit(ann, graph.pk, 2, [move])
    client.force_login(people["viewer"])
    versions = client.get(f"{API}/graphs/{graph.pk}/versions").json()["versions"]
    assert [(v["number"], v["summary"], v["layoutOnly"]) for v in versions] == [
        (3, 'moved "t1"', True),
        (2, 'renamed "t0" to "lhs"', False),
        (1, "", False),
    ]


@pytest.mark.parametrize(
    ("persona", "status"), [("viewer", 403), ("stranger", 404), ("editor", 200)]
)
def test_restoring_a_version_is_for_editors(
    client: Client, people: Any, graph: Any, persona: str, status: int
) -> None:
    do_apply_edit(people["owner"], graph.pk, 1, [{"op": "update_node", "id": T0, "label": "lhs"}])
    client.force_login(people[persona])
    answer = client.post(
        f"{API}/graphs/{graph.pk}/versions/1/restore",
        json.dumps({"baseVersion": 2}),
        content_type="application/json",
    )
    assert answer.status_code == status, answer.content
    count = GraphVersion.objects.filter(graph=graph).count()
    if status != 200:
        assert count == 2
        return
    assert answer.json()["version"] == 3 and count == 3
    restored = GraphVersion.objects.get(graph=graph, number=3)
    assert restored.document == GraphVersion.objects.get(graph=graph, number=1).document
    assert restored.message == "restored version 1"
    assert restored.summary == 'renamed "lhs" to "t0"'


def test_restoring_on_a_stale_version_changes_nothing(
    client: Client, people: Any, graph: Any
) -> None:
    do_apply_edit(people["owner"], graph.pk, 1, [{"op": "update_node", "id": T0, "label": "lhs"}])
    client.force_login(people["owner"])
    answer = client.post(
        f"{API}/graphs/{graph.pk}/versions/1/restore",
        json.dumps({"baseVersion": 1}),
        content_type="application/json",
    )
    assert answer.status_code == 409
    assert GraphVersion.objects.filter(graph=graph).count() == 2
    missing = client.post(
        f"{API}/graphs/{graph.pk}/versions/9/restore",
        json.dumps({"baseVersion": 2}),
        content_type="application/json",
    )
    assert missing.status_code == 404 and '"9"' in missing.json()["error"]["message"]
