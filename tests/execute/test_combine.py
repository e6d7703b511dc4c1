"""op:concat and op:where: their axis rules and refusals (each message pinned), the values they
compute against NumPy's own ``concatenate`` and ``where``, and sharded runs that equal the
logical run: a concat split over an axis it does not join, a where split over any axis."""

from __future__ import annotations

import numpy as np
import pytest

from geon import core as gc
from geon.core.axes import Axes
from geon.core.builder import Tensor
from geon.core.checks import check
from geon.core.errors import AxisError, GeonError, KernelError, ShapeError, SplitError
from geon.core.graph import Graph
from geon.core.ops import infer
from geon.core.plans.shards import shard
from geon.execute import evaluate_graph, run

N, T, A, B = gc.Axis("N", 4), gc.Axis("T", 3), gc.Axis("A", 2), gc.Axis("B", 5)
K = gc.Axis("K", 7)
X = np.random.default_rng(0).standard_normal((4, 2, 3))
Y = np.random.default_rng(1).standard_normal((3, 5, 4))


def _concat() -> tuple[Graph, Tensor]:
    x = gc.placeholder(axes=[N, A, T], name="x")
    y = gc.placeholder(axes=[T, B, N], name="y")
    out = gc.concat([x, y], [A, B], K, name="out")
    return gc.graph([out]), out


def test_concat_joins_along_each_operands_axis_in_the_first_operands_order() -> None:
    # given x[N, A, T] and y[T, B, N] joined along A and B into K
    g, out = _concat()
    # when it runs, then the result is (N, K, T): NumPy's concatenate of y moved into x's order
    assert [str(r) for r in out.axes] == ["N", "K", "T"]
    got = evaluate_graph(g, {"x": X, "y": Y}, [out.id])[out.id]
    np.testing.assert_array_equal(got, np.concatenate([X, Y.transpose(2, 1, 0)], axis=1))
    assert check(g) == []


@pytest.mark.parametrize("axis", ["N", "T"])
def test_concat_sharded_over_a_kept_axis_equals_the_logical_run(axis: str) -> None:
    # given the concat split over an axis it keeps
    g, out = _concat()
    shard(g, str(out.op_id), dim=axis, parts=2)
    assert check(g) == []
    # when it runs sharded, then every shard read its operands' joined dims whole and agreed
    result = run(g, {"x": X, "y": Y}, sharded=True)
    assert result.max_abs_diff == {"out": 0.0}
    want = np.concatenate([X, Y.transpose(2, 1, 0)], axis=1)
    np.testing.assert_array_equal(next(iter(result.outputs.values())), want)


def test_concat_refuses_a_split_over_the_joined_axis() -> None:
    # given the concat, when it is split over its joined axis K
    g, out = _concat()
    before = g.to_json()
    with pytest.raises(SplitError) as e:
        shard(g, str(out.op_id), dim="K", parts=2)
    # then the refusal names the index axes there are, and nothing changed
    assert str(e.value) == (
        f'axis "K" is not an index axis of operation "{out.op_id}"; expected one of ("N", "T") '
        "or a dim number 0..1"
    )
    assert g.to_json() == before


def test_concat_signature_reads_joined_dims_whole() -> None:
    # given the concat's inference, then y's joined B is a zero row of full length 5
    inf = infer(
        "op:concat",
        {"tensors": [Axes.of([N, A, T]), Axes.of([T, B, N])]},
        {"along": ["A", "B"], "axis": "K"},
        {"K": K},
    )
    assert inf.signature()["inputs"]["tensors"][1] == {
        "affineMap": {"projection": [[0, 1], [0, 0], [1, 0]], "offset": [0, 0, 0]},
        "shape": [1, 5, 1],
    }
    assert inf.signature()["outputs"]["result"][0]["shape"] == [1, 7, 1]


CONCAT_REFUSALS = [
    (
        "kept",
        {"along": ["A", "B"], "axis": "N"},
        [[N, A, T], [T, B, N]],
        AxisError,
        'op:concat params "axis" is "N", which the operands keep; name a new axis for the joined '
        'one, not one of ("N", "T")',
    ),
    (
        "sum",
        {"along": ["A", "B"], "axis": "B"},
        [[N, A, T], [T, B, N]],
        ShapeError,
        'op:concat joins ("A", "B") of lengths 2 + 5 = 7, but axis "B" has length 5; declare an '
        "axis of length 7",
    ),
    (
        "others",
        {"along": ["A", "B"], "axis": "K"},
        [[N, A, T], [B, N]],
        AxisError,
        'op:concat operand 1 ("B", "N") joined along "B" does not share the other axes '
        '("N", "T") of operand 0; missing ("T")',
    ),
    (
        "count",
        {"along": ["A"], "axis": "K"},
        [[N, A, T], [T, B, N]],
        KernelError,
        'op:concat params "along" names 1 axes for 2 operands; expected one axis per operand, in '
        "operand order",
    ),
    (
        "stranger",
        {"along": ["A", "A"], "axis": "K"},
        [[N, A, T], [T, B, N]],
        AxisError,
        'op:concat params "along" names "A" for operand 1, which is not one of its axes; expected '
        'one of ("T", "B", "N")',
    ),
    (
        "no-axis",
        {"along": ["A", "B"]},
        [[N, A, T], [T, B, N]],
        KernelError,
        'op:concat needs params "axis"; expected the new axis of the result, whose length is the '
        "sum of the joined axes' lengths",
    ),
]


@pytest.mark.parametrize(
    ("params", "operands", "error", "message"),
    [c[1:] for c in CONCAT_REFUSALS],
    ids=[c[0] for c in CONCAT_REFUSALS],
)
def test_concat_refusals_name_the_axis(
    params: dict[str, object], operands: list[list[gc.Axis]], error: type, message: str
) -> None:
    # given operands and params that disagree, when the concat is inferred, then it is refused
    with pytest.raises(error) as e:
        infer("op:concat", {"tensors": [Axes.of(o) for o in operands]}, params, {"K": K})
    assert isinstance(e.value, GeonError)
    assert str(e.value) == message


def _where() -> tuple[Graph, Tensor]:
    x = gc.placeholder(axes=[N, T], name="x")
    y = gc.placeholder(axes=[T], name="y")
    c = gc.placeholder(axes=[A, N], name="c", dtype="boolean")
    out = gc.where(c, x, y, name="out")
    return gc.graph([out]), out


W_IN = {
    "x": np.arange(12.0).reshape(4, 3),
    "y": np.array([-1.0, -2.0, -3.0]),
    "c": np.random.default_rng(2).standard_normal((2, 4)) > 0,
}


def _where_want() -> np.ndarray:
    cond = W_IN["c"].T[:, None, :]  # (N, 1, A)
    return np.where(cond, W_IN["x"][:, :, None], W_IN["y"][None, :, None])


def test_where_broadcasts_as_an_elementwise_op() -> None:
    # given x[N, T], y[T] and a condition[A, N], then the result is (N, T, A), x's dtype
    g, out = _where()
    assert [str(r) for r in out.axes] == ["N", "T", "A"]
    assert out.dtype == "float64"
    got = evaluate_graph(g, W_IN, [out.id])[out.id]
    np.testing.assert_array_equal(got, _where_want())
    assert check(g) == []


@pytest.mark.parametrize("axis", ["N", "T", "A"])
def test_where_sharded_equals_the_logical_run(axis: str) -> None:
    g, out = _where()
    shard(g, str(out.op_id), dim=axis, parts=2)
    assert check(g) == []
    result = run(g, W_IN, sharded=True)
    assert result.max_abs_diff == {"out": 0.0}
    np.testing.assert_array_equal(next(iter(result.outputs.values())), _where_want())


V, E, S = gc.Axis("V", 6), gc.Axis("E", 4), gc.Axis("S", 3)
TABLE = np.random.default_rng(5).standard_normal((6, 4))
IDS = np.array([[0, 5, -1], [2, 2, 3]], dtype=np.int64)


def _lookup() -> tuple[Graph, Tensor]:
    table = gc.placeholder(axes=[V, E], name="table")
    ids = gc.placeholder(axes=[N, S], name="ids", dtype="int64")
    out = gc.gather(table, ids, V, name="out")
    return gc.graph([out]), out


def test_gather_is_an_embedding_lookup_in_onnx_order() -> None:
    # given a table[V, E] and ids[N, S] (a negative id counts from the end, as in ONNX)
    g, out = _lookup()
    feeds = {"table": TABLE, "ids": np.concatenate([IDS, IDS])}
    # then the result is (N, S, E): the table's V replaced by the indices' axes
    assert [str(r) for r in out.axes] == ["N", "S", "E"]
    got = evaluate_graph(g, feeds, [out.id])[out.id]
    np.testing.assert_array_equal(got, np.take(TABLE, feeds["ids"], axis=0))
    assert check(g) == []


@pytest.mark.parametrize("axis", ["N", "S", "E"])
def test_gather_sharded_equals_the_logical_run(axis: str) -> None:
    g, out = _lookup()
    feeds = {"table": TABLE, "ids": np.concatenate([IDS, IDS])}
    shard(g, str(out.op_id), dim=axis, parts=2)
    assert check(g) == []
    result = run(g, feeds, sharded=True)
    assert result.max_abs_diff == {"out": 0.0}
    np.testing.assert_array_equal(
        next(iter(result.outputs.values())), np.take(TABLE, feeds["ids"], axis=0)
    )


def test_gather_refuses_an_index_outside_the_table() -> None:
    g, out = _lookup()
    feeds = {"table": TABLE, "ids": np.full((4, 3), 6, dtype=np.int64)}
    with pytest.raises(GeonError) as e:
        evaluate_graph(g, feeds, [out.id])
    assert 'op:gather indices reach outside [-6, 6), the length of table axis "V"' in str(e.value)


GATHER_REFUSALS = [
    (
        "stranger",
        {"axis": "S"},
        AxisError,
        'op:gather params "axis" is "S", which is not a table axis; expected one of ("V", "E")',
    ),
    (
        "no-axis",
        {},
        KernelError,
        'op:gather needs params "axis"; expected the table axis to index, one of ("V", "E")',
    ),
]


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [c[1:] for c in GATHER_REFUSALS],
    ids=[c[0] for c in GATHER_REFUSALS],
)
def test_gather_refusals_name_the_axis(params: dict[str, str], error: type, message: str) -> None:
    with pytest.raises(error) as e:
        infer("op:gather", {"table": [Axes.of([V, E])], "indices": [Axes.of([N, S])]}, params)
    assert str(e.value) == message


def test_gather_refuses_indices_that_share_a_table_axis() -> None:
    with pytest.raises(AxisError) as e:
        infer("op:gather", {"table": [Axes.of([V, E])], "indices": [Axes.of([E])]}, {"axis": "V"})
    assert str(e.value) == (
        'op:gather indices ("E") share ("E") with the table ("V", "E"); give the indices axes of '
        "their own"
    )


def test_the_authoring_functions_refuse_what_the_kernels_cannot_take() -> None:
    x, y = gc.placeholder(axes=[N, A, T]), gc.placeholder(axes=[T, B, N])
    with pytest.raises(KernelError, match="concat joins 2 tensors along 1 axes; expected one"):
        gc.concat([x, y], [A], K)
    floats = gc.placeholder(axes=[N, S])
    with pytest.raises(KernelError, match="gather indices have dtype float64; expected an int"):
        gc.gather(gc.placeholder(axes=[V, E]), floats, V)
