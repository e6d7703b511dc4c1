"""Render a generated 300-node document to SVG, next to Graphviz's own ``dot`` layout of the
same DOT text measured in the same run.

    .venv/bin/python benchmarks/bench_render.py [--nodes 300] [--repeat 5]

The document is a chain of named elementwise operations (``relu(x_i * w_i + b_i)`` over axes
``H, W``), every operation sharded into two Applications over ``H``, so it has tensors,
operations, applications and axis declarations, as a real sharded graph does (a few notes pad
it to exactly ``--nodes``). The rows:

- ``to_dot``: geon builds the DOT text (pure Python);
- ``render svg``: ``geon.render.render(graph, "svg")``: the DOT text, then layout and drawing;
- ``dot layout (baseline)``: ``pygraphviz.AGraph(string=text).layout(prog="dot")`` on the same
  text: what Graphviz's ``dot`` engine alone costs;
- ``dot layout + svg``: the same, drawn to SVG by Graphviz (``draw(format="svg", prog="dot")``).

Each is the median of ``--repeat`` runs, taken round-robin; the ratio is to the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Callable

import pygraphviz

import geon.core as gc
from geon.core.graph import NOTE, OPERATION, Graph
from geon.core.plans.shards import shard
from geon.render import render, to_dot

STEP_NODES = 14
"""Nodes one step of the chain adds: 2 inputs, 3 operations, their 3 results, 6 applications."""


def document(target: int) -> Graph:
    """A chain of sharded named elementwise ops, padded with notes to exactly ``target`` nodes."""
    H, W = gc.Axis("H", 8), gc.Axis("W", 16)
    x = gc.placeholder(axes=[H, W], name="x")
    for step in range(max((target - 3) // STEP_NODES, 1)):
        w = gc.placeholder(axes=[H, W], name=f"w{step}")
        b = gc.placeholder(axes=[W], name=f"b{step}")
        z = gc.add(gc.multiply(x, w, name=f"xw{step}"), b, name=f"z{step}")
        x = gc.relu(z, name=f"a{step}")
    graph = gc.graph([x])
    for op in graph.of_type(OPERATION):
        shard(graph, op.id, dim="H", parts=2)
    for n in range(target - len(graph)):
        graph.add_node({"id": str(uuid.UUID(int=n + 1)), "type": NOTE, "body": {"message": "pad"}})
    return graph


def medians_ms(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """The median time of each function, run round-robin so that drift hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) * 1000 for name, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=300, help="document size (default 300)")
    parser.add_argument("--repeat", type=int, default=7, help="runs per row (default 7)")
    args = parser.parse_args()

    graph = document(args.nodes)
    issues = graph.check()
    text = to_dot(graph, issues)
    svg = render(graph, "svg", issues)  # warm-up, and the size for the header
    print(
        f"document: {len(graph)} nodes ({len(graph.of_type(OPERATION))} operations), "
        f"{len(issues)} issues; DOT {len(text):,} characters; SVG {len(svg):,} bytes"
    )

    def baseline() -> None:
        pygraphviz.AGraph(string=text).layout(prog="dot")

    def baseline_svg() -> None:
        pygraphviz.AGraph(string=text).draw(format="svg", prog="dot")

    rows = list(
        medians_ms(
            {
                "dot layout (baseline)": baseline,
                "dot layout + svg": baseline_svg,
                "to_dot": lambda: to_dot(graph, issues),
                "render svg": lambda: render(graph, "svg", issues),
            },
            args.repeat,
        ).items()
    )
    base = rows[0][1]
    width = max(len(name) for name, _ in rows)
    print(f"{'step':<{width}}  {'median ms':>10}  {'ratio':>6}")
    for name, ms in rows:
        print(f"{name:<{width}}  {ms:>10.1f}  {ms / base:>6.2f}")


if __name__ == "__main__":
    main()
