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
from geon.interop.onnx_import import OnnxImportError, UnsupportedOperators, import_onnx

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
    # shape arithmetic (Shape, Gather, Concat...) is folded, reshapes regroup atomic axes,
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
    assert {"op:gelu", "op:layer_norm", "op:softmax"} <= kernels
    # attention's reshapes only regroup atomic axes (heads d4, head width d8): no data moves
    assert not {"op:unflatten", "op:flatten"} & kernels


def test_models_stay_small() -> None:
    for path in MODELS.glob("*.onnx"):
        assert path.stat().st_size < 1_000_000, path.name


def test_cnn_runs_equal_to_onnxruntime_and_round_trips() -> None:
    # Conv (with bias), MaxPool, AveragePool and Flatten become conv2d, max_pool2d, avg_pool2d
    # and a flatten
    _check("cnn")


def test_cnn_axes_carry_conv_roles_and_channels_pair_across_convs() -> None:
    # given the imported CNN
    imp = import_onnx(MODELS / "cnn.onnx", dims={"batch": 2})
    ops = [n for n in imp.graph.nodes if n.type.endswith("/Operation")]
    kernels = [n.body["kernel"] for n in ops]
    # then the ONNX operators map to the catalogue's windowed kernels
    assert [k for k in kernels if k in ("op:conv2d", "op:max_pool2d", "op:avg_pool2d")] == [
        "op:conv2d", "op:max_pool2d", "op:conv2d", "op:avg_pool2d",
    ]  # fmt: skip
    # and the first conv's output channels are the second conv's contracted input channels
    tensors = {n.id: n for n in imp.graph.nodes if n.type.endswith("/Tensor")}
    axes_tag = "urn:geon:2026-11:tag_types.jsd#/tags/TensorAxes"
    convs = [n for n in ops if n.body["kernel"] == "op:conv2d"]
    filters = [tensors[c.body["inputs"]["filter"][0]["tensorId"]] for c in convs]
    assert filters[0].label == "onnx::Conv_22"
    first, second = (f.tags[axes_tag]["axes"] for f in filters)
    assert first[:2] == ["d8", "d3+1"]
    assert second[:2] == ["d16_3", "d8+1"]
    declared = {n.body["name"]: n.body.get("roles", []) for n in imp.graph.nodes
                if n.type.endswith("/Axis")}  # fmt: skip
    assert declared["d8"] == ["Channel", "Channelout"]
    assert [declared[a] for a in first[2:]] == [["Height"], ["Width"]]
    assert declared["batch"] == []


def _one_node_model(
    node: onnx.NodeProto, x: tuple[int, ...], y: tuple[int, ...]
) -> onnx.ModelProto:
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        [node], "g", [h.make_tensor_value_info("x", T.FLOAT, x)],
        [h.make_tensor_value_info("y", T.FLOAT, y)],
        initializer=[onnx.numpy_helper.from_array(np.ones((4, 1, 3, 3), np.float32), "w")],
    )  # fmt: skip
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_a_still_unsupported_operator_is_refused_with_its_node_names() -> None:
    # given a model with an LpPool (geon has no Lp-norm pooling)
    node = onnx.helper.make_node("LpPool", ["x"], ["y"], name="/pool/lp", kernel_shape=[2, 2])
    model = _one_node_model(node, (1, 2, 4, 4), (1, 2, 3, 3))
    # when it is imported, then the refusal lists the operator and its node
    with pytest.raises(UnsupportedOperators) as info:
        import_onnx(model)
    assert str(info.value).startswith(
        "unsupported ONNX operators: LpPool (/pool/lp); geon imports "
    )


REFUSED = [
    (
        "grouped-conv",
        onnx.helper.make_node("Conv", ["x", "w"], ["y"], name="/dw", group=2, kernel_shape=[3, 3]),
        'Conv "/dw": group 2 is not supported; geon imports group 1 only (no grouped or '
        "depthwise convolution)",
    ),
    (
        "dilated-pool",
        onnx.helper.make_node(
            "MaxPool", ["x"], ["y"], name="/mp", kernel_shape=[2, 2], dilations=[2, 2]
        ),
        'MaxPool "/mp": dilations [2, 2] are not supported; geon imports dilations 1',
    ),
    (
        "ceil-mode",
        onnx.helper.make_node(
            "AveragePool",
            ["x"],
            ["y"],
            name="/ap",
            kernel_shape=[3, 3],
            strides=[2, 2],
            ceil_mode=1,
        ),
        'AveragePool "/ap": ceil_mode 1 is not supported; geon imports ceil_mode 0 (output '
        "lengths round down)",
    ),
    (
        "asymmetric-pads",
        onnx.helper.make_node(
            "MaxPool", ["x"], ["y"], name="/mp", kernel_shape=[2, 2], pads=[0, 0, 1, 1]
        ),
        'MaxPool "/mp": pads [0, 0, 1, 1] differ before and after; geon pads each spatial dim '
        "symmetrically (pads [h, w, h, w])",
    ),
]


@pytest.mark.parametrize(("label", "node", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_windowed_attributes_geon_lacks_are_refused_naming_the_node(
    label: str, node: onnx.NodeProto, message: str
) -> None:
    model = _one_node_model(node, (1, 2, 4, 4), (1, 4, 2, 2))
    with pytest.raises(OnnxImportError) as info:
        import_onnx(model)
    assert str(info.value) == message


def test_a_stack_of_encoder_layers_imports_in_pieces_and_runs_equal_to_onnxruntime() -> None:
    # given three encoder layers chained (the importer infers shapes only for the nodes still
    # unknown after each fold, issue #34, not the whole graph again per Shape node)
    from onnx import compose

    layer = onnx.load(MODELS / "encoder.onnx")
    stack = compose.add_prefix(layer, "l0/")
    for i in (1, 2):
        nxt = compose.add_prefix(layer, f"l{i}/")
        stack = compose.merge_models(stack, nxt, io_map=[(stack.graph.output[0].name, f"l{i}/x")])
    x = np.random.default_rng(1).standard_normal((2, 10, 32)).astype(np.float32)
    want = ort.InferenceSession(stack.SerializeToString()).run(None, {"l0/x": x})[0]
    # when it is imported, then every layer's operations are there and it runs equal
    imp = import_onnx(stack, dims={"batch": 2})
    one = import_onnx(layer, dims={"batch": 2})
    count = sum(1 for n in imp.graph.nodes if n.type.endswith("/Operation"))
    assert count == 3 * sum(1 for n in one.graph.nodes if n.type.endswith("/Operation"))
    got = run(imp.graph, {"l0/x": x, **imp.weights}).by_key()["l2/y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
