"""What carrying the current plan's collectives costs an edit (issue 16: the editor's edge labels
follow an ``applied`` within one animation frame, so the ``applied`` carries them).

Run: ``.venv/bin/python benchmarks/bench_live_cost.py [--repeat 20]``

For each document it stores the graph (a throw-away SQLite database, or a new database on the
PostgreSQL server ``DATABASE_URL`` names), saves and generates a plan, then times one small edit
(a tensor relabelled: stored as a version, checked incrementally, ``applied`` published on the
in-memory channel layer) through :func:`geon.graphs.services.do_apply_edit`, alternately with
``GEON_LIVE_COST_MAX_APPLICATIONS`` at 0 (the baseline: no ``planCost``) and above the
document's Applications (the ``applied`` carries its collectives under every shipped profile).
After each edit it asks the plan's REST cost (``GET .../plans/<id>/cost``, Django's test
client), as the editor does for its ledger. It prints the median wall time of each (``bare``:
the baseline, ``+plan``: with ``planCost``; the REST cost then reuses the plan tried for it),
their ratio, and when the labels are known: before, after the edit and then the REST cost; now,
with the edit's ``applied``. All are measured in the same run. Documents: the gallery's
transformer block under Megatron's plan, and ``bench_check``'s chains of additions split by rows
over 4 and 8 devices.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    if not 1 <= args.repeat <= 200:
        parser.error(f"--repeat is {args.repeat}; expected 1 to 200")
    os.environ["GEON_DATA_DIR"] = tempfile.mkdtemp(prefix="geon-bench-live-cost-")
    os.environ.setdefault("SECRET_KEY", "geon-bench-only")
    os.environ["DJANGO_SETTINGS_MODULE"] = "geon.settings"
    os.environ.pop("REDIS_URL", None)  # the in-memory channel layer: no network in the figure
    from throwaway import drop_database, throwaway_database

    server = throwaway_database("geon_bench_live_cost")
    try:
        import django

        django.setup()
        from django.core.management import call_command

        from geon.core.collector import tune_for_documents

        call_command("migrate", verbosity=0)
        tune_for_documents()
        print(HEADER, end="")
        for name, document, plan in documents():
            measure(name, document, plan, args.repeat)
    finally:
        drop_database(server)
    return 0


HEADER = """\
                                         edit (ms)          REST cost (ms)   labels at (ms)
document                           apps   bare  +plan ratio    bare  +plan   before     now
"""


def documents() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, document, REST ShardPlan) of each measured document."""
    from bench_check import generate

    from geon.core.graph import OPERATION
    from geon.examples.transformer import PLANS, transformer_block

    found = [("transformer block, Megatron", transformer_block().to_json(), PLANS[1])]
    for ops, devices in ((8, 4), (16, 8), (32, 8)):
        document = generate(ops, 1)
        spec = {n["id"]: {"over": {"0": "d"}} for n in document["nodes"] if n["type"] == OPERATION}
        plan = {"name": "rows", "mesh": {"name": "m", "axes": {"d": devices}}, "spec": spec}
        found.append((f"{ops} additions by rows over {devices}", document, plan))
    return found


def measure(name: str, document: dict[str, Any], plan: dict[str, Any], repeat: int) -> None:
    from django.contrib.auth.models import User
    from django.test import Client, override_settings

    from geon.core.graph import APPLICATION, TENSOR
    from geon.graphs.services import do_apply_edit, do_create_graph, do_generate_plan
    from geon.graphs.services import do_save_plan as save

    user, _ = User.objects.get_or_create(username="bench")
    graph = do_create_graph(owner=user, title=name, document=document)
    fields = (plan["name"], plan["mesh"], plan.get("spec", {}), None)
    saved = save(
        user, graph, *fields, axis_mapping=plan.get("axisMapping"), inputs=plan.get("inputs")
    )
    applied, _ = do_generate_plan(user, graph.pk, saved.pk, 1)
    apps = sum(op["node"]["type"] == APPLICATION for op in applied.ops if op["op"] == "add_node")
    tensor = next(n["id"] for n in document["nodes"] if n["type"] == TENSOR)
    version = applied.version
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    url = f"/api/v1/graphs/{graph.pk}/plans/{saved.pk}/cost"
    edits: dict[int, list[float]] = {0: [], apps: []}
    costs: dict[int, list[float]] = {0: [], apps: []}
    for n in range(repeat):
        for bound in (0, apps) if n % 2 == 0 else (apps, 0):
            with override_settings(GEON_LIVE_COST_MAX_APPLICATIONS=bound):
                ops = [{"op": "update_node", "id": tensor, "label": f"t{version}"}]
                start = time.perf_counter()
                done = do_apply_edit(user, graph.pk, version, ops)
                edits[bound].append(time.perf_counter() - start)
                version = done.version
                start = time.perf_counter()
                answer = client.get(url)
                costs[bound].append(time.perf_counter() - start)
                if answer.status_code != 200:
                    raise SystemExit(f"the cost was refused: {answer.content.decode()[:500]}")
    base, live = statistics.median(edits[0]), statistics.median(edits[apps])
    rest, cached = statistics.median(costs[0]), statistics.median(costs[apps])
    print(
        f"{name:<34} {apps:>4} {base * 1e3:>6.1f} {live * 1e3:>7.1f} {live / base:>5.2f} "
        f"{rest * 1e3:>7.1f} {cached * 1e3:>7.1f} {(base + rest) * 1e3:>8.1f} {live * 1e3:>7.1f}"
    )


if __name__ == "__main__":
    sys.exit(main())
