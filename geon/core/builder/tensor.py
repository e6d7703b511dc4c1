"""The :class:`Tensor` handle of the authoring API (DESIGN.md §8): leaves (:func:`constant`,
:func:`placeholder`), and how an op call becomes a handle (:func:`make_op`: infer the result axes
with :func:`geon.core.ops.infer`, the result dtype with :func:`geon.core.dtypes.result_dtype`).

>>> H, W = Axis("H", 2), Axis("W", 3)
>>> x = placeholder(axes=[H, W])
>>> (x + 1.0).kernel, str(x.T.axes), (x @ x.T).dtype
('op:add', '(W-1, H-1)', 'float64')

The Python operators of a handle build the same ops as :mod:`geon.core.builder.functions`
(``x + y`` is ``add(x, y)``); :func:`dot` and :func:`transpose` live here because ``x @ y`` and
``x.T`` need them.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from geon.core.axes import Axes, Axis, AxisRef, CompositeRef, RefLike, to_ref
from geon.core.dtypes import DTYPES, dtype_name, numpy_dtype, result_dtype
from geon.core.errors import AxisError, GeonError, ShapeError
from geon.core.ops import CATALOGUE, Inference, infer
from geon.core.variables import check_init

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
        "variable",
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
        variable: dict[str, Any] | None = None,
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
        self.variable = variable

    @property
    def is_placeholder(self) -> bool:
        return self.kernel is None and self.value is None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.axes.shape

    def __repr__(self) -> str:
        what = self.kernel or (
            "constant"
            if self.value is not None
            else "variable"
            if self.variable is not None
            else "placeholder"
        )
        label = f' "{self.name}"' if self.name else ""
        return f"<Tensor{label} {what} {self.axes} {self.dtype}>"

    @property
    def T(self) -> Tensor:
        """Reversed axes, each dual level k mapped to -1-k."""
        return transpose(self)

    def __add__(self, other: Any) -> Tensor:
        return elementwise("op:add", (self, other), None, None)

    def __radd__(self, other: Any) -> Tensor:
        return elementwise("op:add", (other, self), None, None)

    def __sub__(self, other: Any) -> Tensor:
        return elementwise("op:subtract", (self, other), None, None)

    def __rsub__(self, other: Any) -> Tensor:
        return elementwise("op:subtract", (other, self), None, None)

    def __mul__(self, other: Any) -> Tensor:
        return elementwise("op:multiply", (self, other), None, None)

    def __rmul__(self, other: Any) -> Tensor:
        return elementwise("op:multiply", (other, self), None, None)

    def __truediv__(self, other: Any) -> Tensor:
        return elementwise("op:divide", (self, other), None, None)

    def __rtruediv__(self, other: Any) -> Tensor:
        return elementwise("op:divide", (other, self), None, None)

    def __pow__(self, other: Any) -> Tensor:
        return elementwise("op:power", (self, other), None, None)

    def __rpow__(self, other: Any) -> Tensor:
        return elementwise("op:power", (other, self), None, None)

    def __matmul__(self, other: Any) -> Tensor:
        return dot(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return dot(other, self)

    def __neg__(self) -> Tensor:
        return unary("op:negative", self, None)

    def __abs__(self) -> Tensor:
        return unary("op:abs", self, None)


class _Scope(dict[str, Axis]):
    """A scope :func:`merge_scope` made: every axis under its own name, no two differing."""


def merge_scope(
    scopes: Iterable[Mapping[str, Axis]], extra: Iterable[Axis] = ()
) -> dict[str, Axis]:
    out = _Scope()
    for axis in itertools.chain(_merged_scopes(out, scopes), extra):
        old = out.get(axis.name)
        if old is None:
            out[axis.name] = axis
        elif old is not axis and old != axis:  # the same object: nothing to compare (issue #34)
            raise AxisError(
                f'two different axes are named "{axis.name}": {old!r} and {axis!r}; an axis is '
                "declared once per graph, so give one of them another name"
            )
    return out


def _merged_scopes(out: _Scope, scopes: Iterable[Mapping[str, Axis]]) -> Iterable[Axis]:
    """The axes of ``scopes`` that :func:`merge_scope` must still look at one by one: a scope it
    made is copied whole into an empty ``out``, and one whose every entry ``out`` already holds
    adds nothing; both in C, so a deep graph's growing scopes cost no Python loop per axis per
    operation (issue #34: importing 96 encoder layers spent 1.5 s here)."""
    for s in scopes:
        if not out and type(s) is _Scope:
            out.update(s)
        elif not (s.items() <= out.items()):
            yield from s.values()


def axes_of(items: Iterable[RefLike] | RefLike, what: str) -> Axes:
    try:
        return Axes.of(items)  # type: ignore[arg-type]
    except TypeError:
        raise AxisError(f'{what} "{items!r}" is not a list of axes') from None


def as_tensor(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, complex, bool, np.number, np.bool_)) or (
        isinstance(x, np.ndarray) and x.ndim == 0
    ):
        return constant(np.asarray(x), axes=[])
    raise GeonError(
        f'"{shown(x)}" is not a tensor; expected a geon Tensor (from constant, placeholder '
        "or an op) or a Python number"
    )


def shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def make_op(
    kernel: str,
    inputs: Mapping[str, Sequence[Tensor]],
    params: Mapping[str, Any] | None = None,
    new_axes: Iterable[Axis] = (),
    name: str | None = None,
) -> Tensor:
    groups = tuple((key, tuple(ts)) for key, ts in inputs.items())
    tensors = [t for _, ts in groups for t in ts]
    scope = merge_scope((t.scope for t in tensors), new_axes)
    inf = infer(kernel, {k: [t.axes for t in ts] for k, ts in groups}, params or {}, scope)
    scope = merge_scope([scope], inf.result.declared)
    dtype = result_dtype(kernel, [t.dtype for t in tensors])
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


def ref_str(item: RefLike | str) -> str:
    return item if isinstance(item, str) else str(to_ref(item))


def declared_axes(items: Iterable[Any]) -> list[Axis]:
    out: list[Axis] = []
    for item in items:
        if isinstance(item, (Axis, AxisRef, CompositeRef)):
            out.extend(to_ref(item).axes)
    return out


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
    ax = axes_of(axes if axes is not None else [], "axes")
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
    dt = dtype_name(arr.dtype)
    return Tensor(ax, dt, value=arr, name=name, scope=merge_scope([], ax.declared))


def placeholder(
    axes: Iterable[RefLike],
    name: str | None = None,
    dtype: str = "float64",
) -> Tensor:
    """An input fed at run time (``evaluate(..., feeds={t: array})``)."""
    ax = axes_of(axes, "axes")
    if dtype not in DTYPES:
        raise ShapeError(f'dtype "{dtype}" is unknown; expected one of {DTYPES}')
    return Tensor(ax, dtype, name=name, scope=merge_scope([], ax.declared))


def variable(
    axes: Iterable[RefLike],
    name: str | None = None,
    dtype: str = "float64",
    init: Any = None,
) -> Tensor:
    """A trainable parameter (DESIGN.md §11): an input tagged ``Variable``, fed like a
    placeholder, or initialised by ``init`` (``"zeros"``, ``"ones"``, ``"normal"``,
    ``"uniform"`` or ``{"kind": ..., "scale": s}``) when a run is not given it.

    >>> w = variable([Axis("H", 2)], name="w", init={"kind": "normal", "scale": 0.02})
    >>> w, w.variable
    (<Tensor "w" variable (H) float64>, {'init': {'kind': 'normal', 'scale': 0.02}})
    """
    t = placeholder(axes, name=name, dtype=dtype)
    t.variable = {} if init is None else {"init": check_init(init)}
    return t


def elementwise(
    kernel: str, operands: Sequence[Any], axes: Iterable[RefLike] | None, name: str | None
) -> Tensor:
    ts = [as_tensor(t) for t in operands]
    params: dict[str, Any] = {}
    if axes is not None:
        refs = [to_ref(a) for a in axes]
        params["axes"] = [str(r) for r in refs]
    key = "tensors" if CATALOGUE[kernel].variadic else None
    inputs = {"tensors": ts} if key else {"x": [ts[0]], "y": [ts[1]]}
    return make_op(kernel, inputs, params, declared_axes(axes or ()), name)


def unary(kernel: str, x: Any, name: str | None) -> Tensor:
    return make_op(kernel, {"tensor": [as_tensor(x)]}, {}, (), name)


def dot(
    x: Any, y: Any, *, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """Contract ``A^k`` in one operand with ``A^(k+1)`` in the other (DESIGN.md §2); ``axes``
    orders the result's axes (the same set as the default order, e.g. ``[N, H]``)."""
    params = {"axes": [str(to_ref(a)) for a in axes]} if axes is not None else {}
    inputs = {"x": [as_tensor(x)], "y": [as_tensor(y)]}
    return make_op("op:dot", inputs, params, declared_axes(axes or ()), name)


def transpose(x: Any, *, name: str | None = None) -> Tensor:
    """Reverse the axes and map each dual level k to -1-k (``x.T``)."""
    return make_op("op:transpose", {"tensor": [as_tensor(x)]}, {}, (), name)
