"""The engines side by side (issue 31): the logical NumPy run, the sharded NumPy run and the JAX
run of the same placed plans, JAX's compile time apart.

Run: ``.venv/bin/python benchmarks/bench_engines.py [--repeat 5] [--batch 8]``

Plans: the gallery transformer block under each of its three plans (data parallel, Megatron,
the worse-on-purpose model axis split; 2 devices each), and the imported PyTorch encoder layer
(tests/interop/models/encoder.onnx, d_model 32, 4 heads, MLP 64, ``--batch`` sequences of 10)
under data parallel (batch over 2 devices) and Megatron (heads and MLP width over 4), its
weights seeded like the other inputs. Each row
is the best of ``--repeat`` runs of one compiled plan, the same seeded inputs for the three: the
NumPy executor's logical plan, its sharded plan (every Application on its selections, the
outputs assembled), and XLA's SPMD program on forced CPU host devices (outputs fetched to the
host); ``max |diff|`` is each engine's largest difference from the logical run. Everything runs
on one CPU host, so the JAX column is what XLA's fused kernels cost there, not a cluster's time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
).strip()

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from geon.cli import main as geon  # noqa: E402
from geon.core.graph import Graph  # noqa: E402
from geon.core.plans import apply_plan  # noqa: E402
from geon.examples.transformer import PLANS, transformer_block  # noqa: E402
from geon.execute import (  # noqa: E402
    compile_graph,
    max_abs_diff,
    resolve_inputs,
    run_compiled,
    tensor_keys,
)
from geon.interop.jax_engine import load_program  # noqa: E402

ENCODER = ROOT / "tests" / "interop" / "models" / "encoder.onnx"
IN_PROJ, OUT_PROJ = "onnx::MatMul_193", "layer.self_attn.out_proj.weight"
LINEAR1, LINEAR2 = "onnx::MatMul_201", "onnx::MatMul_202"


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The best of ``repeat`` timed calls of ``fn``, and its last result."""
    times, out = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - began)
    return min(times), out


def encoder_plans(batch: int) -> list[tuple[str, Graph]]:
    """The imported encoder layer under data parallel and Megatron."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "encoder.json"
        with contextlib.redirect_stdout(io.StringIO()):
            assert geon(["import", str(ENCODER), "--dim", f"batch={batch}", "-o", str(out)]) == 0

        graph = Graph.from_json(json.loads(out.read_text()))
    heads, ffn = {"over": {"d4": "tp"}}, {"over": {"d64": "tp"}}
    megatron = {
        "name": "Megatron", "mesh": {"axes": {"tp": 4}}, "axisMapping": {"d4": "tp", "d64": "tp"},
        "inputs": {IN_PROJ: heads, "layer.self_attn.in_proj_bias": heads, OUT_PROJ: heads,
                   LINEAR1: ffn, "layer.linear1.bias": ffn, LINEAR2: ffn},
    }  # fmt: skip
    dp = {"name": "Data parallel", "mesh": {"axes": {"dp": 2}}, "axisMapping": {"batch": "dp"}}
    return [(f"encoder, {p['name']}", apply_plan(graph, p)) for p in (dp, megatron)]


def measure(name: str, graph: Graph, repeat: int) -> dict[str, Any]:
    logical = compile_graph(graph)
    sharded = compile_graph(graph, sharded=True)
    host = resolve_inputs(logical, None, 0)
    by_id = {logical.tensors[t].id: a for t, a in host.items()}
    keys = tensor_keys(logical.tensors)
    t_logical, ref = best(lambda: run_compiled(logical, None, by_id), repeat)
    t_sharded, both = best(lambda: run_compiled(logical, sharded, by_id), repeat)
    t_sharded -= t_logical  # run_compiled runs the logical plan first, then the sharded one
    expected = ref.by_key()
    ns = load_program(graph)
    mesh = ns["make_mesh"]()
    began = time.perf_counter()
    compiled = ns["compile_program"](mesh)
    t_compile = time.perf_counter() - began
    placed = ns["place_inputs"]({keys[t]: a for t, a in host.items()}, mesh)
    t_jax, outputs = best(lambda: ns["fetch"](compiled(placed)), repeat)
    jax_diff = max(max_abs_diff(outputs[k].astype(v.dtype), v) for k, v in expected.items())
    return {
        "plan": name,
        "devices": ns["DEVICES"],
        "logical": t_logical,
        "sharded": t_sharded,
        "sharded diff": max(both.max_abs_diff.values()),
        "jax": t_jax,
        "jax compile": t_compile,
        "jax diff": jax_diff,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args(argv)
    block = transformer_block()
    plans = [(f"transformer, {p['name']}", apply_plan(block, p)) for p in PLANS]
    plans += encoder_plans(args.batch)
    header = (
        f"{'plan':<52} {'dev':>3} {'numpy logical':>13} {'numpy sharded':>13} {'max |diff|':>10} "
        f"{'jax run':>9} {'max |diff|':>10} {'jax compile':>11}"
    )
    print(header)
    for name, graph in plans:
        r = measure(name, graph, args.repeat)
        print(
            f"{r['plan']:<52} {r['devices']:>3} {r['logical'] * 1e3:>10.2f} ms "
            f"{r['sharded'] * 1e3:>10.2f} ms {r['sharded diff']:>10.1e} "
            f"{r['jax'] * 1e3:>6.2f} ms {r['jax diff']:>10.1e} {r['jax compile']:>9.2f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
