"""What does the executor add per operation? (issue 5: < 30 us per op on tiny tensors)

Run: ``.venv/bin/python benchmarks/bench_overhead.py [--ops 200] [--repeat 50]``

A chain of ``--ops`` elementwise operations on 4x4 float64 tensors (cycling through
``tanh, x + c, exp, x * c, negative, sigmoid, maximum(x, c), square``, where ``c`` is a small
constant input), so the kernels cost almost nothing and the figure is the executor's own
bookkeeping. It prints, best of ``--repeat`` interleaved runs, the time per operation of:

- **raw numpy**: the same ufunc calls written out by hand (the baseline);
- **geon plan.execute**: the compiled plan, no callbacks;
- **geon plan.execute + timings + progress**: with per-op timings and a progress callback;
- **geon run()**: compile + inputs + run + copy, end to end (compiling is paid on every call).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mlp import best_of

from geon import core as gc
from geon.execute import Progress, compile_graph, run, select_backend

STEPS: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
    (lambda t, c: gc.tanh(t), lambda a, c: np.tanh(a)),
    (lambda t, c: t + c, lambda a, c: a + c),
    (lambda t, c: gc.exp(t), lambda a, c: np.exp(a)),
    (lambda t, c: t * c, lambda a, c: a * c),
    (lambda t, c: gc.negative(t), lambda a, c: np.negative(a)),
    (lambda t, c: gc.sigmoid(t), lambda a, c: 1.0 / (1.0 + np.exp(-a))),
    (lambda t, c: gc.maximum(t, c), lambda a, c: np.maximum(a, c)),
    (lambda t, c: gc.square(t), lambda a, c: np.square(a)),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args(argv)
    H, W = gc.Axis("H", 4), gc.Axis("W", 4)
    x = gc.placeholder(axes=[H, W], name="x")
    c = gc.placeholder(axes=[H, W], name="c")
    t = x
    for k in range(args.ops):
        t = STEPS[k % len(STEPS)][0](t, c)
    g = gc.graph([t])
    be = select_backend("numpy")
    plan = compile_graph(g, backend=be)
    assert len(plan.steps) == args.ops
    rng = np.random.default_rng(0)
    inp = {"x": rng.standard_normal((4, 4)) * 0.1, "c": np.full((4, 4), 0.01)}
    ids = {plan.tensors[i].label: i for i in plan.inputs}
    device = {ids[k]: v for k, v in inp.items()}

    def raw() -> Any:
        a, cc = inp["x"], inp["c"]
        with np.errstate(all="ignore"):
            for k in range(args.ops):
                a = STEPS[k % len(STEPS)][1](a, cc)
        return a.copy()

    def plain() -> Any:
        return {i: be.to_host(v) for i, v in plan.execute(device).items()}

    seen: list[Progress] = []

    def instrumented() -> Any:
        seen.clear()
        timings: dict[str, dict[str, float]] = {}
        out = plan.execute(device, timings=timings, on_progress=seen.append)
        return {i: be.to_host(v) for i, v in out.items()}

    want = raw()
    got = next(iter(plain().values()))
    err = float(np.max(np.abs(got - want)))
    fns = {
        "raw numpy ufunc calls": raw,
        "geon plan.execute": plain,
        "  + timings + progress": instrumented,
        "geon run() (compiles)": lambda: run(g, inp),
    }
    best_of(fns, 2)
    best = best_of(fns, args.repeat)
    started = time.perf_counter()
    compile_graph(g, backend=be)
    compile_s = time.perf_counter() - started
    print(
        f"{args.ops}-op chain of 4x4 float64 elementwise ops; best of {args.repeat}; "
        f"max |geon - numpy| = {err:.3g}; compile {compile_s * 1e3:.1f} ms"
    )
    print(f"{'':26} {'us/op':>8} {'vs raw':>8} {'overhead us/op':>15}")
    base = best["raw numpy ufunc calls"] / args.ops
    for name, sec in best.items():
        per = sec / args.ops
        print(f"{name:26} {per * 1e6:8.2f} {per / base:7.2f}x {(per - base) * 1e6:15.2f}")
    print("target: geon plan.execute < 30 us per op")
    return 0


if __name__ == "__main__":
    sys.exit(main())
