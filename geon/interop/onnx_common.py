"""What the ONNX importer's modules share (:mod:`geon.interop.onnx_import`, ``onnx_ops``,
``onnx_rewrite``): the operator tables, the errors and attribute reading.

>>> "MatMul" in SUPPORTED, "Conv" in SUPPORTED, "LpPool" in SUPPORTED
(True, True, False)
"""

from __future__ import annotations

from typing import Any, NoReturn

from geon.core.builder import functions as F
from geon.core.errors import GeonError

MAX_NODES = 200_000

UNARY = {
    "Relu": "op:relu",
    "Sigmoid": "op:sigmoid",
    "Tanh": "op:tanh",
    "Exp": "op:exp",
    "Log": "op:log",
    "Sqrt": "op:sqrt",
    "Neg": "op:negative",
    "Abs": "op:abs",
}
BINARY = {"Sub": F.subtract, "Div": F.divide, "Pow": F.power}
NARY = {"Add": F.add, "Mul": F.multiply, "Max": F.maximum, "Min": F.minimum, "Sum": F.add}
REDUCE = {
    "ReduceSum": F.sum,
    "ReduceMean": F.mean,
    "ReduceMax": F.max,
    "ReduceMin": F.min,
    "ReduceProd": F.prod,
}
OTHER = {
    "Einsum",
    "Reshape",
    "Squeeze",
    "Unsqueeze",
    "Gather",
    "Erf",
    "MatMul",
    "Gemm",
    "Transpose",
    "Softmax",
    "LayerNormalization",
    "Gelu",
    "Identity",
    "Constant",
    "Flatten",
    *("Conv", "MaxPool", "AveragePool"),  # WINDOWED
}
WINDOWED = ("Conv", "MaxPool", "AveragePool")
"""2-D NCHW operators mapped to ``op:conv2d``, ``op:max_pool2d``, ``op:avg_pool2d``."""
LAYERED: tuple[str, ...] = ("Concat", "Split", "Where", "BatchNormalization")
"""Operators whose unification and emission live in :mod:`geon.interop.onnx_layers`."""
MULTI_OUTPUT = ("LayerNormalization", "Split")
"""Operators whose outputs after the first the importer maps (the others are refused if used)."""
SUPPORTED = frozenset({*UNARY, *BINARY, *NARY, *REDUCE, *OTHER, *LAYERED})
"""ONNX operator types (default domain) the importer maps."""

DTYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64", 9: "boolean",
          10: "float16", 11: "float64", 14: "complex64", 15: "complex128"}  # fmt: skip


class OnnxImportError(GeonError):
    """An ONNX model geon cannot import; the message names the node, value or attribute."""


class UnsupportedOperators(OnnxImportError):
    """The model uses operators geon does not map; the message lists them with node names."""


def refuse(n: Any, what: str) -> NoReturn:
    """Refuse ONNX node ``n``, naming it (or its first output) and saying ``what``."""
    raise OnnxImportError(f'{n.op_type} "{n.name or n.output[0]}": {what}')


def attrs(node: Any) -> dict[str, Any]:
    """The attributes of an ONNX node as Python values."""
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
