"""How fast is a training step derived and costed? (issue 32: the 12-layer imported encoder's
step derived in < 2 s; its cost in < 2x the forward cost's time)

Run: ``.venv/bin/python benchmarks/bench_train.py [--layers 12] [--repeat 3]``

Stacks ``--layers`` copies of the imported encoder layer (tests/interop/models/encoder.onnx,
chained with ``onnx.compose`` as bench_onnx.py does), imports it (batch 8) and adds the loss
``sum(y·r)``. Prints the best of ``--repeat`` times of :func:`geon.core.autodiff.training_step`
(Adam) on it, the documents' sizes, and the best time of ``cost_report`` of the forward document
and of the step, both under the same data-parallel plan (the batch over 8 devices of
``h100-sxm-8``), with their ratio and the collectives each predicts. The process's collector is
tuned first, as the CLI's and the server's are. Times are CPU time of this process (the
machine is shared: wall-clock ratios swung from 7x to 15x between runs).
With ``--stages``, also each stage of the cost model on both documents (best CPU time): reading
the shards, the run order, the padded-read check, the collectives, the tensor kinds and the
whole memory ledger (which includes the two before it), next to the documents' operations,
shards and regions, so the ratio of each stage can be read against the ratio of the sizes; and
the **operation shapes**: operations that differ only in their ids, axis names and scopes (equal
kernel, regions read and written, and index projections), the least a cost model that costed
each such class once, whatever its number of copies, would still have to walk.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_onnx import _stack

from geon import core as gc
from geon.core.autodiff import Forward, merge, training_step
from geon.core.collector import tune_for_documents
from geon.core.graph import IPF_INDEX, IPF_SIGNATURE, OPERATION, Graph
from geon.core.order import run_order
from geon.core.plans import apply_plan
from geon.core.plans.cost import cost_report, load_profile
from geon.core.plans.cost.cells import padded_bytes
from geon.core.plans.cost.collectives import infer_collectives
from geon.core.plans.cost.ledger import memory_ledger, tensor_kinds
from geon.core.plans.cost.placed import read_placed
from geon.core.plans.table import read_table
from geon.interop.onnx_import import import_onnx

MODELS = Path(__file__).resolve().parent.parent / "tests" / "interop" / "models"


def _best(fn: Any, repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def _forward(layers: int) -> Graph:
    import onnx

    imp = import_onnx(_stack(onnx.load(MODELS / "encoder.onnx"), layers), dims={"batch": 8})
    y = Forward(imp.graph).by_label(imp.outputs[0])
    r = gc.placeholder(list(y.axes), name="r", dtype=y.dtype)
    return merge(imp.graph, [gc.sum(gc.multiply(y, r), name="loss")], {})


def _stages(placed: Graph, profile: Any, repeat: int) -> dict[str, float]:
    """Each stage's best CPU time in ms, and the document's sizes."""
    table = read_table(placed)
    doc = read_placed(placed, table)
    ops = list(table.ops.values())
    stages = {
        "read shards": lambda: read_table(placed),
        "run order": lambda: run_order(ops),
        "padded reads": lambda: padded_bytes(placed, table),
        "collectives": lambda: infer_collectives(doc, profile),
        "tensor kinds": lambda: tensor_kinds(doc),
        "memory ledger": lambda: memory_ledger(doc),
    }
    out = {name: _best(fn, repeat)[0] * 1e3 for name, fn in stages.items()}
    out |= {"operations": len(ops), "shards": len(table.ids), "regions": len(table.rows)}
    out["operation shapes"] = len({_shape(op) for op in placed.of_type(OPERATION)})
    return out


def _shape(op: Any) -> str:
    """An operation's class up to ids, axis names and scope: its kernel, its regions, its index
    box and projections, and which other tags it has."""
    body = op.body

    def regions(ports: dict[str, Any]) -> dict[str, Any]:
        return {k: [s["range"] for s in v] for k, v in ports.items()}

    tags = {k: op.tags[k] if k in (IPF_INDEX, IPF_SIGNATURE) else None for k in op.tags}
    return json.dumps(
        [body["kernel"], regions(body["inputs"]), regions(body["outputs"]), tags], sort_keys=True
    )


def main() -> None:
    """Print the derivation and cost times (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stages", action="store_true", help="time each stage too")
    args = parser.parse_args()
    tune_for_documents()  # as the CLI's and the server's processes are (geon.core.collector)
    forward = _forward(args.layers)
    ops = len(forward.of_type(OPERATION))
    t, step = _best(lambda: training_step(forward, optimizer="adam", lr=1e-3), args.repeat)
    print(f"derive the step of {args.layers} encoder layers ({ops} forward operations): "
          f"{t:.3f} s (goal < 2 s); step: {len(step.of_type(OPERATION))} operations, "
          f"{len(step.nodes)} nodes")  # fmt: skip
    profile = load_profile("h100-sxm-8")
    batch = {"over": {"batch": "dp"}}
    plan = {"name": "dp", "mesh": {"name": "dp", "axes": {"dp": 8}}, "axisMapping": {"batch": "dp"},
            "inputs": {"layers.0/x": batch, "r": batch}}  # fmt: skip
    times, stages = {}, {}
    for name, doc in (("forward", forward), ("step", step)):
        placed = apply_plan(doc, plan)
        if args.stages:
            stages[name] = _stages(placed, profile, args.repeat)
        t, report = _best(lambda placed=placed: cost_report(placed, profile), args.repeat)
        times[name] = t
        kinds = Counter(c["kind"] for c in report["collectives"])
        print(f"cost of the {name:7} under data parallel x8: {t * 1e3:8.1f} ms, predicted "
              f"{report['time']['upper'] * 1e3:.3f} ms, collectives {dict(kinds)}")  # fmt: skip
    print(f"step cost / forward cost: {times['step'] / times['forward']:.2f}x (goal < 2x)")
    for what in stages.get("step", {}):
        f, s = stages["forward"][what], stages["step"][what]
        unit = " ms" if isinstance(f, float) else ""
        print(f"  {what:14} forward {f:9.1f}{unit}  step {s:9.1f}{unit}  {s / max(f, 1e-9):5.2f}x")


if __name__ == "__main__":
    main()
