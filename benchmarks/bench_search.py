"""Plan search speed (issue 33): ``geon plan --search dp=2,tp=4`` on a 4-layer imported encoder,
printed beside the time of one plan's cost.

Run::

    .venv/bin/python benchmarks/bench_search.py [--budget 10] [--batch 8]

Exports a 4-layer ``nn.TransformerEncoder`` (d_model 256, 8 heads, feed-forward 1024, GELU,
batch_first; as ``bench_models.py``) to ONNX (opset 17) in a temporary folder, imports it
(:func:`geon.interop.onnx_import.import_onnx`), then times :func:`geon.core.plans.cost.search.
search_plans` on a ``dp=2,tp=4`` mesh under ``h100-sxm-8`` and one cost (the search's best plan
written and costed once). Goal: the search under 2 s.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any


def encoder_document(batch: int, folder: Path) -> Any:
    """The imported 4-layer encoder (a geon Graph)."""
    import onnx
    import torch
    from torch import nn

    from geon.interop.onnx_import import import_onnx

    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        d_model=256, nhead=8, dim_feedforward=1024, dropout=0.0, activation="gelu",
        batch_first=True,
    )  # fmt: skip
    module = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False).eval()
    path = folder / "encoder4.onnx"
    x = torch.zeros(batch, 128, 256)
    torch.onnx.export(
        module, (x,), str(path), input_names=["x"], output_names=["y"],
        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17, dynamo=False,
    )  # fmt: skip
    return import_onnx(onnx.load(path), dims={"batch": batch}).graph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()

    from geon.core.plans import apply_plan, read_plan
    from geon.core.plans.cost import cost_report, load_profile
    from geon.core.plans.cost.search import search_plans

    with tempfile.TemporaryDirectory() as tmp:
        graph = encoder_document(args.batch, Path(tmp))
    profile = load_profile("h100-sxm-8")
    t0 = time.perf_counter()
    found = search_plans(graph, {"dp": 2, "tp": 4}, profile, budget=args.budget)
    t_search = time.perf_counter() - t0
    best = found["best"] or found["candidates"][0]
    plan = read_plan(best["plan"])
    t0 = time.perf_counter()
    cost_report(apply_plan(graph, plan), profile, plan=plan)
    t_cost = time.perf_counter() - t0
    print(
        f"search dp=2,tp=4: {t_search:.2f} s for {found['searched']} plans"
        f" ({'all' if found['complete'] else 'budget reached'}); one plan's cost {t_cost:.3f} s"
    )
    print(
        f"best: {best['name']} ({best['seconds'] * 1e3:.3f} ms, fits {best['fits']}, {best['why']})"
    )
    for c in found["candidates"][1:5]:
        print(f"      {c['name']} ({c['seconds'] * 1e3:.3f} ms, fits {c['fits']}, {c['why']})")


if __name__ == "__main__":
    main()
