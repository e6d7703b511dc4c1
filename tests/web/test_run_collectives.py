"""A sharded run's JSON carries its collectives: what the cost model predicts on each edge beside
what the run measured moving between devices (issue 16 item 6), run by a real worker; a logical
run carries none."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import Client

from geon import core as gc
from geon.core.graph import MESH
from geon.core.plans.shards import shard
from geon.graphs.services import do_create_graph
from geon.runs.services import do_execute_run

API = "/api/v1"
MESH_ID = "00000000-0000-4000-8000-0000000000e3"


def gathered_mlp() -> tuple[dict[str, Any], dict[str, str]]:
    """x[N=8, D=4] -> dot W1[D-1, F=16] -> relu -> dot W2[F-1, D] (float32): the first dot and
    relu split over N on the 4 devices of mesh axis d, the second dot over D, so the hidden
    tensor "a" is all-gathered (N·F·4 = 512 bytes)."""
    N, D, F = gc.Axis("N", 8), gc.Axis("D", 4), gc.Axis("F", 16)
    x = gc.placeholder(axes=[N, D], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[D - 1, F], name="w1", dtype="float32")
    w2 = gc.placeholder(axes=[F - 1, D], name="w2", dtype="float32")
    h = gc.dot(x, w1, name="h")
    a = gc.relu(h, name="a")
    y = gc.dot(a, w2, name="y")
    g = gc.graph([y])
    g.add_node({"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"d": 4}}})
    assert h.op_id and a.op_id and y.op_id
    shard(g, h.op_id, mesh=MESH_ID, over={"N": "d"})
    shard(g, a.op_id, mesh=MESH_ID, over={"N": "d"})
    shard(g, y.op_id, mesh=MESH_ID, over={"D": "d"})
    assert g.check() == []
    return g.to_json(), {"a": a.id, "relu": a.op_id, "dot2": y.op_id}


def wait_for_run(client: Client, run_id: int, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(f"{API}/runs/{run_id}").json()
        if body["status"] in ("done", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


@pytest.mark.django_db(transaction=True)
def test_a_sharded_run_answers_predicted_and_measured_bytes(
    celery_worker: Any, client: Client, user: Any
) -> None:
    # given ann's MLP whose hidden tensor is all-gathered between the two dots
    document, ids = gathered_mlp()
    graph = do_create_graph(owner=user, title="MLP", document=document)
    client.force_login(user)
    # when she asks for a sharded run and the worker runs it
    queued = client.post(
        f"{API}/graphs/{graph.pk}/runs", {"sharded": True, "seed": 3}, "application/json"
    )
    assert queued.status_code == 202
    body = wait_for_run(client, queued.json()["id"])
    assert (body["status"], body["error"]) == ("done", "")
    # then its JSON carries the all-gather of "a", predicted and measured at 512 bytes
    assert body["result"]["collectives"] == [
        {
            "kind": "all-gather",
            "tensor": ids["a"],
            "tensorLabel": "a",
            "producer": ids["relu"],
            "consumer": ids["dot2"],
            "meshAxes": ["d"],
            "predictedBytes": 512,
            "measuredBytes": 512,
        }
    ]


@pytest.mark.django_db
def test_a_logical_run_answers_no_collectives(client: Client, user: Any) -> None:
    # given the same document run logically
    document, _ = gathered_mlp()
    graph = do_create_graph(owner=user, title="MLP", document=document)
    client.force_login(user)
    queued = client.post(
        f"{API}/graphs/{graph.pk}/runs", {"sharded": False, "seed": 3}, "application/json"
    )
    assert queued.status_code == 202
    do_execute_run(queued.json()["id"])
    # then it answers an empty list of collectives
    body = client.get(f"{API}/runs/{queued.json()['id']}").json()
    assert (body["status"], body["result"]["collectives"]) == ("done", [])
