"""The kernel table (geon/core/ops/catalogue.py, issue 37): one entry per kernel, every name an
entry gives resolving in the layer that reads it, and the ONNX mapping derived from it holding
both ways: each mapped ONNX operator imports as its kernel, and the import exported again computes
what ONNX's own reference evaluator (``onnx.reference.ReferenceEvaluator``, the outside oracle)
computes for the original node; both models pass ``onnx.checker``."""

from __future__ import annotations

from collections import Counter
from typing import Any

import array_api_strict
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from geon.core.ops import CATALOGUE
from geon.core.ops.catalogue import _ENTRIES
from geon.execute import run
from geon.execute.lowering import LOWERINGS
from geon.interop.export import NP_WRITERS
from geon.interop.onnx_common import BINARY, KERNEL_OPS, NARY, REDUCE, SUPPORTED, UNARY
from geon.interop.onnx_export import WRITERS, to_onnx
from geon.interop.onnx_import import import_onnx
from geon.interop.program import KNOWN

RNG = np.random.default_rng(37)
COMPOSED = ("op:relu", "op:sigmoid")  # geon.execute.backend writes them out


def test_every_kernel_has_exactly_one_entry_and_every_name_it_gives_resolves() -> None:
    # given the table's entries
    names = Counter(k.name for k in _ENTRIES)
    # then each kernel is named once, and the catalogue is the table
    assert [n for n, c in names.items() if c > 1] == []
    assert list(CATALOGUE) == [k.name for k in _ENTRIES]
    for k in _ENTRIES:
        # and its ONNX writer, NumPy writer and executor lowering exist where they are read
        assert k.onnx_writer == "" or k.onnx_writer in WRITERS, k.name
        assert k.numpy == "" or k.numpy in NP_WRITERS, k.name
        assert k.executor in LOWERINGS or (k.executor == "positional" and not k.named), k.name
        # and a kernel is exported either to both forms or to neither
        assert bool(k.numpy) == bool(k.onnx_writer), k.name
        assert (k.name in KNOWN) == bool(k.numpy), k.name
        # and an elementwise kernel is an array API standard function or composed by the backend
        assert k.array_api == "" or hasattr(array_api_strict, k.array_api), k.name
        assert bool(k.array_api) == (k.executor == "elementwise" and k.name not in COMPOSED)
        # and its ONNX operators are ONNX's (the default domain knows them)
        for op in (k.onnx, *k.onnx_aliases) if k.onnx else ():
            assert onnx.defs.has(op), (k.name, op)


def test_the_import_tables_are_the_table_read_from_the_onnx_side() -> None:
    # given every ONNX operator an entry maps
    claimed = Counter(op for k in _ENTRIES if k.onnx for op in (k.onnx, *k.onnx_aliases))
    # then no operator is claimed by two kernels (import could not tell which)
    assert [op for op, c in claimed.items() if c > 1] == []
    assert set(claimed) == KERNEL_OPS <= SUPPORTED
    # and each derived map sends the operator to its entry's kernel
    by_op = {op: k.name for k in _ENTRIES if k.onnx for op in (k.onnx, *k.onnx_aliases)}
    assert {op: by_op[op] for op in UNARY} == UNARY
    for table in (BINARY, NARY, REDUCE):
        assert {op: f.__name__ for op, f in table.items()} == {
            op: by_op[op].removeprefix("op:") for op in table
        }
    # and each family's operators take the inputs ONNX's own schemas give them (the outside
    # oracle: the maps above are derived from the table, so only this can catch a wrong family)
    schemas = {op: onnx.defs.get_schema(op) for op in SUPPORTED}
    arity = {op: (s.min_input, s.max_input) for op, s in schemas.items()}
    assert {op: arity[op] for op in UNARY} == dict.fromkeys(UNARY, (1, 1))
    assert {op: arity[op] for op in BINARY} == dict.fromkeys(BINARY, (2, 2))
    assert {op: arity[op][0] for op in REDUCE} == dict.fromkeys(REDUCE, 1)


def _f(*shape: int, low: float = -2.0) -> np.ndarray[Any, Any]:
    return RNG.uniform(low, 2.0, shape).astype(np.float32)


def _pos(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.uniform(0.5, 2.0, shape).astype(np.float32)


# ONNX operator -> (feeds, constants (initializers), attributes, opset): one node reads the feeds
# then the constants, in that order, and writes "y".
_Case = tuple[dict[str, Any], dict[str, Any], dict[str, Any], int]
_UNARIES = ("Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs")
_TWOS = ("Add", "Mul", "Max", "Min", "Sum", "Sub", "Div", "Pow")
_REDUCES = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")
_POOL = {"kernel_shape": [2, 2], "strides": [2, 2]}
CASES: dict[str, _Case] = {
    **{
        op: ({"x": _pos(2, 3) if op in ("Log", "Sqrt") else _f(2, 3)}, {}, {}, 18)
        for op in _UNARIES
    },
    **{op: ({"a": _pos(2, 3), "b": _f(3)}, {}, {}, 18) for op in _TWOS},
    **{
        op: ({"x": _pos(2, 3, 4)}, {"axes": np.array([1], np.int64)}, {"keepdims": 0}, 18)
        for op in _REDUCES
    },
    "Gelu": ({"x": _f(2, 3)}, {}, {"approximate": "tanh"}, 20),
    "Softmax": ({"x": _f(2, 3, 4)}, {}, {"axis": -1}, 18),
    "LayerNormalization": (
        {"x": _f(2, 3, 4)},
        {"scale": _f(4), "bias": _f(4)},
        {"axis": -1, "epsilon": 1e-5},
        18,
    ),
    "Einsum": ({"a": _f(2, 3), "b": _f(3, 4)}, {}, {"equation": "ij,jk->ik"}, 18),
    "Transpose": ({"x": _f(2, 3, 4)}, {}, {"perm": [1, 0, 2]}, 18),
    "Conv": ({"x": _f(1, 2, 5, 5)}, {"w": _f(3, 2, 3, 3)}, {"pads": [1, 1, 1, 1]}, 18),
    "MaxPool": ({"x": _f(1, 2, 4, 4)}, {}, _POOL, 18),
    "AveragePool": ({"x": _f(1, 2, 4, 4)}, {}, _POOL, 18),
    "Concat": ({"a": _f(2, 3), "b": _f(2, 2)}, {}, {"axis": 1}, 18),
    "Where": ({"c": RNG.random((2, 3)) < 0.5, "a": _f(2, 3), "b": _f(3)}, {}, {}, 18),
    "Gather": ({"i": np.array([[0, 4], [2, 2]], np.int64)}, {"table": _f(5, 3)}, {"axis": 0}, 18),
}
_ELEM = {np.dtype(np.float32): T.FLOAT, np.dtype(np.int64): T.INT64, np.dtype(bool): T.BOOL}


def _single_node_model(op: str) -> tuple[Any, dict[str, Any]]:
    feeds, consts, attrs, opset = CASES[op]
    # a Gather's table (an embedding, a constant) is its first input
    ins = [*consts, *feeds] if op == "Gather" else [*feeds, *consts]
    node = h.make_node(op, ins, ["y"], name=f"/{op}", **attrs)
    inputs = [h.make_tensor_value_info(n, _ELEM[v.dtype], v.shape) for n, v in feeds.items()]
    inits = [numpy_helper.from_array(v, n) for n, v in consts.items()]
    out = h.make_tensor_value_info("y", T.UNDEFINED, None)
    graph = h.make_graph([node], op, inputs, [out], initializer=inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True), feeds


def test_every_mapped_onnx_operator_has_a_round_trip_case() -> None:
    # given the ONNX operators the table maps, then each has a case below (a new entry needs one)
    assert set(CASES) == KERNEL_OPS


@pytest.mark.parametrize("op", sorted(CASES))
def test_import_then_export_computes_what_onnx_computes(op: str) -> None:
    # given one ONNX node, valid by ONNX's checker, and ONNX's reference evaluator's answer
    model, feeds = _single_node_model(op)
    onnx.checker.check_model(model, full_check=True)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    assert isinstance(want, np.ndarray)
    kernel = next(k for k in _ENTRIES if op in (k.onnx, *k.onnx_aliases))
    # when geon imports it
    imp = import_onnx(model)
    # then the document holds the kernel the table maps the operator to, and runs to the oracle
    kernels = {n.body["kernel"] for n in imp.graph.nodes if n.type.endswith("/Operation")}
    assert kernel.name in kernels, (op, kernels)
    got = run(imp.graph, {**feeds, **imp.weights}).by_key()["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # when the import is exported again (the writer the entry names)
    back = to_onnx_checked(imp)
    # then ONNX's evaluator computes the same from it
    (again,) = ReferenceEvaluator(back).run(None, feeds)
    assert isinstance(again, np.ndarray)
    np.testing.assert_allclose(again, want, rtol=1e-5, atol=1e-6)
    # and where the writer writes the operator itself, importing that gives the kernel back
    if op == kernel.onnx and op in {n.op_type for n in back.graph.node}:
        kernels = {n.body["kernel"] for n in import_onnx(back).graph.nodes
                   if n.type.endswith("/Operation")}  # fmt: skip
        assert kernel.name in kernels, (op, kernels)


def to_onnx_checked(imp: Any) -> Any:
    """The import exported to ONNX, checked by ONNX's own checker."""
    back = to_onnx(imp.graph, weights=imp.weights)
    onnx.checker.check_model(back, full_check=True)
    return back
