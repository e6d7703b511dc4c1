"""The kernels at library speed (issue #34): GELU's float32 erf against float64 formulas across
the range, in place, from a strided view, and chosen for float32 graphs on NumPy; conv2d as one
batched matmul against the reference evaluator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from geon import core as gc
from geon.core.builder.tensor import make_op
from geon.core.reference import evaluate_graph as reference
from geon.execute import run
from geon.execute.backend import select_backend
from geon.execute.fast import BLOCK, gelu_float32


def _exact(x: np.ndarray) -> np.ndarray:
    return np.array([v / 2 * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64).ravel()])


def test_gelu_float32_is_within_float32_accuracy_across_the_range() -> None:
    # more than one block, so the blocks' seams are crossed
    xs = np.linspace(-12, 12, 3 * BLOCK + 7).astype(np.float32)
    got = gelu_float32(select_backend("numpy"))([xs], None)
    assert got.dtype == np.float32
    want = _exact(xs)
    # absolute: a few float32 ulps of |x| (PyTorch's and onnxruntime's erf are as accurate)
    assert np.max(np.abs(got - want) / np.maximum(np.abs(xs), 1.0)) < 3e-7  # 2.5 ulps
    np.testing.assert_allclose(got[xs > 0], want[xs > 0], rtol=3e-7)
    big = gelu_float32(select_backend("numpy"))([np.array([np.inf, 40.0, -40.0], np.float32)], None)
    assert big.tolist() == [np.inf, 40.0, 0.0]


def test_gelu_float32_in_place_and_from_a_strided_view() -> None:
    be = select_backend("numpy")
    x = np.random.default_rng(0).standard_normal((BLOCK // 8 + 3, 20)).astype(np.float32) * 3
    want = _exact(x).reshape(x.shape)
    f = gelu_float32(be)
    inplace = x.copy()
    assert f([inplace], inplace) is inplace
    np.testing.assert_allclose(inplace, want, rtol=1e-5, atol=1e-6)
    strided = x.T.copy().T  # a Fortran-ordered view
    assert not strided.flags.c_contiguous
    out = np.empty(x.shape, np.float32)
    f([strided], out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_a_float32_graph_takes_the_fast_gelu_and_equals_the_float64_one() -> None:
    I = gc.Axis("I", 1000)  # noqa: E741
    x = gc.placeholder(axes=[I], name="x", dtype="float32")
    y = make_op("op:gelu", {"tensor": [x]}, name="y")
    xs = np.linspace(-6, 6, 1000).astype(np.float32)
    got = run(gc.graph([y]), {"x": xs}).by_key()["y"]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _exact(xs), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("order", ["BKPQ", "PBQK"])
def test_conv2d_as_one_batched_matmul_equals_the_reference(backend: str, order: str) -> None:
    # given a strided, padded conv whose result is NCHW or another order
    Ci, Hi, Wi = (gc.Axis(n, m, roles=ro) for n, m, ro in
                  (("Ci", 3, "Channel"), ("Hi", 9, "Height"), ("Wi", 8, "Width")))  # fmt: skip
    Bt, R, S = gc.Axis("Bt", 2), gc.Axis("R", 3, roles="Height"), gc.Axis("S", 2, roles="Width")
    K = gc.Axis("K", 4, roles="Channelout")
    P, Q = gc.Axis("P", 5, roles="Height"), gc.Axis("Q", 5, roles="Width")
    rng = np.random.default_rng(2)
    x = gc.constant(rng.standard_normal((2, 3, 9, 8)), axes=[Bt, Ci, Hi, Wi], name="img")
    f = gc.constant(rng.standard_normal((3, 3, 2, 4)), axes=[Ci - 1, R, S, K], name="filt")
    axes = {"B": Bt, "K": K, "P": P, "Q": Q}
    y = gc.conv2d(x, f, [axes[c] for c in order], stride=2, padding=1, name="out")
    g = gc.graph([y])
    got = run(g, {}, backend=backend).by_key()["out"]
    np.testing.assert_allclose(got, reference(g, {})[y.id], rtol=1e-12, atol=1e-12)
