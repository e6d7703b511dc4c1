"""``geon verify`` from the editor (issue 31): ``POST /graphs/<id>/verify`` hands the version's
placed plan to a worker that compiles it with XLA and matches the collectives, ``GET`` polls
the report; every refusal names what is wrong, caches nothing, and another client is still
answered."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

import geon.interop.jax_engine as jax_engine
from geon import core as gc
from geon.core.plans import apply_plan
from geon.examples.transformer import PLANS, transformer_block
from geon.graphs.services import do_create_graph
from geon.runs.services.verifying import do_verify

pytestmark = pytest.mark.django_db

API = "/api/v1"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """XLA_FLAGS put back after each test (the worker forces its host devices). Graph ids are
    fresh, so no answer is cached for them before a test asks."""
    monkeypatch.setenv("XLA_FLAGS", "")


@pytest.fixture
def placed(user: Any) -> Any:
    """The gallery transformer with the worse-on-purpose plan (D over tp) placed."""
    document = apply_plan(transformer_block(), PLANS[2]).to_json()
    return do_create_graph(owner=user, title="Block", document=document)


def test_a_verify_is_queued_then_answers_the_matched_collectives(
    client: Client, user: Any, placed: Any
) -> None:
    client.force_login(user)
    url = f"{API}/graphs/{placed.pk}/verify"
    assert client.get(url).status_code == 404
    queued = client.post(url)
    assert queued.status_code == 202
    assert queued.json()["location"] == f"{url}?version=1"
    assert client.get(url).status_code == 202
    do_verify(str(placed.pk), 1)  # what the worker's task does
    answer = client.get(f"{url}?version=1")
    assert answer.status_code == 200
    report = answer.json()
    assert report["agrees"] and report["devices"] == 2
    assert {c["rule"] for c in report["compiled"]} == {
        "equal", "xla-combines", "layer-norm-statistics"}  # fmt: skip
    assert [p["kind"] for p in report["predicted"]].count("all-reduce") == 4
    # a second POST answers the cached report at once
    assert client.post(url).json() == report


def test_a_document_with_no_plan_is_refused_and_caches_nothing(client: Client, user: Any) -> None:
    n = gc.Axis("N", 4)
    logical = gc.graph([gc.relu(gc.placeholder(axes=[n], name="x"), name="y")])
    graph = do_create_graph(owner=user, title="Plain", document=logical.to_json())
    client.force_login(user)
    answer = client.post(f"{API}/graphs/{graph.pk}/verify")
    assert answer.status_code == 422
    assert answer.json()["error"] == {
        "code": "not_placed",
        "message": 'graph "Plain" version 1 has no placed plan; switch to a plan (or shard an '
        "operation on a mesh) first",
    }
    assert client.get(f"{API}/graphs/{graph.pk}/verify").status_code == 422  # checked alike
    assert client.get(f"{API}/engines").status_code == 200


def test_without_jax_or_past_the_workers_devices_verify_is_refused(
    client: Client, user: Any, placed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client.force_login(user)
    url = f"{API}/graphs/{placed.pk}/verify"
    monkeypatch.setenv("GEON_JAX_DEVICES", "1")
    answer = client.post(url)
    assert (answer.status_code, answer.json()["error"]["code"]) == (413, "limit_exceeded")
    assert "needs 2 devices; the worker gives JAX 1" in answer.json()["error"]["message"]
    monkeypatch.setattr(jax_engine, "jax_available", lambda: False)
    answer = client.post(url)
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "engine_unavailable")
    assert "pip install 'jax[cpu]" in answer.json()["error"]["message"]
    assert client.get(url).status_code == 400  # nothing was queued or cached meanwhile
    monkeypatch.undo()
    assert client.get(url).status_code == 404


def test_a_graph_the_user_cannot_see_is_not_found(
    client: Client, other_user: Any, placed: Any
) -> None:
    client.force_login(other_user)
    assert client.post(f"{API}/graphs/{placed.pk}/verify").status_code == 404
