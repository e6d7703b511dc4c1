"""What do a plan's cost and a plan diff at the documented maxima cost the web process, next to a
normal-size plan's? (issue 30 finding 7: 16 s and 39 s in the web process, 16 MB answered)

Run: ``.venv/bin/python benchmarks/bench_plan_maxima.py [--repeat 3] [--worker]``

Through the REST path (Django's test client, a throw-away SQLite database in a temporary data
folder, or a new database on the PostgreSQL server ``DATABASE_URL`` names):

- **normal**: bench_check's document of 1,000 chained ``op:add`` operations, a plan splitting
  each by rows over 8 devices (8,000 Applications), and a second one over 4 devices for the diff;
- **within budget**: 6 chained ``op:add`` operations of 1,024 x 8 tensors split over 1,024
  devices (work 31,232 of the web budget's 40,000), against the same over 256 (the diff's work
  34,432): about the most the web process computes itself;
- **maxima**: 5 chained ``op:add`` operations of 4,096 x 8 tensors, each split 4,096 ways on a
  mesh of 4,096 x 16 = 65,536 devices (20,480 Applications), and the same plan with its mesh
  axes the other way round for the diff.

For each it prints the median wall time of ``GET .../plans/<id>/cost`` and ``GET
.../plans/<a>/diff/<b>`` asked afresh (the cache is cleared before each), the status and the
bytes answered, and the ratio to the normal request of its kind. ``--worker`` also runs the
worker's job for the maxima in this process (as ``celery -A geon worker`` runs it; its time
is the worker's, not the web process's) and prints the poll's answer: status, bytes, device rows
and the devices they stand for.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_check import _id, generate

from geon.core.graph import IPF_INDEX, IPF_SIGNATURE, OPERATION, TENSOR
from geon.core.zspace import ZRange


def maxima_document(ops: int = 5, rows: int = 4096, cols: int = 8) -> dict[str, Any]:
    """``ops`` chained two-input ``op:add`` operations of ``rows`` x ``cols`` float32 tensors."""
    counter = iter(range(1, 10**9))
    nodes: list[dict[str, Any]] = []
    whole = ZRange([0, 0], [rows, cols])

    def tensor(label: str) -> str:
        tid = _id(next(counter))
        body = {"dtype": "float32", "range": whole.to_json()}
        nodes.append({"id": tid, "type": TENSOR, "label": label, "body": body})
        return tid

    identity = {"affineMap": {"projection": [[1, 0], [0, 1]], "offset": [0, 0]}, "shape": [1, 1]}
    prev = tensor("x")
    for k in range(ops):
        ins, out = [prev, tensor(f"w{k}")], tensor(f"y{k}")
        sel = [{"tensorId": t, "range": whole.to_json()} for t in ins]
        nodes.append(
            {
                "id": _id(next(counter)),
                "type": OPERATION,
                "label": f"add{k}",
                "body": {
                    "kernel": "op:add",
                    "inputs": {"tensors": sel},
                    "outputs": {"result": [{"tensorId": out, "range": whole.to_json()}]},
                },
                "tags": {
                    IPF_INDEX: whole.to_json(),
                    IPF_SIGNATURE: {
                        "inputs": {"tensors": [identity] * 2},
                        "outputs": {"result": [identity]},
                    },
                },
            }
        )
        prev = out
    return {"id": _id(0), "nodes": nodes}


def rows_plan(document: dict[str, Any], name: str, axes: dict[str, int]) -> dict[str, Any]:
    """Every operation split by rows over mesh axis ``d`` of a mesh of ``axes``."""
    spec = {n["id"]: {"over": {"0": "d"}} for n in document["nodes"] if n["type"] == OPERATION}
    return {"name": name, "mesh": {"name": "m", "axes": axes}, "spec": spec}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help="also run the worker's job")
    args = parser.parse_args(argv)
    if not 1 <= args.repeat <= 20:
        parser.error(f"--repeat is {args.repeat}; expected 1 to 20")
    os.environ["GEON_DATA_DIR"] = tempfile.mkdtemp(prefix="geon-bench-maxima-")
    os.environ.setdefault("SECRET_KEY", "geon-bench-only")
    os.environ["DJANGO_SETTINGS_MODULE"] = "geon.settings"
    from throwaway import drop_database, throwaway_database

    server = throwaway_database("geon_bench_maxima")
    try:
        import django

        django.setup()
        run(args.repeat, args.worker)
    finally:
        drop_database(server)
    return 0


def run(repeat: int, worker: bool) -> None:
    from django.contrib.auth.models import User
    from django.core.cache import caches
    from django.core.management import call_command
    from django.test import Client

    from geon.core.collector import tune_for_documents
    from geon.graphs.services import do_create_graph
    from geon.graphs.services.plan_jobs import CACHE

    tune_for_documents()
    call_command("migrate", verbosity=0)
    user = User.objects.create_user("bench")
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)

    def plans(document: dict[str, Any], meshes: list[dict[str, int]]) -> tuple[str, list[int]]:
        graph = do_create_graph(owner=user, title="bench", document=document)
        api = f"/api/v1/graphs/{graph.pk}/plans"
        ids = []
        for n, axes in enumerate(meshes):
            body = json.dumps(rows_plan(document, f"p{n}", axes))
            made = client.post(api, body, content_type="application/json")
            if made.status_code != 201:
                raise SystemExit(f"the plan was refused: {made.content.decode()[:500]}")
            ids.append(made.json()["id"])
        return api, ids

    def timed(url: str) -> tuple[float, Any]:
        walls, answer = [], None
        for _ in range(repeat):
            caches[CACHE].clear()
            start = time.perf_counter()
            answer = client.get(url)
            walls.append(time.perf_counter() - start)
        return statistics.median(walls), answer

    normal = generate(1000, 1)
    n_api, (n_a, n_b) = plans(normal, [{"d": 8}, {"d": 4}])
    edge = maxima_document(6, 1024)
    e_api, (e_a, e_b) = plans(edge, [{"d": 1024}, {"d": 256}])
    huge = maxima_document()
    m_api, (m_a, m_b) = plans(huge, [{"d": 4096, "r": 16}, {"r": 16, "d": 4096}])
    print(f"median wall of {repeat}, the cache cleared before each; ratio to the normal request")
    print(f"{'request':<44} {'status':>6} {'ms':>9} {'bytes':>10} {'ratio':>6}")
    base: dict[str, float] = {}
    for label, kind, url in (
        ("normal cost (1,000 ops x 8 devices)", "cost", f"{n_api}/{n_a}/cost"),
        ("normal diff (8 against 4 devices)", "diff", f"{n_api}/{n_a}/diff/{n_b}"),
        ("within budget: cost (6 x 1,024 on 1,024)", "cost", f"{e_api}/{e_a}/cost"),
        ("within budget: diff (1,024 against 256)", "diff", f"{e_api}/{e_a}/diff/{e_b}"),
        ("maxima cost (65,536 devices, 20,480 apps)", "cost", f"{m_api}/{m_a}/cost"),
        ("maxima diff (65,536 devices, 2 x 20,480)", "diff", f"{m_api}/{m_a}/diff/{m_b}"),
    ):
        wall, answer = timed(url)
        base.setdefault(kind, wall)
        print(
            f"{label:<44} {answer.status_code:>6} {wall * 1e3:>9.1f} "
            f"{len(answer.content):>10,} {wall / base[kind]:>6.2f}"
        )
    if worker:
        from geon.graphs.tasks import plan_cost_job

        caches[CACHE].clear()
        for kind, url in (("cost", f"{m_api}/{m_a}/cost"), ("diff", f"{m_api}/{m_a}/diff/{m_b}")):
            queued = client.get(url)
            job = queued.json()
            start = time.perf_counter()
            plan_cost_job(_job_of(url, kind))
            spent = time.perf_counter() - start
            polled = client.get(job["location"])
            body = polled.json()
            rows = body.get("devices", [])
            stood = sum(r.get("count", 1) for r in rows)
            print(
                f"maxima {kind} in the worker: {spent:.1f} s; the poll answers "
                f"{polled.status_code}, {len(polled.content):,} bytes, {len(rows)} device rows "
                f"standing for {stood:,} devices, omitted {body.get('omitted')}"
            )


def _job_of(url: str, kind: str) -> dict[str, Any]:
    """The job the web process queued for ``url`` (as the worker receives it)."""
    from geon.graphs.models import Graph, ShardPlan
    from geon.graphs.services.plan_jobs import cost_key, diff_key
    from geon.graphs.services.plans import check_profile

    parts = url.split("/")
    graph = Graph.objects.get(pk=parts[4])
    version = graph.current_version.number
    profile = check_profile(None)
    if kind == "cost":
        plan = ShardPlan.objects.get(pk=int(parts[6]))
        key = cost_key(graph, version, plan, profile)
        return {"kind": kind, "graph": str(graph.pk), "version": version, "plans": [plan.pk],
                "profile": profile, "key": key}  # fmt: skip
    a, b = ShardPlan.objects.get(pk=int(parts[6])), ShardPlan.objects.get(pk=int(parts[8]))
    key = diff_key(graph, version, a, b, profile)
    return {"kind": kind, "graph": str(graph.pk), "version": version, "plans": [a.pk, b.pk],
            "profile": profile, "key": key}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
