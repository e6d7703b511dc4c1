"""The Python authoring API (DESIGN.md §8), re-exported as :mod:`geon.core`.

>>> import numpy as np
>>> from geon import core as gc
>>> H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
>>> x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1])
>>> y = gc.placeholder(axes=[W, N], name="y")
>>> z = gc.dot(x, y)
>>> str(z.axes), str(z.axes[1])
('(H, N)', 'N')
>>> gc.evaluate(z, feeds={y: np.ones((3, 4))}).tolist()
[[3.0, 3.0, 3.0, 3.0], [12.0, 12.0, 12.0, 12.0]]

Every call infers its result axes at once through :func:`geon.core.ops.infer` and raises a
:class:`~geon.core.errors.GeonError` subclass naming the axis; :func:`graph` then writes exactly
what the checker re-derives, so a graph built here checks clean.

Document written by :func:`graph`:

- one ``Axis`` node per declared axis mentioned anywhere (tensor axes and op params);
- one ``Tensor`` node per tensor: ``{dtype, range}`` with the range ``[0, length)`` per axis, a
  ``TensorAxes`` tag, and its ``label`` when the tensor was named;
- one ``Operation`` node per op: ``{kernel, params?, inputs, outputs}`` and the tags
  ``IndexAxes``, ``IPFIndex`` and the derived ``IPFSignature``. Each selection is the region the
  op reads or writes (:meth:`geon.core.ops.Inference.selections`): the whole tensor for most
  kernels, the sliced window for ``op:slice``. Kernel params count from the tensor's origin.

Constants. A constant's values are stored *inline* in the document, in the tag
:data:`CONSTANT` on its Tensor node: ``{"value": nested lists}`` in the tensor's axis order
(row-major); complex values as ``{"real": ..., "imag": ...}``; non-finite floats as the strings
``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (JSON has no such numbers). The Tensor body stays
exactly loom's ``{dtype, range}``, so loom tools read the document unchanged and ignore the tag.
Inline values suit the small constants of teaching graphs; big inputs should be placeholders fed
at run time. A placeholder is a Tensor without that tag that no operation writes.

Unbound axes. A document may hold axes with ``length: null``, but a Tensor's range needs an
extent, so :func:`graph` refuses tensors with unbound axes (``ShapeError`` naming the axis).
"""

from __future__ import annotations

import builtins
import itertools
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from geon.core.axes import Axes, Axis, AxisRef, CompositeRef, RefLike, to_ref
from geon.core.errors import AxisError, ExecutionError, GeonError, KernelError, ShapeError
from geon.core.graph import (
    AXIS,
    GEON_TAG_PREFIX,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    Graph,
    Node,
)
from geon.core.ops import CATALOGUE, Inference, infer

__all__ = [
    "CONSTANT",
    "Axis",
    "Tensor",
    "abs",
    "add",
    "broadcast",
    "cast_axes",
    "constant",
    "conv2d",
    "decode_constant",
    "dimshuffle",
    "divide",
    "dot",
    "encode_constant",
    "evaluate",
    "exp",
    "flatten",
    "graph",
    "log",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "multiply",
    "negative",
    "pad",
    "placeholder",
    "power",
    "prod",
    "relu",
    "sigmoid",
    "slice",
    "sqrt",
    "square",
    "subtract",
    "sum",
    "tanh",
    "transpose",
    "unflatten",
]

CONSTANT = GEON_TAG_PREFIX + "Constant"
"""Tag holding a constant tensor's values inline (see the module docstring)."""

_DTYPE_NAMES = {
    "bool": "boolean",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}


def numpy_dtype(name: str) -> np.dtype[Any]:
    """The NumPy dtype of a document dtype name (``"boolean"`` -> ``bool``)."""
    return np.dtype("bool" if name == "boolean" else name)


def _dtype_name(dt: Any) -> str:
    name = np.dtype(dt).name
    if name not in _DTYPE_NAMES:
        raise ShapeError(
            f'dtype "{name}" is not supported; expected one of {tuple(_DTYPE_NAMES.values())}'
        )
    return _DTYPE_NAMES[name]


# ------------------------------------------------------------------------------------------
# Constants in documents


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


# ------------------------------------------------------------------------------------------
# Tensor handles


_counter = itertools.count()


class Tensor:
    """A tensor in a graph being authored: its axes, dtype and how it is computed.

    Handles compare and hash by identity (they key ``feeds``). Python operators build ops:
    ``x + y``, ``x - y``, ``x * y``, ``x / y``, ``x ** y``, ``x @ y`` (dot), ``-x``, ``abs(x)``,
    and ``x.T``; NumPy scalars on the left defer to them.
    """

    __array_ufunc__ = None  # np.float64(2) * x builds an op instead of an object array

    __slots__ = (
        "axes",
        "dtype",
        "id",
        "inference",
        "inputs",
        "kernel",
        "name",
        "op_id",
        "params",
        "scope",
        "seq",
        "value",
    )

    def __init__(
        self,
        axes: Axes,
        dtype: str,
        *,
        kernel: str | None = None,
        inputs: tuple[tuple[str, tuple[Tensor, ...]], ...] = (),
        params: dict[str, Any] | None = None,
        inference: Inference | None = None,
        value: np.ndarray[Any, Any] | None = None,
        name: str | None = None,
        scope: dict[str, Axis] | None = None,
    ) -> None:
        self.axes = axes
        self.dtype = dtype
        self.kernel = kernel
        self.inputs = inputs
        self.params = params or {}
        self.inference = inference
        self.value = value
        self.name = name
        self.id = str(uuid.uuid4())
        self.op_id = str(uuid.uuid4()) if kernel is not None else None
        self.scope = scope if scope is not None else {}
        self.seq = next(_counter)

    @property
    def is_placeholder(self) -> bool:
        return self.kernel is None and self.value is None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.axes.shape

    def __repr__(self) -> str:
        what = self.kernel or ("constant" if self.value is not None else "placeholder")
        label = f' "{self.name}"' if self.name else ""
        return f"<Tensor{label} {what} {self.axes} {self.dtype}>"

    @property
    def T(self) -> Tensor:
        """Reversed axes, each dual level k mapped to -1-k."""
        return transpose(self)

    def __add__(self, other: Any) -> Tensor:
        return add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return subtract(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return subtract(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return multiply(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return multiply(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return divide(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return divide(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return power(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return power(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return dot(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return dot(other, self)

    def __neg__(self) -> Tensor:
        return negative(self)

    def __abs__(self) -> Tensor:
        return abs(self)


def _merge_scope(
    scopes: Iterable[Mapping[str, Axis]], extra: Iterable[Axis] = ()
) -> dict[str, Axis]:
    out: dict[str, Axis] = {}
    for axis in itertools.chain((a for s in scopes for a in s.values()), extra):
        old = out.get(axis.name)
        if old is None:
            out[axis.name] = axis
        elif old != axis:
            raise AxisError(
                f'two different axes are named "{axis.name}": {old!r} and {axis!r}; an axis is '
                "declared once per graph, so give one of them another name"
            )
    return out


def _axes_of(items: Iterable[RefLike] | RefLike, what: str) -> Axes:
    try:
        return Axes.of(items)  # type: ignore[arg-type]
    except TypeError:
        raise AxisError(f'{what} "{items!r}" is not a list of axes') from None


def _tensor(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, complex, bool, np.number, np.bool_)) or (
        isinstance(x, np.ndarray) and x.ndim == 0
    ):
        return constant(np.asarray(x), axes=[])
    raise GeonError(
        f'"{_shown(x)}" is not a tensor; expected a geon Tensor (from constant, placeholder '
        "or an op) or a Python number"
    )


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _result_dtype(kernel: str, dtypes: Sequence[str]) -> str:
    """NumPy's result dtype for the kernel, found by running it on one-element arrays."""
    from geon.core.reference import DTYPE_PROBES

    probe = DTYPE_PROBES.get(kernel)
    arrays = [np.ones((1,), dtype=numpy_dtype(d)) for d in dtypes]
    if probe is None:
        return dtypes[0]
    with np.errstate(all="ignore"):
        return _dtype_name(probe(*arrays).dtype)


def _op(
    kernel: str,
    inputs: Mapping[str, Sequence[Tensor]],
    params: Mapping[str, Any] | None = None,
    new_axes: Iterable[Axis] = (),
    name: str | None = None,
) -> Tensor:
    groups = tuple((key, tuple(ts)) for key, ts in inputs.items())
    tensors = [t for _, ts in groups for t in ts]
    scope = _merge_scope((t.scope for t in tensors), new_axes)
    inf = infer(kernel, {k: [t.axes for t in ts] for k, ts in groups}, params or {}, scope)
    scope = _merge_scope([scope], inf.result.declared)
    dtype = _result_dtype(kernel, [t.dtype for t in tensors])
    return Tensor(
        inf.result,
        dtype,
        kernel=kernel,
        inputs=groups,
        params=dict(inf.params),
        inference=inf,
        name=name,
        scope=scope,
    )


def _ref_str(item: RefLike | str) -> str:
    return item if isinstance(item, str) else str(to_ref(item))


def _decls(items: Iterable[Any]) -> list[Axis]:
    out: list[Axis] = []
    for item in items:
        if isinstance(item, (Axis, AxisRef, CompositeRef)):
            out.extend(to_ref(item).axes)
    return out


# ------------------------------------------------------------------------------------------
# Leaves


def constant(
    value: Any,
    axes: Iterable[RefLike] | None = None,
    *,
    name: str | None = None,
    dtype: str | None = None,
) -> Tensor:
    """A tensor with fixed values, stored inline in the document.

    >>> H = Axis("H", 2)
    >>> constant([1.0, 2.0], axes=[H]).dtype
    'float64'
    """
    arr = np.asarray(value) if dtype is None else np.asarray(value, dtype=numpy_dtype(dtype))
    ax = _axes_of(axes if axes is not None else [], "axes")
    if len(ax) != arr.ndim:
        raise ShapeError(
            f"constant value has {arr.ndim} dims (shape {arr.shape}) but axes {ax} name "
            f"{len(ax)}; name one axis per dim"
        )
    for ref, n in zip(ax, arr.shape, strict=True):
        if ref.length != n:
            if ref.length is None:
                raise ShapeError(
                    f'axis "{ref}" has no length but the constant has {n} elements along it; '
                    f'declare it as Axis("{ref.axes[0].name}", {n})'
                )
            raise ShapeError(
                f'constant value has {n} elements along axis "{ref}" of length {ref.length}; '
                "the value's shape must equal the axes' lengths"
            )
    dt = _dtype_name(arr.dtype)
    return Tensor(ax, dt, value=arr, name=name, scope=_merge_scope([], ax.declared))


def placeholder(
    axes: Iterable[RefLike],
    name: str | None = None,
    dtype: str = "float64",
) -> Tensor:
    """An input fed at run time (``evaluate(..., feeds={t: array})``)."""
    ax = _axes_of(axes, "axes")
    if dtype not in _DTYPE_NAMES.values():
        raise ShapeError(
            f'dtype "{dtype}" is unknown; expected one of {tuple(_DTYPE_NAMES.values())}'
        )
    return Tensor(ax, dtype, name=name, scope=_merge_scope([], ax.declared))


# ------------------------------------------------------------------------------------------
# Elementwise


def _elementwise(
    kernel: str, operands: Sequence[Any], axes: Iterable[RefLike] | None, name: str | None
) -> Tensor:
    ts = [_tensor(t) for t in operands]
    params: dict[str, Any] = {}
    if axes is not None:
        refs = [to_ref(a) for a in axes]
        params["axes"] = [str(r) for r in refs]
    key = "tensors" if CATALOGUE[kernel].variadic else None
    inputs = {"tensors": ts} if key else {"x": [ts[0]], "y": [ts[1]]}
    return _op(kernel, inputs, params, _decls(axes or ()), name)


def add(*operands: Any, axes: Iterable[RefLike] | None = None, name: str | None = None) -> Tensor:
    """Elementwise sum of one or more tensors; result axes per DESIGN.md §2 (or ``axes``)."""
    return _elementwise("op:add", operands, axes, name)


def multiply(
    *operands: Any, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """Elementwise product of one or more tensors."""
    return _elementwise("op:multiply", operands, axes, name)


def maximum(
    *operands: Any, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """Elementwise maximum."""
    return _elementwise("op:maximum", operands, axes, name)


def minimum(
    *operands: Any, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """Elementwise minimum."""
    return _elementwise("op:minimum", operands, axes, name)


def subtract(
    x: Any, y: Any, *, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """``x - y``."""
    return _elementwise("op:subtract", (x, y), axes, name)


def divide(
    x: Any, y: Any, *, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """``x / y``."""
    return _elementwise("op:divide", (x, y), axes, name)


def power(
    x: Any, y: Any, *, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """``x ** y``."""
    return _elementwise("op:power", (x, y), axes, name)


def _unary(kernel: str, x: Any, name: str | None) -> Tensor:
    return _op(kernel, {"tensor": [_tensor(x)]}, {}, (), name)


def negative(x: Any, *, name: str | None = None) -> Tensor:
    """``-x``."""
    return _unary("op:negative", x, name)


def abs(x: Any, *, name: str | None = None) -> Tensor:
    """``|x|``."""
    return _unary("op:abs", x, name)


def exp(x: Any, *, name: str | None = None) -> Tensor:
    """``e**x``."""
    return _unary("op:exp", x, name)


def log(x: Any, *, name: str | None = None) -> Tensor:
    """Natural logarithm."""
    return _unary("op:log", x, name)


def sqrt(x: Any, *, name: str | None = None) -> Tensor:
    """Square root."""
    return _unary("op:sqrt", x, name)


def square(x: Any, *, name: str | None = None) -> Tensor:
    """``x*x``."""
    return _unary("op:square", x, name)


def tanh(x: Any, *, name: str | None = None) -> Tensor:
    """Hyperbolic tangent."""
    return _unary("op:tanh", x, name)


def sigmoid(x: Any, *, name: str | None = None) -> Tensor:
    """``1 / (1 + e**-x)``."""
    return _unary("op:sigmoid", x, name)


def relu(x: Any, *, name: str | None = None) -> Tensor:
    """``max(x, 0)``."""
    return _unary("op:relu", x, name)


# ------------------------------------------------------------------------------------------
# dot, reductions, views, conv


def dot(x: Any, y: Any, *, name: str | None = None) -> Tensor:
    """Contract ``A^k`` in one operand with ``A^(k+1)`` in the other (DESIGN.md §2)."""
    return _op("op:dot", {"x": [_tensor(x)], "y": [_tensor(y)]}, {}, (), name)


def _reduce(
    kernel: str,
    x: Any,
    reduction_axes: Iterable[RefLike] | RefLike | None,
    out_axes: Iterable[RefLike] | RefLike | None,
    name: str | None,
) -> Tensor:
    params: dict[str, Any] = {}
    extra: list[Any] = []
    for key, group in (("reduction_axes", reduction_axes), ("out_axes", out_axes)):
        if group is None:
            continue
        items = [group] if isinstance(group, (Axis, AxisRef, CompositeRef)) else list(group)
        params[key] = [_ref_str(i) for i in items]
        extra += items
    return _op(kernel, {"tensor": [_tensor(x)]}, params, _decls(extra), name)


def sum(
    x: Any,
    reduction_axes: Iterable[RefLike] | RefLike | None = None,
    out_axes: Iterable[RefLike] | RefLike | None = None,
    *,
    name: str | None = None,
) -> Tensor:
    """Sum over ``reduction_axes`` and/or keep ``out_axes`` (in that order); neither = all."""
    return _reduce("op:sum", x, reduction_axes, out_axes, name)


def prod(
    x: Any,
    reduction_axes: Iterable[RefLike] | RefLike | None = None,
    out_axes: Iterable[RefLike] | RefLike | None = None,
    *,
    name: str | None = None,
) -> Tensor:
    """Product over axes (see :func:`sum`)."""
    return _reduce("op:prod", x, reduction_axes, out_axes, name)


def max(
    x: Any,
    reduction_axes: Iterable[RefLike] | RefLike | None = None,
    out_axes: Iterable[RefLike] | RefLike | None = None,
    *,
    name: str | None = None,
) -> Tensor:
    """Maximum over axes (see :func:`sum`)."""
    return _reduce("op:max", x, reduction_axes, out_axes, name)


def min(
    x: Any,
    reduction_axes: Iterable[RefLike] | RefLike | None = None,
    out_axes: Iterable[RefLike] | RefLike | None = None,
    *,
    name: str | None = None,
) -> Tensor:
    """Minimum over axes (see :func:`sum`)."""
    return _reduce("op:min", x, reduction_axes, out_axes, name)


def mean(
    x: Any,
    reduction_axes: Iterable[RefLike] | RefLike | None = None,
    out_axes: Iterable[RefLike] | RefLike | None = None,
    *,
    name: str | None = None,
) -> Tensor:
    """Mean over axes (see :func:`sum`)."""
    return _reduce("op:mean", x, reduction_axes, out_axes, name)


def _view(kernel: str, x: Any, axes: Iterable[RefLike], name: str | None) -> Tensor:
    items = list(axes)
    return _op(
        kernel,
        {"tensor": [_tensor(x)]},
        {"axes": [_ref_str(a) for a in items]},
        _decls(items),
        name,
    )


def cast_axes(x: Any, axes: Iterable[RefLike], *, name: str | None = None) -> Tensor:
    """Relabel the axes position by position (same count, same lengths); no data moves."""
    return _view("op:cast_axes", x, axes, name)


def broadcast(x: Any, axes: Iterable[RefLike], *, name: str | None = None) -> Tensor:
    """Broadcast to a superset of the axes, in the given order."""
    return _view("op:broadcast", x, axes, name)


def dimshuffle(x: Any, axes: Iterable[RefLike], *, name: str | None = None) -> Tensor:
    """The same axes in another order."""
    return _view("op:dimshuffle", x, axes, name)


def transpose(x: Any, *, name: str | None = None) -> Tensor:
    """Reverse the axes and map each dual level k to -1-k (``x.T``)."""
    return _op("op:transpose", {"tensor": [_tensor(x)]}, {}, (), name)


def slice(
    x: Any,
    slices: Mapping[RefLike | str, builtins.slice | int],
    axes: Mapping[RefLike | str, RefLike] | None = None,
    *,
    name: str | None = None,
) -> Tensor:
    """Slice along axes: ``{H: slice(0, 2)}`` (an int drops the axis); a changed length needs a
    new axis, named in ``axes={H: H2}``."""
    spec: dict[str, Any] = {}
    for key, s in slices.items():
        if isinstance(s, builtins.slice):
            spec[_ref_str(key)] = {"start": s.start, "stop": s.stop, "step": s.step}
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            spec[_ref_str(key)] = int(s)
        else:
            raise KernelError(
                f'slice for axis "{_ref_str(key)}" is "{s!r}"; expected a Python slice or an int'
            )
    params: dict[str, Any] = {"slices": spec}
    renames = dict(axes or {})
    if renames:
        params["axes"] = {_ref_str(k): _ref_str(v) for k, v in renames.items()}
    return _op(
        "op:slice", {"tensor": [_tensor(x)]}, params, _decls([*renames.values(), *slices]), name
    )


def pad(
    x: Any,
    widths: Mapping[RefLike | str, tuple[int, int]],
    axes: Mapping[RefLike | str, RefLike] | None = None,
    *,
    name: str | None = None,
) -> Tensor:
    """Zero-pad along axes: ``{H: (before, after)}``; a changed length needs a new axis."""
    params: dict[str, Any] = {"pad": {_ref_str(k): list(w) for k, w in widths.items()}}
    renames = dict(axes or {})
    if renames:
        params["axes"] = {_ref_str(k): _ref_str(v) for k, v in renames.items()}
    return _op("op:pad", {"tensor": [_tensor(x)]}, params, _decls(renames.values()), name)


def flatten(x: Any, axes: Sequence[RefLike] | None = None, *, name: str | None = None) -> Tensor:
    """Merge adjacent axes into one composite axis ``A*B`` (default: all axes)."""
    t = _tensor(x)
    items = list(axes) if axes is not None else list(t.axes)
    return _view("op:flatten", t, items, name)


def unflatten(
    x: Any, axes: Sequence[CompositeRef] | None = None, *, name: str | None = None
) -> Tensor:
    """Split composite axes back into their parts (default: every composite axis)."""
    params = {} if axes is None else {"axes": [_ref_str(a) for a in axes]}
    return _op("op:unflatten", {"tensor": [_tensor(x)]}, params, (), name)


def conv2d(
    x: Any,
    filter: Any,
    out_axes: Iterable[RefLike],
    *,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    name: str | None = None,
) -> Tensor:
    """2-D convolution: ``x`` has axes with roles Channel, Height, Width (others are batch);
    ``filter`` has the channel's dual, a Height and a Width window axis and a Channelout axis."""
    items = list(out_axes)
    params = {
        "out_axes": [_ref_str(a) for a in items],
        "stride": list(stride) if isinstance(stride, (tuple, list)) else stride,
        "padding": list(padding) if isinstance(padding, (tuple, list)) else padding,
    }
    return _op(
        "op:conv2d", {"x": [_tensor(x)], "filter": [_tensor(filter)]}, params, _decls(items), name
    )


# ------------------------------------------------------------------------------------------
# Documents and evaluation


def _walk(outputs: Sequence[Tensor]) -> list[Tensor]:
    seen: dict[int, Tensor] = {}
    order: list[Tensor] = []
    stack: list[tuple[Tensor, bool]] = [(t, False) for t in reversed(outputs)]
    while stack:
        t, done = stack.pop()
        if done:
            order.append(t)
            continue
        if id(t) in seen:
            continue
        seen[id(t)] = t
        stack.append((t, True))
        for _, ts in reversed(t.inputs):
            for i in reversed(ts):
                if id(i) not in seen:
                    stack.append((i, False))
    return order


def _range(t: Tensor) -> dict[str, list[int]]:
    return {"start": [0] * len(t.axes), "end": list(t.shape)}


def graph(outputs: Sequence[Tensor] | Tensor, *, id: str | None = None) -> Graph:
    """The LoomGraph document computing ``outputs`` (see the module docstring).

    >>> H = Axis("H", 2)
    >>> g = graph([constant([1.0, 2.0], axes=[H]) * 2.0])
    >>> sorted(n.type.rsplit("/", 1)[1] for n in g.nodes)
    ['Axis', 'Operation', 'Tensor', 'Tensor', 'Tensor']
    """
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    for o in outs:
        if not isinstance(o, Tensor):
            raise GeonError(f'graph output "{o!r}" is not a tensor; expected geon Tensors')
    tensors = _walk(outs)
    scope = _merge_scope(t.scope for t in tensors)
    nodes: list[Node] = []
    for axis in scope.values():
        nodes.append(
            Node(
                str(uuid.uuid5(uuid.NAMESPACE_URL, f"geon-axis:{axis.name}")),
                AXIS,
                axis.name,
                axis.to_json(),
            )
        )
    for t in tensors:
        for ref in t.axes:
            if ref.length is None:
                raise ShapeError(
                    f'tensor {t!r} has axis "{ref}" without a length; bind it (e.g. '
                    f'Axis("{ref.axes[0].name}", 4)) before building a document'
                )
        tags: dict[str, Any] = {TENSOR_AXES: {"axes": list(t.axes.names)}}
        if t.value is not None:
            tags[CONSTANT] = encode_constant(t.value)
        nodes.append(Node(t.id, TENSOR, t.name, {"dtype": t.dtype, "range": _range(t)}, tags))
    for t in tensors:
        if t.kernel is None or t.inference is None or t.op_id is None:
            continue
        ranges = {key: [([0] * len(i.axes), list(i.shape)) for i in ts] for key, ts in t.inputs}
        ranges["result"] = [([0] * len(t.axes), list(t.shape))]
        read = t.inference.selections(ranges)
        inputs = {
            key: [{"tensorId": i.id, "range": r} for i, r in zip(ts, read[key], strict=True)]
            for key, ts in t.inputs
        }
        body: dict[str, Any] = {"kernel": t.kernel}
        if t.params:
            body["params"] = t.params
        body["inputs"] = inputs
        body["outputs"] = {"result": [{"tensorId": t.id, "range": read["result"][0]}]}
        tags = {
            INDEX_AXES: t.inference.index_json(),
            IPF_INDEX: t.inference.index_range(),
            IPF_SIGNATURE: t.inference.signature(),
        }
        nodes.append(Node(t.op_id, OPERATION, t.kernel, body, tags))
    return Graph(nodes, id=id or str(uuid.uuid4()))


def evaluate(
    outputs: Tensor | Sequence[Tensor],
    feeds: Mapping[Tensor | str, Any] | None = None,
) -> Any:
    """Evaluate one tensor (an ndarray in its axis order) or a list of them (a list).

    ``feeds`` gives every placeholder a value, keyed by the handle or its name. The graph runs
    on the executor (:func:`geon.execute.evaluate_graph`); the NumPy reference
    (:func:`geon.core.reference.evaluate_graph`) stays as the executor's test oracle.
    """
    # The one import from core into a layer above it, allowed by name in the import contract:
    # the authoring API's convenience entry point runs graphs where every other run goes.
    from geon.execute import evaluate_graph

    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    g = graph(outs)
    by_name = {t.name: t for t in _walk(outs) if t.is_placeholder and t.name}
    values: dict[str, Any] = {}
    for key, v in (feeds or {}).items():
        if isinstance(key, Tensor):
            values[key.id] = v
        elif isinstance(key, str) and key in by_name:
            values[by_name[key].id] = v
        else:
            names = tuple(by_name)
            raise ExecutionError(
                f'feed "{_shown(key)}" is not a placeholder of this graph; expected a placeholder '
                f"handle or one of the names {names}"
            )
    result = evaluate_graph(g, values)
    arrays = [np.asarray(result[t.id]) for t in outs]
    return arrays[0] if isinstance(outputs, Tensor) else arrays
