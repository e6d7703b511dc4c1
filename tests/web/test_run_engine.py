"""Runs on the JAX engine (issue 31): ``POST /graphs/<id>/runs`` with ``engine: "jax"`` runs the
placed plan as one XLA program beside the logical NumPy run, in the worker; ``GET /engines``
says whether the run panel may offer it; every refusal names the bad value, stores nothing, and
another client is still answered."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.test import Client

import geon.interop.jax_engine as jax_engine
from geon.core.plans import apply_plan
from geon.examples.transformer import PLANS, transformer_block
from geon.graphs.services import do_create_graph
from geon.runs.models import Run
from geon.runs.services import do_execute_run

pytestmark = pytest.mark.django_db

API = "/api/v1"


@pytest.fixture
def placed(user: Any) -> Any:
    """The gallery transformer under Megatron (2 devices), as a graph of ``user``."""
    document = apply_plan(transformer_block(), PLANS[1]).to_json()
    return do_create_graph(owner=user, title="Block", document=document)


@pytest.fixture(autouse=True)
def _no_flag_leaks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker forces its XLA host devices in its environment; here that is the test
    process's, so XLA_FLAGS is put back after each test."""
    monkeypatch.setenv("XLA_FLAGS", "")


def test_a_jax_run_runs_the_plan_beside_the_logical_run(
    client: Client, user: Any, placed: Any
) -> None:
    client.force_login(user)
    assert client.get(f"{API}/engines").json() == {"engines": ["numpy", "jax"]}
    queued = client.post(f"{API}/graphs/{placed.pk}/runs", {"engine": "jax"}, "application/json")
    assert queued.status_code == 202 and queued.json()["engine"] == "jax"
    do_execute_run(queued.json()["id"])
    body = client.get(f"{API}/runs/{queued.json()['id']}").json()
    assert (body["status"], body["engine"], body["error"]) == ("done", "jax", "")
    assert body["result"]["devices"] == 2 and body["result"]["mode"] == "jax"
    assert body["max_abs_diff"]["y"] < 1e-12
    assert body["timings"]["compile"] > 0
    got = client.get(f"{API}/runs/{body['id']}/results/y").json()
    assert got["shape"] == [2, 4, 8] and np.isfinite(got["values"]).all()
    assert got["maxAbsDiff"] == body["max_abs_diff"]["y"]


@pytest.mark.parametrize(
    ("fields", "status", "code", "message"),
    [
        ({"engine": "tpu"}, 400, "invalid_engine",
         'engine "tpu" is not known; expected one of "numpy", "jax"'),
        ({"engine": "jax", "sharded": True}, 400, "invalid_request",
         'engine "jax" runs the placed plan on JAX beside the logical NumPy run; leave out'),
        ({"engine": "jax", "intermediates": True}, 400, "invalid_request", "leave out"),
    ],
)  # fmt: skip
def test_a_bad_engine_request_is_refused_and_stores_nothing(
    client: Client, user: Any, placed: Any, fields: dict[str, Any], status: int, code: str,
    message: str,
) -> None:  # fmt: skip
    client.force_login(user)
    answer = client.post(f"{API}/graphs/{placed.pk}/runs", fields, "application/json")
    assert answer.status_code == status
    assert answer.json()["error"]["code"] == code and message in answer.json()["error"]["message"]
    assert Run.objects.count() == 0
    assert Client().get(f"{API}/engines").json() == {"engines": ["numpy", "jax"]}  # a visitor too
    assert client.post(f"{API}/graphs/{placed.pk}/runs", {}, "application/json").status_code == 202


def test_without_jax_the_engine_is_unavailable_and_not_listed(
    client: Client, user: Any, placed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jax_engine, "jax_available", lambda: False)
    client.force_login(user)
    assert client.get(f"{API}/engines").json() == {"engines": ["numpy"]}
    answer = client.post(f"{API}/graphs/{placed.pk}/runs", {"engine": "jax"}, "application/json")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "engine_unavailable"
    assert "pip install 'jax[cpu]" in answer.json()["error"]["message"]
    assert Run.objects.count() == 0


def test_a_mesh_larger_than_the_worker_gives_jax_is_refused_before_it_is_queued(
    client: Client, user: Any, placed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEON_JAX_DEVICES", "1")
    client.force_login(user)
    answer = client.post(f"{API}/graphs/{placed.pk}/runs", {"engine": "jax"}, "application/json")
    assert answer.status_code == 413
    assert answer.json()["error"]["message"] == (
        "the plan's mesh needs 2 devices; the worker gives JAX 1 (GEON_JAX_DEVICES)"
    )
    assert Run.objects.count() == 0
