"""``dot`` with ``params.axes`` (issue 21, "Output axis order of dot"): the result's axes in the
order asked, computed right — logically and application by application — against NumPy's
``einsum`` (an implementation no one here wrote), and a bad order refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from geon import core as gc
from geon.core.errors import AxisError
from geon.core.graph import Graph
from geon.core.plans.shards import shard
from geon.execute import run

A, B, C, W = gc.Axis("A", 2), gc.Axis("B", 3), gc.Axis("C", 4), gc.Axis("W", 5)
XV = np.arange(30.0).reshape(2, 3, 5) - 7.0
YV = np.arange(20.0).reshape(5, 4) / 3.0
LETTERS = {"A": "a", "B": "b", "C": "c"}


def build(order: list[gc.Axis] | None) -> tuple[gc.Tensor, Graph]:
    x = gc.constant(XV, axes=[A, B, W - 1], name="x")
    y = gc.constant(YV, axes=[W, C], name="y")
    z = gc.dot(x, y, axes=order, name="z")
    return z, gc.graph([z])


@pytest.mark.parametrize(
    "order", [None, [C, A, B], [A, C, B], [B, A, C], [C, B, A]], ids=lambda o: str(o)
)
def test_the_result_follows_the_order_asked(order: list[gc.Axis] | None) -> None:
    z, graph = build(order)
    names = [a.name for a in order] if order else ["A", "B", "C"]
    assert [str(a) for a in z.axes] == names
    assert graph.check() == []
    expected = np.einsum(f"abw,wc->{''.join(LETTERS[n] for n in names)}", XV, YV)
    assert np.allclose(gc.evaluate(z), expected)


@pytest.mark.parametrize("split", ["A", "C"])
def test_a_sharded_run_of_a_reordered_dot_equals_the_logical_one(split: str) -> None:
    z, graph = build([C, A, B])
    assert z.op_id is not None
    shard(graph, z.op_id, dim=split, parts=2)
    result = run(graph, sharded=True)
    assert result.max_abs_diff == {"z": 0.0}
    assert np.allclose(result.by_key()["z"], np.einsum("abw,wc->cab", XV, YV))


def test_an_order_that_is_not_the_results_is_refused_by_name() -> None:
    x = gc.constant(XV, axes=[A, B, W - 1], name="x")
    y = gc.constant(YV, axes=[W, C], name="y")
    with pytest.raises(AxisError, match=r'missing \("B"\)'):
        gc.dot(x, y, axes=[C, A])
    with pytest.raises(AxisError, match=r'not in the result \("W"\)'):
        gc.dot(x, y, axes=[C, A, B, W])
