"""Imported models read like their source (issue 35): the importer reads each axis's role off
the ONNX graph (LayerNormalization's axis, attention's Softmax over a batched MatMul, the
reshape that splits hidden into heads x head size, the MatMul that widens into an activation,
the batch dim_param), keeps every ``dim_param`` name, and names the axes as a person accepts
(geon/interop/onnx_roles.py).

The oracle for the roles is the PyTorch module the model was exported from: its ``nhead``,
``d_model // nhead``, ``d_model`` and ``dim_feedforward`` are the lengths of the axes named
heads, head_size, hidden and ffn; onnxruntime is the oracle for the renamed document's values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from geon.execute import run
from geon.interop.onnx_import import OnnxImportError, import_onnx

MODELS = Path(__file__).parent / "models"
ENCODER = MODELS / "encoder.onnx"  # nn.TransformerEncoderLayer(32, 4 heads, ff 64), batch_first


def _axes(imp: Any) -> list[str]:
    return sorted(n.label for n in imp.graph.nodes if n.type.endswith("/Axis"))


def _table(imp: Any) -> list[tuple[str, int, str, str]]:
    return [(p.name, p.length, p.role, p.proposed) for p in imp.axes if p.length > 1]


def test_the_encoder_layers_axes_get_their_roles_and_keep_the_dim_param() -> None:
    # given the committed encoder layer (scripts/export_models.py: d_model 32, 4 heads, ff 64)
    # when it is imported with the names it would keep
    imp = import_onnx(ENCODER, dims={"batch": 2})
    # then its axes keep d<length> and the proposals say what each one is
    assert _table(imp) == [
        ("batch", 2, "batch", "batch"),
        ("d10", 10, "sequence", "sequence"),
        ("d10_2", 10, "sequence", "sequence_q"),
        ("d4", 4, "heads", "heads"),
        ("d8", 8, "head_size", "head_size"),
        ("d32", 32, "hidden", "hidden"),
        ("d64", 64, "ffn", "ffn"),
        ("d3", 3, "", "d3"),
    ]
    assert "d4" in _axes(imp) and "heads" not in _axes(imp)
    # and each says where the model shows it, by the ONNX node's name
    seen = {p.name: p.seen for p in imp.axes}
    assert seen["batch"] == 'dim_param "batch" of input "x"'
    assert seen["d32"] == 'normalised by LayerNormalization "/layer/norm1/LayerNormalization"'
    assert seen["d64"] == 'widened by MatMul "/layer/linear1/MatMul" before Gelu "/layer/Mul_1"'
    assert seen["d8"] == 'contracted by the attention scores of MatMul "/layer/self_attn/MatMul_1"'
    # and only the axes the document declares are listed (the folded length-1 ones are not)
    assert sorted(p.name for p in imp.axes) == _axes(imp)


def test_the_encoder_imported_with_the_proposed_names_runs_equal_to_onnxruntime() -> None:
    # given the encoder layer, imported with every proposed name ({})
    model = onnx.load(ENCODER)
    imp = import_onnx(model, dims={"batch": 2}, names={})
    # then the document declares them and checks clean
    assert _axes(imp) == [
        "batch", "d1_43", "d1_44", "d1_45", "d3", "ffn", "head_size", "heads", "hidden",
        "sequence", "sequence_q",
    ]  # fmt: skip
    assert imp.graph.check() == []
    # and the out-projection's weight contracts heads and head size, as PyTorch's does
    weight = next(n for n in imp.graph.nodes if n.label == "layer.self_attn.out_proj.weight")
    assert weight.tags["urn:geon:2026-11:tag_types.jsd#/tags/TensorAxes"]["axes"] == [
        "hidden", "heads+1", "head_size+1",
    ]  # fmt: skip
    # and it computes what onnxruntime computes
    x = np.random.default_rng(0).standard_normal((2, 10, 32)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    got = run(imp.graph, {"x": x, **imp.weights}).by_key()["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_name_given_wins_over_the_proposed_one() -> None:
    # when heads are named h and the MLP's width mlp
    imp = import_onnx(ENCODER, dims={"batch": 2}, names={"d4": "h", "d64": "mlp"})
    # then those are the axes' names, and the others are the proposed ones
    assert {"h", "mlp", "hidden", "head_size"} <= set(_axes(imp))
    assert not {"heads", "ffn", "d4", "d64"} & set(_axes(imp))


@pytest.mark.parametrize(
    ("label", "names", "message"),
    [
        ("not a name", {"d4": "2 heads"},
         'the name for axis "d4": axis name "2 heads" is invalid; expected a letter or "_" '
         'followed by letters, digits or "_"'),
        ("not an axis", {"d5": "x"},
         'axis "d5" is not an axis of this model; expected one of "batch", "d10", "d10_2", '
         '"d4", "d8", "d32", "d64", "d3"'),
        ("twice", {"d4": "hidden"},
         'name "hidden" is given to axes "d4" and "d32"; expected one name per axis'),
        ("not text", {"d4": 4}, 'the name for axis "d4" is 4; expected text'),
    ],
)  # fmt: skip
def test_a_bad_name_is_refused_naming_it(label: str, names: dict[str, Any], message: str) -> None:
    # when the encoder is imported with a bad name, then the refusal names it
    with pytest.raises(OnnxImportError) as info:
        import_onnx(ENCODER, dims={"batch": 2}, names=names)
    assert str(info.value) == message


@pytest.fixture(scope="module")
def torch_encoder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, int]]:
    """A 2-layer ``nn.TransformerEncoder`` (sequence first, ReLU) exported by PyTorch with the
    dim_params ``seq`` and ``batch``, and its configuration."""
    import torch

    config = {"d_model": 24, "nhead": 3, "dim_feedforward": 40}
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(24, 3, dim_feedforward=40, dropout=0.0)
    encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    out = tmp_path_factory.mktemp("torch") / "encoder.onnx"
    torch.onnx.export(
        encoder, (torch.randn(5, 2, 24),), out, dynamo=False, input_names=["x"],
        output_names=["y"], dynamic_axes={"x": {0: "seq", 1: "batch"}},
    )  # fmt: skip
    return onnx.load(out), config


def test_a_torch_encoder_with_dim_params_reads_like_its_module(
    torch_encoder: tuple[Any, dict[str, int]],
) -> None:
    model, config = torch_encoder
    # when it is imported with the proposed names
    imp = import_onnx(model, dims={"seq": 5, "batch": 2}, names={})
    # then its dim_params keep their names, with their roles
    by_name = {p.proposed: p for p in imp.axes}
    assert (by_name["seq"].role, by_name["batch"].role) == ("sequence", "batch")
    # and the module's configuration is the lengths of heads, head size, hidden and ffn
    lengths = {name: by_name[name].length for name in ("heads", "head_size", "hidden", "ffn")}
    d, h = config["d_model"], config["nhead"]
    assert lengths == {"heads": h, "head_size": d // h, "hidden": d,
                       "ffn": config["dim_feedforward"]}  # fmt: skip
    # and each layer's queries are a sequence axis of their own
    assert [p.proposed for p in imp.axes if p.role == "sequence"] == [
        "seq", "sequence_q", "sequence_q_2",
    ]  # fmt: skip
    assert imp.graph.check() == []
