"""Puzzles over HTTP (issue 19, item 4): anyone reads them (never the reference); a signed-in
person opens one as their own graph (axes declared, inputs placed); a check is queued for the
worker, which stores the answer: not solved with the first difference in axis names, or solved.
The worker's side is the service the Celery task calls (the browser test runs a real worker)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Graph
from geon.graphs.services import do_update_graph, live_document
from geon.learn.models import Attempt
from geon.learn.puzzles import do_check_attempt, puzzle_of

pytestmark = pytest.mark.django_db

API = "/api/v1"
WRONG = Path(__file__).resolve().parents[1] / "teaching" / "wrong"


def test_anyone_reads_puzzles_but_never_the_reference(client: Client) -> None:
    listed = client.get(f"{API}/puzzles").json()["puzzles"]
    assert len(listed) == 12 and all("reference" not in p for p in listed)
    one = client.get(f"{API}/puzzles/matvec_dual").json()
    assert one["inputs"]["m"]["axes"] == ["H", "W-1"] and "reference" not in one
    assert client.get(f"{API}/puzzles/nope").status_code == 404


def test_a_puzzle_is_checked_by_the_worker_and_explained_by_name(
    client: Client, user: Any, other_user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client.force_login(user)
    opened = client.get("/learn/puzzles/matvec_dual/")
    graph = Graph.objects.get(owner=user, example="puzzle:matvec_dual")
    assert opened["Location"] == f"/graphs/{graph.pk}/?puzzle=matvec_dual"
    labels = sorted(n.label or "" for n in live_document(graph).document.nodes if n.label)
    assert {"m", "v"} <= set(labels)

    def attempt() -> dict[str, Any]:
        with django_capture_on_commit_callbacks(execute=False):
            queued = client.post(
                f"{API}/puzzles/matvec_dual/attempts",
                json.dumps({"graph": str(graph.pk)}),
                content_type="application/json",
            )
        assert queued.status_code == 202 and queued.json()["status"] == "queued"
        do_check_attempt(queued.json()["id"])  # what the worker's task does
        return client.get(f"{API}/puzzles/attempts/{queued.json()['id']}").json()

    # a wrong answer: not solved, the first difference in axis names
    wrong = json.loads((WRONG / "matvec_dual.json").read_text())
    do_update_graph(user, graph.pk, base_version=1, document=wrong)
    first = attempt()
    assert first["status"] == "done" and first["solved"] is False
    assert "expected" in first["result"]["counterexample"]["message"]
    # the reference's own graph solves it, on every draw
    graph.refresh_from_db()
    reference = puzzle_of("matvec_dual")["reference"]
    do_update_graph(user, graph.pk, base_version=graph.current_version.number, document=reference)
    second = attempt()
    assert (second["status"], second["solved"], second["result"]["draws"]) == ("done", True, 50)
    assert Attempt.objects.filter(user=user, puzzle="matvec_dual").count() == 2
    # nobody else reads your attempts
    client.force_login(other_user)
    assert client.get(f"{API}/puzzles/attempts/{second['id']}").status_code == 404


def test_a_puzzle_names_the_warnings_it_asks_for(client: Client) -> None:
    """The outer product is the answer of its puzzle (issue 36): the editor is told not to
    show its AccidentalBroadcast there; other puzzles ask for none."""
    assert client.get(f"{API}/puzzles/outer_product").json()["quietConstraints"] == [
        "AccidentalBroadcast"
    ]
    assert client.get(f"{API}/puzzles/cast_axes_pitfall").json()["quietConstraints"] == []
