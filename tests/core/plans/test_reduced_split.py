"""Reduced-axis splits (issue 16 item 1): a reduction (sum, prod, max, min, mean) whose reduced
axis a plan maps becomes the same reduction over each part of that axis and the reduction of
the parts, writing the original output under the original id. The result is valid LoomGraph,
runs sharded equal to the logical run, costs one all-reduce of the partial results, and a plan
without the split puts the reduction back exactly."""

from __future__ import annotations

from typing import Any

import pytest

from geon import core as gc
from geon.core.graph import IPF_SIGNATURE, MESH, OPERATION, PLACEMENT, Graph
from geon.core.plans import PlanError, apply_plan, plan_splits, read_plan, shard_op_edits
from geon.core.plans.contract import CONTRACTED_SPLIT, contract_ops, restore_ops
from geon.core.plans.cost import cost_report, load_profile
from geon.execute import run

REDUCTIONS = ["sum", "prod", "max", "min", "mean"]


def reduction(kind: str = "sum", r: int = 6) -> Graph:
    """``total[N] = kind(h[N, R] over R)``, fed by an exp so the input is computed (not an
    input the plan places)."""
    N, R = gc.Axis("N", 4), gc.Axis("R", r)
    h = gc.exp(gc.placeholder(axes=[N, R], name="x"), name="h")
    return gc.graph([getattr(gc, kind)(h, reduction_axes=[R], name="total")])


def plan(**fields: Any) -> dict[str, Any]:
    return {"name": "p", "mesh": {"name": "m", "axes": {"dp": 2, "tp": 3}}, **fields}


def total_op(graph: Graph) -> str:
    return graph.of_type(OPERATION)[-1].id


def coords(graph: Graph, op_id: str) -> list[list[int]]:
    return sorted(app.tags[PLACEMENT]["coords"] for app in graph.index.applications_of(op_id))


@pytest.mark.parametrize("kind", REDUCTIONS)
def test_a_mapped_reduced_axis_splits_the_reduction_into_parts(kind: str) -> None:
    # given total = kind(h[N, R]) and a plan mapping R over tp (3 devices)
    graph = reduction(kind)
    op_id = total_op(graph)
    placed = apply_plan(graph, plan(axisMapping={"R": "tp"}))
    # then the operation keeps its id and kernel, and reduces the parts axis R_over_tp
    total = placed.get(op_id)
    assert total.body["kernel"] == f"op:{kind}"
    assert total.body["params"]["reduction_axes"] == ["R_over_tp"]
    # fed by the partial reduction: the same kernel, one part of R (6 / 3 = 2) per tp device
    [partial] = [o for o in placed.of_type(OPERATION) if "parts" in o.body.get("params", {})]
    assert partial.body["kernel"] == f"op:{kind}"
    assert partial.body["params"]["parts"] == {"axis": "R", "into": "R_over_tp"}
    assert coords(placed, partial.id) == [[0, 0], [0, 1], [0, 2]]
    sig = partial.tags[IPF_SIGNATURE]["inputs"]["tensor"][0]
    assert sig["shape"] == [1, 2]  # h[N, R]: N whole on this plan (one row per index), R a chunk
    assert [row[0] for row in sig["affineMap"]["projection"]] == [0, 2]
    # nothing is left unsplit, and every constraint holds
    assert plan_splits(graph, read_plan(plan(axisMapping={"R": "tp"}))).not_split == ()
    assert placed.check() == []


@pytest.mark.parametrize("kind", REDUCTIONS)
@pytest.mark.parametrize("mapping", [{"R": "tp"}, {"N": "dp", "R": "tp"}], ids=["tp", "dp+tp"])
def test_the_sharded_run_equals_the_logical_run(
    kind: str, mapping: dict[str, str], backend: str
) -> None:
    placed = apply_plan(reduction(kind), plan(axisMapping=mapping))
    result = run(placed, seed=0, sharded=True, backend=backend)
    assert "total" in result.max_abs_diff
    assert max(result.max_abs_diff.values()) < 1e-12


def test_the_parts_are_all_reduced_once() -> None:
    # given the sum split over tp, the exp before it split the same way (it has R)
    graph = reduction("sum")
    placed = apply_plan(graph, plan(axisMapping={"R": "tp"}))
    report = cost_report(placed, load_profile())
    # then the only collective is the all-reduce of the partial sums over tp's 3 devices into
    # the whole sum on every device; its payload is the logical region reduced, total[N]: 4
    # float64 (as the Megatron dot's is N·D elements). The input h moves nowhere: each device
    # reduces the part of R it computed
    [found] = report["collectives"]
    assert (found["kind"], found["meshAxes"], found["devices"]) == ("all-reduce", ["tp"], 3)
    assert found["bytes"] == 4 * 8
    assert found["consumer"] == total_op(graph)


def test_a_plan_without_the_split_restores_the_reduction_exactly() -> None:
    graph = reduction("max")
    split = apply_plan(graph, plan(axisMapping={"R": "tp"}))
    back = apply_plan(split, plan(axisMapping={"N": "dp"}))
    want = apply_plan(graph, plan(axisMapping={"N": "dp"}))
    assert [n.to_json() for n in back.of_type(OPERATION)] == [
        n.to_json() for n in want.of_type(OPERATION)
    ]
    direct = graph.copy()
    direct.apply(contract_ops(direct, total_op(graph), "R", "tp", 3))
    assert CONTRACTED_SPLIT in direct.get(total_op(graph)).tags
    direct.apply(restore_ops(direct))
    assert direct.to_json() == graph.to_json()


def test_the_shard_edit_may_name_the_reduced_axis() -> None:
    # given the editor's shard edit over the reduced axis, on a mesh of its own
    graph = apply_plan(reduction("mean"), plan(axisMapping={"N": "dp"}))
    [mesh] = [n.id for n in graph.of_type(MESH)]
    op_id = total_op(graph)
    graph.apply(shard_op_edits(graph, op_id, mesh=mesh, over={"R": "tp"}))
    # then it is the same rewrite: the partial means one part of R per tp device
    [partial] = [o for o in graph.of_type(OPERATION) if "parts" in o.body.get("params", {})]
    assert len(coords(graph, partial.id)) == 3
    assert graph.check() == []
    result = run(graph, seed=1, sharded=True)
    assert "total" in result.max_abs_diff
    assert max(result.max_abs_diff.values()) < 1e-12


def test_unequal_parts_are_refused_naming_the_axis_its_length_and_the_parts() -> None:
    with pytest.raises(PlanError, match='axis "R" of length 5 cannot be split into 3 equal parts'):
        apply_plan(reduction("sum", r=5), plan(axisMapping={"R": "tp"}))


def test_a_normalisation_over_a_mapped_axis_still_runs_whole_and_says_why() -> None:
    N, R = gc.Axis("N", 4), gc.Axis("R", 6)
    soft = gc.softmax(gc.placeholder(axes=[N, R], name="x"), reduction_axes=[R], name="p")
    graph = gc.graph([soft])
    [op] = graph.of_type(OPERATION)
    [left] = plan_splits(graph, read_plan(plan(axisMapping={"R": "tp"}))).not_split
    assert (left.operation, left.axes) == (op.id, ("R",))
    assert "only a dot or a reduction" in left.reason
