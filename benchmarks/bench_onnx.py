"""geon's executor vs onnxruntime on imported models, and import times (issue #20).

Run: ``.venv/bin/python benchmarks/bench_onnx.py [--repeat 20] [--layers 12]``

Prints, for the PyTorch MLP and TransformerEncoderLayer of tests/interop/models (batch 64 for
the MLP, 8 x 10 tokens for the encoder): the best-of-``--repeat`` time of one forward pass in
onnxruntime (CPU, one session, inputs already on the host) and in geon's executor (a compiled
plan run again: :func:`geon.execute.plan.compile_graph` once, :func:`run_compiled` per pass),
and their ratio (aim: <= 1.5x). Then the import time (``import_onnx``: shape inference, folding,
unification, building the document) of the encoder layer and of a stack of ``--layers`` copies
of it chained with ``onnx.compose`` (aim: < 2 s for 12; issue #34: linear, < 3 s for
``--layers 96``, 16,128 ONNX nodes; docs/performance.md).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

MODELS = Path(__file__).resolve().parent.parent / "tests" / "interop" / "models"


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _stack(model: Any, layers: int) -> Any:
    import onnx
    from onnx import compose

    out = compose.add_prefix(model, "layers.0/")
    for i in range(1, layers):
        nxt = compose.add_prefix(model, f"layers.{i}/")
        prev_out = out.graph.output[0].name
        out = compose.merge_models(out, nxt, io_map=[(prev_out, f"layers.{i}/x")])
    onnx.checker.check_model(out)
    return out


def _compare(name: str, shape: tuple[int, ...], repeat: int) -> None:
    import onnx
    import onnxruntime as ort

    from geon.execute import run_compiled
    from geon.execute.plan import compile_graph
    from geon.interop.onnx_import import import_onnx

    model = onnx.load(MODELS / f"{name}.onnx")
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    t_ort = _best(lambda: session.run(None, {"x": x}), repeat)
    imp = import_onnx(model, dims={"batch": shape[0]})
    plan = compile_graph(imp.graph)
    feeds = {"x": x, **imp.weights}
    got = run_compiled(plan, None, feeds).by_key()["y"]
    want = session.run(None, {"x": x})[0]
    diff = float(np.max(np.abs(got - want)))
    t_geon = _best(lambda: run_compiled(plan, None, feeds), repeat)
    print(
        f"{name:8s} {shape!s:14s} onnxruntime {t_ort * 1e3:8.3f} ms  geon {t_geon * 1e3:8.3f} ms"
        f"  ratio {t_geon / t_ort:6.2f}x  max abs diff {diff:.2e}"
    )


def main() -> None:
    """Print the comparison and the import times."""
    import onnx

    from geon.interop.onnx_import import import_onnx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--layers", type=int, default=12)
    args = parser.parse_args()
    if not 1 <= args.repeat <= 1000 or not 1 <= args.layers <= 96:
        parser.error("--repeat must be 1..1000 and --layers 1..96")
    _compare("mlp", (64, 16), args.repeat)
    _compare("encoder", (8, 10, 32), args.repeat)
    encoder = onnx.load(MODELS / "encoder.onnx")
    t = _best(lambda: import_onnx(encoder, dims={"batch": 8}), 3)
    print(f"import encoder layer          {t * 1e3:8.1f} ms")
    stack = _stack(encoder, args.layers)
    t0 = time.perf_counter()
    imp = import_onnx(stack, dims={"batch": 8})
    t = time.perf_counter() - t0
    ops = sum(1 for n in imp.graph.nodes if n.type.endswith("/Operation"))
    print(f"import {args.layers}-layer stack ({len(stack.graph.node)} ONNX nodes, {ops} geon ops) "
          f"{t * 1e3:8.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
