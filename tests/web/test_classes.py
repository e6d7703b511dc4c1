"""Classes (issue 19, item 5): a teacher makes a class and assigns a lesson and a puzzle; a
student joins by the link and works on their own copies; the teacher's dashboard shows per
student and item whether they opened it, how many checks they ran and whether they solved it.
Only the teacher assigns; strangers do not see the class."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Graph
from geon.graphs.services import do_update_graph
from geon.learn import classes
from geon.learn.models import Classroom
from geon.learn.puzzles import do_check_attempt, puzzle_of

pytestmark = pytest.mark.django_db


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
    assert rows == [
        {
            "student": "bob",
            "cells": [
                {"opened": False, "attempts": 0, "solved": False},
                {"opened": True, "attempts": 1, "solved": True},
            ],
        }
    ]
    client.force_login(user)
    dashboard = client.get(f"/learn/classes/{room.pk}/")
    assert b'data-student="bob"' in dashboard.content and b"solved" in dashboard.content
    # a stranger does not see the class
    client.force_login(stranger)
    assert client.get(f"/learn/classes/{room.pk}/").status_code == 404
    assert client.get("/learn/join/not-a-key/").status_code == 404
