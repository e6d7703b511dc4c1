"""How fast is the executor on a named-axes MLP? (issue 5: <= 1.10x NumPy, <= 1.25x PyTorch CPU)

Run: ``.venv/bin/python benchmarks/bench_mlp.py [--batch 512] [--repeat 7] [--backend numpy]``

The graph: batch 512, widths 1024 -> 4096 -> 4096 -> 1024, float32, three dense layers
``relu(dot(x, W) + b)`` (no relu on the last), written with named axes (``x: (B, In)``,
``W1: (In+1, H1)``...; each dot pairs an axis with its dual) — 8 operations. It prints, each next
to its baselines measured in the same process, the best of ``--repeat`` interleaved runs (the
machine is shared) of:

- **geon**: the compiled plan (compiled once, arena reused) run on the inputs, outputs copied
  to the host (results always leave as copies);
- **geon run()**: :func:`geon.execute.run` end to end (compile, inputs, run, copy);
- **numpy**: the same computation hand-written, ``np.maximum(x @ W1 + b1, 0)``...;
- **torch**: the same in PyTorch CPU eager mode under ``torch.inference_mode()`` — or a line
  saying PyTorch is not installed (``pip install geon[bench]``; never a runtime dependency);
- with ``--backend cupy``, also **cupy**: the same hand-written on the GPU with the inputs already
  there, the result copied to the host as geon's is — the baseline for the compiled plan there.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from geon import core as gc
from geon.core.graph import Graph
from geon.execute import compile_graph, run, select_backend

WIDTHS = (1024, 4096, 4096, 1024)


def build_mlp(batch: int, widths: tuple[int, ...] = WIDTHS) -> tuple[Graph, gc.Tensor]:
    """The named-axes MLP; placeholders are named x, w1, b1, w2, b2, ..."""
    B = gc.Axis("B", batch)
    axes = [gc.Axis(f"F{i}", n) for i, n in enumerate(widths)]
    h = gc.placeholder(axes=[B, axes[0]], name="x", dtype="float32")
    layers = len(widths) - 1
    for i in range(layers):
        w = gc.placeholder(axes=[axes[i] + 1, axes[i + 1]], name=f"w{i + 1}", dtype="float32")
        b = gc.placeholder(axes=[axes[i + 1]], name=f"b{i + 1}", dtype="float32")
        h = gc.dot(h, w) + b
        if i < layers - 1:
            h = gc.relu(h)
    return gc.graph([h]), h


def mlp_inputs(batch: int, widths: tuple[int, ...] = WIDTHS) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    out = {"x": rng.standard_normal((batch, widths[0]), dtype=np.float32)}
    for i in range(len(widths) - 1):
        scale = np.float32(1 / np.sqrt(widths[i]))
        out[f"w{i + 1}"] = rng.standard_normal((widths[i], widths[i + 1]), dtype=np.float32) * scale
        out[f"b{i + 1}"] = rng.standard_normal(widths[i + 1], dtype=np.float32)
    return out


def numpy_mlp(inp: dict[str, np.ndarray]) -> np.ndarray:
    layers = sum(1 for k in inp if k.startswith("w"))
    h = inp["x"]
    for i in range(1, layers + 1):
        h = h @ inp[f"w{i}"] + inp[f"b{i}"]
        if i < layers:
            h = np.maximum(h, 0)
    return h


def device_mlp(be: Any, device: dict[str, Any]) -> Callable[[], np.ndarray]:
    """The hand-written MLP in the backend's own library on arrays already on its device; the
    result is copied to the host, as geon's results are."""
    nat = be.native
    layers = sum(1 for k in device if k.startswith("w"))

    def go() -> np.ndarray:
        h = device["x"]
        for i in range(1, layers + 1):
            h = h @ device[f"w{i}"] + device[f"b{i}"]
            if i < layers:
                h = nat.maximum(h, 0)
        return be.to_host(h)

    return go


def torch_mlp(inp: dict[str, np.ndarray]) -> Callable[[], Any] | str:
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed (pip install 'geon[bench]' or torch==2.13.0)"
    t = {k: torch.from_numpy(v) for k, v in inp.items()}
    layers = sum(1 for k in inp if k.startswith("w"))

    def go() -> Any:
        with torch.inference_mode():
            h = t["x"]
            for i in range(1, layers + 1):
                h = h @ t[f"w{i}"] + t[f"b{i}"]
                if i < layers:
                    h = torch.relu(h)
            return h.numpy().copy()

    return go


def best_of(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best wall time of each function over ``repeat`` interleaved rounds."""
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            began = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - began)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--backend", default="numpy")
    args = parser.parse_args(argv)
    g, out = build_mlp(args.batch)
    inp = mlp_inputs(args.batch)
    be = select_backend(args.backend)
    plan = compile_graph(g, backend=be)
    ids = {plan.tensors[t].label: t for t in plan.inputs}
    device = {ids[k]: be.asarray(v) for k, v in inp.items()}

    def geon_plan() -> Any:
        values = plan.execute(device)
        return {t: be.to_host(v) for t, v in values.items()}

    want = numpy_mlp(inp)
    got = next(iter(geon_plan().values()))
    err = float(np.max(np.abs(got - want)))
    fns: dict[str, Callable[[], Any]] = {
        "geon (compiled plan)": geon_plan,
        "geon run() end to end": lambda: run(g, inp, backend=be),
        "numpy hand-written": lambda: numpy_mlp(inp),
    }
    if be.name == "cupy":
        fns["cupy hand-written"] = device_mlp(be, {k: be.asarray(v) for k, v in inp.items()})
    torch_fn = torch_mlp(inp)
    if callable(torch_fn):
        fns["torch CPU eager"] = torch_fn
        terr = float(np.max(np.abs(torch_fn() - want)))
    best_of(fns, 1)  # warm up
    best = best_of(fns, args.repeat)
    flops = 2 * args.batch * sum(a * b for a, b in itertools.pairwise(WIDTHS))
    print(
        f"named-axes MLP: batch {args.batch}, widths {'-'.join(map(str, WIDTHS))}, float32, "
        f"{len(plan.steps)} ops, backend {be.name}; best of {args.repeat}"
    )
    print(
        f"max |geon - numpy| = {err:.3g}"
        + (f", max |torch - numpy| = {terr:.3g}" if callable(torch_fn) else "")
    )
    print(f"{'':24} {'ms':>9} {'GFLOP/s':>8} {'vs numpy':>9} {'vs torch':>9}")
    for name, t in best.items():
        vs_np = t / best["numpy hand-written"]
        vs_t = f"{t / best['torch CPU eager']:8.3f}x" if "torch CPU eager" in best else "      n/a"
        print(f"{name:24} {t * 1e3:9.2f} {flops / t / 1e9:8.1f} {vs_np:8.3f}x {vs_t}")
    print(
        f"planned peak {plan.memory.planned_peak_bytes / 2**20:.1f} MiB, naive "
        f"{plan.memory.naive_bytes / 2**20:.1f} MiB"
    )
    if not callable(torch_fn):
        print(f"torch: {torch_fn}")
    if "cupy hand-written" in best:
        ratio = best["geon (compiled plan)"] / best["cupy hand-written"]
        print(f"geon (compiled plan) vs cupy hand-written on the GPU: {ratio:.3f}x")
    print("targets: geon (compiled plan) <= 1.10x numpy, <= 1.25x torch")
    del out
    return 0


if __name__ == "__main__":
    sys.exit(main())
