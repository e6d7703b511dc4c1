"""Lessons over HTTP (issue 19, item 3): anyone may read them; a signed-in person opens one as
their own copy (made once, with the lesson's plans) in the editor at its first step; a step's
task is checked on a graph they may view, and the answer says what differs by name."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.core.graph import TENSOR_AXES
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services import do_apply_edit, live_document
from geon.learn.content.lessons import LESSONS

pytestmark = pytest.mark.django_db

API = "/api/v1"


def test_anyone_reads_the_lessons(client: Client) -> None:
    listed = client.get(f"{API}/lessons")
    assert listed.status_code == 200
    assert [lesson["key"] for lesson in listed.json()["lessons"]] == list(LESSONS)
    one = client.get(f"{API}/lessons/dot-and-duals").json()
    assert one["title"] == "dot and duals" and one["steps"][-1]["task"]["axes"] == ["H", "W-1"]
    missing = client.get(f"{API}/lessons/nope")
    assert missing.status_code == 404 and '"nope"' in missing.json()["error"]["message"]
    page = client.get("/learn/")
    assert page.status_code == 200 and b"Four ways to shard a matmul" in page.content


def test_opening_a_lesson_makes_one_copy_with_its_plans(client: Client, user: Any) -> None:
    assert client.get("/learn/four-ways-to-shard-a-matmul/").status_code == 302  # to sign in
    client.force_login(user)
    first = client.get("/learn/four-ways-to-shard-a-matmul/")
    graph = Graph.objects.get(owner=user, example="lesson:four-ways-to-shard-a-matmul")
    assert first["Location"] == f"/graphs/{graph.pk}/?lesson=four-ways-to-shard-a-matmul&step=1"
    again = client.get("/learn/four-ways-to-shard-a-matmul/?step=3")
    assert again["Location"].endswith("&step=3")
    assert Graph.objects.filter(owner=user).count() == 1
    assert ShardPlan.objects.filter(graph=graph).count() == 4
    assert graph.title == "Four ways to shard a matmul"


def test_a_step_is_checked_on_the_students_copy(client: Client, user: Any, other_user: Any) -> None:
    client.force_login(user)
    client.get("/learn/dot-and-duals/")
    graph = Graph.objects.get(owner=user, example="lesson:dot-and-duals")
    path = f"{API}/lessons/dot-and-duals/steps/3/check"
    body = json.dumps({"graph": str(graph.pk)})
    failed = client.post(path, body, content_type="application/json").json()
    assert failed == {
        "passed": False,
        "message": '"x" has the axes (H, W); the task asks for (H, W-1)',
    }
    x = next(n for n in live_document(graph).document.nodes if n.label == "x")
    do_apply_edit(
        user,
        graph.pk,
        1,
        [{"op": "update_node", "id": x.id, "tags": {TENSOR_AXES: {"axes": ["H", "W-1"]}}}],
    )
    assert client.post(path, body, content_type="application/json").json()["passed"] is True
    # a step without a task, and a graph the person may not see, are refused
    assert (
        client.post(
            f"{API}/lessons/dot-and-duals/steps/1/check", body, content_type="application/json"
        ).status_code
        == 422
    )
    client.force_login(other_user)
    assert client.post(path, body, content_type="application/json").status_code == 404
