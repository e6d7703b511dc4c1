"""The operator functions of the authoring API (DESIGN.md §8): elementwise and unary ops,
reductions, views and conv2d. Each one turns its Python arguments into canonical params and
calls :func:`geon.core.builder.tensor.make_op`.

>>> from geon.core.builder import Axis, placeholder
>>> H, W = Axis("H", 2), Axis("W", 3)
>>> x = placeholder(axes=[H, W])
>>> str(sum(x, out_axes=[W]).axes), str(slice(x, {H: 0}).axes)
('(W)', '(W)')
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from geon.core.axes import Axis, AxisRef, CompositeRef, RefLike
from geon.core.builder.tensor import (
    Tensor,
    as_tensor,
    declared_axes,
    elementwise,
    make_op,
    ref_str,
    unary,
)
from geon.core.errors import KernelError


def add(*operands: Any, axes: Iterable[RefLike] | None = None, name: str | None = None) -> Tensor:
    """Elementwise sum of one or more tensors; result axes per DESIGN.md §2 (or ``axes``)."""
    return elementwise("op:add", operands, axes, name)


def multiply(
    *operands: Any, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """Elementwise product of one or more tensors."""
    return elementwise("op:multiply", operands, axes, name)


def maximum(
    *operands: Any, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """Elementwise maximum."""
    return elementwise("op:maximum", operands, axes, name)


def minimum(
    *operands: Any, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """Elementwise minimum."""
    return elementwise("op:minimum", operands, axes, name)


def subtract(
    x: Any, y: Any, *, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """``x - y``."""
    return elementwise("op:subtract", (x, y), axes, name)


def divide(
    x: Any, y: Any, *, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """``x / y``."""
    return elementwise("op:divide", (x, y), axes, name)


def power(
    x: Any, y: Any, *, axes: Iterable[RefLike] | None = None, name: str | None = None
) -> Tensor:
    """``x ** y``."""
    return elementwise("op:power", (x, y), axes, name)


def negative(x: Any, *, name: str | None = None) -> Tensor:
    """``-x``."""
    return unary("op:negative", x, name)


def abs(x: Any, *, name: str | None = None) -> Tensor:
    """``|x|``."""
    return unary("op:abs", x, name)


def exp(x: Any, *, name: str | None = None) -> Tensor:
    """``e**x``."""
    return unary("op:exp", x, name)


def log(x: Any, *, name: str | None = None) -> Tensor:
    """Natural logarithm."""
    return unary("op:log", x, name)


def sqrt(x: Any, *, name: str | None = None) -> Tensor:
    """Square root."""
    return unary("op:sqrt", x, name)


def square(x: Any, *, name: str | None = None) -> Tensor:
    """``x*x``."""
    return unary("op:square", x, name)


def tanh(x: Any, *, name: str | None = None) -> Tensor:
    """Hyperbolic tangent."""
    return unary("op:tanh", x, name)


def sigmoid(x: Any, *, name: str | None = None) -> Tensor:
    """``1 / (1 + e**-x)``."""
    return unary("op:sigmoid", x, name)


def relu(x: Any, *, name: str | None = None) -> Tensor:
    """``max(x, 0)``."""
    return unary("op:relu", x, name)


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
        params[key] = [ref_str(i) for i in items]
        extra += items
    return make_op(kernel, {"tensor": [as_tensor(x)]}, params, declared_axes(extra), name)


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
    return make_op(
        kernel,
        {"tensor": [as_tensor(x)]},
        {"axes": [ref_str(a) for a in items]},
        declared_axes(items),
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
            spec[ref_str(key)] = {"start": s.start, "stop": s.stop, "step": s.step}
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            spec[ref_str(key)] = int(s)
        else:
            raise KernelError(
                f'slice for axis "{ref_str(key)}" is "{s!r}"; expected a Python slice or an int'
            )
    params: dict[str, Any] = {"slices": spec}
    renames = dict(axes or {})
    if renames:
        params["axes"] = {ref_str(k): ref_str(v) for k, v in renames.items()}
    return make_op(
        "op:slice",
        {"tensor": [as_tensor(x)]},
        params,
        declared_axes([*renames.values(), *slices]),
        name,
    )


def pad(
    x: Any,
    widths: Mapping[RefLike | str, tuple[int, int]],
    axes: Mapping[RefLike | str, RefLike] | None = None,
    *,
    name: str | None = None,
) -> Tensor:
    """Zero-pad along axes: ``{H: (before, after)}``; a changed length needs a new axis."""
    params: dict[str, Any] = {"pad": {ref_str(k): list(w) for k, w in widths.items()}}
    renames = dict(axes or {})
    if renames:
        params["axes"] = {ref_str(k): ref_str(v) for k, v in renames.items()}
    return make_op(
        "op:pad", {"tensor": [as_tensor(x)]}, params, declared_axes(renames.values()), name
    )


def flatten(x: Any, axes: Sequence[RefLike] | None = None, *, name: str | None = None) -> Tensor:
    """Merge adjacent axes into one composite axis ``A*B`` (default: all axes)."""
    t = as_tensor(x)
    items = list(axes) if axes is not None else list(t.axes)
    return _view("op:flatten", t, items, name)


def unflatten(
    x: Any, axes: Sequence[CompositeRef] | None = None, *, name: str | None = None
) -> Tensor:
    """Split composite axes back into their parts (default: every composite axis)."""
    params = {} if axes is None else {"axes": [ref_str(a) for a in axes]}
    return make_op("op:unflatten", {"tensor": [as_tensor(x)]}, params, (), name)


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
        "out_axes": [ref_str(a) for a in items],
        "stride": list(stride) if isinstance(stride, (tuple, list)) else stride,
        "padding": list(padding) if isinstance(padding, (tuple, list)) else padding,
    }
    return make_op(
        "op:conv2d",
        {"x": [as_tensor(x)], "filter": [as_tensor(filter)]},
        params,
        declared_axes(items),
        name,
    )


def _pool(
    kernel: str,
    x: Any,
    out_axes: Iterable[RefLike],
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None,
    padding: int | tuple[int, int],
    name: str | None,
    **extra: Any,
) -> Tensor:
    items = list(out_axes)

    def pair(v: Any) -> Any:
        return list(v) if isinstance(v, (tuple, list)) else v

    params: dict[str, Any] = {
        "out_axes": [ref_str(a) for a in items],
        "kernel_size": pair(kernel_size),
        "padding": pair(padding),
        **extra,
    }
    if stride is not None:
        params["stride"] = pair(stride)
    return make_op(kernel, {"tensor": [as_tensor(x)]}, params, declared_axes(items), name)


def max_pool2d(
    x: Any,
    out_axes: Iterable[RefLike],
    kernel_size: int | tuple[int, int],
    *,
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    name: str | None = None,
) -> Tensor:
    """2-D max pooling over the axes with roles Height and Width (padding reads -inf), as
    PyTorch's ``nn.MaxPool2d``: ``stride`` defaults to ``kernel_size``.

    >>> from geon.core.builder import Axis, constant, evaluate
    >>> H, W = Axis("H", 2, roles="Height"), Axis("W", 2, roles="Width")
    >>> P, Q = Axis("P", 1, roles="Height"), Axis("Q", 1, roles="Width")
    >>> evaluate(max_pool2d(constant([[1.0, 4.0], [3.0, 2.0]], axes=[H, W]), [P, Q], 2)).tolist()
    [[4.0]]
    """
    return _pool("op:max_pool2d", x, out_axes, kernel_size, stride, padding, name)


def avg_pool2d(
    x: Any,
    out_axes: Iterable[RefLike],
    kernel_size: int | tuple[int, int],
    *,
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    count_include_pad: bool = True,
    name: str | None = None,
) -> Tensor:
    """2-D average pooling over the axes with roles Height and Width, as PyTorch's
    ``nn.AvgPool2d``: padded cells count in the divisor unless ``count_include_pad`` is false.

    >>> from geon.core.builder import Axis, constant, evaluate
    >>> H, W = Axis("H", 2, roles="Height"), Axis("W", 2, roles="Width")
    >>> P, Q = Axis("P", 1, roles="Height"), Axis("Q", 1, roles="Width")
    >>> evaluate(avg_pool2d(constant([[1.0, 4.0], [3.0, 2.0]], axes=[H, W]), [P, Q], 2)).tolist()
    [[2.5]]
    """
    return _pool(
        "op:avg_pool2d", x, out_axes, kernel_size, stride, padding, name,
        count_include_pad=count_include_pad,
    )  # fmt: skip


def gelu(x: Any, *, approximate: str = "none", name: str | None = None) -> Tensor:
    """GELU, ``x·Φ(x)``: the exact erf form (``"none"``) or the ``"tanh"`` approximation.

    >>> from geon.core.builder import Axis, constant, evaluate
    >>> x = constant([-1.0, 0.0, 1.0], axes=[Axis("H", 3)])
    >>> [round(float(v), 4) for v in evaluate(gelu(x))]
    [-0.1587, 0.0, 0.8413]
    """
    params = {} if approximate == "none" else {"approximate": approximate}
    return make_op("op:gelu", {"tensor": [as_tensor(x)]}, params, (), name)


def softmax(
    x: Any, reduction_axes: Iterable[RefLike] | RefLike, *, name: str | None = None
) -> Tensor:
    """Softmax over ``reduction_axes``: ``exp(x - max) / sum(exp(x - max))``; axes kept.

    >>> from geon.core.builder import Axis, constant, evaluate
    >>> H = Axis("H", 2)
    >>> evaluate(softmax(constant([0.0, 0.0], axes=[H]), [H])).tolist()
    [0.5, 0.5]
    """
    items = (
        [reduction_axes]
        if isinstance(reduction_axes, (Axis, AxisRef, CompositeRef))
        else list(reduction_axes)
    )
    params = {"reduction_axes": [ref_str(i) for i in items]}
    return make_op("op:softmax", {"tensor": [as_tensor(x)]}, params, declared_axes(items), name)


def layer_norm(
    x: Any,
    reduction_axes: Iterable[RefLike] | RefLike,
    *,
    scale: Any = None,
    bias: Any = None,
    epsilon: float = 1e-05,
    name: str | None = None,
) -> Tensor:
    """Layer norm over ``reduction_axes``: ``(x - mean) / sqrt(var + epsilon) * scale + bias``
    (biased variance, as PyTorch's ``nn.LayerNorm``); ``scale`` and ``bias`` have exactly the
    normalised axes.

    >>> from geon.core.builder import Axis, constant, evaluate
    >>> D = Axis("D", 2)
    >>> [round(float(v), 3) for v in evaluate(layer_norm(constant([1.0, 3.0], axes=[D]), [D]))]
    [-1.0, 1.0]
    """
    items = (
        [reduction_axes]
        if isinstance(reduction_axes, (Axis, AxisRef, CompositeRef))
        else list(reduction_axes)
    )
    inputs: dict[str, list[Tensor]] = {"tensor": [as_tensor(x)]}
    if scale is not None:
        inputs["scale"] = [as_tensor(scale)]
    if bias is not None:
        inputs["bias"] = [as_tensor(bias)]
    params = {"reduction_axes": [ref_str(i) for i in items], "epsilon": epsilon}
    return make_op("op:layer_norm", inputs, params, declared_axes(items), name)
