"""The NumPy reference evaluation, checked against hand-written NumPy (einsum/tensordot) per op."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geon import core as gc
from geon.core.axes import AxisRef
from geon.core.errors import ExecutionError
from geon.core.graph import Graph
from geon.core.reference import evaluate_graph

RNG = np.random.default_rng(7)
H, W, N, C, M = (gc.Axis(n, k) for n, k in (("H", 2), ("W", 3), ("N", 4), ("C", 5), ("M", 6)))
XV = RNG.normal(size=(2, 3)) + 3.0  # positive, so log and sqrt are defined
YV = RNG.normal(size=(3, 4))
ZV = RNG.normal(size=(3, 2)) + 3.0


def x() -> gc.Tensor:
    return gc.constant(XV, axes=[H, W])


def z() -> gc.Tensor:
    return gc.constant(ZV, axes=[W, H])


ELEMENTWISE: list[tuple[str, Callable[[], gc.Tensor], np.ndarray[Any, Any]]] = [
    ("add", lambda: gc.add(x(), z()), XV + ZV.T),
    ("add-3", lambda: gc.add(x(), z(), x()), XV + ZV.T + XV),
    ("subtract", lambda: gc.subtract(z(), x()), ZV - XV.T),
    ("multiply", lambda: gc.multiply(x(), z()), XV * ZV.T),
    ("divide", lambda: gc.divide(x(), z()), XV / ZV.T),
    ("power", lambda: gc.power(x(), z()), XV**ZV.T),
    ("maximum", lambda: gc.maximum(x(), z()), np.maximum(XV, ZV.T)),
    ("minimum", lambda: gc.minimum(x(), z()), np.minimum(XV, ZV.T)),
    ("negative", lambda: gc.negative(x()), -XV),
    ("abs", lambda: gc.abs(x() - 3.0), np.abs(XV - 3.0)),
    ("exp", lambda: gc.exp(x()), np.exp(XV)),
    ("log", lambda: gc.log(x()), np.log(XV)),
    ("sqrt", lambda: gc.sqrt(x()), np.sqrt(XV)),
    ("square", lambda: gc.square(x()), np.square(XV)),
    ("tanh", lambda: gc.tanh(x()), np.tanh(XV)),
    ("sigmoid", lambda: gc.sigmoid(x()), 1 / (1 + np.exp(-XV))),
    ("relu", lambda: gc.relu(x() - 3.0), np.maximum(XV - 3.0, 0)),
    (
        "broadcast-outer",
        lambda: gc.add(x(), gc.constant(np.arange(4.0), axes=[N])),
        XV[:, :, None] + np.arange(4.0),
    ),
]


@pytest.mark.parametrize(
    ("build", "expected"),
    [(b, e) for _, b, e in ELEMENTWISE],
    ids=[n for n, _, _ in ELEMENTWISE],
)
def test_elementwise_values(build: Callable[[], gc.Tensor], expected: np.ndarray[Any, Any]) -> None:
    np.testing.assert_allclose(gc.evaluate(build()), expected, rtol=1e-12)


def test_dot_4d_permuted_duals_against_einsum() -> None:
    # given (M, W-1, H-1, C-1)·(C, H, W, N), then the result is (M, N) = einsum over W, H, C
    a = RNG.normal(size=(6, 3, 2, 5))
    b = RNG.normal(size=(5, 2, 3, 4))
    xa = gc.constant(a, axes=[M, W - 1, H - 1, C - 1])
    yb = gc.constant(b, axes=[C, H, W, N])
    out = gc.dot(xa, yb)
    assert out.axes == (M, N)
    np.testing.assert_allclose(gc.evaluate(out), np.einsum("mwhc,chwn->mn", a, b), rtol=1e-12)


def test_dot_with_lower_levels_in_y_against_tensordot() -> None:
    a = RNG.normal(size=(3, 4))
    b = RNG.normal(size=(2, 3))
    out = gc.dot(gc.constant(a, axes=[W, N]), gc.constant(b, axes=[H, W - 1]))
    assert out.axes == (H, N)
    np.testing.assert_allclose(gc.evaluate(out), np.tensordot(b, a, axes=([1], [0])), rtol=1e-12)


def test_dot_keeps_a_free_axis_named_like_a_paired_one() -> None:
    # (W, W-1)·(W, N): x's W-1 pairs with y's W; x's own W stays
    a = RNG.normal(size=(3, 3))
    b = RNG.normal(size=(3, 4))
    out = gc.dot(gc.constant(a, axes=[W, W - 1]), gc.constant(b, axes=[W, N]))
    assert out.axes == (W, N)
    np.testing.assert_allclose(gc.evaluate(out), np.einsum("ab,bn->an", a, b), rtol=1e-12)


def test_outer_product() -> None:
    a, b = RNG.normal(size=2), RNG.normal(size=4)
    out = gc.dot(gc.constant(a, axes=[H]), gc.constant(b, axes=[N]))
    np.testing.assert_allclose(gc.evaluate(out), np.multiply.outer(a, b), rtol=1e-12)


REDUCTIONS = [
    ("sum", gc.sum, np.sum),
    ("prod", gc.prod, np.prod),
    ("max", gc.max, np.max),
    ("min", gc.min, np.min),
    ("mean", gc.mean, np.mean),
]


@pytest.mark.parametrize(
    ("op", "ref"), [(o, r) for _, o, r in REDUCTIONS], ids=[n for n, _, _ in REDUCTIONS]
)
def test_reductions_against_numpy(op: Any, ref: Any) -> None:
    v = RNG.normal(size=(2, 3, 4))
    t = gc.constant(v, axes=[H, W, N])
    np.testing.assert_allclose(gc.evaluate(op(t, out_axes=[N, H])), ref(v, axis=1).T, rtol=1e-12)
    np.testing.assert_allclose(gc.evaluate(op(t, reduction_axes=[H, N])), ref(v, axis=(0, 2)))
    np.testing.assert_allclose(gc.evaluate(op(t)), ref(v), rtol=1e-12)


def test_views_against_numpy() -> None:
    v = RNG.normal(size=(2, 3, 4))
    t = gc.constant(v, axes=[H, W, N])
    np.testing.assert_array_equal(gc.evaluate(t.T), v.transpose(2, 1, 0))
    np.testing.assert_array_equal(gc.evaluate(gc.dimshuffle(t, [N, H, W])), v.transpose(2, 0, 1))
    np.testing.assert_array_equal(
        gc.evaluate(gc.broadcast(t, [M, H, W, N])), np.broadcast_to(v, (6, 2, 3, 4))
    )
    np.testing.assert_array_equal(gc.evaluate(gc.cast_axes(t, [H, W, gc.Axis("K", 4)])), v)
    N2 = gc.Axis("N2", 2)
    np.testing.assert_array_equal(
        gc.evaluate(gc.slice(t, {N: slice(3, None, -2)}, axes={N: N2})), v[:, :, 3::-2]
    )
    np.testing.assert_array_equal(gc.evaluate(gc.slice(t, {W: -1})), v[:, -1, :])
    np.testing.assert_array_equal(gc.evaluate(gc.flatten(t)), v.reshape(24))


def test_conv2d_against_direct_loops() -> None:
    # given a strided, padded conv, then it equals the textbook sum over windows
    Cc = gc.Axis("Cc", 2, roles="Channel")
    Y, X = gc.Axis("Y", 7, roles="Height"), gc.Axis("X", 6, roles="Width")
    B = gc.Axis("B", 2)
    R, S = gc.Axis("R", 3, roles="Height"), gc.Axis("S", 2, roles="Width")
    K = gc.Axis("K", 3, roles="Channelout")
    P, Q = gc.Axis("P", 4, roles="Height"), gc.Axis("Q", 4, roles="Width")
    xv = RNG.normal(size=(2, 7, 6, 2))  # Cc, Y, X, B
    fv = RNG.normal(size=(3, 2, 3, 2))  # K, Cc-1, R, S
    out = gc.conv2d(
        gc.constant(xv, axes=[Cc, Y, X, B]),
        gc.constant(fv, axes=[K, Cc - 1, R, S]),
        [P, B, Q, K],
        stride=(2, 2),
        padding=(1, 1),
    )
    xp = np.pad(xv, ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = np.zeros((4, 2, 4, 3))
    for p in range(4):
        for q in range(4):
            window = xp[:, 2 * p : 2 * p + 3, 2 * q : 2 * q + 2, :]  # Cc, R, S, B
            want[p, :, q, :] = np.einsum("crsb,kcrs->bk", window, fv)
    np.testing.assert_allclose(gc.evaluate(out), want, rtol=1e-12)


def test_a_stored_document_evaluates_the_same() -> None:
    a = gc.placeholder(axes=[H, W - 1], name="a")
    b = gc.constant(YV, axes=[W, N])
    out = gc.dot(a, b, name="out")
    g = Graph.from_json(gc.graph([out]).to_json())
    values = evaluate_graph(g, {"a": XV})
    np.testing.assert_allclose(values[out.id], XV @ YV, rtol=1e-12)


def test_positional_operations_are_refused() -> None:
    doc = json.loads(resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text())
    feeds = {"t0": np.zeros((10, 5), np.int32), "t1": np.zeros((10, 5), np.int32)}
    with pytest.raises(ExecutionError) as e:
        evaluate_graph(Graph.from_json(doc), feeds)
    assert str(e.value) == (
        'operation "26434d32-ccbc-442f-9d78-8bf158b00c6b" (op:add) reads tensor "t0", which has '
        "no TensorAxes; the reference runs named operations only"
    )


# --- dot(x, y) == dot(y.T, x.T).T with values, over random axis sets -----------------------

NAMES = ["A", "B", "D", "E"]
DECLS = {n: gc.Axis(n, i + 1) for i, n in enumerate(NAMES)}


@st.composite
def operands(draw: st.DrawFn) -> tuple[list[AxisRef], list[AxisRef]]:
    def one() -> list[AxisRef]:
        names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3))
        return [AxisRef(DECLS[n], draw(st.integers(-2, 2))) for n in names]

    return one(), one()


@settings(max_examples=60, deadline=None)
@given(operands(), st.integers(0, 2**32 - 1))
def test_dot_transpose_identity_on_values(pair: Any, seed: int) -> None:
    xs, ys = pair
    rng = np.random.default_rng(seed)
    xt = gc.constant(rng.normal(size=tuple(r.length for r in xs)), axes=xs)
    yt = gc.constant(rng.normal(size=tuple(r.length for r in ys)), axes=ys)
    try:
        left = gc.dot(xt, yt)
    except gc.AxisError:
        with pytest.raises(gc.AxisError):
            gc.dot(yt.T, xt.T)
        return
    right = gc.dot(yt.T, xt.T).T
    assert right.axes == left.axes
    np.testing.assert_allclose(gc.evaluate(right), gc.evaluate(left), rtol=1e-10, atol=1e-12)
