"""How much memory does the planner save? (issue 5: a 50-op chain plans within 1.1x of its
largest live set and >= 3x below one buffer per tensor)

Run: ``.venv/bin/python benchmarks/bench_memory.py [--ops 50] [--n 512]``

A chain of ``--ops`` operations on ``n x n`` float64 tensors that is not just elementwise: every
fifth op is a named dot with a weight (a new buffer: it cannot run in place), and every fifth an
addition of a skip connection from three operations back (so two buffers are live at once),
with unary ops in between. It prints the memory plan's figures next to their baselines — the
largest set of tensors live at one step (a lower bound for any plan) and the naive total (one
buffer per tensor) — and, measured with ``tracemalloc`` in the same run, the peak of the arrays
NumPy allocates during one run of the plan (arena on the first run) next to the same chain
hand-written in NumPy.
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from geon import core as gc
from geon.execute import compile_graph


def build(ops: int, n: int) -> tuple[gc.Tensor, dict[str, np.ndarray], Callable[[], Any]]:
    A, B = gc.Axis("A", n), gc.Axis("B", n)
    rng = np.random.default_rng(0)
    x = gc.placeholder(axes=[A, B], name="x")
    inputs: dict[str, np.ndarray] = {"x": rng.standard_normal((n, n)) / n}
    plan: list[tuple[str, Any]] = []
    t = x
    history = [t]
    for k in range(ops):
        kind = k % 5
        if kind == 0:
            name = f"w{k}"
            w = gc.placeholder(axes=[B + 1, B], name=name)
            inputs[name] = rng.standard_normal((n, n)) / n
            t = gc.dot(t, w)
            plan.append(("dot", name))
        elif kind == 2 and len(history) >= 3:
            t = t + history[-3]
            plan.append(("skip", None))
        elif kind in (1, 3):
            t = gc.tanh(t)
            plan.append(("tanh", None))
        else:
            t = gc.square(t)
            plan.append(("square", None))
        history.append(t)

    def numpy_chain() -> Any:
        h = [inputs["x"]]
        a = h[0]
        for kind, name in plan:
            if kind == "dot":
                a = a @ inputs[name]
            elif kind == "skip":
                a = a + h[-3]
            elif kind == "tanh":
                a = np.tanh(a)
            else:
                a = np.square(a)
            h.append(a)
            h = h[-3:]
        return a

    return t, inputs, numpy_chain


def traced_peak(fn: Callable[[], Any]) -> tuple[int, Any]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=50)
    parser.add_argument("--n", type=int, default=512)
    args = parser.parse_args(argv)
    out, inputs, numpy_chain = build(args.ops, args.n)
    g = gc.graph([out])
    plan = compile_graph(g)
    assert len(plan.steps) == args.ops
    ids = {plan.tensors[t].label: t for t in plan.inputs}
    device = {ids[k]: v for k, v in inputs.items()}
    mem = plan.memory
    first, got = traced_peak(lambda: next(iter(plan.execute(device).values())).copy())
    again, _ = traced_peak(lambda: next(iter(plan.execute(device).values())).copy())
    hand, want = traced_peak(numpy_chain)
    err = float(np.max(np.abs(got - want)))
    mib = 2**20
    print(
        f"{args.ops}-op chain on {args.n}x{args.n} float64 (dots, skips, unary ops); "
        f"{len(mem.slots)} arena slots, {len(mem.inplace)} ops in place; "
        f"max |geon - numpy| = {err:.3g}"
    )
    print(f"{'':44} {'MiB':>9} {'ratio':>8}")
    rows = [
        ("planned peak (arena)", mem.planned_peak_bytes, None),
        ("largest live set (lower bound)", mem.largest_live_bytes, mem.planned_peak_bytes),
        ("naive total (one buffer per tensor)", mem.naive_bytes, mem.planned_peak_bytes),
        ("measured: first run (allocates the arena)", first, mem.planned_peak_bytes),
        ("measured: later runs (arena reused)", again, mem.planned_peak_bytes),
        ("measured: the chain hand-written in numpy", hand, mem.planned_peak_bytes),
    ]
    for name, value, ref in rows:
        ratio = f"{value / ref:7.2f}x" if ref else ""
        print(f"{name:44} {value / mib:9.2f} {ratio:>8}")
    print(
        f"planned / largest live = {mem.planned_peak_bytes / mem.largest_live_bytes:.3f} "
        f"(target <= 1.1); naive / planned = {mem.naive_bytes / mem.planned_peak_bytes:.2f} "
        "(target >= 3)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
