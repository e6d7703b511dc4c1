"""Real models exported from PyTorch by scripts/export_models.py (committed in models/, so the
tests need no torch): import, check clean, run on geon's executor equal to onnxruntime; export
back to ONNX and run in onnxruntime equal again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from geon.execute import run
from geon.interop.onnx_export import to_onnx
from geon.interop.onnx_import import UnsupportedOperators, import_onnx

MODELS = Path(__file__).parent / "models"
SHAPES = {"mlp": (4, 16), "cnn": (2, 3, 16, 16), "encoder": (2, 10, 32)}


def _check(name: str) -> None:
    model = onnx.load(MODELS / f"{name}.onnx")
    shape = SHAPES[name]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    imp = import_onnx(model, dims={"batch": shape[0]})
    assert [i for i in imp.graph.check() if i.severity == "error"] == []
    got = run(imp.graph, {"x": x, **imp.weights}).by_key()["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    back = to_onnx(imp.graph, weights=imp.weights)
    again = ort.InferenceSession(back.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(again, want, rtol=1e-4, atol=1e-5)


def test_mlp_runs_equal_to_onnxruntime_and_round_trips() -> None:
    _check("mlp")


def test_transformer_encoder_layer_runs_equal_to_onnxruntime_and_round_trips() -> None:
    # shape arithmetic (Shape, Gather, Concat...) is folded, reshapes become flatten/unflatten,
    # PyTorch's erf GELU becomes op:gelu
    _check("encoder")


def test_encoder_axes_keep_batch_and_name_scopes() -> None:
    imp = import_onnx(MODELS / "encoder.onnx", dims={"batch": 2})
    axes = {n.label for n in imp.graph.nodes if n.type.endswith("/Axis")}
    assert "batch" in axes
    group = "urn:geon:2026-11:tag_types.jsd#/tags/Group"
    scopes = {n.tags[group]["scope"] for n in imp.graph.nodes if group in n.tags}
    assert "/layer/self_attn" in scopes
    kernels = {n.body["kernel"] for n in imp.graph.nodes if n.type.endswith("/Operation")}
    assert {"op:gelu", "op:layer_norm", "op:softmax", "op:unflatten", "op:flatten"} <= kernels


def test_models_stay_small() -> None:
    for path in MODELS.glob("*.onnx"):
        assert path.stat().st_size < 1_000_000, path.name


def test_cnn_is_refused_with_the_missing_kernels() -> None:
    # Conv import and the pooling kernels are not built yet (README: what is refused)
    with pytest.raises(UnsupportedOperators, match=r"MaxPool \(/3/MaxPool\)"):
        import_onnx(MODELS / "cnn.onnx", dims={"batch": 2})
