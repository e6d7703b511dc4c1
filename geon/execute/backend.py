"""Array backends: an array-API namespace plus, where the library has them, in-place ufuncs.

>>> be = select_backend("numpy")
>>> be.name, be.xp.__name__
('numpy', 'array_api_compat.numpy')

Kernels (:mod:`geon.execute.kernels`) are written once against ``be.xp``, the array API standard
namespace that :mod:`array_api_compat` gives for NumPy and CuPy, or ``array_api_strict`` in tests
(which refuses anything outside the standard). The standard has no ``out=`` argument, so writing
a result into planned storage is the backend's job: :meth:`Backend.elementwise` and
:meth:`Backend.matmul` call the library's own ufunc with ``out=`` when the library has one (NumPy,
CuPy: ``native``), and otherwise compute with the standard and assign into the destination.
Device transfers happen only at the edges: :meth:`Backend.asarray` (host -> device, inputs) and
:meth:`Backend.to_host` (device -> host copy, results).

Backends: ``numpy`` (default), ``cupy`` (needs a CUDA GPU that answers), ``array_api_strict``
(tests). The default comes from ``GEON_BACKEND``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from geon.core.errors import ExecutionError
from geon.core.ops import CATALOGUE
from geon.execute.blas import batched_matmul

__all__ = ["BACKENDS", "Backend", "available_backends", "select_backend"]

BACKENDS = ("numpy", "cupy", "array_api_strict")
"""Every backend name :func:`select_backend` knows."""

Array = Any

# The array API name of each elementwise kernel (its entry's ``array_api`` in the kernel table,
# geon.core.ops.catalogue); sigmoid and relu are composed.
_STANDARD = {k.name: k.array_api for k in CATALOGUE.values() if k.array_api}
# The same functions in NumPy/CuPy, whose ufuncs take ``out=``.
_NATIVE = {**_STANDARD, "op:power": "power"}


@dataclass(frozen=True, slots=True)
class Backend:
    """One array library: ``xp`` (array API namespace) and ``native`` (NumPy or CuPy with ufunc
    ``out=``, or None for ``array_api_strict``)."""

    name: str
    xp: Any
    native: Any = None

    def asarray(self, host: np.ndarray[Any, Any]) -> Array:
        """A host array on this backend's device (no copy on NumPy when nothing changes)."""
        if self.name == "numpy":
            return host
        if self.name == "cupy":
            return self.native.asarray(host)
        return self.xp.asarray(host)

    def to_host(self, a: Array) -> np.ndarray[Any, Any]:
        """A NumPy copy of ``a`` (the only device -> host transfer)."""
        if self.name == "numpy":
            return np.array(a, copy=True)
        if self.name == "cupy":
            return np.asarray(self.native.asnumpy(a))
        return np.array(np.from_dlpack(a), copy=True)

    def empty(self, n: int, dtype: Any) -> Array:
        """A flat uninitialised buffer of ``n`` elements (an arena slot)."""
        return self.xp.empty((n,), dtype=dtype)

    def dtype(self, name: str) -> Any:
        """The backend dtype of a document dtype name."""
        return getattr(self.xp, "bool" if name == "boolean" else name)

    def is_contiguous(self, a: Array) -> bool:
        """Whether ``a`` is C-contiguous (only asked where ``native`` is set)."""
        return bool(a.flags.c_contiguous)

    def elementwise(self, kernel: str, args: Sequence[Array], out: Array | None) -> Array:
        """``kernel`` folded over ``args`` (already aligned for broadcasting), into ``out`` when
        given. ``out`` may be the storage of ``args[0]`` (in place: the planner allows it only
        when that operand has the result's layout)."""
        if self.native is not None and out is not None and kernel in _NATIVE:
            f = getattr(self.native, _NATIVE[kernel])
            if len(args) == 1:
                return f(args[0], out=out)
            f(args[0], args[1], out=out)
            for a in args[2:]:
                f(out, a, out=out)
            return out
        if self.native is not None and out is not None and kernel == "op:relu":
            return self.native.maximum(args[0], out.dtype.type(0), out=out)
        if self.native is not None and out is not None and kernel == "op:sigmoid":
            nat = self.native
            nat.negative(args[0], out=out)
            nat.exp(out, out=out)
            nat.add(out, out.dtype.type(1), out=out)
            return nat.divide(out.dtype.type(1), out, out=out)
        result = standard_elementwise(self.xp, kernel, args)
        if out is None:
            return result
        out[...] = result
        return out

    def products(self, a: Array, b: Array) -> Array:
        """``a @ b`` of batched operands, a new array: on NumPy by
        :func:`~geon.execute.blas.batched_matmul` (small products on one BLAS thread each)."""
        if self.native is None:
            return self.xp.matmul(a, b)
        return batched_matmul(self.native, a, b, None)

    def matmul(self, a: Array, b: Array, out: Array | None, shape: Sequence[int]) -> Array:
        """``a @ b`` (2-D) reshaped to ``shape``, into ``out`` when given: one BLAS call, and on
        NumPy/CuPy written straight into a contiguous ``out``."""
        if self.native is not None and out is not None and self.is_contiguous(out):
            batched_matmul(self.native, a, b, out.reshape((a.shape[0], b.shape[1])))
            return out
        result = self.xp.reshape(self.xp.matmul(a, b), tuple(shape))
        if out is None:
            return result
        out[...] = result
        return out


def standard_elementwise(xp: Any, kernel: str, args: Sequence[Array]) -> Array:
    """``kernel`` folded over ``args`` with array API standard functions only."""
    if kernel == "op:relu":
        x = args[0]
        return xp.maximum(x, xp.zeros((), dtype=x.dtype))
    if kernel == "op:sigmoid":
        x = args[0]
        one = xp.ones((), dtype=x.dtype)
        return one / (one + xp.exp(-x))
    f: Callable[..., Array] = getattr(xp, _STANDARD[kernel])
    result = f(args[0]) if len(args) == 1 else f(args[0], args[1])
    for a in args[2:]:
        result = f(result, a)
    return result


def _cupy() -> Backend:
    try:
        cupy = importlib.import_module("cupy")
    except ImportError:
        raise ExecutionError(
            'backend "cupy" is not available: CuPy is not installed (pip install geon[gpu]); '
            f"available backends: {_listed()}"
        ) from None
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDA driver errors have no common base class
        raise ExecutionError(
            f'backend "cupy" is not available: no GPU answers ({type(exc).__name__}: {exc}); '
            f"available backends: {_listed()}"
        ) from None
    if count < 1:
        raise ExecutionError(
            'backend "cupy" is not available: no GPU answers (0 CUDA devices); '
            f"available backends: {_listed()}"
        )
    from array_api_compat import cupy as xp

    return Backend("cupy", xp, cupy)


def _listed() -> str:
    return "(" + ", ".join(f'"{b}"' for b in available_backends()) + ")"


def available_backends() -> tuple[str, ...]:
    """The backends that load on this machine (CuPy only with a GPU that answers)."""
    found = ["numpy"]
    try:
        cupy = importlib.import_module("cupy")
        if int(cupy.cuda.runtime.getDeviceCount()) > 0:
            found.append("cupy")
    except Exception:  # no CuPy or no driver: not available
        pass
    try:
        importlib.import_module("array_api_strict")
        found.append("array_api_strict")
    except ImportError:
        pass
    return tuple(found)


def select_backend(name: str | Backend | None = None) -> Backend:
    """The backend called ``name``, else ``GEON_BACKEND``, else NumPy.

    Raises :class:`ExecutionError` naming the backend and what is available when it cannot load.

    >>> select_backend("tpu")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geon.core.errors.ExecutionError: backend "tpu" is not known; expected one of ("numpy", ...
    """
    if isinstance(name, Backend):
        return name
    chosen = name if name is not None else os.environ.get("GEON_BACKEND", "").strip() or "numpy"
    if chosen == "numpy":
        from array_api_compat import numpy as xp

        return Backend("numpy", xp, np)
    if chosen == "cupy":
        return _cupy()
    if chosen == "array_api_strict":
        try:
            strict = importlib.import_module("array_api_strict")
        except ImportError:
            raise ExecutionError(
                'backend "array_api_strict" is not available: it is not installed '
                "(pip install geon[dev])"
            ) from None
        return Backend("array_api_strict", strict, None)
    source = "" if name is not None else " (from GEON_BACKEND)"
    expected = ", ".join(f'"{b}"' for b in BACKENDS)
    raise ExecutionError(f'backend "{chosen}"{source} is not known; expected one of ({expected})')
