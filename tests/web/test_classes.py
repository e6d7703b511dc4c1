"""Classes (issue 19, item 5): a teacher makes a class and assigns a lesson and a puzzle; a
student joins by the link and works on their own copies; the teacher's dashboard shows per
student and item whether they opened it, how many checks they ran and whether they solved it.
Only the teacher assigns; strangers do not see the class."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Graph
from geon.graphs.services import do_update_graph
from geon.learn import classes
from geon.learn.models import Classroom, Comment
from geon.learn.puzzles import do_check_attempt, puzzle_of

pytestmark = pytest.mark.django_db

WRONG = Path(__file__).resolve().parents[1] / "teaching" / "wrong"


def test_a_class_from_link_to_dashboard(
    client: Client,
    user: Any,
    other_user: Any,
    django_user_model: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    stranger = django_user_model.objects.create_user("dan", password="x")
    # ann makes a class and assigns a lesson and a puzzle
    client.force_login(user)
    made = client.post("/learn/classes/", {"name": "Axes 101"})
    room = Classroom.objects.get(name="Axes 101")
    assert made["Location"] == f"/learn/classes/{room.pk}/"
    for item in ("lesson:dot-and-duals", "puzzle:matvec_dual"):
        client.post(f"/learn/classes/{room.pk}/", {"item": item})
    bad = client.post(f"/learn/classes/{room.pk}/", {"item": "lesson:nope"})
    assert bad.status_code == 200 and b"lesson &quot;nope&quot; does not exist" in bad.content
    assert room.assignments.count() == 2
    # bob joins by the link and solves the puzzle on his own copy
    client.force_login(other_user)
    assert client.get(f"/learn/join/{room.key}/")["Location"] == f"/learn/classes/{room.pk}/"
    page = client.get(f"/learn/classes/{room.pk}/")
    assert b"Puzzle: Matrix-vector product with a dual" in page.content
    assert b"Join link" not in page.content
    assert (
        client.post(f"/learn/classes/{room.pk}/", {"item": "lesson:reductions"}).status_code == 200
    )
    assert room.assignments.count() == 2  # students do not assign
    client.get("/learn/puzzles/matvec_dual/")
    graph = Graph.objects.get(owner=other_user, example="puzzle:matvec_dual")
    do_update_graph(
        other_user, graph.pk, base_version=1, document=puzzle_of("matvec_dual")["reference"]
    )
    with django_capture_on_commit_callbacks(execute=False):
        queued = client.post(
            "/api/v1/puzzles/matvec_dual/attempts",
            json.dumps({"graph": str(graph.pk)}),
            content_type="application/json",
        ).json()
    do_check_attempt(queued["id"])
    # the dashboard shows it
    rows = classes.progress(room)
    assert [row["student"] for row in rows] == ["bob"]
    assert [(i.state, i.checks, i.graph is not None) for i in rows[0]["items"]] == [
        ("new", 0, False),
        ("solved", 1, True),
    ]
    client.force_login(user)
    dashboard = client.get(f"/learn/classes/{room.pk}/")
    assert b'data-student="bob"' in dashboard.content and b"solved" in dashboard.content
    # a stranger does not see the class
    client.force_login(stranger)
    assert client.get(f"/learn/classes/{room.pk}/").status_code == 404
    assert client.get("/learn/join/not-a-key/").status_code == 404


def test_the_teachers_drill_down_and_the_students_progress_page(
    client: Client,
    user: Any,
    other_user: Any,
    django_user_model: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The progress cell opens the student's work: their graph drawn read-only, each attempt
    with its counterexample as grids, and a comment the student then sees with the due date
    and the late mark; only the teacher opens it."""
    client.force_login(user)
    room = classes.do_create_class(user, "Axes 101")
    work = classes.do_assign(user, room.pk, "puzzle:matvec_dual", "2020-01-01")
    classes.do_join(other_user, room.key)
    client.force_login(other_user)
    client.get("/learn/puzzles/matvec_dual/")
    graph = Graph.objects.get(owner=other_user, example="puzzle:matvec_dual")
    wrong = json.loads((WRONG / "matvec_dual.json").read_text())
    do_update_graph(other_user, graph.pk, base_version=1, document=wrong)
    with django_capture_on_commit_callbacks(execute=False):
        queued = client.post(
            "/api/v1/puzzles/matvec_dual/attempts",
            json.dumps({"graph": str(graph.pk)}),
            content_type="application/json",
        ).json()
    do_check_attempt(queued["id"])
    where = f"/learn/classes/{room.pk}/students/bob/items/{work.pk}/"
    # a student does not open the drill-down, nor comment
    assert client.get(where).status_code == 404
    assert client.post(where, {"comment": "mine"}).status_code == 404
    assert client.get(where + "graph.svg").status_code == 404
    client.force_login(user)
    dashboard = client.get(f"/learn/classes/{room.pk}/").content.decode()
    assert f'href="{where}"' in dashboard and "late" in dashboard
    page = client.get(where).content.decode()
    assert "Not solved" in page and "input m" in page and "your result" in page
    assert "<th>W-1=0</th>" in page and "<th>H=0</th>" in page  # grids labelled by axis
    assert (
        re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", page.split("<main")[1].replace(str(graph.pk), ""))
        is None
    )
    drawn = client.get(where + "graph.svg")
    assert drawn["Content-Type"] == "image/svg+xml" and b"<svg" in drawn.content
    then = client.get(where + "graph.svg?version=9")
    assert b"There is no version 9; versions are 1 to 2." in then.content
    # the comment: too long is refused naming the bound and nothing is stored
    long = client.post(where, {"comment": "x" * 2001})
    assert long.status_code == 200 and b"at most 2000 characters" in long.content
    assert not Comment.objects.exists()
    assert client.post(where, {"comment": "Check W-1 against W."})["Location"] == where
    # bob sees it beside the item, due date and late mark, on the class and progress pages
    client.force_login(other_user)
    for page_url in (f"/learn/classes/{room.pk}/", "/learn/progress/"):
        mine = client.get(page_url).content.decode()
        assert "Check W-1 against W." in mine and "due 1 Jan 2020" in mine
        assert 'class="late"' in mine and "tried" in mine


def test_the_teacher_orders_removes_and_dates_work_on_the_page(client: Client, user: Any) -> None:
    client.force_login(user)
    room = classes.do_create_class(user, "Axes 101")
    for item in ("lesson:reductions", "puzzle:row_sums"):
        client.post(f"/learn/classes/{room.pk}/", {"item": item, "due": "2030-05-01"})
    first, second = room.assignments.all()
    assert first.due is not None and first.due.isoformat() == "2030-05-01T23:59:59+00:00"
    client.post(f"/learn/classes/{room.pk}/", {"action": "up", "assignment": second.pk})
    assert [a.pk for a in room.assignments.all()] == [second.pk, first.pk]
    bad = client.post(f"/learn/classes/{room.pk}/", {"item": "puzzle:row_sums", "due": "soon"})
    assert b"due date &quot;soon&quot; is not a date" in bad.content
    client.post(f"/learn/classes/{room.pk}/", {"action": "remove", "assignment": first.pk})
    assert [a.pk for a in room.assignments.all()] == [second.pk]
    gone = client.post(f"/learn/classes/{room.pk}/", {"action": "up", "assignment": first.pk})
    assert b"no longer assigned" in gone.content
