"""``op:dot_partial`` (a dot's partial products over equal parts of one contracted axis): the
array-API kernel equals the reference oracle, and summing its parts gives the dot, on whole
tensors and on the regions of one application."""

from __future__ import annotations

import numpy as np
import pytest

from geon import core as gc
from geon.core.builder.tensor import declared_axes, make_op
from geon.core.errors import GeonError
from geon.core.ops import infer
from geon.core.reference import evaluate_graph as reference
from geon.execute import evaluate_graph
from geon.execute.backend import select_backend
from geon.execute.lowering import lower_named

N, D, F = gc.Axis("N", 3), gc.Axis("D", 4), gc.Axis("F", 6)
P = gc.Axis("F_over_tp", 3)


def _f(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _partial(x: gc.Tensor, y: gc.Tensor, axis: str = "F", parts: gc.Axis = P) -> gc.Tensor:
    params = {"parts": {"axis": axis, "into": parts.name}}
    return make_op("op:dot_partial", {"x": [x], "y": [y]}, params, declared_axes([parts]), None)


@pytest.mark.parametrize("lower", ["x", "y"])
def test_partial_products_sum_to_the_dot(lower: str, backend: str) -> None:
    # given h[N, F] and W[F-1, D] (or the dual levels the other way round)
    h = gc.constant(_f(3, 6), axes=[N, F] if lower == "y" else [N, F - 1])
    w = gc.constant(_f(6, 4, seed=1), axes=[F - 1, D] if lower == "y" else [F, D])
    part, dot = _partial(h, w), gc.dot(h, w)
    g = gc.graph([part, dot])
    # when the executor and the reference run the partial products
    got = evaluate_graph(g, {}, backend=backend)[part.id]
    want = reference(g, {})[part.id]
    # then they agree, lead with the parts axis, and their sum is the dot
    assert got.shape[0] == 3
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=0), reference(g, {})[dot.id], rtol=1e-12)


def test_kernel_on_one_application_region() -> None:
    # given the partial products of x[N, F-1] · W[F, D] over 3 parts of F (chunk 2)
    x, w = _f(3, 6), _f(6, 4, seed=1)
    inf = infer(
        "op:dot_partial",
        {"x": [gc.Axes.of([N, F - 1])], "y": [gc.Axes.of([F, D])]},
        {"parts": {"axis": "F", "into": "F_over_tp"}},
        {"F_over_tp": P},
    )
    # when one application computes parts 1..2 from the F rows [2, 6) it reads
    be = select_backend("numpy")
    fn = lower_named(be, inf, [(3, 4), (4, 4)], (2, 3, 4), "float64", ["float64"] * 2)
    got = fn([x[:, 2:6], w[2:6]], None)
    # then each part is the product over its own chunk of F
    np.testing.assert_allclose(got[0], x[:, 2:4] @ w[2:4])
    np.testing.assert_allclose(got[1], x[:, 4:6] @ w[4:6])


def test_projection_reads_chunk_rows() -> None:
    # given the derived signature
    inf = infer(
        "op:dot_partial",
        {"x": [gc.Axes.of([N, F - 1])], "y": [gc.Axes.of([F, D])]},
        {"parts": {"axis": "F", "into": "F_over_tp"}},
        {"F_over_tp": P},
    )
    sig = inf.signature()["inputs"]
    # then F starts at chunk·p and is chunk long, on both operands
    assert sig["x"][0] == {
        "affineMap": {"projection": [[0, 1, 0], [2, 0, 0]], "offset": [0, 0]},
        "shape": [1, 2],
    }
    assert sig["y"][0]["affineMap"]["projection"] == [[2, 0, 0], [0, 0, 1]]
    assert [str(r) for r in inf.result] == ["F_over_tp", "N", "D"]


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"parts": {"axis": "D", "into": "F_over_tp"}}, 'parts axis "D" is not contracted'),
        ({"parts": {"axis": "F"}}, 'params "parts"'),
        ({"parts": {"axis": "F", "into": "Q"}}, "length 6 into 4 equal parts"),
    ],
)
def test_bad_parts_are_named(params: dict, needle: str) -> None:
    # given parts that name no contracted axis, miss a key, or do not divide F
    with pytest.raises(GeonError, match=needle):
        infer(
            "op:dot_partial",
            {"x": [gc.Axes.of([N, F])], "y": [gc.Axes.of([F - 1, D])]},
            params,
            {"F_over_tp": P, "Q": gc.Axis("Q", 4)},
        )
