"""gc.softmax, gc.layer_norm and gc.gelu (geon.core.builder) against the reference formulas:
softmax and layer norm as PyTorch documents them (torch.nn.functional.softmax,
torch.nn.LayerNorm: biased variance, epsilon inside the square root), GELU after Hendrycks &
Gimpel, "Gaussian Error Linear Units" (2016): x·Φ(x), and its tanh approximation."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from geon.core import builder as gb
from geon.core.errors import GeonError

N, C = gb.Axis("N", 3), gb.Axis("C", 5)
RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 5)) * 3


def test_softmax_over_an_axis_is_exp_over_sum_of_exp() -> None:
    got = gb.evaluate(gb.softmax(gb.constant(X, axes=[N, C]), [C]))
    e = np.exp(X - X.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), np.ones(3), rtol=1e-12)


def test_softmax_over_the_first_axis_keeps_the_axis_order() -> None:
    t = gb.softmax(gb.constant(X, axes=[N, C]), N)
    assert str(t.axes) == "(N, C)"
    e = np.exp(X)
    np.testing.assert_allclose(gb.evaluate(t), e / e.sum(axis=0), rtol=1e-12)


def test_layer_norm_with_scale_and_bias() -> None:
    scale, bias = RNG.normal(size=5), RNG.normal(size=5)
    t = gb.layer_norm(
        gb.constant(X, axes=[N, C]),
        [C],
        scale=gb.constant(scale, axes=[C]),
        bias=gb.constant(bias, axes=[C]),
        epsilon=1e-3,
    )
    mean, var = X.mean(axis=1, keepdims=True), X.var(axis=1, keepdims=True)
    want = (X - mean) / np.sqrt(var + 1e-3) * scale + bias
    np.testing.assert_allclose(gb.evaluate(t), want, rtol=1e-12)


def test_layer_norm_refuses_a_scale_with_other_axes() -> None:
    message = 'scale axes ("N") are not the normalised axes ("C")'
    with pytest.raises(GeonError, match=re.escape(message)):
        gb.layer_norm(gb.constant(X, axes=[N, C]), [C], scale=gb.constant(np.ones(3), axes=[N]))


def test_layer_norm_refuses_a_negative_epsilon() -> None:
    with pytest.raises(GeonError, match=re.escape('"epsilon" is "-1.0"; expected a positive')):
        gb.layer_norm(gb.constant(X, axes=[N, C]), [C], epsilon=-1.0)


def test_gelu_exact_and_tanh_forms() -> None:
    x = gb.constant(X, axes=[N, C])
    exact = np.vectorize(lambda v: v / 2 * (1 + math.erf(v / math.sqrt(2))))(X)
    tanh = 0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi) * (X + 0.044715 * X**3)))
    np.testing.assert_allclose(gb.evaluate(gb.gelu(x)), exact, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        gb.evaluate(gb.gelu(x, approximate="tanh")), tanh, rtol=1e-12, atol=1e-15
    )
    assert not np.allclose(exact, tanh, rtol=1e-6, atol=0)


def test_gelu_refuses_an_unknown_form() -> None:
    with pytest.raises(GeonError, match=re.escape('"approximate" is "\'erf\'"; expected "none"')):
        gb.gelu(gb.constant(X, axes=[N, C]), approximate="erf")
