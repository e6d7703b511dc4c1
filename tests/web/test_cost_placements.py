"""The cost answers' ``placements`` (issue 35): how each operation runs as placed, read from what
the plan places (``geon.core.plans.diff.operation_placements``), so that Compare can say a plan
made by axis mapping (which names no operation in its ``spec``) splits ``h0`` over ``dp``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client, override_settings

from geon.graphs.models import Graph
from geon.graphs.services import do_create_graph
from geon.graphs.services.plan_jobs import CACHE
from tests.core.plans.pipeline_docs import chain

pytestmark = pytest.mark.django_db

API = "/api/v1"
MAPPED = {
    "name": "data parallel",
    "mesh": {"name": "pod", "axes": {"dp": 2}},
    "axisMapping": {"N": "dp"},
}
"""Two layers' batch N over the 2 devices of dp: every operation's N is cut in two."""


@pytest.fixture
def graph(user: Any) -> Graph:
    """Two layers of ``relu(dot(h, w))`` over ``x[N=64, D=32]``."""
    return do_create_graph(owner=user, title="Layers", document=chain(2).to_json())


def _rows(answer: dict[str, Any]) -> list[tuple[str, dict[str, int], Any, int]]:
    return [(p["label"], p["split"], p["over"], p["parts"]) for p in answer["placements"]]


def test_a_mapped_plans_cost_says_how_each_operation_is_split(
    client: Client, user: Any, graph: Graph
) -> None:
    client.force_login(user)
    caches[CACHE].clear()
    # given a plan that maps N to dp and names no operation
    made = client.post(f"{API}/graphs/{graph.pk}/plans", json.dumps(MAPPED), "application/json")
    assert made.status_code == 201, made.content[:300]
    plan = made.json()["id"]
    assert made.json()["spec"] == {}
    # when its cost is asked for
    cost = client.get(f"{API}/graphs/{graph.pk}/plans/{plan}/cost")
    assert cost.status_code == 200, cost.content[:300]
    # then every operation, in document order, runs in 2 parts along N over dp, by name
    assert _rows(cost.json()) == [
        (f"op:{kind} → {out}", {"N": 2}, {"N": "dp"}, 2)
        for out in ("h0", "a0", "h1", "a1")
        for kind in ["dot" if out[0] == "h" else "relu"]
    ]
    # and the unplaced document runs each whole, in one part
    unplaced = client.get(f"{API}/graphs/{graph.pk}/cost").json()
    assert [(p["split"], p["over"], p["parts"]) for p in unplaced["placements"]] == [
        ({}, None, 1)
    ] * 4
    # and once the plan is written into the document, the document's placements are the plan's
    done = client.post(
        f"{API}/graphs/{graph.pk}/plans/{plan}/generate",
        json.dumps({"baseVersion": 1}),
        content_type="application/json",
    )
    assert done.status_code == 200, done.content[:300]
    placed = client.get(f"{API}/graphs/{graph.pk}/cost").json()
    assert placed["placements"] == cost.json()["placements"]


@override_settings(GEON_PLAN_COST_LIST_ROWS=3)
def test_past_the_list_bound_placements_are_counted_left_out(
    client: Client, user: Any, graph: Graph
) -> None:
    client.force_login(user)
    caches[CACHE].clear()
    # given the unplaced document's four operations and a bound of 3 rows a list
    # when its cost is asked for
    answer = client.get(f"{API}/graphs/{graph.pk}/cost").json()
    # then 3 are listed and the fourth is counted as left out
    assert (len(answer["placements"]), answer["omitted"]["placements"]) == (3, 1)
