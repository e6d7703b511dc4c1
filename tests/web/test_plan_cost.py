"""GET /graphs/<id>/plans/<id>/cost: the byte counts and, under a shipped hardware profile, the
cost model's collectives, time interval and per-device ledger (issue 16 items 3-5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

API = "/api/v1"
OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
"""The loom example's add z = t0 + t1 of int32 [0:10, 0:5] tensors."""
BY_COLUMNS = {
    "name": "two",
    "mesh": {"name": "m", "axes": {"x": 2}},
    "spec": {OP: {"over": {"1": "x"}}},
}
"""The add split over its columns (3 + 2) on the 2 devices of mesh axis x."""
H100 = {"bandwidth": 4.5e11, "latency": 2e-6, "flops": 6.7e13 * 0.7, "floor": 5e-6}
"""The h100-sxm-8 profile's link, efficient peak and kernel floor (docs/cost-model.md)."""


def _cost(client: Client, graph: Any, plan: dict[str, Any], query: str = "") -> Any:
    made = client.post(
        f"{API}/graphs/{graph.pk}/plans", json.dumps(plan), content_type="application/json"
    )
    assert made.status_code == 201, made.json()
    return client.get(f"{API}/graphs/{graph.pk}/plans/{made.json()['id']}/cost{query}")


def test_the_cost_keeps_its_byte_counts_and_adds_the_ledger(
    client: Client, user: Any, graph: Any
) -> None:
    # given the add split over columns, inputs replicated where read
    client.force_login(user)
    # when its cost is asked for
    body = _cost(client, graph, BY_COLUMNS).json()
    # then the byte counts are there as before: device 0 reads 2 x 10x3 int32 and writes 10x3
    assert [(d["coords"], d["total"]) for d in body["devices"]] == [([0], 360), ([1], 240)]
    assert (body["transfers"], body["transferBytes"], body["collectives"]) == ([], 0, [])
    # and under the default profile each device runs 30 and 20 additions, each at the kernel
    # floor (30 / 4.69e13 s is far below 5 us), its peak is what it reads and writes, and the
    # peaks are 20 % apart (360 against a mean of 300)
    assert body["profile"]["name"] == "h100-sxm-8"
    assert [
        (d["coords"], d["flops"], d["computeSeconds"], d["commSeconds"], d["peakBytes"])
        for d in body["ledger"]
    ] == [([0], 30, H100["floor"], 0, 360), ([1], 20, H100["floor"], 0, 240)]
    assert body["time"] == {"lower": H100["floor"], "upper": H100["floor"]}
    assert body["memory"] == {"capacity": 8e10, "imbalancePercent": 20.0, "overBudget": False}


def test_an_input_held_on_one_device_is_sent_to_the_other(
    client: Client, user: Any, graph: Any
) -> None:
    # given t0 held on device 1 only and the add split over columns (3 + 2)
    client.force_login(user)
    plan = {**BY_COLUMNS, "inputs": {"t0": {"device": [1]}}}
    # when its cost is asked for
    body = _cost(client, graph, plan).json()
    # then device 0's columns of t0 (10 x 3 int32 = 120 bytes) are sent to it: lat + b/bw
    seconds = H100["latency"] + 120 / H100["bandwidth"]
    assert [(c["kind"], c["meshAxes"], c["devices"], c["bytes"]) for c in body["collectives"]] == [
        ("send", ["x"], 2, 120)
    ]
    assert body["collectives"][0]["seconds"] == pytest.approx(seconds, rel=1e-9)
    # named as a person reads them: the tensor's label, its producer's (the input itself) and
    # its consumer's (the unlabelled add, by its kernel)
    c = body["collectives"][0]
    assert (c["tensorLabel"], c["producerLabel"], c["consumerLabel"]) == ("t0", "t0", "op:add")
    assert [d["commSeconds"] for d in body["ledger"]] == [pytest.approx(seconds, rel=1e-9)] * 2


def test_a_shipped_profile_can_be_named_and_nothing_else(
    client: Client, user: Any, graph: Any
) -> None:
    client.force_login(user)
    assert _cost(client, graph, BY_COLUMNS, "?profile=cpu-host").json()["profile"]["name"] == (
        "cpu-host"
    )
    refused = _cost(client, graph, {**BY_COLUMNS, "name": "other"}, "?profile=/etc/hostname")
    assert (refused.status_code, refused.json()["error"]) == (
        422,
        {
            "code": "invalid_request",
            "message": 'profile "/etc/hostname" is not a shipped profile; expected one of '
            "(cpu-host, h100-sxm-8, tpu-v5e-16)",
        },
    )
