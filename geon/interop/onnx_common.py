"""What the ONNX importer's modules share (:mod:`geon.interop.onnx_import`, ``onnx_ops``,
``onnx_rewrite``): the operator tables, the errors and attribute reading.

>>> "MatMul" in SUPPORTED, "Conv" in SUPPORTED, "LpPool" in SUPPORTED
(True, True, False)
"""

from __future__ import annotations

from typing import Any, NoReturn

from geon.core.builder import functions as F
from geon.core.errors import GeonError
from geon.core.ops import CATALOGUE, Kernel

MAX_NODES = 200_000


def _mapped(families: tuple[str, ...]) -> dict[str, Kernel]:
    """The ONNX operators (and aliases) of the catalogue's kernels of ``families``, each with its
    kernel: the import side of the kernel table (:mod:`geon.core.ops.catalogue`)."""
    out: dict[str, Kernel] = {}
    for k in CATALOGUE.values():
        if k.family in families and k.onnx is not None:
            for op in (k.onnx, *k.onnx_aliases):
                out[op] = k
    return out


UNARY = {op: k.name for op, k in _mapped(("unary",)).items() if not k.params}
"""ONNX operator -> unary kernel, for the kernels without params (Gelu's ``approximate`` is
read by its own branch of :func:`geon.interop.onnx_ops.emit`)."""
BINARY = {op: getattr(F, k.name.removeprefix("op:")) for op, k in _mapped(("binary",)).items()}
"""ONNX operator -> builder function of a binary kernel."""
NARY = {op: getattr(F, k.name.removeprefix("op:")) for op, k in _mapped(("nary",)).items()}
"""ONNX operator -> builder function of an n-ary kernel (``Sum`` is ``add``'s alias)."""
REDUCE = {op: getattr(F, k.name.removeprefix("op:")) for op, k in _mapped(("reduction",)).items()}
"""ONNX operator -> builder function of a reduction kernel."""
KERNEL_OF = {op: k.name for op, k in _mapped(tuple({k.family for k in CATALOGUE.values()})).items()}
"""ONNX operator -> the kernel the table maps it to (what the importer's branches emit)."""
KERNEL_OPS = frozenset(KERNEL_OF)
"""Every ONNX operator the kernel table maps to one kernel."""
STRUCTURAL = frozenset({
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "MatMul", "Gemm", "Identity", "Constant",
    "Erf", "Split", "BatchNormalization",
})  # fmt: skip
"""ONNX operators the importer maps to a few kernels, or to none (no kernel is one of them):
reshapes become views, MatMul and Gemm a ``dot`` (or ``multiply`` + ``sum``) with scalars,
``Erf`` only inside a GELU, ``Split`` slices, ``BatchNormalization`` its arithmetic."""

WINDOWED = tuple(k.onnx for k in CATALOGUE.values() if k.family in ("conv", "pool") and k.onnx)
"""2-D NCHW operators mapped to ``op:conv2d``, ``op:max_pool2d``, ``op:avg_pool2d``."""
LAYERED: tuple[str, ...] = ("Concat", "Split", "Where", "BatchNormalization")
"""Operators whose unification and emission live in :mod:`geon.interop.onnx_layers`."""
OTHER = (KERNEL_OPS | STRUCTURAL) - {*UNARY, *BINARY, *NARY, *REDUCE, *LAYERED}
"""The mapped operators with a branch of their own in :mod:`geon.interop.onnx_ops`."""
MULTI_OUTPUT = ("LayerNormalization", "Split")
"""Operators whose outputs after the first the importer maps (the others are refused if used)."""
SUPPORTED = KERNEL_OPS | STRUCTURAL
"""ONNX operator types (default domain) the importer maps."""
SHAPE_OPS = frozenset({
    "Shape", "Size", "Cast", "CastLike", "Slice", "ConstantOfShape", "Expand", "Range", "Tile",
    "Pad", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or",
    "Floor", "Ceil", "Round", "Mod",
})  # fmt: skip
"""Operators geon does not map but computes when their inputs are constants (PyTorch's shape
arithmetic); left on data they are refused as unsupported."""
UNFOLDED = frozenset(WINDOWED) | {"Einsum"}
"""Mapped operators never computed when importing, even on constants: their work is not bounded
by their output's size (a window or a contraction per element)."""
FOLDABLE = (SUPPORTED - UNFOLDED) | SHAPE_OPS
"""What the importer may compute on constants (ONNX's reference evaluator), each node only once
shape inference gave the size of its outputs and that size is within the bound."""
CONTROL_FLOW = ("Loop", "If", "Scan")
"""Refused by name, before anything is inferred or computed: their bodies are subgraphs and a
``Loop``'s trip count is any int64."""

DTYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64", 9: "boolean",
          10: "float16", 11: "float64", 14: "complex64", 15: "complex128"}  # fmt: skip


class OnnxImportError(GeonError):
    """An ONNX model geon cannot import; the message names the node, value or attribute."""


class UnsupportedOperators(OnnxImportError):
    """The model uses operators geon does not map; the message lists them with node names."""


def external_tensors(model: Any) -> list[str]:
    """The names of every tensor of ``model`` that keeps its data outside the model (in a file
    that reading it would open): initializers, sparse initializers' values and indices, and the
    tensors of every attribute (``TENSOR(S)``, ``SPARSE_TENSOR(S)``), in the main graph, in every
    subgraph at any depth, in the model's functions and training graphs.

    >>> from onnx import helper as h, TensorProto as T
    >>> t = h.make_tensor("w", T.FLOAT, [1], [0.0]); t.data_location = T.EXTERNAL
    >>> s = h.make_sparse_tensor(t, h.make_tensor("i", T.INT64, [1], [0]), [4])
    >>> g = h.make_graph([h.make_node("Constant", [], ["c"], sparse_value=s)], "g", [], [])
    >>> external_tensors(h.make_model(g))
    ['w']
    """
    from onnx import AttributeProto, TensorProto

    found: list[str] = []

    def tensor(t: Any) -> None:
        if t.data_location == TensorProto.EXTERNAL or len(t.external_data):
            found.append(t.name or "(unnamed)")

    def sparse(s: Any) -> None:
        tensor(s.values)
        tensor(s.indices)

    def attribute(a: Any) -> None:
        tensor(a.t)
        sparse(a.sparse_tensor)
        for t in a.tensors:
            tensor(t)
        for s in a.sparse_tensors:
            sparse(s)
        if a.type == AttributeProto.GRAPH or a.HasField("g"):
            graph(a.g)
        for g in a.graphs:
            graph(g)

    def nodes(ns: Any) -> None:
        for node in ns:
            for a in node.attribute:
                attribute(a)

    def graph(g: Any) -> None:
        for t in g.initializer:
            tensor(t)
        for s in g.sparse_initializer:
            sparse(s)
        nodes(g.node)

    graph(model.graph)
    for f in model.functions:
        nodes(f.node)
        for a in f.attribute_proto:
            attribute(a)
    for info in model.training_info:
        graph(info.initialization)
        graph(info.algorithm)
    return found


def refuse(n: Any, what: str) -> NoReturn:
    """Refuse ONNX node ``n``, naming it (or its first output) and saying ``what``."""
    raise OnnxImportError(f'{n.op_type} "{n.name or n.output[0]}": {what}')


def attrs(node: Any) -> dict[str, Any]:
    """The attributes of an ONNX node as Python values."""
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
