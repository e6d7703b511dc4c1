"""How fast is the cost model? (issue 16: the cost of a 1,000-operation plan in < 100 ms, printed
beside the full check of the same document)

Run: ``.venv/bin/python benchmarks/bench_cost.py [--ops 1000] [--apps 8] [--repeat 5] [--rest]``

Places the document of ``bench_check.py`` (``--ops`` chained n-ary ``op:add`` operations, each
sharded into ``--apps`` Applications along its first index dim) on a mesh of ``--apps`` devices,
in two layouts: ``aligned`` (shard k of every operation on device k: nothing moves) and
``rotated`` (every other operation shifted by one device: every edge moves its whole tensor, so
each operation's collective is inferred). It prints, for each, the best of ``--repeat``
interleaved runs (CPU time of this process) of ``cost_report`` on a freshly loaded graph,
beside the baseline measured in the same run: ``check(graph)``, cold (caches cleared), on the
same document, and ``json.loads`` of the document's text. The process's collector is tuned
first, as the server's and the CLI's are (:func:`geon.core.collector.tune_for_documents`). The
ratios are the cost over check and over ``json.loads``.

``--rest`` also times ``GET /api/v1/graphs/<id>/plans/<id>/cost`` (Django's test client, a
throw-away SQLite database, or a new database on the PostgreSQL server ``DATABASE_URL`` names)
on the same document stored unsharded with a plan splitting every operation by rows over the
``--apps`` devices: the endpoint loads the stored document, writes the plan into a copy, counts
the bytes per device and between devices (:mod:`geon.core.plans.cost.cells`) and runs
``cost_report``. Its wall time (median of ``--repeat``; it includes the database and the plan's
generation) is printed beside ``cost_report`` of the plan's document in the same run; then the
plan is generated (the document holds it, as after a switch) and the same request is timed again.
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

from geon.core.checks import check, clear_caches
from geon.core.collector import tune_for_documents
from geon.core.graph import APPLICATION, MESH, PLACEMENT, Graph
from geon.core.plans.cost import cost_report, load_profile

CLOCK = time.process_time
MESH_ID = _id(10**8)


def placed(ops: int, apps: int, rotated: bool) -> dict[str, Any]:
    """bench_check's document with every Application placed on a mesh of ``apps`` devices."""
    doc = generate(ops, apps)
    seen: dict[str, int] = {}
    for node in doc["nodes"]:
        if node["type"] == APPLICATION:
            op = node["body"]["operationId"]
            k = seen[op] = seen.get(op, -1) + 1
            shift = 1 if rotated and len(seen) % 2 == 0 else 0
            node["tags"][PLACEMENT] = {"mesh": MESH_ID, "coords": [(k + shift) % apps]}
    doc["nodes"].append({"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"d": apps}}})
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--apps", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rest", action="store_true", help="also time the REST cost endpoint")
    args = parser.parse_args(argv)
    for name, value, most in (("--ops", args.ops, 20_000), ("--apps", args.apps, 64)):
        if not 1 <= value <= most:
            parser.error(f"{name} is {value}; expected 1 to {most}")
    if not 1 <= args.repeat <= 100:
        parser.error(f"--repeat is {args.repeat}; expected 1 to 100")
    tune_for_documents()  # as the server's and the CLI's processes are (geon.core.collector)
    profile = load_profile()
    print(f"{args.ops} operations x {args.apps} applications, placed on {args.apps} devices")
    print(
        f"{'layout':<9} {'collectives':>11} {'cost (ms)':>10} "
        f"{'check (ms)':>11} {'ratio':>6} {'loads (ms)':>11} {'ratio':>6}"
    )
    for layout in ("aligned", "rotated"):
        doc = placed(args.ops, args.apps, layout == "rotated")
        text = json.dumps(doc, indent=2)
        best_cost = best_check = best_loads = float("inf")
        found = 0
        for _ in range(args.repeat):
            graph = Graph.from_json(doc)
            start = CLOCK()
            report = cost_report(graph, profile)
            best_cost = min(best_cost, CLOCK() - start)
            found = len(report["collectives"])
            graph = Graph.from_json(doc)
            clear_caches()
            start = CLOCK()
            check(graph)
            best_check = min(best_check, CLOCK() - start)
            start = CLOCK()
            json.loads(text)
            best_loads = min(best_loads, CLOCK() - start)
        print(
            f"{layout:<9} {found:>11} {best_cost * 1e3:>10.1f} "
            f"{best_check * 1e3:>11.1f} {best_cost / best_check:>6.2f} "
            f"{best_loads * 1e3:>11.1f} {best_cost / best_loads:>6.2f}"
        )
    if args.rest:
        rest(args.ops, args.apps, args.repeat, profile)
    return 0


def rest(ops: int, apps: int, repeat: int, profile: Any) -> None:
    """Time the REST cost endpoint against ``cost_report`` of the plan's document (see the
    module docstring)."""
    os.environ["GEON_DATA_DIR"] = tempfile.mkdtemp(prefix="geon-bench-cost-")
    os.environ.setdefault("SECRET_KEY", "geon-bench-only")
    os.environ["DJANGO_SETTINGS_MODULE"] = "geon.settings"
    from throwaway import drop_database, throwaway_database

    server = throwaway_database("geon_bench_cost")
    try:
        import django

        django.setup()
        from django.contrib.auth.models import User
        from django.core.management import call_command
        from django.test import Client

        from geon.core.graph import OPERATION
        from geon.core.plans import apply_plan
        from geon.graphs.services import do_create_graph
        from geon.graphs.services.plan_trials import core_plan, mesh_id_of
        from geon.graphs.services.plans import plan_of

        call_command("migrate", verbosity=0)
        user = User.objects.create_user("bench")
        document = generate(ops, 1)
        stored = do_create_graph(owner=user, title="bench", document=document)
        client = Client(HTTP_HOST="localhost")
        client.force_login(user)
        spec = {n["id"]: {"over": {"0": "d"}} for n in document["nodes"] if n["type"] == OPERATION}
        body = {"name": "rows", "mesh": {"name": "m", "axes": {"d": apps}}, "spec": spec}
        api = f"/api/v1/graphs/{stored.pk}/plans"
        made = client.post(api, json.dumps(body), content_type="application/json")
        if made.status_code != 201:
            raise SystemExit(f"the plan was refused: {made.content.decode()[:500]}")
        url = f"{api}/{made.json()['id']}/cost"
        walls, costs = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            answer = client.get(url)
            walls.append(time.perf_counter() - start)
            if answer.status_code != 200:
                raise SystemExit(f"the cost was refused: {answer.content.decode()[:500]}")
            plan = plan_of(stored, made.json()["id"])
            trial = apply_plan(Graph.from_json(document), core_plan(plan), mesh_id=mesh_id_of(plan))
            start = time.perf_counter()
            cost_report(trial, profile)
            costs.append(time.perf_counter() - start)
        wall, cost = statistics.median(walls), statistics.median(costs)
        print(
            f"REST GET .../plans/<id>/cost, {ops} operations split by rows over {apps} devices: "
            f"{wall * 1e3:.1f} ms (median wall of {repeat}); cost_report of the plan's document "
            f"{cost * 1e3:.1f} ms, ratio {wall / cost:.2f}"
        )
        # the plan written into the document, as a switch does: its cost is the document's own
        made_id = made.json()["id"]
        generated = client.post(
            f"{api}/{made_id}/generate", json.dumps({"baseVersion": 1}), "application/json"
        )
        if generated.status_code != 200:
            raise SystemExit(f"the plan was not generated: {generated.content.decode()[:500]}")
        held = []
        for _ in range(repeat):
            start = time.perf_counter()
            client.get(url)
            held.append(time.perf_counter() - start)
        print(
            f"the same, once the document holds the plan: first {held[0] * 1e3:.1f} ms, then "
            f"{statistics.median(held[1:] or held) * 1e3:.1f} ms (median); ratio of the first to "
            f"cost_report {held[0] / cost:.2f}"
        )
    finally:
        drop_database(server)


if __name__ == "__main__":
    sys.exit(main())
