"""The ONNX importer factors dims into atomic axes across reshapes (geon/interop/onnx_atoms.py):
each case is a small model that runs on geon's executor equal to onnxruntime, with the axes
and kernels the rule gives pinned."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from geon.core.graph import OPERATION, TENSOR_AXES
from geon.execute import run
from geon.interop.onnx_import import import_onnx

F32 = TensorProto.FLOAT


def _model(nodes: list[Any], ins: dict[str, tuple[int, ...]], outs: dict[str, tuple[int, ...]],
           consts: dict[str, Any]) -> Any:  # fmt: skip
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, F32, s) for n, s in ins.items()],
        [helper.make_tensor_value_info(n, F32, s) for n, s in outs.items()],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _shape(*dims: int) -> np.ndarray[Any, Any]:
    return np.asarray(dims, dtype=np.int64)


node = helper.make_node
rng = np.random.default_rng(0)
W = rng.standard_normal((12, 5)).astype(np.float32)
CONV = rng.standard_normal((3, 4, 3, 3)).astype(np.float32)

WQ, WK, WV = (rng.standard_normal((12, 12)).astype(np.float32) / 4 for _ in range(3))
BMM = [
    # older PyTorch attention: (S, B, E) -> (S, B*H, Dh) -> (B*H, S, Dh), 3-D batched MatMuls
    # over the fused B*H, softmax, and back to (S, B, E): heads (d3) stay one axis
    *(node("MatMul", ["x", w], [f"{p}0"]) for p, w in (("q", "wq"), ("k", "wk"), ("v", "wv"))),
    *(node("Reshape", [f"{p}0", "s1"], [f"{p}1"]) for p in "qkv"),
    node("Transpose", ["q1"], ["q"], perm=[1, 0, 2]),
    node("Transpose", ["k1"], ["kt"], perm=[1, 2, 0]),
    node("Transpose", ["v1"], ["v"], perm=[1, 0, 2]),
    node("MatMul", ["q", "kt"], ["sc"]),
    node("Softmax", ["sc"], ["p"], axis=-1),
    node("MatMul", ["p", "v"], ["c"]),
    node("Transpose", ["c"], ["c1"], perm=[1, 0, 2]),
    node("Reshape", ["c1", "s2"], ["y"]),
]

CASES = [
    (
        "bmm-heads",
        _model(
            BMM,
            {"x": (5, 2, 12)},
            {"y": (5, 2, 12)},
            {"wq": WQ, "wk": WK, "wv": WV, "s1": _shape(5, 6, 4), "s2": _shape(5, 2, 12)},
        ),
        (5, 2, 12),
        {
            "wq": ["d12+1", "d3", "d4"],
            "q": ["d2", "d3", "d5", "d4"],
            "sc": ["d2", "d3", "d5_2", "d5"],
            "c": ["d2", "d3", "d5_2", "d4_2"],
            "y": ["d5_2", "d2", "d3*d4_2"],
        },
        ["op:dot"] * 3
        + ["op:dimshuffle"] * 4
        + ["op:cast_axes"] * 5
        + ["op:multiply", "op:sum"] * 2
        + ["op:softmax", "op:flatten"],
    ),
    (
        # attention's head split: (S, B, E) -> (S, B*H, Dh) -> (B*H, S, Dh) -> (B, H, S, Dh);
        # B*H is batch x heads, E is heads x head width: no data moves, heads stay one axis
        "heads",
        _model(
            [
                node("Reshape", ["x", "s1"], ["r1"]),
                node("Transpose", ["r1"], ["t"], perm=[1, 0, 2]),
                node("Reshape", ["t", "s2"], ["r2"]),
                node("Relu", ["r2"], ["y"]),
            ],
            {"x": (3, 2, 12)},
            {"y": (2, 4, 3, 3)},
            {"s1": _shape(3, 8, 3), "s2": _shape(2, 4, 3, 3)},
        ),
        (3, 2, 12),
        {
            "x": ["d3", "d2", "d4*d3_2"],
            "r1": ["d3", "d2", "d4", "d3_2"],
            "t": ["d2", "d4", "d3", "d3_2"],
            "y": ["d2", "d4", "d3", "d3_2"],
        },
        ["op:unflatten", "op:dimshuffle", "op:cast_axes", "op:relu"],
    ),
    (
        # a weight's factored dim is stored in its atoms' shape and contracted atom by atom
        "weight",
        _model(
            [
                node("Reshape", ["x", "s"], ["r"]),
                node("Relu", ["r"], ["z"]),
                node("MatMul", ["x", "w"], ["y"]),
            ],
            {"x": (2, 12)},
            {"y": (2, 5), "z": (2, 3, 4)},
            {"s": _shape(2, 3, 4), "w": W},
        ),
        (2, 12),
        {
            "x": ["d2", "d3*d4"],
            "r": ["d2", "d3", "d4"],
            "w": ["d3+1", "d4+1", "d5"],
            "y": ["d2", "d5"],
            "z": ["d2", "d3", "d4"],
        },
        ["op:unflatten", "op:dot", "op:relu"],
    ),
    (
        # a Gather on a factored dim slices each atom; a factored output keeps its ONNX shape
        "gather",
        _model(
            [
                node("Reshape", ["x", "s"], ["r"]),
                node("Gather", ["x", "i"], ["g"], axis=1),
                node("Neg", ["x"], ["y"]),
                node("Relu", ["r"], ["z"]),
            ],
            {"x": (2, 12)},
            {"y": (2, 12), "z": (2, 3, 4), "g": (2,)},
            {"s": _shape(2, 3, 4), "i": np.asarray(6, np.int64)},
        ),
        (2, 12),
        {"x": ["d2", "d3*d4"], "y": ["d2", "d3*d4"], "z": ["d2", "d3", "d4"], "g": ["d2"]},
        ["op:unflatten", "op:negative", "op:flatten", "op:relu", "op:slice"],
    ),
    (
        # an Einsum sees a factored dim as one composite axis; its result, in another order
        # than ONNX's, is dimshuffled and unflattened into the atoms
        "einsum",
        _model(
            [
                node("Einsum", ["x", "w"], ["e"], equation="ij,jk->ki"),
                node("Reshape", ["e", "s"], ["r"]),
                node("Relu", ["r"], ["y"]),
            ],
            {"x": (2, 5)},
            {"y": (3, 4, 2)},
            {"w": W.T.copy(), "s": _shape(3, 4, 2)},
        ),
        (2, 5),
        {"x": ["d2", "d5"], "w": ["d5", "d3", "d4"], "e": ["d3", "d4", "d2"]},
        [
            "op:flatten",
            "op:cast_axes",
            "op:dot",
            "op:dimshuffle",
            "op:unflatten",
            "op:cast_axes",
            "op:relu",
        ],
    ),
    (
        # (2, 3, 4) -> (4, 6): the cumulative products 2, 6, 24 and 4, 24 have no common
        # factoring, so the group is flattened, cast and unflattened
        "no-common-factoring",
        _model(
            [node("Reshape", ["x", "s"], ["y"])],
            {"x": (2, 3, 4)},
            {"y": (4, 6)},
            {"s": _shape(4, 6)},
        ),
        (2, 3, 4),
        {"x": ["d2", "d3", "d4"], "y": ["d4_2", "d6"]},
        ["op:flatten", "op:cast_axes", "op:unflatten"],
    ),
    (
        # z = reshape(reshape(x, 4), (2, 2)) added to x's transpose: lining z's atoms up with
        # x's would give x one axis twice, so z is x's atoms relabelled position by position
        "same-axis-twice",
        _model(
            [
                node("Reshape", ["x", "s1"], ["f"]),
                node("Reshape", ["f", "s2"], ["z"]),
                node("Transpose", ["x"], ["t"], perm=[1, 0]),
                node("Add", ["z", "t"], ["y"]),
            ],
            {"x": (2, 2)},
            {"y": (2, 2)},
            {"s1": _shape(4), "s2": _shape(2, 2)},
        ),
        (2, 2),
        {"x": ["d2", "d2_2"], "f": ["d2", "d2_2"], "z": ["d2_2", "d2"], "y": ["d2_2", "d2"]},
        ["op:cast_axes", "op:cast_axes", "op:dimshuffle", "op:add"],
    ),
    (
        # a Conv's channels are never split: the reshape of its input stays opaque there
        "conv-channels",
        _model(
            [
                node("Reshape", ["x", "s"], ["r"]),
                node("Relu", ["r"], ["z"]),
                node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3]),
            ],
            {"x": (1, 4, 5, 5)},
            {"y": (1, 3, 3, 3), "z": (1, 2, 2, 25)},
            {"s": _shape(1, 2, 2, 25), "w": CONV},
        ),
        (1, 4, 5, 5),
        {"x": ["d1", "d4", "d5", "d5_2"], "z": ["d1_2", "d2", "d2_2", "d5*d5_2"]},
        [
            "op:slice",
            "op:cast_axes",
            "op:unflatten",
            "op:broadcast",
            "op:relu",
            "op:flatten",
            "op:conv2d",
        ],
    ),
]


@pytest.mark.parametrize(("label", "model", "shape", "axes", "kernels"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_reshapes_factor_dims_into_atomic_axes(
    label: str, model: Any, shape: tuple[int, ...], axes: dict[str, list[str]],
    kernels: list[str],
) -> None:  # fmt: skip
    # given a model with reshapes and its onnxruntime outputs
    x = rng.standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    # when it is imported
    imp = import_onnx(model)
    # then it checks clean, with the axes and kernels the rule gives
    assert imp.graph.check() == []
    labelled = {n.label: n.tags[TENSOR_AXES]["axes"] for n in imp.graph.nodes
                if n.label in axes and TENSOR_AXES in n.tags}  # fmt: skip
    assert labelled == axes
    assert sorted(n.body["kernel"] for n in imp.graph.of_type(OPERATION)) == sorted(kernels)
    # and runs equal to onnxruntime, outputs in their ONNX shapes
    got = run(imp.graph, {"x": x, **imp.weights}).by_key()
    for name, value in zip(imp.outputs, want, strict=True):
        assert got[name].shape == value.shape
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6)


def test_a_factored_weight_is_stored_in_its_atoms_shape() -> None:
    # given the "weight" case's model, its (12, 5) weight contracted with x's factored 12
    (model,) = [c[1] for c in CASES if c[0] == "weight"]
    imp = import_onnx(model)
    # then the importer returns it as (3, 4, 5): the same values in row-major order
    assert imp.weights["w"].shape == (3, 4, 5)
    np.testing.assert_array_equal(imp.weights["w"].reshape(12, 5), W)
