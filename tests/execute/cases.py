"""Graphs for the executor tests: one per catalogue kernel (and a few compositions), built with
the authoring API so the reference evaluator can serve as the oracle."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from geon import core as gc
from geon.core.builder import Tensor
from geon.core.builder.tensor import declared_axes, make_op

H, W, N, C = gc.Axis("H", 4), gc.Axis("W", 3), gc.Axis("N", 2), gc.Axis("C", 5)


def _f(*shape: int, seed: int = 0, positive: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return np.abs(a) + 0.5 if positive else a


def _i(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-5, 6, size=shape).astype(np.int32)


def x_hw(positive: bool = False) -> Tensor:
    return gc.constant(_f(4, 3, positive=positive), axes=[H, W], name="x")


def y_wh(positive: bool = False) -> Tensor:
    return gc.constant(_f(3, 4, seed=1, positive=positive), axes=[W, H], name="y")


def _conv(stride: int, padding: int) -> Tensor:
    Ci = gc.Axis("Ci", 2, roles="Channel")
    Hi = gc.Axis("Hi", 7, roles="Height")
    Wi = gc.Axis("Wi", 6, roles="Width")
    B = gc.Axis("B", 2)
    R = gc.Axis("R", 3, roles="Height")
    S = gc.Axis("S", 2, roles="Width")
    K = gc.Axis("K", 4, roles="Channelout")
    P = gc.Axis("P", (7 + 2 * padding - 3) // stride + 1, roles="Height")
    Q = gc.Axis("Q", (6 + 2 * padding - 2) // stride + 1, roles="Width")
    x = gc.constant(_f(2, 2, 7, 6), axes=[B, Ci, Hi, Wi], name="img")
    f = gc.constant(_f(2, 3, 2, 4, seed=3), axes=[Ci - 1, R, S, K], name="filt")
    return gc.conv2d(x, f, [B, K, P, Q], stride=stride, padding=padding, name="out")


def _pool(kind: str, size: int, stride: int, padding: int, include: bool = True) -> Tensor:
    Hi, Wi = gc.Axis("Hi", 7, roles="Height"), gc.Axis("Wi", 6, roles="Width")
    P = gc.Axis("P", (7 + 2 * padding - size) // stride + 1, roles="Height")
    Q = gc.Axis("Q", (6 + 2 * padding - size) // stride + 1, roles="Width")
    x = gc.constant(_f(2, 7, 6, seed=5) - 1.0, axes=[N, Hi, Wi], name="img")
    if kind == "max":
        return gc.max_pool2d(x, [N, P, Q], size, stride=stride, padding=padding, name="out")
    return gc.avg_pool2d(
        x, [P, Q, N], size, stride=stride, padding=padding, count_include_pad=include, name="out"
    )


def _slice() -> Tensor:
    H2 = gc.Axis("H2", 2)
    return gc.slice(x_hw(), {H: slice(3, 0, -2), W: 1}, axes={H: H2}, name="out")


def _pad() -> Tensor:
    H7 = gc.Axis("H7", 7)
    return gc.pad(x_hw(), {H: (1, 2)}, axes={H: H7}, name="out")


def _layer_norm() -> Tensor:
    x = gc.constant(_f(4, 3, 2), axes=[H, W, N])
    scale = gc.constant(_f(2, 4, seed=1), axes=[N, H])
    bias = gc.constant(_f(4, 2, seed=2), axes=[H, N])
    return make_op(
        "op:layer_norm",
        {"tensor": [x], "scale": [scale], "bias": [bias]},
        {"reduction_axes": [N, H]},
    )


def _concat() -> Tensor:
    A, One, K = gc.Axis("A", 2), gc.Axis("O", 1), gc.Axis("K", 6)
    parts = [
        x_hw(),
        gc.constant(_f(2, 4, seed=1), axes=[A, H]),
        gc.constant(_f(4, 1), axes=[H, One]),
    ]
    return make_op(
        "op:concat", {"tensors": parts}, {"along": ["W", "A", "O"], "axis": "K"}, [K], "out"
    )


def _where() -> Tensor:
    cond = gc.constant(_f(3, 2, seed=3) > 0, axes=[W, N])
    return make_op("op:where", {"x": [x_hw()], "y": [gc.constant(_f(3, seed=4), axes=[W])],
                                "condition": [cond]})  # fmt: skip


CASES: dict[str, Callable[[], Tensor]] = {
    "add": lambda: gc.add(x_hw(), y_wh(), name="out"),
    "add-3-broadcast": lambda: gc.add(
        x_hw(), gc.constant(_f(3, seed=2), axes=[W]), gc.constant(_f(2, seed=4), axes=[N])
    ),
    "add-int32": lambda: gc.add(
        gc.constant(_i(4, 3), axes=[H, W]), gc.constant(_i(3, seed=1), axes=[W])
    ),
    "multiply": lambda: gc.multiply(x_hw(), y_wh()),
    "maximum": lambda: gc.maximum(x_hw(), y_wh()),
    "minimum": lambda: gc.minimum(x_hw(), y_wh()),
    "subtract": lambda: gc.subtract(x_hw(), y_wh()),
    "divide": lambda: gc.divide(x_hw(), y_wh(positive=True)),
    "power": lambda: gc.power(x_hw(positive=True), y_wh()),
    "negative": lambda: gc.negative(x_hw()),
    "abs": lambda: gc.abs(x_hw()),
    "exp": lambda: gc.exp(x_hw()),
    "log": lambda: gc.log(x_hw(positive=True)),
    "sqrt": lambda: gc.sqrt(x_hw(positive=True)),
    "square": lambda: gc.square(x_hw()),
    "tanh": lambda: gc.tanh(x_hw()),
    "sigmoid": lambda: gc.sigmoid(x_hw()),
    "relu": lambda: gc.relu(x_hw()),
    "gelu": lambda: make_op("op:gelu", {"tensor": [gc.constant(_f(4, 3) * 4, axes=[H, W])]}),
    "gelu-tanh": lambda: make_op("op:gelu", {"tensor": [x_hw()]}, {"approximate": "tanh"}),
    "sqrt-int32": lambda: gc.sqrt(gc.constant(np.abs(_i(4, 3)), axes=[H, W])),
    "dot": lambda: gc.dot(
        gc.constant(_f(4, 3), axes=[H, W - 1]), gc.constant(_f(3, 2, seed=1), axes=[W, N])
    ),
    "dot-y-lower": lambda: gc.dot(
        gc.constant(_f(3, 2, seed=1), axes=[W, N]), gc.constant(_f(4, 3), axes=[H, W - 1])
    ),
    "dot-two-pairs": lambda: gc.dot(
        gc.constant(_f(5, 3, 4), axes=[C, W - 1, H - 1]),
        gc.constant(_f(4, 2, 3, seed=1), axes=[H, N, W]),
    ),
    "dot-outer": lambda: gc.dot(gc.constant(_f(4), axes=[H]), gc.constant(_f(3, seed=1), axes=[W])),
    "dot-int32": lambda: gc.dot(
        gc.constant(_i(4, 3), axes=[H, W - 1]), gc.constant(_i(3, 2, seed=1), axes=[W, N])
    ),
    # the partial products of a dot split over its contracted H in 2 parts (issue 16)
    "dot-partial": lambda: make_op(
        "op:dot_partial",
        {
            "x": [gc.constant(_f(3, 4), axes=[W, H - 1])],
            "y": [gc.constant(_f(4, 2, seed=1), axes=[H, N])],
        },
        {"parts": {"axis": "H", "into": "H_over_tp"}},
        declared_axes([gc.Axis("H_over_tp", 2)]),
        None,
    ),
    "sum": lambda: gc.sum(x_hw(), reduction_axes=[H]),
    "sum-all": lambda: gc.sum(x_hw()),
    "sum-int32": lambda: gc.sum(gc.constant(_i(4, 3), axes=[H, W]), reduction_axes=[W]),
    "prod": lambda: gc.prod(x_hw(), out_axes=[W]),
    "max": lambda: gc.max(x_hw(), reduction_axes=[W]),
    "min": lambda: gc.min(x_hw(), reduction_axes=[H]),
    "mean": lambda: gc.mean(
        gc.constant(_f(4, 3, 2), axes=[H, W, N]), reduction_axes=[W], out_axes=[N, H]
    ),
    "mean-int32": lambda: gc.mean(gc.constant(_i(4, 3), axes=[H, W]), reduction_axes=[H]),
    "softmax": lambda: make_op("op:softmax", {"tensor": [x_hw()]}, {"reduction_axes": [H]}),
    "softmax-int32": lambda: make_op(
        "op:softmax", {"tensor": [gc.constant(_i(4, 3), axes=[H, W])]}, {"reduction_axes": [W]}
    ),
    "layer_norm": _layer_norm,
    "layer_norm-plain": lambda: make_op(
        "op:layer_norm", {"tensor": [x_hw()]}, {"reduction_axes": [W], "epsilon": 0.5}
    ),
    "cast_axes": lambda: gc.cast_axes(x_hw(), [gc.Axis("A", 4), gc.Axis("B", 3)]),
    "broadcast": lambda: gc.broadcast(gc.constant(_f(3), axes=[W]), [N, W, H]),
    "dimshuffle": lambda: gc.dimshuffle(gc.constant(_f(4, 3, 2), axes=[H, W, N]), [N, H, W]),
    "transpose": lambda: x_hw().T,
    "slice": _slice,
    "pad": _pad,
    "flatten": lambda: gc.flatten(gc.constant(_f(4, 3, 2), axes=[H, W, N]), [W, N]),
    "unflatten": lambda: gc.unflatten(gc.flatten(gc.constant(_f(4, 3, 2), axes=[H, W, N]))),
    "conv2d": lambda: _conv(1, 0),
    "conv2d-stride-pad": lambda: _conv(2, 1),
    "max_pool2d": lambda: _pool("max", 2, 2, 0),
    "max_pool2d-stride-pad": lambda: _pool("max", 3, 2, 1),
    "avg_pool2d": lambda: _pool("avg", 2, 2, 0),
    "avg_pool2d-exclude-pad": lambda: _pool("avg", 3, 2, 1, include=False),
    "concat": _concat,
    "concat-int32": lambda: make_op(
        "op:concat",
        {"tensors": [gc.constant(_i(4, 3), axes=[H, W]), gc.constant(_i(3, 4), axes=[W, H])]},
        {"along": ["H", "H"], "axis": "H8"},
        [gc.Axis("H8", 8)],
    ),
    "where": _where,
    "gather": lambda: make_op(
        "op:gather",
        {
            "table": [gc.constant(_f(5, 3), axes=[C, W])],
            "indices": [
                gc.constant(np.array([[0, 4], [-1, 2]], np.int64), axes=[N, gc.Axis("S", 2)])
            ],
        },
        {"axis": "C"},
    ),
    "where-int32": lambda: make_op(
        "op:where",
        {
            "x": [gc.constant(_i(4, 3), axes=[H, W])],
            "y": [gc.constant(_i(4, 3, seed=1), axes=[H, W])],
            "condition": [gc.constant(_i(3, seed=2) > 0, axes=[W])],
        },
    ),
    "mlp-layer": lambda: gc.relu(
        gc.dot(gc.constant(_f(4, 3), axes=[H, W]), gc.constant(_f(3, 2, seed=1), axes=[W + 1, N]))
        + gc.constant(_f(2, seed=2), axes=[N])
    ),
    "chain-views": lambda: gc.sum(
        gc.exp(gc.dimshuffle(gc.constant(_f(4, 3, 2), axes=[H, W, N]), [N, W, H]).T),
        reduction_axes=[N - 1],
    ),
}
"""Each case builds its output tensor; every kernel of the catalogue appears at least once."""
