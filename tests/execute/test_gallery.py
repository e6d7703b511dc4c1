"""The gallery graphs run on the executor, logically and sharded, and match the reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from geon.core.graph import APPLICATION, Graph
from geon.core.reference import evaluate_graph as reference
from geon.examples.gallery import EXAMPLES, build
from geon.execute import compile_graph, evaluate_graph, generate_input, run


def _feeds(g: Graph, seed: int = 0) -> dict[str, Any]:
    plan = compile_graph(g)
    rng = np.random.default_rng(seed)
    return {plan.tensors[t].id: generate_input(plan.tensors[t], rng) for t in plan.inputs}


@pytest.mark.parametrize("slug", list(EXAMPLES), ids=list(EXAMPLES))
def test_gallery_graph_matches_reference(slug: str, backend: str) -> None:
    # given a gallery graph and seeded inputs
    g = build(slug)
    feeds = _feeds(g)
    # when the executor evaluates every tensor
    got = evaluate_graph(g, feeds, backend=backend)
    want = reference(g, feeds)
    # then every tensor equals the reference's
    assert set(got) == set(want)
    for tid, value in want.items():
        assert got[tid].dtype == value.dtype
        np.testing.assert_allclose(got[tid], value, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "slug", [s for s in EXAMPLES if build(s).of_type(APPLICATION)], ids=lambda s: str(s)
)
def test_sharded_gallery_graph_matches_logical(slug: str) -> None:
    # given a gallery graph that comes sharded
    g = build(slug)
    # when it runs sharded
    result = run(g, _feeds(g), sharded=True)
    # then every output matches the logical run
    assert result.max_abs_diff is not None
    assert result.max_abs_diff
    assert all(d < 1e-10 for d in result.max_abs_diff.values()), result.max_abs_diff
