"""Plan against plan (issue 18, "Diffs"; geon.core.plans.diff): the transformer block's shipped
plans, and a small MLP split over its contracted axis on meshes of 2, 4 and 2x2 devices."""

from __future__ import annotations

from typing import Any

import pytest

from geon import core as gc
from geon.core.graph import Graph
from geon.core.plans import apply_plan
from geon.core.plans.cost import DEFAULT_PROFILE, load_profile
from geon.core.plans.diff import plan_diff
from geon.examples.transformer import PLANS, transformer_block
from tests.core.test_costmodel_collectives import PROFILE

BASE_MESH, TARGET_MESH = "mesh-before", "mesh-after"


def _diff(graph: Graph, before: dict[str, Any], after: dict[str, Any], profile: Any = PROFILE):
    return plan_diff(
        apply_plan(graph, before, mesh_id=BASE_MESH),
        apply_plan(graph, after, mesh_id=TARGET_MESH),
        profile,
        base_mesh=BASE_MESH,
        target_mesh=TARGET_MESH,
    )


def _edges(collectives: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Collectives as people read them: kind, tensor, producer, consumer, mesh axes, bytes."""
    return [
        (
            c["kind"],
            c["tensorLabel"],
            c["producerLabel"],
            c["consumerLabel"],
            c["meshAxes"],
            c["bytes"],
        )
        for c in collectives
    ]


@pytest.fixture(scope="module")
def block() -> Graph:
    return transformer_block()


def test_megatron_adds_the_two_all_reduces_that_data_parallel_does_without(block: Graph) -> None:
    diff = _diff(block, PLANS[0], PLANS[1], load_profile(DEFAULT_PROFILE))
    # then: the output projection and W2 contract the split axis; each all-reduces its partial
    # sums: 2 parts of (B, N, D) float32, 2 · 2·4·8 · 4 = 512 bytes
    assert _edges(diff["collectives"]["added"]) == [
        ("all-reduce", "attn out partial", "op:dot_partial", "op:sum", ["tp"], 512),
        ("all-reduce", "mlp out partial", "op:dot_partial", "op:sum", ["tp"], 512),
    ]
    assert diff["collectives"]["removed"] == [] and diff["collectives"]["changed"] == []
    # and going back removes them
    back = _diff(block, PLANS[1], PLANS[0], load_profile(DEFAULT_PROFILE))
    assert _edges(back["collectives"]["removed"]) == _edges(diff["collectives"]["added"])
    assert back["collectives"]["added"] == []


def test_splitting_the_contracted_model_axis_trades_two_all_reduces_for_six_collectives(
    block: Graph,
) -> None:
    diff = _diff(block, PLANS[1], PLANS[2], load_profile(DEFAULT_PROFILE))
    added = [(c["kind"], c["tensorLabel"]) for c in diff["collectives"]["added"]]
    removed = [c["tensorLabel"] for c in diff["collectives"]["removed"]]
    # four all-reduces of partial products, and the layer norms (whole, replicated: they
    # normalise over the split D) gather x and the residual sum h1
    assert added == [
        ("all-gather", "x"),
        ("all-reduce", "q partial"),
        ("all-reduce", "k partial"),
        ("all-reduce", "v partial"),
        ("all-gather", "h1"),
        ("all-reduce", "up partial"),
    ]
    assert removed == ["attn out partial", "mlp out partial"]


def test_placements_show_the_split_axes_mesh_axes_and_devices_by_name(block: Graph) -> None:
    diff = _diff(block, PLANS[0], PLANS[1], load_profile(DEFAULT_PROFILE))
    rows = {p["operationLabel"]: (p["before"], p["after"]) for p in diff["placements"]}
    dp = {"split": {"B": 2}, "meshAxes": {"B": "dp"}, "mesh": "dp mesh", "devices": [[0], [1]]}
    tp = {"split": {"H": 2}, "meshAxes": {"H": "tp"}, "mesh": "tp mesh", "devices": [[0], [1]]}
    whole: dict[str, Any] = {"split": {}, "meshAxes": {}, "mesh": "tp mesh", "devices": [[0], [1]]}
    # Q is split by heads instead of batch; layer norm, split by batch, runs whole under
    # Megatron: replicated on every device of its mesh
    assert rows["op:dot → q"] == (dp, tp)
    assert rows["op:layer_norm → ln1"] == (dp, whole)
    # the partial products exist only in Megatron's document
    # (the output projection contracts H: its partial products are split over H_over_tp)
    assert rows["op:dot_partial → attn out partial"] == (
        None,
        {**tp, "split": {"H_over_tp": 2}, "meshAxes": {"H_over_tp": "tp"}},
    )
    # the sum of the parts runs whole too: the partials are all-reduced to every device
    assert rows["op:sum → attn out"] == (dp, whole)
    # every operation of either document is listed once, by id
    ids = [p["operation"] for p in diff["placements"]]
    assert len(ids) == len(set(ids))


def test_a_plan_against_itself_is_no_change(block: Graph) -> None:
    diff = _diff(block, PLANS[1], PLANS[1], load_profile(DEFAULT_PROFILE))
    assert diff["placements"] == []
    assert diff["collectives"] == {"added": [], "removed": [], "changed": []}
    assert [(d["device"], d["peakBytesDelta"], d["secondsDelta"]) for d in diff["devices"]] == [
        ("device 0", 0, 0.0),
        ("device 1", 0, 0.0),
    ]
    assert diff["time"]["delta"] == {"lower": 0.0, "upper": 0.0}
    assert diff["time"]["before"] == diff["time"]["after"]


def mlp() -> Graph:
    """``x[N, D] · w1[D-1, F] -> relu -> · w2[F-1, D]``, float32, N=8, D=4, F=16."""
    N, D, F = gc.Axis("N", 8), gc.Axis("D", 4), gc.Axis("F", 16)
    x = gc.placeholder(axes=[N, D], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[D - 1, F], name="w1", dtype="float32")
    w2 = gc.placeholder(axes=[F - 1, D], name="w2", dtype="float32")
    a = gc.relu(gc.dot(x, w1, name="h"), name="a")
    return gc.graph([gc.dot(a, w2, name="y")])


def _over_f(name: str, axes: dict[str, int], mapping: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "mesh": {"name": name, "axes": axes}, "axisMapping": mapping}


def test_the_same_all_reduce_on_more_devices_is_changed_with_its_deltas() -> None:
    two = _over_f("tp2", {"tp": 2}, {"F": "tp"})
    four = _over_f("tp4", {"tp": 4}, {"F": "tp"})
    diff = _diff(mlp(), two, four)
    assert diff["collectives"]["added"] == [] and diff["collectives"]["removed"] == []
    [changed] = diff["collectives"]["changed"]
    before, after = changed["before"], changed["after"]
    assert (before["tensorLabel"], before["devices"], after["devices"]) == ("y partial", 2, 4)
    # a ring all-reduce of 128 bytes: 2·(n-1)·latency + 2·(n-1)/n·bytes/bandwidth (1 µs, 1 GB/s)
    assert before["seconds"] == pytest.approx(2 * 1e-6 + 1 * 128 / 1e9, rel=1e-9)
    assert after["seconds"] == pytest.approx(6 * 1e-6 + 1.5 * 128 / 1e9, rel=1e-9)
    assert changed["bytesDelta"] == 0
    assert changed["secondsDelta"] == pytest.approx(after["seconds"] - before["seconds"])


def test_devices_only_one_plan_uses_count_as_zero_in_the_deltas() -> None:
    diff = _diff(
        mlp(), _over_f("tp2", {"tp": 2}, {"F": "tp"}), _over_f("tp4", {"tp": 4}, {"F": "tp"})
    )
    rows = {d["device"]: d for d in diff["devices"]}
    assert list(rows) == ["device 0", "device 1", "device 2", "device 3"]
    assert rows["device 2"]["before"] is None
    after = rows["device 2"]["after"]
    assert (after["mesh"], after["coords"]) == ("tp4", [2])
    assert after["seconds"] == pytest.approx(after["computeSeconds"] + after["commSeconds"])
    assert rows["device 2"]["peakBytesDelta"] == after["peakBytes"]
    assert rows["device 2"]["secondsDelta"] == after["seconds"]
    zero = rows["device 0"]
    assert zero["peakBytesDelta"] == zero["after"]["peakBytes"] - zero["before"]["peakBytes"]
    assert diff["time"]["delta"] == {
        key: pytest.approx(diff["time"]["after"][key] - diff["time"]["before"][key])
        for key in ("lower", "upper")
    }


def test_a_grid_names_a_mesh_axis_per_split_axis_each_side_by_its_own_dims() -> None:
    two = _over_f("tp2", {"tp": 2}, {"F": "tp"})
    grid = _over_f("grid", {"a": 2, "b": 2}, {"N": "a", "F": "b"})
    rows = {p["operationLabel"]: p for p in _diff(mlp(), two, grid)["placements"]}
    assert rows["op:relu → a"]["after"] == {
        "split": {"N": 2, "F": 2},
        "meshAxes": {"N": "a", "F": "b"},
        "mesh": "grid",
        "devices": [[0, 0], [0, 1], [1, 0], [1, 1]],
    }
    # the partial products' parts axis is named after each plan's mesh axis
    partial = rows["op:dot_partial → y partial"]
    assert partial["before"]["meshAxes"] == {"F_over_tp": "tp"}
    assert partial["after"]["meshAxes"] == {"N": "a", "F_over_b": "b"}


def test_devices_of_a_mesh_other_than_the_plans_are_matched_by_mesh_and_number() -> None:
    # given the target's mesh not named as its plan's: its devices are that mesh's own
    g = mlp()
    two = _over_f("tp2", {"tp": 2}, {"F": "tp"})
    before, after = apply_plan(g, two, mesh_id="m1"), apply_plan(g, two, mesh_id="m2")
    diff = plan_diff(before, after, PROFILE, base_mesh="m1")
    assert [(d["device"], d["before"] is None, d["after"] is None) for d in diff["devices"]] == [
        ("device 0", False, True),
        ("device 1", False, True),
        ("tp2 device 0", True, False),
        ("tp2 device 1", True, False),
    ]
