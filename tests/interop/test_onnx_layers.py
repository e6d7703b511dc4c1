"""ONNX Concat, Split, Where and BatchNormalization through the importer (geon/interop/
onnx_layers.py): small models as PyTorch exports them, run on geon's executor equal to
onnxruntime, sharded equal to the logical run, exported back to ONNX and to a NumPy script
equal again; and the refusals, each message pinned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from geon.core.checks import check
from geon.core.plans.shards import shard
from geon.execute import run
from geon.interop.export import to_numpy
from geon.interop.onnx_export import to_onnx
from geon.interop.onnx_import import OnnxImportError, import_onnx

RNG = np.random.default_rng(0)


def _w(name: str, *shape: int) -> Any:
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), name)


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any]) -> Any:
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])


def _ops(graph: Any, kernel: str) -> list[Any]:
    return [n for n in graph.nodes if n.type.endswith("/Operation") and n.body["kernel"] == kernel]


def _equal_everywhere(model: Any, feeds: dict[str, np.ndarray], dims: dict[str, int]) -> Any:
    """geon's run, the exported ONNX model's and the NumPy script's all equal onnxruntime's."""
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    imp = import_onnx(model, dims=dims)
    assert [i for i in check(imp.graph) if i.severity == "error"] == []
    got = run(imp.graph, {**feeds, **imp.weights}).by_key()
    for vi, w in zip(model.graph.output, want, strict=True):
        np.testing.assert_allclose(got[vi.name], w, rtol=1e-5, atol=1e-5)
    back = to_onnx(imp.graph, weights=imp.weights)
    again = ort.InferenceSession(back.SerializeToString()).run(None, feeds)
    for a, w in zip(again, want, strict=True):
        np.testing.assert_allclose(a, w, rtol=1e-5, atol=1e-5)
    ns: dict[str, Any] = {"__name__": "exported"}
    exec(compile(to_numpy(imp.graph), "exported.py", "exec"), ns)
    script = ns["model"]({**feeds, **imp.weights})
    for vi, w in zip(model.graph.output, want, strict=True):
        np.testing.assert_allclose(script[vi.name], w, rtol=1e-5, atol=1e-5)
    return imp


def _two_branch_mlp() -> Any:
    """x[batch, 8] -> two Linear branches (16 and 4 wide) -> Concat -> Linear(20, 3)."""
    nodes = [
        h.make_node("MatMul", ["x", "w1"], ["a"], name="/branch1/MatMul"),
        h.make_node("MatMul", ["x", "w2"], ["b"], name="/branch2/MatMul"),
        h.make_node("Concat", ["a", "b"], ["c"], axis=-1, name="/Concat"),
        h.make_node("Relu", ["c"], ["r"], name="/Relu"),
        h.make_node("MatMul", ["r", "w3"], ["y"], name="/head/MatMul"),
    ]
    return _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 8])],
        [h.make_tensor_value_info("y", T.FLOAT, ["batch", 3])],
        [_w("w1", 8, 16), _w("w2", 8, 4), _w("w3", 20, 3)],
    )


def test_concat_of_two_branches_runs_equal_to_onnxruntime_and_shards_over_batch() -> None:
    # given an MLP whose two branches are concatenated
    model = _two_branch_mlp()
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    # when it is imported, then it is one op:concat of d16 and d4 into a new d20
    imp = _equal_everywhere(model, {"x": x}, {"batch": 4})
    (op,) = _ops(imp.graph, "op:concat")
    assert op.body["params"] == {"along": ["d16", "d4"], "axis": "d20"}
    # and split over batch, the concat's shards agree with the logical run exactly
    shard(imp.graph, op.id, dim="batch", parts=2)
    assert check(imp.graph) == []
    result = run(imp.graph, {"x": x, **imp.weights}, sharded=True)
    assert result.max_abs_diff is not None
    assert max(result.max_abs_diff.values()) == 0.0


def test_conv_batch_norm_relu_runs_equal_to_onnxruntime() -> None:
    # given Conv -> BatchNormalization (inference) -> Relu, as torch.onnx exports an eval CNN
    stats = [
        numpy_helper.from_array(RNG.standard_normal(4).astype(np.float32), "bn.b"),
        numpy_helper.from_array(RNG.standard_normal(4).astype(np.float32), "bn.mean"),
        numpy_helper.from_array(np.abs(RNG.standard_normal(4)).astype(np.float32) + 0.5, "bn.var"),
    ]
    nodes = [
        h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="/conv/Conv"),
        h.make_node(
            "BatchNormalization",
            ["c", "bn.s", "bn.b", "bn.mean", "bn.var"],
            ["n"],
            epsilon=1e-3,
            name="/bn/BatchNormalization",
        ),
        h.make_node("Relu", ["n"], ["y"], name="/Relu"),
    ]
    model = _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, ["batch", 4, 6, 6])],
        [_w("w", 4, 3, 3, 3), _w("bn.s", 4), *stats],
    )
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    # when imported, then it is existing ops only (no kernel of its own), equal to onnxruntime
    imp = _equal_everywhere(model, {"x": x}, {"batch": 2})
    kernels = {n.body["kernel"] for n in imp.graph.nodes if n.type.endswith("/Operation")}
    assert kernels == {
        "op:conv2d",
        "op:subtract",
        "op:multiply",
        "op:divide",
        "op:sqrt",
        "op:add",
        "op:relu",
    }


def test_where_broadcasts_from_the_right_as_onnx_does() -> None:
    # given Where(cond[3, 1], x[2, 3, 4], y[4])
    nodes = [h.make_node("Where", ["cond", "x", "y"], ["z"])]
    model = _model(
        nodes,
        [
            h.make_tensor_value_info("cond", T.BOOL, [3, 1]),
            h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4]),
            h.make_tensor_value_info("y", T.FLOAT, [4]),
        ],
        [h.make_tensor_value_info("z", T.FLOAT, [2, 3, 4])],
        [],
    )
    feeds = {
        "cond": np.array([[True], [False], [True]]),
        "x": RNG.standard_normal((2, 3, 4)).astype(np.float32),
        "y": RNG.standard_normal(4).astype(np.float32),
    }
    # when imported, then one op:where, equal to onnxruntime everywhere
    imp = _equal_everywhere(model, feeds, {})
    assert len(_ops(imp.graph, "op:where")) == 1


def _split_model() -> Any:
    nodes = [
        h.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1),
        h.make_node("Add", ["a", "c"], ["y"]),
        h.make_node("Relu", ["b"], ["z"]),
    ]
    sizes = numpy_helper.from_array(np.array([2, 3, 2], dtype=np.int64), "sizes")
    return _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [4, 7])],
        [
            h.make_tensor_value_info("y", T.FLOAT, [4, 2]),
            h.make_tensor_value_info("z", T.FLOAT, [4, 3]),
        ],
        [sizes],
    )


def test_split_is_one_slice_per_output() -> None:
    # given x[4, 7] split into 2, 3 and 2 along dim 1, every output used
    x = RNG.standard_normal((4, 7)).astype(np.float32)
    imp = _equal_everywhere(_split_model(), {"x": x}, {})
    # then it is three slices of the one input
    assert len(_ops(imp.graph, "op:slice")) == 3


REFUSALS = [
    (
        "training-mode",
        h.make_node(
            "BatchNormalization",
            ["x", "s", "b", "m", "v"],
            ["y", "rm", "rv"],
            training_mode=1,
            name="bn",
        ),
        'BatchNormalization "bn": training_mode 1 is not supported; geon imports inference mode '
        "(training_mode 0), which normalises with the given mean and var",
    ),
    (
        "spatial",
        h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0, name="bn"),
        'BatchNormalization "bn": spatial 0 is not supported; geon imports spatial 1 (per-channel '
        "mean, var)",
    ),
]


@pytest.mark.parametrize(
    ("node", "message"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_batch_norm_refusals_name_the_attribute(node: Any, message: str) -> None:
    # given a BatchNormalization geon does not import (opset 9 still has "spatial")
    opset = 9 if node.attribute[0].name == "spatial" else 15
    outs = [
        h.make_tensor_value_info(o, T.FLOAT, [2, 3, 4] if o == "y" else [3]) for o in node.output
    ]
    g = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])]
        + [h.make_tensor_value_info(p, T.FLOAT, [3]) for p in "sbmv"],
        outs,
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    # when it is imported, then the refusal names the attribute and what geon imports
    with pytest.raises(OnnxImportError) as e:
        import_onnx(model)
    assert str(e.value) == message


def test_cnn_exports_to_a_numpy_script_equal_to_the_executor() -> None:
    # given the PyTorch CNN (conv2d, max and average pooling) imported
    imp = import_onnx(Path(__file__).parent / "models" / "cnn.onnx", dims={"batch": 2})
    x = RNG.standard_normal((2, 3, 16, 16)).astype(np.float32)
    kernels = {n.body["kernel"] for n in imp.graph.nodes if n.type.endswith("/Operation")}
    assert {"op:conv2d", "op:max_pool2d"} <= kernels
    # when its NumPy script runs
    ns: dict[str, Any] = {"__name__": "exported"}
    exec(compile(to_numpy(imp.graph), "exported.py", "exec"), ns)
    got = ns["model"]({"x": x, **imp.weights})["y"]
    # then it equals geon's executor
    want = run(imp.graph, {"x": x, **imp.weights}).by_key()["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("include", [True, False])
def test_pools_export_to_numpy_equal_to_the_executor(include: bool) -> None:
    # given max and average pooling with padding and strides (average with or without pads)
    nodes = [
        h.make_node(
            "MaxPool", ["x"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
        ),
        h.make_node(
            "AveragePool",
            ["m"],
            ["y"],
            kernel_shape=[2, 2],
            pads=[1, 1, 1, 1],
            count_include_pad=int(include),
        ),
    ]
    model = _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 7, 7])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3, 5, 5])],
        [],
    )
    x = RNG.standard_normal((2, 3, 7, 7)).astype(np.float32)
    # then geon, the re-exported ONNX model and the NumPy script all equal onnxruntime
    _equal_everywhere(model, {"x": x}, {})


def test_a_lookup_exports_to_onnx_gather_and_numpy_take() -> None:
    # given an embedding lookup authored in geon, table[V, E] by ids[B, S]
    from geon import core as gc
    from geon.core.builder.tensor import make_op

    V, E, B, S = gc.Axis("V", 7), gc.Axis("E", 3), gc.Axis("B", 2), gc.Axis("S", 4)
    table = gc.placeholder(axes=[V, E], name="table")
    ids = gc.placeholder(axes=[B, S], name="ids", dtype="int64")
    out = make_op("op:gather", {"table": [table], "indices": [ids]}, {"axis": "V"}, name="y")
    g = gc.graph([out])
    feeds = {
        "table": RNG.standard_normal((7, 3)),
        "ids": np.array([[0, 6, -1, 3], [2, 2, 5, -7]], dtype=np.int64),
    }
    want = run(g, feeds).by_key()["y"]
    np.testing.assert_array_equal(want, np.take(feeds["table"], feeds["ids"], axis=0))
    # when exported, then onnxruntime and the NumPy script give the executor's values
    session = ort.InferenceSession(to_onnx(g).SerializeToString())
    np.testing.assert_array_equal(session.run(None, feeds)[0], want)
    ns: dict[str, Any] = {"__name__": "exported"}
    exec(compile(to_numpy(g), "exported.py", "exec"), ns)
    np.testing.assert_array_equal(ns["model"](feeds)["y"], want)


def test_embedding_lookup_is_a_gather_shardable_over_batch() -> None:
    # given a text classifier: Gather(table[50, 8], ids[batch, 6]) -> ReduceMean over the
    # sequence -> MatMul(8, 3), as torch.onnx exports nn.Embedding
    nodes = [
        h.make_node("Gather", ["emb.weight", "ids"], ["e"], name="/emb/Gather"),
        h.make_node("ReduceMean", ["e", "seq"], ["m"], keepdims=0, name="/ReduceMean"),
        h.make_node("MatMul", ["m", "w"], ["y"], name="/head/MatMul"),
    ]
    seq = numpy_helper.from_array(np.array([1], dtype=np.int64), "seq")
    model = _model(
        nodes,
        [h.make_tensor_value_info("ids", T.INT64, ["batch", 6])],
        [h.make_tensor_value_info("y", T.FLOAT, ["batch", 3])],
        [_w("emb.weight", 50, 8), _w("w", 8, 3), seq],
    )
    ids = RNG.integers(0, 50, size=(4, 6)).astype(np.int64)
    # when imported, then the lookup is one op:gather, equal to onnxruntime everywhere
    imp = _equal_everywhere(model, {"ids": ids}, {"batch": 4})
    (op,) = _ops(imp.graph, "op:gather")
    assert op.body["params"] == {"axis": "d50"}
    # and split over batch, its shards agree with the logical run exactly
    shard(imp.graph, op.id, dim="batch", parts=2)
    assert check(imp.graph) == []
    result = run(imp.graph, {"ids": ids, **imp.weights}, sharded=True)
    assert result.max_abs_diff is not None
    assert max(result.max_abs_diff.values()) == 0.0
