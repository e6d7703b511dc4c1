"""A plan's cost and a plan diff at the documented maxima (issue 30 finding 7: 65,536 devices and
~20,000 Applications took 16 s and 39 s in the web process, answered 16 MB and slowed every
other user 9x): the web process estimates the work before it starts, hands what is past its
budget to the worker (202 with a location to poll, as a render), and the answer groups equal
devices (``count``, the first ``devices``) and counts what it leaves out (``omitted``).
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client, override_settings

from geon.core.graph import IPF_INDEX, IPF_SIGNATURE, OPERATION, TENSOR
from geon.core.plans.cost import shipped_profiles
from geon.graphs.models import Graph, GraphVersion, ShardPlan
from geon.graphs.services import do_create_graph
from geon.graphs.services.documents import live_document
from geon.graphs.services.plan_jobs import CACHE, cost_key, diff_key
from geon.graphs.services.plan_trials import live_plan_cost
from geon.graphs.tasks import plan_cost_job
from geon.runs.models import Run
from tests.processes import Child, start_child, stop_process

API = "/api/v1"
UNCONSUMED = f"geon-tests-unconsumed-{uuid.uuid4().hex[:8]}"
"""A Celery queue no worker of the suite reads: the maxima's jobs wait there, so they do not
hold the suite's worker for minutes."""


def chain(ops: int, rows: int, cols: int = 8) -> dict[str, Any]:
    """``ops`` chained two-input ``op:add`` operations of ``rows`` x ``cols`` float32 tensors."""
    nodes: list[dict[str, Any]] = []
    whole = {"start": [0, 0], "end": [rows, cols]}

    def tensor(label: str) -> str:
        tid = str(uuid.uuid4())
        body = {"dtype": "float32", "range": whole}
        nodes.append({"id": tid, "type": TENSOR, "label": label, "body": body})
        return tid

    identity = {"affineMap": {"projection": [[1, 0], [0, 1]], "offset": [0, 0]}, "shape": [1, 1]}
    prev = tensor("x")
    for k in range(ops):
        ins, out = [prev, tensor(f"w{k}")], tensor(f"y{k}")
        nodes.append(
            {
                "id": str(uuid.uuid4()),
                "type": OPERATION,
                "label": f"add{k}",
                "body": {
                    "kernel": "op:add",
                    "inputs": {"tensors": [{"tensorId": t, "range": whole} for t in ins]},
                    "outputs": {"result": [{"tensorId": out, "range": whole}]},
                },
                "tags": {
                    IPF_INDEX: whole,
                    IPF_SIGNATURE: {
                        "inputs": {"tensors": [identity] * 2},
                        "outputs": {"result": [identity]},
                    },
                },
            }
        )
        prev = out
    return {"id": str(uuid.uuid4()), "nodes": nodes}


def by_rows(document: dict[str, Any], name: str, axes: dict[str, int]) -> dict[str, Any]:
    spec = {n["id"]: {"over": {"0": "d"}} for n in document["nodes"] if n["type"] == OPERATION}
    return {"name": name, "mesh": {"name": "m", "axes": axes}, "spec": spec}


def made(client: Client, user: Any, document: dict[str, Any], meshes: list[Any]) -> Any:
    """A graph of ``document`` with a plan by rows per mesh; its API path and the plans' ids."""
    graph = do_create_graph(owner=user, title="maxima", document=document)
    path = f"{API}/graphs/{graph.pk}/plans"
    ids = []
    for n, axes in enumerate(meshes):
        answer = client.post(path, by_rows(document, f"p{n}", axes), "application/json")
        assert answer.status_code == 201, answer.content[:300]
        ids.append(answer.json()["id"])
    return graph, path, ids


def stored() -> tuple[Any, ...]:
    """What a cost must not change: graphs, versions, plans (as saved) and runs."""
    plans = tuple(ShardPlan.objects.order_by("pk").values_list("pk", "updated"))
    return (Graph.objects.count(), GraphVersion.objects.count(), plans, Run.objects.count())


def another_client_is_answered(client: Client, other_user: Any) -> None:
    """Another user's small plan is costed at once, in the web process."""
    client.force_login(other_user)
    small = chain(2, 8)
    mine = do_create_graph(owner=other_user, title="small", document=small)
    path = f"{API}/graphs/{mine.pk}/plans"
    plan = client.post(path, by_rows(small, "two", {"d": 2}), "application/json")
    assert plan.status_code == 201
    answer = client.get(f"{path}/{plan.json()['id']}/cost")
    assert answer.status_code == 200
    assert [d["coords"] for d in answer.json()["ledger"]] == [[0], [1]]


@pytest.mark.django_db
@override_settings(GEON_PLAN_COST_QUEUE=UNCONSUMED)
def test_the_cost_and_diff_at_the_maxima_are_handed_to_the_worker_before_any_work(
    client: Client, user: Any, other_user: Any
) -> None:
    # given 5 operations of 4,096 rows split 4,096 ways on a mesh of 4,096 x 16 = 65,536 devices
    # (20,480 Applications), and the same plan with its mesh axes the other way round
    client.force_login(user)
    document = chain(5, 4096)
    graph, path, (a, b) = made(client, user, document, [{"d": 4096, "r": 16}, {"r": 16, "d": 4096}])
    before = stored()
    for url in (f"{path}/{a}/cost", f"{path}/{a}/diff/{b}"):
        # when its cost (then the diff) is asked for, three times afresh
        peaks, answers = [], []
        for _ in range(3):
            caches[CACHE].clear()
            tracemalloc.start()
            answers.append(client.get(url))
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        # then each is answered before any of the work (the shard table of 20,480 Applications
        # alone is megabytes; bench_plan_maxima.py times it): 202, the location to poll (the
        # same request) and why, in a few hundred bytes
        assert max(peaks) < 2 * 2**20, peaks
        answer = answers[-1]
        body = answer.json()
        assert (answer.status_code, answer["Location"], body["location"]) == (202, url, url)
        assert (body["status"], len(answer.content) < 1024) == ("queued", True)
        assert body["work"] > 40_000
        assert body["message"].endswith(
            f"(work {body['work']:,}, more than GEON_PLAN_COST_WEB_MAX_WORK 40,000); a worker "
            "computes it: poll the location until it answers 200"
        )
        # and asked again while queued, it is not queued twice: the same 202 at once
        again = client.get(url)
        assert (again.status_code, again.json()["work"]) == (202, body["work"])
    # and nothing was stored but the pending jobs, in the cost cache
    assert stored() == before
    version, plans = 1, {p.pk: p for p in ShardPlan.objects.filter(graph=graph)}
    diff = caches[CACHE].get(diff_key(graph, version, plans[a], plans[b], "h100-sxm-8"))
    assert set(diff) == {"pending", "work"}
    assert caches[CACHE].get(cost_key(graph, version, plans[a], "h100-sxm-8")) is None  # cleared
    # and another client is still answered
    another_client_is_answered(client, other_user)


def poll(client: Client, url: str, timeout: float = 180.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        answer = client.get(url)
        if answer.status_code != 202 or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
@override_settings(GEON_PLAN_COST_WEB_MAX_WORK=100)
def test_a_cost_past_the_web_budget_is_costed_by_the_worker_with_equal_devices_grouped(
    celery_worker: Any, client: Client, user: Any, other_user: Any
) -> None:
    # given a web budget of 100 and 2 operations of 512 rows split over 512 devices, and over
    # 256 x 2 devices: past the 256 device rows a cost lists one by one
    client.force_login(user)
    document = chain(2, 512)
    _, path, (a, b) = made(client, user, document, [{"d": 512}, {"d": 256, "r": 2}])
    before = stored()
    # when its cost is asked for: 202, then the worker's answer on a later poll
    first = client.get(f"{path}/{a}/cost")
    assert first.status_code == 202
    answer = poll(client, first.json()["location"])
    # then it is bounded: equal devices are one row with their count and the first members
    assert answer.status_code == 200, answer.content[:500]
    body = answer.json()
    assert len(answer.content) < 64 * 1024
    for rows, name in ((body["devices"], "devices"), (body["ledger"], "ledger")):
        assert all({"count", "devices"} <= set(row) for row in rows)
        assert sum(row["count"] for row in rows) + body["omitted"][name] == 512
        assert all(len(row["devices"]) == min(row["count"], 64) for row in rows)
        assert all(row["coords"] == row["devices"][0] for row in rows)
    # every device holds its row of the 5 tensors (x, w0, y0, w1, y1), 8 float32 each: one row
    assert [(r["count"], r["total"]) for r in body["devices"]] == [(512, 5 * 8 * 4)]
    assert body["omitted"] == {"devices": 0, "ledger": 0}
    # and the answer is cached for the version: asked again, the same answer at once (200, not
    # another 202 for the worker)
    again = client.get(f"{path}/{a}/cost")
    assert (again.status_code, again.json()) == (200, body)
    # when the plans are compared: the worker answers the bounded diff
    diff = poll(client, client.get(f"{path}/{a}/diff/{b}").json()["location"])
    assert diff.status_code == 200, diff.content[:500]
    found = diff.json()
    assert len(diff.content) < 256 * 1024
    assert sum(row["count"] for row in found["devices"]) == 512
    assert all(len(row["devices"]) <= 64 for row in found["devices"])
    # a placement on 512 devices lists 64 of them and counts the other 448
    sides = [p["before"] for p in found["placements"]]
    assert [(len(s["devices"]), s["devicesOmitted"]) for s in sides] == [(64, 448)] * 2
    assert found["omitted"]["devices"] == 0
    # and nothing was stored in the database
    assert stored() == before
    another_client_is_answered(client, other_user)


@pytest.mark.django_db
def test_a_normal_plan_keeps_its_answer_shape(client: Client, user: Any) -> None:
    # given a plan on 8 devices (within every bound)
    client.force_login(user)
    _, path, (a, b) = made(client, user, chain(3, 16), [{"d": 8}, {"d": 4}])
    # when its cost and the diff are asked for, they are answered at once
    cost = client.get(f"{path}/{a}/cost")
    diff = client.get(f"{path}/{a}/diff/{b}")
    # then as before: one row per device, no count, nothing omitted
    assert (cost.status_code, diff.status_code) == (200, 200)
    body, compared = cost.json(), diff.json()
    assert [d["coords"] for d in body["ledger"]] == [[k] for k in range(8)]
    assert not any({"count", "devices"} & set(d) for d in body["ledger"] + body["devices"])
    assert "omitted" not in body and "omitted" not in compared
    assert len(compared["devices"]) == 8 and "count" not in compared["devices"][0]
    assert all("devicesOmitted" not in p["after"] for p in compared["placements"])
    assert json.loads(cost.content) == body


@pytest.mark.django_db
def test_a_current_plan_past_the_web_budget_leaves_its_edges_to_the_rest_cost(
    client: Client, user: Any
) -> None:
    # given a document on its plan (generated), whose applied carries its collectives
    client.force_login(user)
    graph, path, (a,) = made(client, user, chain(2, 8), [{"d": 4}])
    switched = client.post(f"{path}/{a}/generate", {"baseVersion": 1}, "application/json")
    assert switched.status_code == 200
    live = live_document(Graph.objects.get(pk=graph.pk))
    carried = live_plan_cost(graph.pk, live)
    assert carried is not None and set(carried["collectives"]) == set(shipped_profiles())
    # when the web budget is below the plan's work, no edit carries its cost (the editor asks
    # the REST cost, which a worker answers): every edit would pay for it otherwise
    with override_settings(GEON_PLAN_COST_WEB_MAX_WORK=1):
        assert live_plan_cost(graph.pk, live) is None
        assert client.get(f"{path}/{a}/cost").status_code == 202


@pytest.mark.django_db(transaction=True)
def test_a_plan_the_worker_refuses_is_answered_with_the_refusal_on_the_poll(
    celery_worker: Any, client: Client, user: Any, other_user: Any
) -> None:
    # given a plan that splits one of 3 operations and leaves 2 whole on 8 x 8,192 devices:
    # each whole one runs on every device, more shards than the cost model takes
    client.force_login(user)
    document = chain(3, 8)
    first = next(n["id"] for n in document["nodes"] if n["type"] == OPERATION)
    graph = do_create_graph(owner=user, title="whole", document=document)
    path = f"{API}/graphs/{graph.pk}/plans"
    plan = {"name": "wide", "mesh": {"name": "m", "axes": {"d": 8, "r": 8192}}}
    made = client.post(path, {**plan, "spec": {first: {"over": {"0": "d"}}}}, "application/json")
    assert made.status_code == 201, made.content[:300]
    before = stored()
    # when its cost is asked for: past the web budget, so the worker tries it
    queued = client.get(f"{path}/{made.json()['id']}/cost")
    assert queued.status_code == 202
    answer = poll(client, queued.json()["location"])
    # then the poll answers the worker's refusal, naming the count and what may be costed
    assert (answer.status_code, answer.json()["error"]) == (
        422,
        {
            "code": "invalid_request",
            "message": 'the plan leaves 2 operations whole on mesh "m" of 65536 devices: each '
            "runs on every device, 131072 shards in all; at most 65536 can be costed. Split "
            "more of them, or place the plan on a smaller mesh",
        },
    )
    # and nothing was stored; another client is answered
    assert stored() == before
    another_client_is_answered(client, other_user)


@pytest.fixture
def timed_worker(subprocess_env: dict[str, str]) -> Iterator[tuple[str, Child]]:
    """A prefork worker (as ``geon serve`` runs one: it enforces Celery's time limits, which the
    suite's solo worker does not) on a queue of its own; yields the queue and the worker."""
    queue = f"geon-tests-timed-{uuid.uuid4().hex[:8]}"
    command = [
        sys.executable, "-m", "celery", "-A", "geon", "worker", "--pool=prefork",
        "--concurrency=1", "--loglevel=INFO", "-Q", queue, f"--hostname={queue}@localhost",
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    child = start_child("timed", command, subprocess_env, lambda c: " ready." in c.output())
    yield queue, child
    stop_process(child.process)


@pytest.mark.django_db(transaction=True)
def test_a_cost_past_the_workers_time_limit_is_refused_and_the_worker_goes_on(
    timed_worker: tuple[str, Child], client: Client, user: Any, other_user: Any
) -> None:
    queue, worker = timed_worker
    assert plan_cost_job.soft_time_limit == 240  # registered in this process, with the default
    # given plan costs bounded at GEON_PLAN_COST_SECONDS = 1 s as the web process sends them
    # (with the task registered here too, as in the whole suite: Celery then sends the limits it
    # was registered with, unless the job's own are given), and a
    # plan of 5 operations of 4,096 rows on 4,096 x 16 devices (seconds of work: 6 s in a loaded CI)
    client.force_login(user)
    _, path, (a,) = made(client, user, chain(5, 4096), [{"d": 4096, "r": 16}])
    before = stored()
    # when its cost is asked for (past the web budget, so that worker takes it)
    with override_settings(GEON_PLAN_COST_QUEUE=queue, GEON_PLAN_COST_SECONDS=1):
        queued = client.get(f"{path}/{a}/cost")
        assert queued.status_code == 202
        answer = poll(client, queued.json()["location"], 120)
    # then the poll answers the refusal, naming the limit and what to do instead
    assert answer.status_code == 422, (answer.content[:300], worker.output()[-3000:])
    assert (answer.status_code, answer.json()["error"]) == (
        422,
        {
            "code": "invalid_request",
            "message": "costing this plan took more than 1 s, the most a worker spends on one "
            "(GEON_PLAN_COST_SECONDS); cost it with `geon cost` on your own machine, or place "
            "it on a smaller mesh",
        },
    )
    # and nothing was stored; the worker goes on: a small plan past a lowered web budget is
    # costed by it
    assert stored() == before
    small = chain(2, 8)
    _, small_path, (b,) = made(client, user, small, [{"d": 2}])
    with override_settings(GEON_PLAN_COST_QUEUE=queue, GEON_PLAN_COST_WEB_MAX_WORK=1):
        queued = client.get(f"{small_path}/{b}/cost")
        assert queued.status_code == 202
        assert poll(client, queued.json()["location"]).status_code == 200
    another_client_is_answered(client, other_user)
