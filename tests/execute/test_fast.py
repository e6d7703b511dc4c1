"""The float32 kernels at library speed (issue #34) against float64 formulas: GELU's erf to
float32 accuracy across the range, in place, from a strided view, and chosen for float32 graphs
on NumPy."""

from __future__ import annotations

import math

import numpy as np

from geon import core as gc
from geon.core.builder.tensor import make_op
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
