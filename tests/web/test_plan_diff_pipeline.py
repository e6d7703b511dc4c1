"""GET /graphs/<id>/plans/<a>/diff/<b> and /graphs/<id>/cost/diff/<plan> where a plan has
pipeline stages (issue 33; geon.core.plans.diff): the step time is the plan's cost's (bubble
included), the sends between stages are among the collectives, and ``pipeline`` names each
side's schedule and what changed; two plans without stages answer no ``pipeline``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Graph
from geon.graphs.services import do_create_graph
from tests.core.plans.pipeline_docs import chain

pytestmark = pytest.mark.django_db

API = "/api/v1"
HALVES = [["layers.0", "layers.1"], ["layers.2", "layers.3"]]
MESH = {"name": "pod", "axes": {"pp": 2, "dp": 2}}
PLAIN = {"name": "data parallel", "mesh": MESH, "axisMapping": {"N": "dp"}}
PIPED = {
    **PLAIN,
    "name": "1F1B over pp",
    "pipeline": {"axis": "pp", "microbatches": 4, "schedule": "1f1b", "stages": HALVES},
}


@pytest.fixture
def graph(user: Any) -> Graph:
    """Four layers scoped ``layers.0`` ... ``layers.3`` (as an imported model's are)."""
    return do_create_graph(owner=user, title="Layers", document=chain().to_json())


@pytest.fixture
def owner(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


def _save(client: Client, graph: Graph, plan: dict[str, Any]) -> int:
    made = client.post(
        f"{API}/graphs/{graph.pk}/plans", json.dumps(plan), content_type="application/json"
    )
    assert made.status_code == 201, made.content
    return int(made.json()["id"])


def test_a_pipelined_plan_against_data_parallel(owner: Client, graph: Graph) -> None:
    # given data parallel and the same with 1F1B stages over pp, saved on the graph
    plain, piped = _save(owner, graph, PLAIN), _save(owner, graph, PIPED)
    # when they are compared
    response = owner.get(f"{API}/graphs/{graph.pk}/plans/{plain}/diff/{piped}")
    assert response.status_code == 200, response.json()
    body = response.json()
    # then the after step is the pipelined plan's cost's, bubble included
    cost = owner.get(f"{API}/graphs/{graph.pk}/plans/{piped}/cost").json()
    assert body["time"]["after"] == cost["time"]
    # and each microbatch's send from stage 0 to stage 1 is added, with its fields
    sends = [c for c in body["collectives"]["added"] if c["kind"] == "send"]
    assert [(c["tensorLabel"], c["microbatch"], c["stages"], c["pass"]) for c in sends] == [
        ("a1", i, [0, 1], "forward") for i in range(4)
    ]
    # and pipeline names the after's schedule, the before having none
    pipeline = body["pipeline"]
    assert pipeline["a"] is None
    b = pipeline["b"]
    assert (b["axis"], b["schedule"], b["stages"], b["microbatches"]) == ("pp", "1f1b", 2, 4)
    assert b["bubble"] == cost["pipeline"]["bubble"] == pipeline["bubbleDelta"]
    assert "schedule" in pipeline["changed"]
    # and every device of the pp x dp mesh is on both sides
    assert [d["device"] for d in body["devices"]] == [f"device {n}" for n in range(4)]


def test_the_current_document_against_a_pipelined_plan(owner: Client, graph: Graph) -> None:
    # given a pipelined plan and the document placed by no plan
    piped = _save(owner, graph, PIPED)
    # when the current document (after) is compared with it (before)
    response = owner.get(f"{API}/graphs/{graph.pk}/cost/diff/{piped}?current=after")
    assert response.status_code == 200, response.json()
    body = response.json()
    # then the plan's side carries its stages, the document's none, and the sends are removed
    assert body["pipeline"]["a"]["schedule"] == "1f1b" and body["pipeline"]["b"] is None
    assert body["pipeline"]["bubbleDelta"] == -body["pipeline"]["a"]["bubble"]
    assert {c["kind"] for c in body["collectives"]["removed"]} >= {"send"}


def test_two_plans_without_stages_answer_no_pipeline(owner: Client, graph: Graph) -> None:
    # given data parallel and a plan placing nothing on the same mesh
    plain = _save(owner, graph, PLAIN)
    whole = _save(owner, graph, {"name": "whole", "mesh": MESH})
    # when they are compared, then the answer has no pipeline section
    body = owner.get(f"{API}/graphs/{graph.pk}/plans/{plain}/diff/{whole}").json()
    assert "pipeline" not in body and "time" in body
