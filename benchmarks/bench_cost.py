"""How fast is the cost model? (issue 16: the cost of a 1,000-operation plan in < 100 ms, printed
beside the full check of the same document)

Run: ``.venv/bin/python benchmarks/bench_cost.py [--ops 1000] [--apps 8] [--repeat 5]``

Places the document of ``bench_check.py`` (``--ops`` chained n-ary ``op:add`` operations, each
sharded into ``--apps`` Applications along its first index dim) on a mesh of ``--apps`` devices,
in two layouts: ``aligned`` (shard k of every operation on device k: nothing moves) and
``rotated`` (every other operation shifted by one device: every edge moves its whole tensor, so
each operation's collective is inferred). It prints, for each, the best of ``--repeat``
interleaved runs (CPU time of this process) of ``cost_report`` on a freshly loaded graph
(``cold``) and again on the same graph (``again``: each node's own reading is remembered on the
graph's index, as after an edit that changed few nodes), beside the baseline measured in the same
run: ``check(graph)``, cold (caches cleared), on the same document. The ratio is cold cost over
check.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_check import _id, generate

from geon.core.checks import check, clear_caches
from geon.core.costmodel import cost_report, load_profile
from geon.core.graph import APPLICATION, MESH, PLACEMENT, Graph

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
    args = parser.parse_args(argv)
    profile = load_profile()
    print(f"{args.ops} operations x {args.apps} applications, placed on {args.apps} devices")
    print(
        f"{'layout':<9} {'collectives':>11} {'cold (ms)':>10} {'again (ms)':>11} "
        f"{'check (ms)':>11} {'ratio':>6}"
    )
    for layout in ("aligned", "rotated"):
        doc = placed(args.ops, args.apps, layout == "rotated")
        best_cost = best_again = best_check = float("inf")
        found = 0
        for _ in range(args.repeat):
            graph = Graph.from_json(doc)
            start = CLOCK()
            report = cost_report(graph, profile)
            best_cost = min(best_cost, CLOCK() - start)
            found = len(report["collectives"])
            start = CLOCK()
            cost_report(graph, profile)
            best_again = min(best_again, CLOCK() - start)
            graph = Graph.from_json(doc)
            clear_caches()
            start = CLOCK()
            check(graph)
            best_check = min(best_check, CLOCK() - start)
        print(
            f"{layout:<9} {found:>11} {best_cost * 1e3:>10.1f} {best_again * 1e3:>11.1f} "
            f"{best_check * 1e3:>11.1f} "
            f"{best_cost / best_check:>6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
