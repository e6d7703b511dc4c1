"""Contracted-axis splits (issue 16 item 1): a dot whose contracted axis a plan maps becomes
partial products over the parts of that axis and a sum writing the original output; the result
is valid LoomGraph, runs sharded equal to the logical run, and a plan without the split puts the
dot back exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from geon import core as gc
from geon.core.graph import APPLICATION, IPF_SIGNATURE, OPERATION, PLACEMENT, Graph
from geon.core.plans import PlanError, apply_plan
from geon.core.plans.contract import CONTRACTED_SPLIT, contract_ops, restore_ops
from geon.execute import run


def mlp(f: int = 6) -> Graph:
    """The issue's 2-layer MLP: x[N, D] -> dot W1[D-1, F] -> relu -> dot W2[F-1, D]."""
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", f)
    x = gc.placeholder(axes=[N, D], name="x")
    w1 = gc.placeholder(axes=[D - 1, F], name="W1")
    w2 = gc.placeholder(axes=[F - 1, D], name="W2")
    h = gc.relu(gc.dot(x, w1, name="hidden"), name="relu")
    return gc.graph([gc.dot(h, w2, name="y")])


def plan(**fields: Any) -> dict[str, Any]:
    return {"name": "p", "mesh": {"name": "m", "axes": {"dp": 2, "tp": 3}}, **fields}


def kernels(graph: Graph) -> list[str]:
    return [op.body["kernel"] for op in graph.of_type(OPERATION)]


def coords(graph: Graph, op_id: str) -> list[list[int]]:
    return sorted(app.tags[PLACEMENT]["coords"] for app in graph.index.applications_of(op_id))


def without_applications(graph: Graph) -> list[dict[str, Any]]:
    return [n.to_json() for n in graph.nodes if n.type != APPLICATION]


def applications(graph: Graph) -> list[str]:
    bodies = [n.to_json() for n in graph.of_type(APPLICATION)]
    return sorted(
        json.dumps({k: v for k, v in b.items() if k != "id"}, sort_keys=True) for b in bodies
    )


def test_megatron_rewrites_the_second_dot_into_partial_products_and_a_sum() -> None:
    # given the MLP and Megatron's plan: the first dot over its index F, the second over its
    # contracted F
    graph = mlp()
    dot2 = graph.of_type(OPERATION)[2].id
    # when the plan is written
    placed = apply_plan(graph, plan(axisMapping={"F": "tp"}))
    # then the second dot is a sum with the same id, fed by partial products over F_over_tp
    assert placed.get(dot2).body["kernel"] == "op:sum"
    assert placed.get(dot2).body["params"]["reduction_axes"] == ["F_over_tp"]
    assert sorted(kernels(placed)) == ["op:dot", "op:dot_partial", "op:relu", "op:sum"]
    partial = next(op for op in placed.of_type(OPERATION) if op.body["kernel"] == "op:dot_partial")
    # the partial products run one part per tp device; the sum's output is whole (replicated)
    assert coords(placed, partial.id) == [[0, 0], [0, 1], [0, 2]]
    sig = partial.tags[IPF_SIGNATURE]["inputs"]
    # h is [F, N]: its F dim reads a chunk of 6 / 3 = 2 from 2·p; N is whole on this plan
    assert sig["x"][0]["shape"] == [2, 1]
    assert [row[0] for row in sig["x"][0]["affineMap"]["projection"]] == [2, 0]
    # and every constraint holds
    assert placed.check() == []


def test_a_plan_without_the_split_restores_the_dot_exactly() -> None:
    # given the MLP written with Megatron's plan
    graph = mlp()
    split = apply_plan(graph, plan(axisMapping={"F": "tp"}))
    # when a plan without the contracted split is written over it
    back = apply_plan(split, plan(axisMapping={"N": "dp"}))
    # then it is the document that plan writes on the original: the same nodes in the same
    # order, and the same Applications (whose ids are fresh on every shard)
    want = apply_plan(graph, plan(axisMapping={"N": "dp"}))
    assert without_applications(back) == without_applications(want)
    assert applications(back) == applications(want)


def test_restore_ops_round_trip_to_the_original_document() -> None:
    graph = mlp()
    dot2 = graph.of_type(OPERATION)[2].id
    split = graph.copy()
    split.apply(contract_ops(split, dot2, "F", "tp", 3))
    assert CONTRACTED_SPLIT in split.get(dot2).tags
    split.apply(restore_ops(split))
    assert split.to_json() == graph.to_json()


def test_unequal_parts_are_refused_naming_the_axis_its_length_and_the_parts() -> None:
    graph = mlp(f=5)
    with pytest.raises(PlanError, match='axis "F" of length 5 cannot be split into 3 equal parts'):
        apply_plan(graph, plan(axisMapping={"F": "tp"}))


def test_a_spec_entry_may_name_the_contracted_axis() -> None:
    graph = mlp()
    dot2 = graph.of_type(OPERATION)[2].id
    placed = apply_plan(graph, plan(spec={dot2: {"over": {"F": "tp", "D": "dp"}}}))
    partial = next(op for op in placed.of_type(OPERATION) if op.body["kernel"] == "op:dot_partial")
    assert len(coords(placed, partial.id)) == 6  # 3 parts of F on tp x 2 of D on dp
    assert placed.get(dot2).body["kernel"] == "op:sum"
    assert placed.check() == []


@pytest.mark.parametrize(
    "mapping", [{"F": "tp"}, {"N": "dp", "F": "tp"}], ids=["megatron", "dp+megatron"]
)
def test_the_sharded_run_equals_the_logical_run(mapping: dict[str, str], backend: str) -> None:
    # given the MLP written with a plan that splits the second dot's contracted axis
    placed = apply_plan(mlp(), plan(axisMapping=mapping))
    # when it runs Application by Application
    result = run(placed, seed=0, sharded=True, backend=backend)
    # then every tensor equals the logical run within float tolerance
    assert result.max_abs_diff
    assert "y" in result.max_abs_diff
    assert max(result.max_abs_diff.values()) < 1e-12
