"""Contractions lowered as contractions (issue #34): a multiply only a sum reads runs as one
batched matmul, in logical and sharded plans, equal to the two kernels run as written; anything
else (a product kept or read twice, a dtype mix, a partial sum) runs as written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from geon import core as gc
from geon.core.checks import check
from geon.core.graph import Graph
from geon.core.plans.shards import shard
from geon.execute import evaluate_graph, run
from geon.execute.backend import select_backend
from geon.execute.contract import lower_contraction
from geon.execute.plan import compile_graph

B, H, S, T, K = (gc.Axis(n, m) for n, m in (("B", 2), ("H", 3), ("S", 4), ("T", 5), ("K", 6)))


def _attention(
    out_axes: list[Any] | None = None, dtype: str = "float64"
) -> tuple[Graph, dict[str, str]]:
    """scores[B, H, S, T] = sum_K q[B, H, S, K] * k[B, T, H, K]: a batched MatMul as imported."""
    q = gc.placeholder(axes=[B, H, S, K], name="q", dtype=dtype)
    k = gc.placeholder(axes=[B, T, H, K], name="k", dtype=dtype)
    prod = gc.multiply(q, k, name="prod")
    scores = gc.sum(prod, [K], out_axes, name="scores")
    return gc.graph([scores]), {"prod": str(prod.op_id), "scores": str(scores.op_id)}


def _inputs(dtype: Any = np.float32) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {
        "q": rng.standard_normal((2, 3, 4, 6)).astype(dtype),
        "k": rng.standard_normal((2, 5, 3, 6)).astype(dtype),
    }


def _want(inputs: dict[str, Any]) -> Any:
    return np.einsum("bhsk,bthk->bhst", inputs["q"], inputs["k"])


def test_a_product_only_a_sum_reads_is_one_step(backend: str) -> None:
    # given an attention-like product then sum
    g, _ = _attention(dtype="float32")
    plan = compile_graph(g, backend=backend)
    # then the plan runs one step, and the product is never an input nor an output
    assert [s.kernel for s in plan.steps] == ["op:sum"]
    assert sorted(plan.tensors[i].name for i in plan.inputs) == ["k", "q"]
    inputs = _inputs()
    got = run(g, inputs, backend=backend).by_key()["scores"]
    np.testing.assert_allclose(got, _want(inputs), rtol=1e-5, atol=1e-5)
    assert got.dtype == np.float32


def test_the_result_keeps_the_order_the_sum_asks_for() -> None:
    # given a sum whose result order is T, B, S, H (not the product's order)
    g, _ = _attention([T, B, S, H])
    inputs = _inputs(np.float64)
    got = run(g, inputs).by_key()["scores"]
    np.testing.assert_allclose(got, _want(inputs).transpose(3, 0, 2, 1), rtol=1e-12)


def test_a_product_also_read_elsewhere_or_kept_runs_as_written() -> None:
    # given the product kept as an output (the reference evaluator keeps every tensor)
    g, _ids = _attention()
    inputs = _inputs(np.float64)
    plan = compile_graph(g, keep=[n.id for n in g.nodes if n.label in ("prod", "scores")])
    assert [s.kernel for s in plan.steps] == ["op:multiply", "op:sum"]
    every = evaluate_graph(g, inputs)
    scores = next(n.id for n in g.nodes if n.label == "scores")
    np.testing.assert_allclose(every[scores], _want(inputs), rtol=1e-12)
    # and a product read by a second operation
    q = gc.placeholder(axes=[B, H, S, K], name="q")
    k = gc.placeholder(axes=[B, T, H, K], name="k")
    prod = gc.multiply(q, k, name="prod")
    g2 = gc.graph([gc.sum(prod, [K], name="s"), gc.exp(prod, name="e")])
    assert "op:multiply" in [s.kernel for s in compile_graph(g2).steps]


def test_a_mixed_dtype_product_runs_as_written() -> None:
    q = gc.placeholder(axes=[B, H, S, K], name="q", dtype="float32")
    k = gc.placeholder(axes=[B, T, H, K], name="k", dtype="float64")
    g = gc.graph([gc.sum(gc.multiply(q, k), [K], name="s")])
    assert [s.kernel for s in compile_graph(g).steps] == ["op:multiply", "op:sum"]


def test_sharded_contraction_equals_the_logical_run() -> None:
    # given both operations split over B (one Application each per half)
    g, ids = _attention()
    shard(g, ids["prod"], dim="B", parts=2)
    shard(g, ids["scores"], dim="B", parts=2)
    assert [i for i in check(g) if i.severity == "error"] == []
    plan = compile_graph(g, sharded=True)
    assert [s.kernel for s in plan.steps] == ["op:sum", "op:sum"]
    inputs = _inputs(np.float64)
    result = run(g, inputs, sharded=True)
    assert result.max_abs_diff is not None and max(result.max_abs_diff.values()) == 0.0
    np.testing.assert_allclose(result.by_key()["scores"], _want(inputs), rtol=1e-12)


@pytest.mark.parametrize(
    ("maps", "reduced", "order", "spec"),
    [
        ([[0, 1, 2], [0, 2, 3]], [2], [0, 1, 3], "abc,acd->abd"),  # batched matmul
        ([[0, 1], [1, 2]], [1], [2, 0], "ab,bc->ca"),  # plain, result transposed
        ([[0, 1, 2], [2, 3]], [1, 2], [0, 3], "abc,cd->ad"),  # a letter only x holds, summed
        ([[0, 1], [0, 1]], [0, 1], [], "ab,ab->"),  # everything summed
        ([[0], [1]], [], [1, 0], "a,b->ba"),  # an outer product
    ],
)
def test_lower_contraction_is_einsum(
    backend: str, maps: list[list[int]], reduced: list[int], order: list[int], spec: str
) -> None:
    be = select_backend(backend)
    lengths = [2, 3, 4, 5]
    shapes = [tuple(lengths[p] for p in m) for m in maps]
    rank = 1 + max(p for m in maps for p in m)
    rng = np.random.default_rng(1)
    host = [rng.standard_normal(s) for s in shapes]
    f = lower_contraction(be, (maps, rank, reduced, order), shapes)
    got = be.to_host(f([be.asarray(a) for a in host], None))
    np.testing.assert_allclose(got, np.einsum(spec, *host), rtol=1e-12, atol=1e-12)


def test_a_contraction_measures_what_its_multiply_reads(backend: str) -> None:
    # given q computed split over H on 3 devices, and the product and its sum split over S
    # (a product then sum the executor runs as one contraction)
    from geon.core.graph import MESH
    from geon.core.plans.cost import infer_collectives, load_profile, read_placed

    mesh = "00000000-0000-4000-8000-0000000000e4"
    x = gc.placeholder(axes=[B, H, S, K], name="x", dtype="float32")
    k = gc.placeholder(axes=[B, T, H, K], name="k", dtype="float32")
    q = gc.relu(x, name="q")
    prod = gc.multiply(q, k, name="prod")
    scores = gc.sum(prod, [K], name="scores")
    g = gc.graph([scores])
    g.add_node({"id": mesh, "type": MESH, "body": {"name": "m", "axes": {"d": 3}}})
    assert q.op_id and prod.op_id and scores.op_id
    shard(g, q.op_id, mesh=mesh, over={"H": "d"})
    shard(g, prod.op_id, mesh=mesh, over={"S": "d"})
    shard(g, scores.op_id, mesh=mesh, over={"S": "d"})
    assert g.check() == []
    plan = compile_graph(g, sharded=True, backend=backend)
    fused = [s for s in plan.steps if s.reads_for is not None]
    assert fused and {s.reads_for for s in fused} == {prod.op_id}
    # when it runs sharded, the moves into the product are measured on the multiply's edge
    result = run(g, seed=0, sharded=True, backend=backend)
    assert result.measured is not None
    predicted = infer_collectives(read_placed(g), load_profile())
    edges = {(c.tensor, c.producer, c.consumer) for c in predicted}
    assert (q.id, q.op_id, prod.op_id) in edges
    assert edges <= set(result.measured)
    for c in predicted:
        got = result.measured[(c.tensor, c.producer, c.consumer)].payload(c.kind)
        assert got == c.bytes, (c.kind, got, c.bytes)
