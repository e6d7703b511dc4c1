"""The class REST API (issue 36) pinned: create, assign with due dates, delete and reorder,
join, the teacher's progress (JSON and CSV), a drill-down with comments the student sees, and
every refusal — 403 for a student where only the teacher acts, 404 for a stranger — with
nothing changed and another client still answered."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Graph
from geon.graphs.services import do_update_graph
from geon.learn.models import Assignment, Classroom, Comment
from geon.learn.puzzles import do_check_attempt, puzzle_of

pytestmark = pytest.mark.django_db

API = "/api/v1"
WRONG = Path(__file__).resolve().parents[1] / "teaching" / "wrong"


def _post(client: Client, path: str, body: Any, method: str = "post") -> Any:
    return getattr(client, method)(
        f"{API}{path}", json.dumps(body), content_type="application/json"
    )


@pytest.fixture
def people(user: Any, other_user: Any, django_user_model: Any) -> dict[str, Client]:
    """ann teaches, bob and cat are students (once they join), dan is a stranger."""
    django_user_model.objects.create_user("cat", password="x")
    django_user_model.objects.create_user("dan", password="x")
    clients = {}
    for name in ("ann", "bob", "cat", "dan"):
        c = Client()
        c.force_login(django_user_model.objects.get(username=name))
        clients[name] = c
    return clients


def _class_with_work(people: dict[str, Client]) -> dict[str, Any]:
    ann = people["ann"]
    made = _post(ann, "/classes", {"title": "Axes 101"})
    assert made.status_code == 201
    body = made.json()
    assert set(body) == {"id", "title", "joinUrl"} and body["title"] == "Axes 101"
    key = body["joinUrl"].rstrip("/").rsplit("/", 1)[1]
    assert body["joinUrl"].startswith("http://testserver/learn/join/")
    lesson = _post(ann, f"/classes/{body['id']}/assignments", {"lesson": "dot-and-duals"})
    puzzle = _post(
        ann,
        f"/classes/{body['id']}/assignments",
        {"puzzle": "matvec_dual", "due": "2026-01-15T17:00:00+01:00"},
    )
    assert lesson.status_code == 201 and puzzle.status_code == 201
    assert lesson.json()["due"] is None and lesson.json()["title"] == "Lesson: dot and duals"
    assert puzzle.json()["due"] == "2026-01-15T17:00:00+01:00"
    assert puzzle.json()["kind"] == "puzzle" and puzzle.json()["key"] == "matvec_dual"
    for student in ("bob", "cat"):
        joined = people[student].post(f"{API}/classes/join/{key}")
        assert joined.status_code == 200 and joined.json()["joinUrl"] is None
    return {
        "id": body["id"],
        "key": key,
        "lesson": lesson.json()["id"],
        "puzzle": puzzle.json()["id"],
    }


def test_the_class_contract_from_creation_to_progress_and_csv(
    people: dict[str, Client], other_user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    room = _class_with_work(people)
    ann, bob = people["ann"], people["bob"]
    # the teacher reads the class with its join link; a student reads it without
    assert ann.get(f"{API}/classes/{room['id']}").json()["joinUrl"].endswith(f"/{room['key']}/")
    seen = bob.get(f"{API}/classes/{room['id']}").json()
    assert seen["joinUrl"] is None and [a["id"] for a in seen["assignments"]] == [
        room["lesson"],
        room["puzzle"],
    ]
    assert bob.get(f"{API}/classes").json()["joined"][0]["title"] == "Axes 101"
    # bob opens the puzzle, tries a wrong answer, then the right one
    bob.get("/learn/puzzles/matvec_dual/")
    graph = Graph.objects.get(owner=other_user, example="puzzle:matvec_dual")
    wrong = json.loads((WRONG / "matvec_dual.json").read_text())
    do_update_graph(other_user, graph.pk, base_version=1, document=wrong)
    for version, document in ((2, None), (2, puzzle_of("matvec_dual")["reference"])):
        if document is not None:
            do_update_graph(other_user, graph.pk, base_version=version, document=document)
        with django_capture_on_commit_callbacks(execute=False):
            queued = _post(bob, "/puzzles/matvec_dual/attempts", {"graph": str(graph.pk)})
        do_check_attempt(queued.json()["id"])
    progress = ann.get(f"{API}/classes/{room['id']}/progress")
    assert progress.status_code == 200
    body = progress.json()
    assert [a["id"] for a in body["assignments"]] == [room["lesson"], room["puzzle"]]
    assert [s["student"] for s in body["students"]] == ["bob", "cat"]
    lesson_item, puzzle_item = body["students"][0]["items"]
    assert set(puzzle_item) >= {"assignment", "state", "checks", "solvedAt", "graph", "attempts"}
    assert lesson_item == {
        "assignment": room["lesson"],
        "state": "new",
        "checks": 0,
        "solvedAt": None,
        "late": False,
        "graph": None,
        "attempts": [],
        "comment": "",
    }
    assert puzzle_item["state"] == "solved" and puzzle_item["checks"] == 2
    assert puzzle_item["graph"] == str(graph.pk) and puzzle_item["solvedAt"]
    assert puzzle_item["late"] is True  # solved after its due date: marked, not refused
    first, second = puzzle_item["attempts"]
    assert first["solved"] is False and set(first["counterexample"]) >= {"axes", "message"}
    assert second["solved"] is True and "counterexample" not in second
    assert body["students"][1]["items"][1]["state"] == "new"  # cat did nothing, late too
    # the CSV: a header row and one row per student
    sheet = ann.get(f"{API}/classes/{room['id']}/progress.csv")
    assert sheet.status_code == 200 and sheet["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(sheet.content.decode())))
    assert rows == [
        ["student", "Lesson: dot and duals", "Puzzle: Matrix-vector product with a dual"],
        ["bob", "new", "solved (late)"],
        ["cat", "new", "new (late)"],
    ]


def test_reorder_delete_and_due_dates(people: dict[str, Client]) -> None:
    room = _class_with_work(people)
    ann = people["ann"]
    order = [room["puzzle"], room["lesson"]]
    done = _post(ann, f"/classes/{room['id']}/order", {"assignments": order}, "put")
    assert done.status_code == 200 and [a["id"] for a in done.json()["assignments"]] == order
    listed = ann.get(f"{API}/classes/{room['id']}").json()["assignments"]
    assert [a["id"] for a in listed] == order
    changed = _post(
        ann, f"/classes/{room['id']}/assignments/{room['lesson']}", {"due": "2030-03-01"}, "patch"
    )
    assert changed.json()["due"] == "2030-03-01T23:59:59+00:00"
    cleared = _post(
        ann, f"/classes/{room['id']}/assignments/{room['lesson']}", {"due": None}, "patch"
    )
    assert cleared.json()["due"] is None
    gone = ann.delete(f"{API}/classes/{room['id']}/assignments/{room['lesson']}")
    assert gone.status_code == 204
    assert [a["id"] for a in ann.get(f"{API}/classes/{room['id']}").json()["assignments"]] == [
        room["puzzle"]
    ]
    # assigned after a delete: last in the order
    again = _post(ann, f"/classes/{room['id']}/assignments", {"lesson": "reductions"})
    assert again.json()["position"] > done.json()["assignments"][0]["position"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/progress", None),
        ("get", "/progress.csv", None),
        ("post", "/assignments", {"lesson": "reductions"}),
        ("patch", "/assignments/{puzzle}", {"due": "2030-01-01"}),
        ("delete", "/assignments/{puzzle}", None),
        ("put", "/order", {"assignments": ["{lesson}", "{puzzle}"]}),
        ("get", "/students/cat/items/{puzzle}", None),
        ("put", "/students/cat/items/{puzzle}", {"comment": "well done"}),
    ],
)
def test_students_get_403_and_strangers_404_with_nothing_changed(
    people: dict[str, Client], method: str, path: str, body: Any
) -> None:
    room = _class_with_work(people)
    path = path.format(**room)
    if body is not None:
        body = json.loads(json.dumps(body).replace('"{lesson}"', str(room["lesson"])))
        body = json.loads(json.dumps(body).replace('"{puzzle}"', str(room["puzzle"])))
    before = list(Assignment.objects.values_list("id", "position", "due"))
    for who, status in (("bob", 403), ("dan", 404)):
        call = getattr(people[who], method)
        kwargs = {"content_type": "application/json"} if body is not None else {}
        answer = call(
            f"{API}/classes/{room['id']}{path}",
            *([json.dumps(body)] if body is not None else []),
            **kwargs,
        )
        assert answer.status_code == status, (who, answer.content)
        message = answer.json()["error"]["message"]
        if status == 403:
            assert "only the teacher" in message and "ann" in message
        else:
            assert "does not exist or you are not in it" in message
    assert list(Assignment.objects.values_list("id", "position", "due")) == before
    assert not Comment.objects.exists()
    # another client is still answered
    assert people["ann"].get(f"{API}/classes/{room['id']}/progress").status_code == 200
    # a stranger does not see the class at all; a student reads only their own work
    assert people["dan"].get(f"{API}/classes/{room['id']}").status_code == 404
    assert people["dan"].get(f"{API}/classes/{room['id']}/mine").status_code == 404
    assert people["bob"].get(f"{API}/classes/{room['id']}/mine").status_code == 200


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"puzzle": "matvec_dual"}, 'is assigned to "Axes 101" already'),
        ({"puzzle": "nope"}, 'puzzle "nope" does not exist'),
        ({"lesson": "dot-and-duals", "puzzle": "row_sums"}, 'either "lesson" or "puzzle"'),
        ({}, 'either "lesson" or "puzzle"'),
        ({"puzzle": 7}, "must be text, not int"),
        ({"puzzle": "row_sums", "due": "next week"}, 'due date "next week" is not a date'),
        ({"puzzle": "row_sums", "due": "20260-01-01"}, "is not a date"),
        ({"puzzle": "row_sums", "due": "1970-01-01"}, "in the year 1970"),
        ({"puzzle": "row_sums", "due": 3}, "is not a date"),
    ],
)
def test_a_bad_assignment_is_refused_naming_it_and_nothing_is_stored(
    people: dict[str, Client], body: dict[str, Any], named: str
) -> None:
    room = _class_with_work(people)
    before = list(Assignment.objects.values_list("id", "position", "due"))
    answer = _post(people["ann"], f"/classes/{room['id']}/assignments", body)
    assert answer.status_code in (404, 422), answer.content
    assert named in answer.json()["error"]["message"], answer.json()
    assert list(Assignment.objects.values_list("id", "position", "due")) == before
    assert people["bob"].get(f"{API}/classes/{room['id']}").status_code == 200


@pytest.mark.parametrize(
    "order",
    [[], ["{lesson}"], ["{lesson}", "{lesson}"], ["{lesson}", "{puzzle}", 999], "x", [True, False]],
)
def test_a_bad_order_is_refused_and_nothing_moves(people: dict[str, Client], order: Any) -> None:
    room = _class_with_work(people)
    order = json.loads(
        json.dumps(order)
        .replace('"{lesson}"', str(room["lesson"]))
        .replace('"{puzzle}"', str(room["puzzle"]))
    )
    before = list(Assignment.objects.values_list("id", "position"))
    answer = _post(people["ann"], f"/classes/{room['id']}/order", {"assignments": order}, "put")
    assert answer.status_code == 422
    assert "expected each of the class's assignments" in answer.json()["error"]["message"]
    assert list(Assignment.objects.values_list("id", "position")) == before


def test_a_comment_per_student_per_item_that_the_student_sees(people: dict[str, Client]) -> None:
    room = _class_with_work(people)
    ann, bob, cat = people["ann"], people["bob"], people["cat"]
    where = f"/classes/{room['id']}/students/bob/items/{room['puzzle']}"
    said = _post(ann, where, {"comment": "Look at W-1 again."}, "put")
    assert said.status_code == 200 and said.json()["comment"] == "Look at W-1 again."
    assert ann.get(f"{API}{where}").json()["comment"] == "Look at W-1 again."
    mine = bob.get(f"{API}/classes/{room['id']}/mine").json()
    assert [i["comment"] for i in mine["items"]] == ["", "Look at W-1 again."]
    assert mine["items"][1]["due"] == "2026-01-15T16:00:00+00:00"  # stored in UTC
    assert [i["comment"] for i in cat.get(f"{API}/classes/{room['id']}/mine").json()["items"]] == [
        "",
        "",
    ]
    # too long, or not text: refused naming the bound, the comment kept
    for bad, named in (("x" * 2001, "at most 2000 characters, not 2001"), (5, "not int")):
        refused = _post(ann, where, {"comment": bad}, "put")
        assert refused.status_code == 422 and named in refused.json()["error"]["message"]
    assert Comment.objects.get().text == "Look at W-1 again."
    # a student not in the class, or a wrong assignment: 404 naming it
    nobody = _post(
        ann, f"/classes/{room['id']}/students/dan/items/{room['puzzle']}", {"comment": "x"}, "put"
    )
    assert nobody.status_code == 404 and 'no student "dan"' in nobody.json()["error"]["message"]
    # an empty comment removes it
    assert _post(ann, where, {"comment": " "}, "put").json()["comment"] == ""
    assert not Comment.objects.exists()


def test_join_and_create_refusals(people: dict[str, Client]) -> None:
    bad = people["bob"].post(f"{API}/classes/join/not-a-key")
    assert bad.status_code == 404 and "does not open any class" in bad.json()["error"]["message"]
    for title in ("", "  ", "x" * 101, 5, None):
        refused = _post(people["ann"], "/classes", {"title": title})
        assert (
            refused.status_code == 422
            and "expected 1 to 100 characters" in refused.json()["error"]["message"]
        )
    assert not Classroom.objects.exists()
    assert Client().get(f"{API}/classes").status_code == 401


def test_after_an_item_the_class_and_its_next_item(people: dict[str, Client]) -> None:
    room = _class_with_work(people)
    bob = people["bob"]
    after_lesson = bob.get(f"{API}/classes/after/lesson/dot-and-duals").json()
    assert after_lesson == {
        "class": {"id": room["id"], "title": "Axes 101", "url": f"/learn/classes/{room['id']}/"},
        "next": {
            "title": "Puzzle: Matrix-vector product with a dual",
            "link": "/learn/puzzles/matvec_dual/",
        },
    }
    assert bob.get(f"{API}/classes/after/puzzle/matvec_dual").json()["next"] is None
    # not assigned to any class of theirs, or not in the class: nothing
    assert bob.get(f"{API}/classes/after/puzzle/row_sums").json() == {"class": None, "next": None}
    assert people["dan"].get(f"{API}/classes/after/lesson/dot-and-duals").json() == {
        "class": None,
        "next": None,
    }
    bad = bob.get(f"{API}/classes/after/graph/x")
    assert (
        bad.status_code == 422 and 'expected "lesson" or "puzzle"' in bad.json()["error"]["message"]
    )


def test_the_csv_writes_no_formula_a_spreadsheet_would_run(
    people: dict[str, Client], django_user_model: Any
) -> None:
    """A username a spreadsheet would read as a formula (+, -, @, =) is written as text."""
    room = _class_with_work(people)
    evil = django_user_model.objects.create_user("+cmd", password="x")
    joined = Client()
    joined.force_login(evil)
    assert joined.post(f"{API}/classes/join/{room['key']}").status_code == 200
    sheet = people["ann"].get(f"{API}/classes/{room['id']}/progress.csv").content.decode()
    rows = list(csv.reader(io.StringIO(sheet)))
    assert [r[0] for r in rows] == ["student", "'+cmd", "bob", "cat"]
