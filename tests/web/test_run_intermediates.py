"""Runs that keep their intermediates (issue 21, "Runs": any tensor inspectable): every tensor's
values come back, by label, from a real worker; the limits count every tensor kept before the run
is queued, and a run over them is refused by name with nothing stored."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from django.test import Client

from geon import core as gc
from geon.execute import Limits
from geon.graphs.services import do_create_graph
from geon.runs.models import Run
from geon.runs.services import RunRefused
from geon.runs.services.queueing import check_can_run

API = "/api/v1"


def mlp() -> dict[str, Any]:
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 64)
    x = gc.placeholder(axes=[N, D], name="x")
    w1 = gc.placeholder(axes=[D - 1, F], name="w1")
    w2 = gc.placeholder(axes=[F - 1, D], name="w2")
    hidden = gc.relu(gc.dot(x, w1, name="h"), name="a")
    return gc.graph([gc.dot(hidden, w2, name="y")]).to_json()


@pytest.mark.django_db(transaction=True)
def test_a_run_keeping_intermediates_returns_every_tensor(
    celery_worker: Any, client: Client, user: Any
) -> None:
    graph = do_create_graph(owner=user, title="MLP", document=mlp())
    client.force_login(user)
    queued = client.post(
        f"{API}/graphs/{graph.pk}/runs", {"seed": 1, "intermediates": True}, "application/json"
    )
    assert queued.status_code == 202 and queued.json()["intermediates"] is True
    deadline = time.monotonic() + 60
    while (body := client.get(f"{API}/runs/{queued.json()['id']}").json())["status"] not in (
        "done",
        "failed",
    ) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (body["status"], body["error"]) == ("done", "")
    # the worker marks what was kept only because every tensor was: all but the graph's output
    marked = {o["label"]: o["intermediate"] for o in body["result"]["outputs"]}
    assert [label for label, kept in marked.items() if not kept] == ["y"]
    hidden = client.get(f"{API}/runs/{body['id']}/results/a").json()
    h = client.get(f"{API}/runs/{body['id']}/results/h").json()
    assert hidden["axes"] == ["F", "N"] and hidden["shape"] == [64, 4]
    # relu of h, cell by cell: the kept intermediate holds the real values
    assert np.allclose(hidden["values"], np.maximum(np.array(h["values"], dtype=float), 0))


@pytest.mark.django_db
def test_keeping_every_tensor_is_counted_against_the_limits(user: Any) -> None:
    graph = do_create_graph(owner=user, title="MLP", document=mlp())
    # the outputs alone fit in 6 KiB (inputs and a 2 KiB arena); keeping h and a alive too
    # (2 KiB each) does not
    small = Limits(max_bytes=6 * 1024)
    assert check_can_run(user, graph.pk, limits=small).intermediates is False
    with pytest.raises(RunRefused) as refused:
        check_can_run(user, graph.pk, intermediates=True, limits=small)
    assert refused.value.code == "limit_exceeded" and "GEON_MAX_BYTES" in str(refused.value)
    with pytest.raises(RunRefused, match='intermediates "maybe" is not valid'):
        check_can_run(user, graph.pk, intermediates="maybe")
    assert Run.objects.count() == 0
