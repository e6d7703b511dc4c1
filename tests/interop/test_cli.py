"""``python -m geon import`` / ``export``: an attention-like ONNX model (a ``batch`` dim_param,
name scopes, Gemm, a batched MatMul whose scores hold the sequence axis twice, Softmax,
LayerNormalization, Gelu) is imported, checked clean, run equal to onnxruntime through
``geon run``, and exported to ONNX, NumPy, einsum and builder code that all agree again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from geon.cli import main
from geon.core.graph import Graph
from geon.execute import run

S, D = 5, 8


def _model() -> Any:
    rng = np.random.default_rng(0)
    w = {
        "wq": rng.standard_normal((D, D)).astype(np.float32),
        "wk": rng.standard_normal((D, D)).astype(np.float32),
        "bq": rng.standard_normal(D).astype(np.float32),
        "ln_s": rng.standard_normal(D).astype(np.float32),
        "ln_b": rng.standard_normal(D).astype(np.float32),
        "scale": np.asarray(0.25, np.float32),
    }
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln_s", "ln_b"], ["h"], name="/blk/ln/norm", axis=-1),
        n("MatMul", ["h", "wq"], ["q0"], name="/blk/attn/q"),
        n("Add", ["q0", "bq"], ["q"], name="/blk/attn/q_bias"),
        n("MatMul", ["h", "wk"], ["k"], name="/blk/attn/k"),
        n("Transpose", ["k"], ["kt"], name="/blk/attn/kt", perm=[0, 2, 1]),
        n("MatMul", ["q", "kt"], ["s0"], name="/blk/attn/scores"),
        n("Mul", ["s0", "scale"], ["s"], name="/blk/attn/scale"),
        n("Softmax", ["s"], ["p"], name="/blk/attn/softmax", axis=-1),
        n("MatMul", ["p", "h"], ["o"], name="/blk/attn/mix"),
        n("Gelu", ["o"], ["y"], name="/blk/act"),
    ]
    g = helper.make_graph(
        nodes, "blk",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", S, D])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", S, D])],
        initializer=[numpy_helper.from_array(v, k) for k, v in w.items()],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])


@pytest.fixture
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    model = _model()
    onnx.save(model, tmp_path / "m.onnx")
    code = main(["import", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "doc.json"),
                 "--dim", "batch=2"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    x = np.random.default_rng(1).standard_normal((2, S, D)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    return {"dir": tmp_path, "summary": json.loads(out), "x": x, "want": want}


def test_import_names_axes_groups_and_weights(imported: dict[str, Any]) -> None:
    d, summary = imported["dir"], imported["summary"]
    assert summary["inputs"] == ["x"] and summary["outputs"] == ["y"]
    # scalars are inline constants; the others are weights keyed by their ONNX names
    assert summary["initializers"] == ["bq", "ln_b", "ln_s", "wk", "wq"]
    doc = Graph.from_json(json.loads((d / "doc.json").read_text()))
    assert [i for i in doc.check() if i.severity == "error"] == []
    axes = {n.label for n in doc.nodes if n.type.endswith("/Axis")}
    assert "batch" in axes  # the dim_param stays the axis's name
    by_label = {n.label: n for n in doc.nodes if n.type.endswith("/Tensor")}
    tensor_axes = "urn:geon:2026-11:tag_types.jsd#/tags/TensorAxes"
    # the weight carries the contracted axis one dual level up; the scores hold seq twice
    x_axes = by_label["x"].tags[tensor_axes]["axes"]
    assert by_label["wq"].tags[tensor_axes]["axes"][0] == f"{x_axes[2]}+1"
    scores = by_label["s0"].tags[tensor_axes]["axes"]
    assert len(set(scores)) == 3 and scores[0] == "batch"
    scopes = {n.tags.get("urn:geon:2026-11:tag_types.jsd#/tags/Group", {}).get("scope")
              for n in doc.nodes if n.type.endswith("/Operation")}  # fmt: skip
    assert {"/blk/attn", "/blk/ln", "/blk"} <= scopes


def test_geon_run_reads_inputs_and_weights_by_onnx_names(
    imported: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    d = imported["dir"]
    feeds = dict(np.load(d / "doc.npz"))
    np.savez(d / "in.npz", x=imported["x"], **feeds)
    code = main(["run", str(d / "doc.json"), "--inputs", str(d / "in.npz"),
                 "--out", str(d / "out.npz")])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    got = np.load(d / "out.npz")["y"]
    np.testing.assert_allclose(got, imported["want"], rtol=1e-4, atol=1e-5)


def test_exports_agree_with_onnxruntime(
    imported: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    d, x, want = imported["dir"], imported["x"], imported["want"]
    doc, weights = str(d / "doc.json"), str(d / "doc.npz")
    # ONNX, with the weights as initializers
    assert main(["export", doc, "--to", "onnx", "-o", str(d / "b.onnx"), "--weights", weights]) == 0
    onnx.checker.check_model(onnx.load(d / "b.onnx"))
    got = ort.InferenceSession(str(d / "b.onnx")).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # the standalone NumPy script, run as its own process
    assert main(["export", doc, "--to", "numpy", "-o", str(d / "m.py")]) == 0
    np.savez(d / "in.npz", x=x, **dict(np.load(weights)))
    subprocess.run([sys.executable, str(d / "m.py"), "--inputs", str(d / "in.npz"), "--out",
                    str(d / "np_out.npz")], check=True, cwd=d)  # fmt: skip
    np.testing.assert_allclose(np.load(d / "np_out.npz")["y"], want, rtol=1e-4, atol=1e-5)
    # builder code rebuilds a document that checks clean and computes the same
    assert main(["export", doc, "--to", "python", "-o", str(d / "b.py")]) == 0
    ns: dict[str, Any] = {}
    exec(compile((d / "b.py").read_text(), "b.py", "exec"), ns)
    rebuilt = ns["graph"]
    assert [i for i in rebuilt.check() if i.severity == "error"] == []
    feeds = {"x": x, **dict(np.load(weights))}
    np.testing.assert_allclose(run(rebuilt, feeds).by_key()["y"], want, rtol=1e-4, atol=1e-5)
    # einsum strings: the three contractions that are dots (the weights' matmuls)
    assert main(["export", doc, "--to", "einsum", "-o", str(d / "e.txt")]) == 0
    lines = (d / "e.txt").read_text().splitlines()
    assert len(lines) == 2 and all('einsum("abc,cd->abd"' in ln for ln in lines)
    capsys.readouterr()


def test_unsupported_operators_are_listed_with_node_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = helper.make_node
    g = helper.make_graph(
        [n("Relu", ["x"], ["a"], name="r"), n("Floor", ["a"], ["b"], name="/f/floor"),
         n("Ceil", ["b"], ["y"], name="/f/ceil")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )  # fmt: skip
    onnx.save(helper.make_model(g), tmp_path / "m.onnx")
    code = main(["import", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "d.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "Ceil (/f/ceil)" in err and "Floor (/f/floor)" in err


def test_unbound_dim_param_and_bad_requests_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx.save(_model(), tmp_path / "m.onnx")
    assert main(["import", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "d.json")]) == 2
    assert "'batch' without a length" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "d.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    assert main(["import", str(tmp_path / "bad.onnx"), "-o", str(tmp_path / "d.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    (tmp_path / "d.json").write_text("{}")
    assert main(["export", str(tmp_path / "d.json"), "--to", "tflite", "-o", "x"]) == 2
    assert "expected one of onnx, numpy" in capsys.readouterr().err
