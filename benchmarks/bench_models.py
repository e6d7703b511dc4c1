"""geon's compiled executor beside onnxruntime and PyTorch eager on models of realistic size
(issue #34).

Run (OpenBLAS at its native kernels: unset the work-around variables in this command only)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/bench_models.py

Exports three PyTorch models (opset 17, float32, the TorchScript exporter, seeded weights) into
a temporary folder, imports each with :func:`geon.interop.onnx_import.import_onnx`, compiles it
once (:func:`geon.execute.plan.compile_graph`) and times one forward pass (best of
``--repeat``, the three interleaved, each after ``--settle`` seconds of rest) in the same
process, on the same input: onnxruntime (CPU, one session), PyTorch eager
(``torch.inference_mode``) and geon (:func:`geon.execute.run_compiled`). Prints the times,
geon's ratio to each, and geon's max abs diff to onnxruntime. Goal: <= 1.2x onnxruntime and
<= 1.0x PyTorch eager on each.

- ``encoder``: a 4-layer ``nn.TransformerEncoder`` (d_model 256, 8 heads, feed-forward 1024,
  GELU, batch_first), 8 x 128 tokens;
- ``cnn``: Conv(3->32, 3x3) - ReLU - MaxPool 2 - Conv(32->64, 3x3) - ReLU - MaxPool 2 -
  Flatten - Linear(4096 -> 10), 32 x 3 x 32 x 32;
- ``mlp``: Linear 1024-4096-4096-1024 with ReLUs, batch 512.
"""

from __future__ import annotations

import argparse
import datetime
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

SETTLE = 0.05
"""Seconds of rest before each timed call (``--settle``): onnxruntime's and PyTorch's pool
threads spin for a while after a call returns, and on 2 cores they took the CPU from whichever
library ran next (geon's CNN, measured right after onnxruntime: 45-54 ms; alone 10-12 ms; after
onnxruntime with its spinning off, 7-16 ms). A rest lets every pool go idle, for all three."""


def _best(fns: list[Any], repeat: int, settle: float = SETTLE) -> list[float]:
    """The best of ``repeat`` times of each of ``fns``, run interleaved (one of each per round),
    so a busy moment of the shared machine slows all of them alike, each after ``settle``
    seconds of rest."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            time.sleep(settle)
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def _models() -> dict[str, tuple[Any, tuple[int, ...]]]:
    import torch
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layer = nn.TransformerEncoderLayer(
                d_model=256, nhead=8, dim_feedforward=1024, dropout=0.0, activation="gelu",
                batch_first=True,
            )  # fmt: skip
            self.enc = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.enc(x, is_causal=False)

    torch.manual_seed(0)
    cnn = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 10),
    )  # fmt: skip
    mlp = nn.Sequential(
        nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
        nn.Linear(4096, 1024),
    )  # fmt: skip
    return {
        "encoder": (Encoder(), (8, 128, 256)),
        "cnn": (cnn, (32, 3, 32, 32)),
        "mlp": (mlp, (512, 1024)),
    }


def _one(
    name: str, module: Any, shape: tuple[int, ...], folder: Path, repeat: int, settle: float
) -> None:
    import onnx
    import onnxruntime as ort
    import torch

    from geon.execute import run_compiled
    from geon.execute.plan import compile_graph
    from geon.interop.onnx_import import import_onnx

    module.eval()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    xt = torch.from_numpy(x)
    path = folder / f"{name}.onnx"
    # exported with gradients on: under no_grad the encoder takes its fused fast path
    # (aten::_transformer_encoder_layer_fwd), which has no ONNX export
    torch.onnx.export(
        module, (xt,), str(path), input_names=["x"], output_names=["y"],
        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17,
        dynamo=False,
    )  # fmt: skip
    model = onnx.load(path)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]

    def eager() -> Any:
        with torch.inference_mode():
            return module(xt)

    t0 = time.perf_counter()
    imp = import_onnx(model, dims={"batch": shape[0]})
    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    plan = compile_graph(imp.graph)
    t_compile = time.perf_counter() - t0
    feeds = {"x": x, **imp.weights}
    got = run_compiled(plan, None, feeds).by_key()["y"]
    diff = float(np.max(np.abs(got - want)))
    t_ort, t_torch, t_geon = _best(
        [
            lambda: session.run(None, {"x": x}),
            eager,
            lambda: run_compiled(plan, None, feeds),
        ],
        repeat,
        settle,
    )
    print(
        f"{name:8s} {'x'.join(map(str, shape)):13s} onnxruntime {t_ort * 1e3:8.2f} ms"
        f"  torch {t_torch * 1e3:8.2f} ms  geon {t_geon * 1e3:8.2f} ms"
        f"  geon/ort {t_geon / t_ort:5.2f}x  geon/torch {t_geon / t_torch:5.2f}x"
        f"  max abs diff {diff:.2e}  (import {t_import:.2f} s, compile {t_compile:.2f} s)",
        flush=True,
    )


def main() -> None:
    """Export, import, compile and time the three models; print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["encoder", "cnn", "mlp"], action="append")
    parser.add_argument(
        "--settle", type=float, default=SETTLE, help="seconds of rest before each timed call"
    )
    args = parser.parse_args()
    from threadpoolctl import threadpool_info

    blas = [
        f"{i['internal_api']} {i.get('architecture')} x{i['num_threads']}"
        for i in threadpool_info()
        if i["user_api"] == "blas"
    ]
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC  BLAS: {', '.join(blas)}"
        f"  rest before each call: {args.settle:g} s"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, (module, shape) in _models().items():
            if args.only and name not in args.only:
                continue
            _one(name, module, shape, Path(tmp), args.repeat, args.settle)


if __name__ == "__main__":
    main()
