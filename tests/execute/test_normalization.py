"""The transformer kernels (op:gelu, op:softmax, op:layer_norm) against the formulas their public
sources give, against the reference evaluator, and sharded: a split over an axis they do not
normalise equals the logical run, a split over a normalised axis is refused."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from geon import core as gc
from geon.core.builder import Tensor
from geon.core.builder.tensor import make_op
from geon.core.checks import check
from geon.core.errors import SplitError
from geon.core.graph import Graph
from geon.core.plans.shards import shard
from geon.core.reference import evaluate_graph as reference
from geon.execute import evaluate_graph, run
from geon.execute.backend import select_backend
from geon.execute.kernels import lower_positional

N, T, D = gc.Axis("N", 4), gc.Axis("T", 3), gc.Axis("D", 5)


def _value(out: Tensor, backend: str = "numpy") -> np.ndarray[Any, Any]:
    return evaluate_graph(gc.graph([out]), {}, [out.id], backend=backend)[out.id]


def _gelu(values: list[float], approximate: str = "none") -> Tensor:
    x = gc.constant(np.array(values), axes=[gc.Axis("I", len(values))])
    return make_op("op:gelu", {"tensor": [x]}, {"approximate": approximate})


# --- GELU: Hendrycks & Gimpel, "Gaussian Error Linear Units (GELUs)", arXiv:1606.08415 ---------


def test_gelu_is_x_times_the_normal_cdf(backend: str) -> None:
    # GELU(x) = x·Φ(x) (Hendrycks & Gimpel, eq. 1); Φ from the standard normal table:
    # Φ(1) = 0.8413447460685429, Φ(2) = 0.9772498680518208, Φ(-3) = 0.0013498980316301035
    got = _value(_gelu([0.0, 1.0, -1.0, 2.0, -3.0]), backend)
    want = [
        0.0,
        0.8413447460685429,
        -(1 - 0.8413447460685429),
        2 * 0.9772498680518208,
        -3 * 0.0013498980316301035,
    ]
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


def test_gelu_exact_form_holds_across_the_range() -> None:
    # erfc is evaluated from two interpolants (the array API has no erf): compare with math.erf
    # on both sides of their split (|x| = 2·√2), deep into the tails and at the infinities
    xs = [*np.linspace(-12, 12, 4801).tolist(), 2 * math.sqrt(2), -2 * math.sqrt(2), 40.0, -40.0]
    got = _value(_gelu(xs))
    want = [x / 2 * math.erfc(-x / math.sqrt(2)) for x in xs]
    np.testing.assert_allclose(got, want, rtol=2e-14, atol=0)
    inf = _value(_gelu([math.inf, 0.5]))
    assert inf[0] == math.inf
    # inputs that all lie on the near side (the far interpolant is then skipped) agree as well
    near = np.linspace(-2.8, 2.8, 561).tolist()
    want = [x / 2 * math.erfc(-x / math.sqrt(2)) for x in near]
    np.testing.assert_allclose(_value(_gelu(near)), want, rtol=2e-14, atol=0)


def test_gelu_on_positional_tensors_is_the_exact_form() -> None:
    # given a loom (positional) operation, which has no params: the exact form runs
    be = select_backend("numpy")
    f = lower_positional(be, "op:gelu", {"tensor": [(2,)]}, (2,), "float64", ["float64"])
    got = f([np.array([1.0, -1.0])], None)
    np.testing.assert_allclose(got, [0.8413447460685429, -0.15865525393145707], rtol=1e-14)


def test_gelu_tanh_approximation() -> None:
    # Hendrycks & Gimpel's approximation, PyTorch's approximate="tanh":
    # 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
    xs = [-2.0, -0.5, 0.0, 0.7, 3.0]
    got = _value(_gelu(xs, "tanh"))
    want = [0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))) for x in xs]
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300)


def test_gelu_keeps_float32() -> None:
    x = gc.constant(np.array([1.0, -1.0], np.float32), axes=[gc.Axis("I", 2)])
    got = _value(make_op("op:gelu", {"tensor": [x]}))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [0.8413447, -0.1586553], rtol=1e-6)


# --- softmax and layer norm: as PyTorch documents torch.nn.Softmax and torch.nn.LayerNorm -------


def test_softmax_is_exp_over_the_sum_of_exps() -> None:
    # Softmax(x_i) = exp(x_i) / Σ_j exp(x_j) over the normalised axis (torch.nn.Softmax):
    # for (1, 2, 3): e / (e + e² + e³), e² / (...), e³ / (...)
    want = [0.09003057317038046, 0.24472847105479764, 0.6652409557748219]
    for shift in (0.0, 1000.0):  # stable: subtracting the max, a large offset cannot overflow
        x = gc.constant(
            np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]]) + shift, axes=[gc.Axis("B", 2), T]
        )
        got = _value(make_op("op:softmax", {"tensor": [x]}, {"reduction_axes": [T]}))
        np.testing.assert_allclose(got, [want, [want[2], want[0], want[1]]], rtol=1e-14)


def test_a_layer_norm_without_scale_or_bias_checks_clean() -> None:
    x = gc.placeholder(axes=[N, D], name="x")
    g = gc.graph([make_op("op:layer_norm", {"tensor": [x]}, {"reduction_axes": [D]})])
    assert check(g) == []


def test_layer_norm_uses_the_biased_variance() -> None:
    # y = (x - E[x]) / sqrt(Var[x] + eps) * gamma + beta, Var biased (torch.nn.LayerNorm):
    # x = (1, 2, 3, 4): mean 2.5, var (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25
    F = gc.Axis("F", 4)
    x = gc.constant(np.array([1.0, 2.0, 3.0, 4.0]), axes=[F])
    gamma = gc.constant(np.array([1.0, 2.0, 1.0, 0.5]), axes=[F])
    beta = gc.constant(np.array([0.0, 0.0, 1.0, 0.0]), axes=[F])
    op = make_op(
        "op:layer_norm",
        {"tensor": [x], "scale": [gamma], "bias": [beta]},
        {"reduction_axes": [F], "epsilon": 0.01},
    )
    s = math.sqrt(1.25 + 0.01)
    want = [-1.5 / s, 2 * -0.5 / s, 0.5 / s + 1, 0.5 * 1.5 / s]
    np.testing.assert_allclose(_value(op), want, rtol=1e-14)


# --- sharded ------------------------------------------------------------------------------------


def _block() -> tuple[Graph, dict[str, str]]:
    """layer_norm over D -> softmax over T -> gelu, on x[N, T, D] with scale and bias over D."""
    x = gc.placeholder(axes=[N, T, D], name="x")
    gamma = gc.placeholder(axes=[D], name="gamma")
    beta = gc.placeholder(axes=[D], name="beta")
    ln = make_op(
        "op:layer_norm",
        {"tensor": [x], "scale": [gamma], "bias": [beta]},
        {"reduction_axes": [D]},
        name="ln",
    )
    sm = make_op("op:softmax", {"tensor": [ln]}, {"reduction_axes": [T]}, name="sm")
    ge = make_op("op:gelu", {"tensor": [sm]}, name="ge")
    g = gc.graph([ge])
    return g, {"ln": str(ln.op_id), "sm": str(sm.op_id), "ge": str(ge.op_id)}


INPUTS = {
    "x": np.random.default_rng(3).standard_normal((4, 3, 5)) * 3,
    "gamma": np.random.default_rng(4).standard_normal(5),
    "beta": np.random.default_rng(5).standard_normal(5),
}


@pytest.mark.parametrize(
    "splits",
    [
        {"ln": ("N", 2), "sm": ("N", 4), "ge": ("T", 3)},
        {"ln": ("T", 3), "sm": ("D", 2), "ge": ("D", 5)},
    ],
    ids=["batch", "other-axes"],
)
def test_sharded_equals_logical_and_reference(splits: dict[str, tuple[str, int]]) -> None:
    # given the block, each operation split over an axis it does not normalise
    g, ops = _block()
    for name, (axis, parts) in splits.items():
        shard(g, ops[name], dim=axis, parts=parts)
    assert check(g) == []
    # when it runs sharded, then it equals the logical run and the reference
    result = run(g, INPUTS, sharded=True)
    assert result.max_abs_diff is not None
    assert max(result.max_abs_diff.values()) <= 1e-12
    want = reference(g, INPUTS)
    for tid, got in result.outputs.items():
        np.testing.assert_allclose(got, want[tid], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("op", "axis"), [("ln", "D"), ("sm", "T")])
def test_a_split_over_the_normalised_axis_is_refused(op: str, axis: str) -> None:
    # given the block, when an operation is split over the axis it normalises
    g, ops = _block()
    before = g.to_json()
    with pytest.raises(SplitError) as e:
        shard(g, ops[op], dim=axis, parts=2)
    # then the refusal names the axis and the index axes there are, and nothing changed
    index = '"N", "D"' if op == "sm" else '"N", "T"'
    assert str(e.value) == (
        f'axis "{axis}" is not an index axis of operation "{ops[op]}"; expected one of ({index}) '
        "or a dim number 0..1"
    )
    assert g.to_json() == before
