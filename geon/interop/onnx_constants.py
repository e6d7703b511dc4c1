"""The values of ONNX ``Constant`` nodes and their geon element types, as the importer reads
them (split out of :mod:`geon.interop.onnx_import`, which stays within the module size)."""

from __future__ import annotations

from typing import Any

import numpy as np

from geon.core.errors import GeonError
from geon.interop.onnx_common import OnnxImportError
from geon.interop.onnx_common import attrs as _attrs


def constant_value(n: Any) -> np.ndarray[Any, Any]:
    """The value of ``Constant`` node ``n`` (its ``value`` tensor or a ``value_*`` list);
    :class:`OnnxImportError` naming the attributes it has and those geon reads otherwise."""
    from onnx import numpy_helper

    a = _attrs(n)
    if "value" in a:
        return numpy_helper.to_array(a["value"])
    kinds = {"value_float": np.float32, "value_floats": np.float32,
             "value_int": np.int64, "value_ints": np.int64}  # fmt: skip
    for key, dt in kinds.items():
        if key in a:
            return np.asarray(a[key], dtype=dt)
    raise OnnxImportError(
        f'Constant "{n.name or n.output[0]}" uses {sorted(a)}; geon imports '
        f'"value", {", ".join(kinds)}'
    )


def dtype_of(arr: np.ndarray[Any, Any]) -> str:
    """The geon element type of ``arr`` (``""`` for one geon lacks)."""
    from geon.core.dtypes import dtype_name

    try:
        return dtype_name(arr.dtype)
    except GeonError:
        return ""
