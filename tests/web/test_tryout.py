"""Lessons and puzzles without an account (issue 19, item 5): the try pages open the editor on
the starting graph with nothing stored; the server checks a posted document (a lesson step at
once, a puzzle by the worker, read back by an unguessable key), bounded before any work and
refused with a reason; once signed in, the work becomes the person's own copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from geon.core.graph import TENSOR_AXES
from geon.graphs.models import Graph
from geon.graphs.services import live_document
from geon.learn import puzzles
from geon.learn.content.lessons import LESSONS
from geon.learn.models import Attempt
from geon.learn.puzzles import do_check_attempt, puzzle_of, starting_graph

pytestmark = pytest.mark.django_db

API = "/api/v1"
WRONG = Path(__file__).resolve().parents[1] / "teaching" / "wrong"


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(path, json.dumps(body), content_type="application/json")


def dot_lesson_with_x_as(axes: list[str]) -> dict[str, Any]:
    document = LESSONS["dot-and-duals"].build().to_json()
    for node in document["nodes"]:
        if node.get("label") == "x":
            node["tags"][TENSOR_AXES]["axes"] = axes
    return dict(document)


def test_the_try_pages_open_the_editor_on_the_start_with_nothing_stored(client: Client) -> None:
    page = client.get("/learn/try/dot-and-duals/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-try="lesson:dot-and-duals"' in html and 'data-offline="1"' in html
    assert 'id="geon-try-start"' in html
    puzzle = client.get("/learn/try/puzzles/matvec_dual/").content.decode()
    assert 'data-try="puzzle:matvec_dual"' in puzzle
    assert client.get("/learn/try/nope/").status_code == 404
    assert client.get("/learn/try/puzzles/nope/").status_code == 404
    assert Graph.objects.count() == 0
    listed = client.get("/learn/").content.decode()
    assert 'href="/learn/try/dot-and-duals/"' in listed
    assert 'href="/learn/try/puzzles/matvec_dual/"' in listed


def test_a_visitor_checks_a_lesson_step_on_their_document(client: Client) -> None:
    path = f"{API}/lessons/dot-and-duals/steps/3/try"
    failed = post(client, path, {"document": dot_lesson_with_x_as(["H", "W"])}).json()
    assert failed == {
        "passed": False,
        "message": '"x" has the axes (H, W); the task asks for (H, W-1)',
    }
    passed = post(client, path, {"document": dot_lesson_with_x_as(["H", "W-1"])}).json()
    assert passed["passed"] is True
    # a step without a task, a step that does not exist, and a document that is not one
    start = {"document": dot_lesson_with_x_as(["H", "W"])}
    no_task = post(client, f"{API}/lessons/dot-and-duals/steps/1/try", start)
    assert no_task.status_code == 422 and "has no task" in no_task.json()["error"]["message"]
    assert post(client, f"{API}/lessons/dot-and-duals/steps/99/try", start).status_code == 404
    broken = post(client, path, {"document": {"nodes": "x"}})
    assert broken.status_code == 422 and broken.json()["error"]["code"] == "invalid_document"


def test_a_visitor_checks_a_puzzle_through_the_worker_by_key(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    def check(document: dict[str, Any]) -> dict[str, Any]:
        with django_capture_on_commit_callbacks(execute=False):
            queued = post(client, f"{API}/puzzles/matvec_dual/tries", {"document": document})
        assert queued.status_code == 202, queued.content
        answer = queued.json()
        assert answer["status"] == "queued" and len(answer["key"]) >= 32
        do_check_attempt(answer["id"])  # what the worker's task does
        return dict(client.get(f"{API}/puzzles/tries/{answer['key']}").json())

    wrong = check(json.loads((WRONG / "matvec_dual.json").read_text()))
    assert wrong["solved"] is False
    assert wrong["result"]["counterexample"]["message"].startswith("with H=")
    solved = check(puzzle_of("matvec_dual")["reference"])
    assert (solved["solved"], solved["result"]["draws"]) == (True, 50)
    assert Attempt.objects.filter(user=None).count() == 2
    # a key nobody was given reads nothing; a visitor cannot read a person's attempt by id
    assert client.get(f"{API}/puzzles/tries/not-a-key").status_code == 404
    assert client.get(f"{API}/puzzles/attempts/{solved['id']}").status_code in (401, 404)


def test_visitors_checks_are_bounded_before_any_work(client: Client, monkeypatch: Any) -> None:
    start = starting_graph(puzzle_of("row_sums"))
    path = f"{API}/puzzles/row_sums/tries"
    # too big: refused with the limit, nothing stored
    monkeypatch.setattr(puzzles, "TRY_BYTES_MAX", 200)
    big = post(client, path, {"document": start})
    assert big.status_code == 422 and "at most 200" in big.json()["error"]["message"]
    monkeypatch.setattr(puzzles, "TRY_BYTES_MAX", 64 * 1024)
    monkeypatch.setattr(puzzles, "TRY_NODES_MAX", 1)
    many = post(client, path, {"document": start})
    assert many.status_code == 422 and "at most 1" in many.json()["error"]["message"]
    assert Attempt.objects.count() == 0
    # while as many visitors' checks wait as the worker may hold: 429, with when to come back
    monkeypatch.setattr(puzzles, "TRY_NODES_MAX", 100)
    monkeypatch.setattr(puzzles, "TRIES_QUEUED_MAX", 2)
    for _ in range(2):
        assert post(client, path, {"document": start}).status_code == 202
    busy = post(client, path, {"document": start})
    assert busy.status_code == 429 and busy["Retry-After"] == "60"
    assert "try again in a minute" in busy.json()["error"]["message"]
    assert Attempt.objects.count() == 2


def test_signing_in_keeps_the_work_as_the_persons_copy(client: Client, user: Any) -> None:
    document = dot_lesson_with_x_as(["H", "W-1"])
    refused = post(client, f"{API}/lessons/dot-and-duals/keep", {"document": document})
    assert refused.status_code == 401 and Graph.objects.count() == 0
    client.force_login(user)
    kept = post(client, f"{API}/lessons/dot-and-duals/keep", {"document": document}).json()
    graph = Graph.objects.get(owner=user, example="lesson:dot-and-duals")
    assert kept == {
        "graph": str(graph.pk),
        "kept": True,
        "url": f"/graphs/{graph.pk}/?lesson=dot-and-duals",
    }
    x = next(n for n in live_document(graph).document.nodes if n.label == "x")
    assert x.tag(TENSOR_AXES)["axes"] == ["H", "W-1"]
    assert graph.current_version.number == 2
    # a copy the person already had keeps its own work
    again = post(client, f"{API}/lessons/dot-and-duals/keep", {"document": document}).json()
    assert again["kept"] is False and Graph.objects.filter(owner=user).count() == 1
    # a puzzle's work too; a document that is not one is refused and makes no copy
    solution = puzzle_of("row_sums")["reference"]
    assert post(client, f"{API}/puzzles/row_sums/keep", {"document": solution}).json()["kept"]
    broken = post(client, f"{API}/puzzles/matvec_dual/keep", {"document": {"nodes": 3}})
    assert broken.status_code == 422
    assert not Graph.objects.filter(owner=user, example="puzzle:matvec_dual").exists()
