"""ONNX operators listed in :data:`geon.interop.onnx_common.LAYERED`: for each, how its dims
unify (:func:`unify_layer`, called by the importer's unification pass) and which geon ops it
becomes (:func:`emit_layer`, called by :func:`geon.interop.onnx_ops.emit`)."""

from __future__ import annotations

from typing import Any

from geon.core.builder import Tensor

_Importer = Any  # geon.interop.onnx_import._Importer (imported there, not here: no cycle)


def unify_layer(imp: _Importer, n: Any, a: dict[str, Any]) -> None:
    """Union the dims of node ``n`` that its operator forces equal."""
    raise NotImplementedError(n.op_type)  # pragma: no cover - LAYERED is empty


def emit_layer(imp: _Importer, n: Any, a: dict[str, Any]) -> Tensor:
    """The geon tensor for ``n``'s first output."""
    raise NotImplementedError(n.op_type)  # pragma: no cover - LAYERED is empty
