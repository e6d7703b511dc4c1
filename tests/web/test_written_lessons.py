"""Lessons teachers write on their graphs (issue 19, item 3): a graph's owner publishes its
steps (text, highlights, a task), each value checked before anything is stored (an editor may
not: issue 30, tests/hostile/test_lesson_publishing.py); the lesson is then read, opened as a
student's own copy, checked, tried without an account and assigned to a class by its key, like
a shipped one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Graph
from geon.graphs.services import do_create_graph, do_set_member
from geon.learn.content.lessons import LESSONS
from geon.learn.models import WrittenLesson

pytestmark = pytest.mark.django_db

API = "/api/v1"

STEPS = [
    {"title": "Look", "text": "**x** has H and W.", "highlight": ["x"]},
    {
        "title": "Pair them",
        "text": "Give `x` the axes (H, W-1).",
        "highlight": ["x", "op:dot"],
        "task": {"tensor": "x", "axes": ["H", "W-1"], "clean": True},
    },
]


@pytest.fixture
def graph(user: Any) -> Graph:
    """ann's graph: the dot-and-duals lesson's, x (H, W) · y (W, N), with its axis error."""
    document = LESSONS["dot-and-duals"].build().to_json()
    return do_create_graph(owner=user, title="My dot", document=document)


def put(client: Client, graph: Graph, body: Any) -> Any:
    path = f"{API}/graphs/{graph.pk}/lesson"
    return client.put(path, json.dumps(body), content_type="application/json")


def test_the_owner_publishes_a_lesson_that_students_open_and_check(
    client: Client, user: Any, other_user: Any, graph: Graph
) -> None:
    client.force_login(user)
    assert client.get(f"{API}/graphs/{graph.pk}/lesson").json() == {"lesson": None}
    body = {"title": "Duals, my way", "summary": "Why W-1.", "steps": STEPS}
    written = put(client, graph, body).json()
    key = written["key"]
    assert key.startswith("duals-my-way-") and written["steps"][1]["task"]["axes"] == ["H", "W-1"]
    assert written["links"] == {"open": f"/learn/{key}/", "try": f"/learn/try/{key}/"}
    assert (
        client.get(f"{API}/graphs/{graph.pk}/lesson").json()["lesson"]["title"] == "Duals, my way"
    )
    # rewriting keeps the key
    again = put(client, graph, {**body, "title": "Duals"}).json()
    assert again["key"] == key and WrittenLesson.objects.count() == 1
    # the lesson reads like a shipped one; a student opens their own copy and checks step 2
    assert client.get(f"{API}/lessons/{key}").json()["steps"][0]["highlight"] == ["x"]
    client.force_login(other_user)
    opened = client.get(f"/learn/{key}/")
    copy = Graph.objects.get(owner=other_user, example=f"lesson:{key}")
    assert opened["Location"] == f"/graphs/{copy.pk}/?lesson={key}&step=1"
    checked = client.post(
        f"{API}/lessons/{key}/steps/2/check",
        json.dumps({"graph": str(copy.pk)}),
        content_type="application/json",
    ).json()
    assert checked == {
        "passed": False,
        "message": '"x" has the axes (H, W); the task asks for (H, W-1)',
    }
    # and anyone can try it without an account
    client.logout()
    assert client.get(f"/learn/try/{key}/").status_code == 200


def test_only_the_owner_publishes_and_every_value_is_checked_first(
    client: Client, user: Any, other_user: Any, graph: Graph
) -> None:
    client.force_login(other_user)
    assert put(client, graph, {"title": "t", "steps": STEPS}).status_code == 404
    for role in ("viewer", "editor", "owner"):  # an owner member manages members, no more
        do_set_member(graph, other_user, role)
        assert put(client, graph, {"title": "t", "steps": STEPS}).status_code == 403, role
    client.force_login(user)
    refusals = {
        "no steps": ({"title": "t", "steps": []}, "expected a list of 1 to 50"),
        "no title": ({"title": " ", "steps": STEPS}, "title"),
        "a bad task": (
            {"title": "t", "steps": [{"title": "a", "task": {"tensor": "x"}}]},
            'step 1 task: "axes" goes with "tensor"',
        ),
        "an unknown task key": (
            {"title": "t", "steps": [{"title": "a", "task": {"shape": [2]}}]},
            "step 1 task",
        ),
        "a step without a title": ({"title": "t", "steps": [{"text": "x"}]}, "step 1 title"),
    }
    for why, (body, said) in refusals.items():
        answer = put(client, graph, body)
        assert answer.status_code == 422, why
        assert said in answer.json()["error"]["message"], (why, answer.json())
    assert WrittenLesson.objects.count() == 0


def test_a_teacher_assigns_a_written_lesson_and_sees_who_passed(
    client: Client, user: Any, other_user: Any, graph: Graph
) -> None:
    client.force_login(user)
    key = put(client, graph, {"title": "Duals", "steps": STEPS}).json()["key"]
    made = client.post("/learn/classes/", {"name": "Monday"})
    class_page = made["Location"]
    assert "Your lesson: Duals" in client.get(class_page).content.decode()
    client.post(class_page, {"item": f"lesson:{key}"})
    assert "Lesson: Duals" in client.get(class_page).content.decode()
    assert client.delete(f"{API}/graphs/{graph.pk}/lesson").status_code == 204
    assert not WrittenLesson.objects.exists()
