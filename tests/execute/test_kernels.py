"""Every catalogue kernel through the executor matches the reference evaluator, on NumPy and
under ``array_api_strict`` (which refuses anything outside the array API standard)."""

from __future__ import annotations

import numpy as np
import pytest

from geon import core as gc
from geon.core.ops import CATALOGUE, POSITIONAL
from geon.core.reference import evaluate_graph as reference
from geon.execute import evaluate_graph, run
from tests.execute.cases import CASES


def _check(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_kernel_matches_reference(case: str, backend: str) -> None:
    # given a graph computing one kernel
    out = CASES[case]()
    g = gc.graph([out])
    # when the executor runs it logically
    got = evaluate_graph(g, {}, backend=backend)
    # then every tensor equals the reference evaluator's
    want = reference(g, {})
    assert set(got) == set(want)
    for tid in want:
        _check(got[tid], want[tid])


def test_cases_cover_the_named_catalogue() -> None:
    # given the cases' graphs
    kernels = set()
    for build in CASES.values():
        g = gc.graph([build()])
        kernels |= (
            {n.body["kernel"] for n in g.of_type(gc.graph([build()]).nodes[0].type)}
            if False
            else set()
        )
        kernels |= {n.body["kernel"] for n in g.nodes if n.type.endswith("/Operation")}
    # then every named kernel of the catalogue is exercised
    assert kernels == set(CATALOGUE) - set(POSITIONAL)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_only_outputs_kept_match_reference(case: str) -> None:
    # given a graph whose intermediates may share storage
    out = CASES[case]()
    g = gc.graph([out])
    # when only the output is kept
    got = run(g).outputs
    # then it still equals the reference
    assert list(got) == [out.id]
    _check(got[out.id], reference(g, {})[out.id])
