"""Tensor dtypes: the names a document may use, their NumPy dtypes, their sizes, and the dtype a
kernel gives its operands (DESIGN.md §4, §5).

>>> DTYPES[:3], numpy_dtype("boolean"), dtype_name(np.float32), DTYPE_BYTES["complex64"]
(('boolean', 'int8', 'int16'), dtype('bool'), 'float32', 8)
>>> result_dtype("op:add", ["int32", "float32"]), result_dtype("op:exp", ["int32"])
('float64', 'int32')
>>> compute_dtype("op:exp", ["int32"]), compute_dtype("op:sum", ["int32"])
('float64', 'int64')

Kernels follow NumPy's promotion rules: the dtype of a kernel is found by running the NumPy
function whose rule it follows (:data:`UFUNCS`, :data:`REDUCERS`, ``einsum``'s for dot and conv)
on one-element arrays. Two questions are asked of that one rule:

- :func:`result_dtype`, the dtype of the output tensor the authoring API creates. A unary op keeps
  its operand's dtype, and a kernel NumPy refuses (``subtract`` on booleans) raises NumPy's error.
- :func:`compute_dtype`, the dtype the executor computes in before casting to the output tensor's
  dtype. A unary op computes in its ufunc's dtype (``exp`` of integers in float64), and a
  combination NumPy refuses computes in the first operand's dtype, leaving it to the array library.

This module is a leaf: it imports NumPy and :mod:`geon.core.errors` only.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

import numpy as np

from geon.core.errors import ShapeError

__all__ = [
    "DTYPES",
    "DTYPE_BYTES",
    "REDUCERS",
    "UFUNCS",
    "compute_dtype",
    "dtype_name",
    "numpy_dtype",
    "result_dtype",
]

Array = np.ndarray[Any, Any]

DTYPES: tuple[str, ...] = (
    "boolean",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
"""The dtypes a Tensor may have (DESIGN.md §5)."""

DTYPE_BYTES: dict[str, int] = {
    "boolean": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "float16": 2,
    "int32": 4,
    "float32": 4,
    "int64": 8,
    "float64": 8,
    "complex64": 8,
    "complex128": 16,
}
"""Bytes per element of each dtype, smallest first (messages list the dtypes in this order).

>>> all(DTYPE_BYTES[name] == numpy_dtype(name).itemsize for name in DTYPES)
True
"""


def numpy_dtype(name: str) -> np.dtype[Any]:
    """The NumPy dtype of a document dtype name (``"boolean"`` -> ``bool``).

    >>> numpy_dtype("boolean"), numpy_dtype("int8")
    (dtype('bool'), dtype('int8'))
    """
    return np.dtype("bool" if name == "boolean" else name)


def dtype_name(dt: Any) -> str:
    """The document dtype name of a NumPy dtype (``bool`` -> ``"boolean"``).

    >>> dtype_name(np.bool_), dtype_name("float64")
    ('boolean', 'float64')
    >>> dtype_name("U1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    geon.core.errors.ShapeError: dtype "str32" is not supported; expected one of ('boolean', ...)
    """
    numpy_name = np.dtype(dt).name
    name = "boolean" if numpy_name == "bool" else numpy_name
    if name not in DTYPES:
        raise ShapeError(f'dtype "{numpy_name}" is not supported; expected one of {DTYPES}')
    return name


def _sigmoid(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


def _relu(x: Array) -> Array:
    return np.maximum(x, np.zeros((), dtype=x.dtype))


UFUNCS: dict[str, Callable[..., Array]] = {
    "op:add": np.add,
    "op:multiply": np.multiply,
    "op:maximum": np.maximum,
    "op:minimum": np.minimum,
    "op:subtract": np.subtract,
    "op:divide": np.divide,
    "op:power": np.power,
    "op:negative": np.negative,
    "op:abs": np.abs,
    "op:exp": np.exp,
    "op:log": np.log,
    "op:sqrt": np.sqrt,
    "op:square": np.square,
    "op:tanh": np.tanh,
    "op:sigmoid": _sigmoid,
    "op:relu": _relu,
}
"""The NumPy function of every elementwise kernel."""

REDUCERS: dict[str, Callable[..., Array]] = {
    "op:sum": np.sum,
    "op:prod": np.prod,
    "op:max": np.max,
    "op:min": np.min,
    "op:mean": np.mean,
}
"""The NumPy function of every reduction kernel."""


def _dot_probe(x: Array, y: Array) -> Array:
    return np.ones(0, np.result_type(x, y))


def _fold(f: Callable[..., Array]) -> Callable[..., Array]:
    def run(*arrays: Array) -> Array:
        return reduce(f, arrays)

    return run


def _along0(f: Callable[..., Array]) -> Callable[..., Array]:
    def run(a: Array) -> Array:
        return np.asarray(f(a, axis=0))

    return run


_PROBES: dict[str, Callable[..., Array]] = {
    **{k: _fold(f) for k, f in UFUNCS.items()},
    **{k: _along0(f) for k, f in REDUCERS.items()},
    "op:dot": _dot_probe,
    "op:conv2d": _dot_probe,
}
"""Functions whose result dtype on one-element arrays is the kernel's (NumPy's rules)."""

_POSITIONAL_RULES = {"op:linear": "op:dot", "matmul": "op:dot", "row_sum": "op:sum"}
"""The named kernel whose rule each positional loom kernel computes in."""


def _probed(probe: Callable[..., Array], dtypes: Sequence[str]) -> str:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = probe(*(np.ones((1,), dtype=numpy_dtype(d)) for d in dtypes)).dtype
    return dtype_name(found)


def result_dtype(kernel: str, dtypes: Sequence[str]) -> str:
    """The dtype of the tensor ``kernel`` writes from operands of ``dtypes``: NumPy's promotion,
    except that unary ops, views and kernels without a rule keep the first operand's dtype.

    >>> result_dtype("op:dot", ["int8", "float16"]), result_dtype("op:transpose", ["int8"])
    ('float16', 'int8')
    """
    return _result_dtype(kernel, tuple(dtypes))


@functools.lru_cache(maxsize=1024)
def _result_dtype(kernel: str, dtypes: tuple[str, ...]) -> str:
    probe = _PROBES.get(kernel)
    if probe is None or (len(dtypes) == 1 and kernel in UFUNCS):
        return dtypes[0]
    return _probed(probe, dtypes)


def compute_dtype(kernel: str, dtypes: Sequence[str]) -> str:
    """The dtype the executor computes ``kernel`` in on operands of ``dtypes`` (NumPy's rules;
    views and kernels without a rule keep the first operand's dtype).

    >>> compute_dtype("op:add", ["int32", "float32"]), compute_dtype("op:subtract", ["boolean"] * 2)
    ('float64', 'boolean')
    """
    return _compute_dtype(kernel, tuple(dtypes))


@functools.lru_cache(maxsize=1024)
def _compute_dtype(kernel: str, dtypes: tuple[str, ...]) -> str:
    if not dtypes:
        return "float64"
    probe: Callable[..., Array] | None = _PROBES.get(_POSITIONAL_RULES.get(kernel, kernel))
    if len(dtypes) == 1 and kernel in UFUNCS:
        probe = UFUNCS[kernel]
    if probe is None:
        return dtypes[0]
    try:
        return _probed(probe, dtypes)
    except Exception:  # a dtype NumPy cannot combine: let the array library decide
        return dtypes[0]
