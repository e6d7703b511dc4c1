"""``python -m geon plan`` writes Megatron's contracted split into the MLP, ``python -m geon run
--sharded`` runs it Application by Application equal to the logical run, and ``python -m geon
cost`` reports its one all-reduce (the CLI contract of issue 16)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from geon import core as gc
from geon.core.graph import OPERATION

ENV = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}


def geon(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "geon", *args], capture_output=True, text=True, env=ENV, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_plan_then_sharded_run_and_cost_of_megatron(tmp_path: Path) -> None:
    # given the MLP (float32) and Megatron's plan as files
    n, d, f = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
    x = gc.placeholder(axes=[n, d], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[d - 1, f], name="W1", dtype="float32")
    w2 = gc.placeholder(axes=[f - 1, d], name="W2", dtype="float32")
    graph = gc.graph([gc.dot(gc.relu(gc.dot(x, w1)), w2, name="y")])
    doc, plan, out = tmp_path / "mlp.json", tmp_path / "plan.json", tmp_path / "out.json"
    doc.write_text(json.dumps(graph.to_json()))
    mesh = {"name": "m", "axes": {"tp": 3}}
    plan.write_text(json.dumps({"name": "megatron", "mesh": mesh, "axisMapping": {"F": "tp"}}))
    # when the plan is written and the result run sharded
    geon("plan", str(doc), "--plan", str(plan), "-o", str(out))
    kernels = sorted(
        n["body"]["kernel"] for n in json.loads(out.read_text())["nodes"] if n["type"] == OPERATION
    )
    report = json.loads(geon("run", str(out), "--sharded", "--seed", "0"))
    cost = json.loads(geon("cost", str(doc), "--plan", str(plan)))
    # then the second dot is partial products and a sum, the sharded run equals the logical one
    assert kernels == ["op:dot", "op:dot_partial", "op:relu", "op:sum"]
    assert report["max_abs_diff"]["y"] < 1e-5
    # and the cost has one all-reduce of N·D·4 bytes
    assert [(c["kind"], c["bytes"]) for c in cost["collectives"]] == [("all-reduce", 4 * 3 * 4)]
