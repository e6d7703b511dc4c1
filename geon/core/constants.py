"""Constants in documents: the :data:`CONSTANT` tag that holds a constant tensor's values inline
(DESIGN.md §3, §8).

>>> decode_constant(encode_constant(np.array([1.0, np.nan])), "float64", (2,)).tolist()[0]
1.0

Constants. A constant's values are stored *inline* in the document, in the tag
:data:`CONSTANT` on its Tensor node: ``{"value": nested lists}`` in the tensor's axis order
(row-major); complex values as ``{"real": ..., "imag": ...}``; non-finite floats as the strings
``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (JSON has no such numbers). The Tensor body stays
exactly loom's ``{dtype, range}``, so loom tools read the document unchanged and ignore the tag.
Inline values suit the small constants of teaching graphs; big inputs should be placeholders fed
at run time. A placeholder is a Tensor without that tag that no operation writes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from geon.core.dtypes import numpy_dtype
from geon.core.errors import ShapeError
from geon.core.nodes import GEON_TAG_PREFIX

__all__ = ["CONSTANT", "decode_constant", "encode_constant"]


CONSTANT = GEON_TAG_PREFIX + "Constant"
"""Tag holding a constant tensor's values inline (see the module docstring)."""


def _encode_real(a: np.ndarray[Any, Any]) -> Any:
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        obj = a.astype(object)
        obj[np.isnan(a)] = "NaN"
        obj[np.isposinf(a)] = "Infinity"
        obj[np.isneginf(a)] = "-Infinity"
        finite = np.isfinite(a)
        obj[finite] = [float(v) for v in a[finite]]
        return obj.tolist()
    return a.tolist()


def encode_constant(value: np.ndarray[Any, Any]) -> dict[str, Any]:
    """The :data:`CONSTANT` tag value of an array.

    >>> encode_constant(np.array([1.0, np.inf]))
    {'value': [1.0, 'Infinity']}
    """
    a = np.asarray(value)
    if a.dtype.kind == "c":
        return {"real": _encode_real(a.real), "imag": _encode_real(a.imag)}
    return {"value": _encode_real(a)}


_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _decode_real(data: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    def fix(v: Any) -> Any:
        if isinstance(v, list):
            return [fix(i) for i in v]
        if isinstance(v, str):
            if v not in _SPECIAL:
                raise ShapeError(
                    f'constant value "{v}" is invalid; expected a number, "NaN", "Infinity" or '
                    '"-Infinity"'
                )
            return _SPECIAL[v]
        return v

    return np.asarray(fix(data), dtype=dtype)


def decode_constant(
    tag: Mapping[str, Any], dtype: str, shape: Sequence[int]
) -> np.ndarray[Any, Any]:
    """The array of a :data:`CONSTANT` tag value; :class:`ShapeError` when it does not fit.

    >>> decode_constant({"value": [1.0, "NaN"]}, "float64", (2,)).tolist()[0]
    1.0
    """
    dt = numpy_dtype(dtype)
    if not isinstance(tag, Mapping):
        raise ShapeError(f'constant tag "{tag!r}" is invalid; expected {{"value": [...]}}')
    try:
        if "real" in tag:
            real = _decode_real(tag["real"], np.dtype(dt.char.lower()))
            imag = _decode_real(tag.get("imag", 0), np.dtype(dt.char.lower()))
            arr = (real + 1j * imag).astype(dt)
        else:
            arr = _decode_real(tag.get("value"), dt)
    except (TypeError, ValueError) as e:
        raise ShapeError(f"constant value cannot be read as {dtype}: {e}") from None
    if arr.shape != tuple(shape):
        raise ShapeError(
            f"constant value has shape {arr.shape}; expected {tuple(shape)} from the tensor's axes"
        )
    return arr
