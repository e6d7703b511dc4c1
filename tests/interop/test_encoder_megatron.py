"""An imported PyTorch ``nn.TransformerEncoderLayer`` (models/encoder.onnx: d_model 32, 4 heads
of width 8, MLP width 64) sharded with a Megatron tensor-parallel plan written by ``python -m
geon plan``: heads and the MLP width over mesh axis ``tp``. The importer keeps heads as their
own axis through attention's reshapes (geon/interop/onnx_atoms.py), so the plan checks clean,
the cost model reports exactly Megatron's two all-reduces (after the output projection and
after the MLP's second matmul, nothing between a column- and a row-parallel matmul), and the
sharded run equals the logical one, which equals onnxruntime."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from geon.cli import main
from geon.core.graph import APPLICATION, OPERATION, TENSOR_AXES, Graph
from geon.execute import run

MODELS = Path(__file__).parent / "models"
B, S, E, HEADS, FFN = 2, 10, 32, 4, 64
IN_PROJ, OUT_PROJ = "onnx::MatMul_193", "layer.self_attn.out_proj.weight"
LINEAR1, LINEAR2 = "onnx::MatMul_201", "onnx::MatMul_202"


def _axes(doc: Graph, label: str) -> list[str]:
    (tensor,) = [n for n in doc.nodes if n.label == label and TENSOR_AXES in n.tags]
    return list(tensor.tags[TENSOR_AXES]["axes"])


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("encoder") / "encoder.json"
    assert (
        main(["import", str(MODELS / "encoder.onnx"), "--dim", f"batch={B}", "-o", str(out)]) == 0
    )
    return out


def test_imported_encoder_keeps_heads_as_one_axis_and_checks_clean(imported: Path) -> None:
    # given the imported encoder layer
    doc = Graph.from_json(json.loads(imported.read_text()))
    # then it has no issue at all (no AccidentalBroadcast warning from the attention scores)
    assert doc.check() == []
    # and heads (d4) and head width (d8) are axes of the in-projection's weight (E, 3, H, Dh)
    # and of the out-projection's (E, H, Dh), which contracts them
    assert _axes(doc, IN_PROJ) == ["d32+1", "d3", "d4", "d8"]
    assert _axes(doc, OUT_PROJ) == ["d32", "d4+1", "d8+1"]
    # and the scores carry batch and heads as separate axes, with two sequence axes
    assert _axes(doc, "/layer/self_attn/Softmax_output_0") == ["batch", "d4", "d10_2", "d10"]
    assert _axes(doc, LINEAR1) == ["d32+1", "d64"]


def _plan(devices: int) -> dict[str, Any]:
    heads, ffn = {"over": {"d4": "tp"}}, {"over": {"d64": "tp"}}
    return {
        "name": "Megatron tensor parallel",
        "mesh": {"name": "tp mesh", "axes": {"tp": devices}},
        "axisMapping": {"d4": "tp", "d64": "tp"},
        "inputs": {IN_PROJ: heads, "layer.self_attn.in_proj_bias": heads, OUT_PROJ: heads,
                   LINEAR1: ffn, "layer.linear1.bias": ffn, LINEAR2: ffn},
    }  # fmt: skip


@pytest.mark.parametrize("devices", [2, 4])
def test_megatron_plan_on_the_imported_encoder_runs_sharded_equal_to_logical_and_onnxruntime(
    imported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], devices: int
) -> None:
    # given the imported encoder and a Megatron plan written into it by `geon plan`
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(_plan(devices)))
    placed = tmp_path / "placed.json"
    assert main(["plan", str(imported), "--plan", str(plan), "-o", str(placed)]) == 0
    doc = Graph.from_json(json.loads(placed.read_text()))
    assert [i for i in doc.check() if i.severity == "error"] == []
    # then each head-split operation has one Application per device
    ops = {n.id: n for n in doc.of_type(OPERATION)}
    apps = [ops[a.body["operationId"]].body["kernel"] for a in doc.of_type(APPLICATION)]
    assert apps.count("op:softmax") == devices
    assert apps.count("op:gelu") == devices
    # when `geon cost` reports the collectives the placed plan implies
    capsys.readouterr()
    assert main(["cost", str(placed)]) == 0
    cost = json.loads(capsys.readouterr().out)
    found = []
    for c in cost["collectives"]:
        partial = _axes_of(doc, c["tensor"])
        found.append((c["kind"], c["meshAxes"], c["devices"], c["bytes"],
                      ops[c["producer"]].body["kernel"], ops[c["consumer"]].body["kernel"],
                      partial[0]))  # fmt: skip
    # then they are Megatron's: one all-reduce of the (B, S, E) activation after the output
    # projection (partial sums over heads) and one after the MLP's second matmul (over its
    # width), and nothing between the column- and the row-parallel matmuls
    size = B * S * E * 4
    assert sorted(found) == [
        ("all-reduce", ["tp"], devices, size, "op:dot_partial", "op:sum", "d4_over_tp"),
        ("all-reduce", ["tp"], devices, size, "op:dot_partial", "op:sum", "d64_over_tp"),
    ]
    # when it runs sharded and logically on geon's executor
    x = np.random.default_rng(0).standard_normal((B, S, E)).astype(np.float32)
    weights = dict(np.load(imported.with_suffix(".npz")))
    result = run(doc, {"x": x, **weights}, sharded=True)
    # then the sharded output equals the logical one, which equals onnxruntime's
    assert result.max_abs_diff is not None
    assert set(result.max_abs_diff) == {"y"}
    assert result.max_abs_diff["y"] < 1e-5
    model = onnx.load(MODELS / "encoder.onnx")
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    assert result.logical is not None
    logical = {result.keys[t]: a for t, a in result.logical.items()}
    np.testing.assert_allclose(logical["y"], want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(result.by_key()["y"], want, rtol=1e-4, atol=1e-5)
    # and what the run moved between devices is what the cost model predicted
    assert result.measured is not None
    for c in cost["collectives"]:
        moved = result.measured[(c["tensor"], c["producer"], c["consumer"])]
        assert moved.payload(c["kind"]) == c["bytes"]


def _axes_of(doc: Graph, tensor_id: str) -> list[str]:
    node = doc.get(tensor_id)
    assert node is not None
    return list(node.tags[TENSOR_AXES]["axes"])
