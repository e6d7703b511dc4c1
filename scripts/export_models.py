"""Export the small PyTorch models geon's ONNX import is tested on (issue #20).

Run (torch lives in its own venv, never in .venv)::

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch==2.13.0 onnx onnxscript numpy
    /tmp/torchenv/bin/python scripts/export_models.py [--out tests/interop/models]

Writes ``mlp.onnx`` (Linear-ReLU-Linear-ReLU-Linear), ``cnn.onnx`` (Conv-BatchNorm-ReLU-MaxPool,
Conv-ReLU-AvgPool, Flatten, Linear) and ``encoder.onnx`` (one ``nn.TransformerEncoderLayer``,
d_model 32, 4 heads, GELU, eval mode), each with a ``batch`` dim_param on its input, the weights
seeded (torch.manual_seed(0)) and each file under 1 MB. The TorchScript exporter is used (it
keeps the module scopes in node names: ``/layers.0/self_attn/...``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from torch import nn


def _mlp() -> tuple[nn.Module, torch.Tensor]:
    m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 8))
    return m, torch.randn(4, 16)


def _cnn() -> tuple[nn.Module, torch.Tensor]:
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 10),
    )  # fmt: skip
    return m, torch.randn(2, 3, 16, 16)


class _Encoder(nn.Module):
    """One encoder layer, called with ``is_causal=False`` (the tracer cannot take the default)."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, activation="gelu",
            batch_first=True,
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x, is_causal=False)


def _encoder() -> tuple[nn.Module, torch.Tensor]:
    return _Encoder(), torch.randn(2, 10, 32)


def main() -> None:
    """Export the three models into ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tests/interop/models")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, make in (("mlp", _mlp), ("cnn", _cnn), ("encoder", _encoder)):
        torch.manual_seed(0)
        model, x = make()
        model.eval()
        path = out / f"{name}.onnx"
        torch.onnx.export(
            model, (x,), str(path), input_names=["x"], output_names=["y"],
            dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17,
            dynamo=False,
        )  # fmt: skip
        print(f"{path}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
