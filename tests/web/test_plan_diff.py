"""GET /graphs/<id>/plans/<a>/diff/<b> (issue 18, "Diffs"; docs/reviews.md "Plan diff"): the
transformer block's data-parallel plan against Megatron, read by its owner and a viewer, hidden
from strangers, and refused by name for an unknown plan or profile."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import GraphVersion, Membership, ShardPlan
from geon.graphs.services.gallery import do_load_example

pytestmark = pytest.mark.django_db
API = "/api/v1"


@pytest.fixture
def block(user: Any, other_user: Any, django_user_model: Any) -> dict[str, Any]:
    """ann's transformer block with its three plans by name; bob views it, dan has no role."""
    graph, _ = do_load_example(user, "transformer-block")
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    stranger = django_user_model.objects.create_user("dan", password="x")
    plans = {p.name: p.pk for p in ShardPlan.objects.filter(graph=graph)}
    people = {"owner": user, "viewer": other_user, "stranger": stranger}
    return {"graph": graph, "plans": plans, "people": people}


def _diff(client: Client, block: dict[str, Any], base: Any, target: Any, query: str = "") -> Any:
    graph = block["graph"]
    return client.get(f"{API}/graphs/{graph.pk}/plans/{base}/diff/{target}{query}")


def _dp_megatron(block: dict[str, Any]) -> tuple[int, int]:
    plans = block["plans"]
    return plans["Data parallel"], plans["Megatron tensor parallel"]


@pytest.mark.parametrize("who", ["owner", "viewer"])
def test_members_read_data_parallel_against_megatron(
    client: Client, block: dict[str, Any], who: str
) -> None:
    # given the block as opened from the gallery, with no plan generated
    graph = block["graph"]
    versions = GraphVersion.objects.filter(graph=graph).count()
    generated = {p.pk: p.applications for p in ShardPlan.objects.filter(graph=graph)}
    client.force_login(block["people"][who])
    dp, megatron = _dp_megatron(block)
    # when data parallel (before) is compared with Megatron (after)
    response = _diff(client, block, dp, megatron)
    assert response.status_code == 200, response.json()
    body = response.json()
    # then both plans are named, under the default profile, on the current version
    assert (body["base"], body["target"], body["profile"]) == (
        {"id": dp, "name": "Data parallel"},
        {"id": megatron, "name": "Megatron tensor parallel"},
        "h100-sxm-8",
    )
    assert body["version"] == graph.current_version.number
    # Megatron adds an all-reduce after the output projection and after the MLP; data
    # parallel has none to remove
    added = [
        (c["kind"], c["tensorLabel"], c["producerLabel"], c["consumerLabel"], c["meshAxes"])
        for c in body["collectives"]["added"]
    ]
    assert added == [
        ("all-reduce", "attn out partial", "op:dot_partial", "op:sum", ["tp"]),
        ("all-reduce", "mlp out partial", "op:dot_partial", "op:sum", ["tp"]),
    ]
    assert (body["collectives"]["removed"], body["collectives"]["changed"]) == ([], [])
    # q is split by heads over tp instead of by batch over dp
    q = next(p for p in body["placements"] if p["operationLabel"] == "op:dot → q")
    assert (q["before"]["split"], q["before"]["meshAxes"], q["before"]["mesh"]) == (
        {"B": 2},
        {"B": "dp"},
        "dp mesh",
    )
    assert (q["after"]["split"], q["after"]["meshAxes"], q["after"]["mesh"]) == (
        {"H": 2},
        {"H": "tp"},
        "tp mesh",
    )
    # the two devices of each mesh are the same two devices; Megatron's hold half the weights
    devices = body["devices"]
    assert [(d["device"], d["before"]["mesh"], d["after"]["mesh"]) for d in devices] == [
        ("device 0", "dp mesh", "tp mesh"),
        ("device 1", "dp mesh", "tp mesh"),
    ]
    for d in devices:
        assert d["peakBytesDelta"] == d["after"]["peakBytes"] - d["before"]["peakBytes"]
        assert d["peakBytesDelta"] < 0
        assert d["after"]["commSeconds"] > 0 and d["before"]["commSeconds"] == 0
    time = body["time"]
    assert time["delta"]["upper"] == pytest.approx(time["after"]["upper"] - time["before"]["upper"])
    # and nothing is stored: no version, no plan's generated Applications
    assert GraphVersion.objects.filter(graph=graph).count() == versions
    assert {p.pk: p.applications for p in ShardPlan.objects.filter(graph=graph)} == generated


def test_a_stranger_gets_404_as_if_the_graph_did_not_exist(
    client: Client, block: dict[str, Any]
) -> None:
    client.force_login(block["people"]["stranger"])
    response = _diff(client, block, *_dp_megatron(block))
    graph_id = block["graph"].pk
    assert (response.status_code, response.json()) == (
        404,
        {
            "error": {
                "code": "not_found",
                "message": f'graph "{graph_id}" does not exist or you do not have access to it',
            }
        },
    )


@pytest.mark.parametrize("side", ["base", "target"])
def test_an_unknown_plan_is_404_naming_it(client: Client, block: dict[str, Any], side: str) -> None:
    client.force_login(block["people"]["viewer"])
    dp, _ = _dp_megatron(block)
    missing = max(block["plans"].values()) + 100
    base, target = (missing, dp) if side == "base" else (dp, missing)
    response = _diff(client, block, base, target)
    title = block["graph"].title
    assert (response.status_code, response.json()["error"]) == (
        404,
        {"code": "not_found", "message": f'plan "{missing}" of graph "{title}" does not exist'},
    )


def test_a_profile_is_a_shipped_one(client: Client, block: dict[str, Any]) -> None:
    client.force_login(block["people"]["owner"])
    dp, megatron = _dp_megatron(block)
    named = _diff(client, block, dp, megatron, "?profile=cpu-host")
    assert (named.status_code, named.json()["profile"]) == (200, "cpu-host")
    refused = _diff(client, block, dp, megatron, "?profile=../secrets")
    assert (refused.status_code, refused.json()["error"]) == (
        422,
        {
            "code": "invalid_request",
            "message": 'profile "../secrets" is not a shipped profile; expected one of '
            "(cpu-host, h100-sxm-8, tpu-v5e-16)",
        },
    )


def test_a_plan_against_itself_changes_nothing(client: Client, block: dict[str, Any]) -> None:
    client.force_login(block["people"]["owner"])
    _, megatron = _dp_megatron(block)
    body = _diff(client, block, megatron, megatron).json()
    assert body["placements"] == []
    assert body["collectives"] == {"added": [], "removed": [], "changed": []}
    assert [(d["peakBytesDelta"], d["secondsDelta"]) for d in body["devices"]] == [(0, 0.0)] * 2
    assert body["time"]["delta"] == {"lower": 0.0, "upper": 0.0}
