"""Plan against plan where a plan has pipeline stages (issue 33, geon.core.plans.diff): each
side is costed as ``geon cost`` costs it (the step with the bubble, a ``send`` per microbatch
between stages), ``pipeline`` says each side's schedule and what changed, and two plans without
stages are compared exactly as before."""

from __future__ import annotations

from typing import Any

import pytest

from geon.core.graph import Graph
from geon.core.plans import Plan, apply_plan, read_plan
from geon.core.plans.cost import cost_report, load_profile
from geon.core.plans.cost.pipelined import send_count
from geon.core.plans.diff import plan_diff
from tests.core.plans.pipeline_docs import chain

PROFILE = load_profile("h100-sxm-8")
HALVES = [["layers.0", "layers.1"], ["layers.2", "layers.3"]]
MESH = {"name": "pod", "axes": {"pp": 2, "dp": 2}}


def _plan(name: str, **pipeline: Any) -> Plan:
    data: dict[str, Any] = {"name": name, "mesh": MESH, "axisMapping": {"N": "dp"}}
    if pipeline:
        data["pipeline"] = {
            "axis": "pp",
            "microbatches": 4,
            "schedule": "gpipe",
            "stages": HALVES,
        } | pipeline
    return read_plan(data)


def _diff(graph: Graph, a: Plan, b: Plan, *, plans: bool = True) -> dict[str, Any]:
    return plan_diff(
        apply_plan(graph, a, mesh_id="mesh-a"),
        apply_plan(graph, b, mesh_id="mesh-b"),
        PROFILE,
        base_mesh="mesh-a",
        target_mesh="mesh-b",
        base_plan=a if plans else None,
        target_plan=b if plans else None,
    )


@pytest.fixture(scope="module")
def layers() -> Graph:
    return chain()


def test_stages_added_to_a_plan_bring_their_bubble_sends_and_schedule(layers: Graph) -> None:
    # given data parallel on a pp=2 x dp=2 mesh, and the same with GPipe over pp in two halves
    plain, piped = _plan("dp"), _plan("dp + pp", schedule="gpipe")
    # when they are compared
    diff = _diff(layers, plain, piped)
    # then the after step is the one `geon cost` gives the pipelined plan (bubble included)
    costed = cost_report(apply_plan(layers, piped), PROFILE, plan=piped)
    assert diff["time"]["after"] == costed["time"]
    assert diff["time"]["before"] == cost_report(apply_plan(layers, plain), PROFILE)["time"]
    # and the sends between the stages are added, one per microbatch (a1 crosses from stage 0
    # to stage 1: 4 microbatches, forward only), as the cost counts them before costing
    added = [c for c in diff["collectives"]["added"] if c["kind"] == "send"]
    assert piped.pipeline is not None
    assert len(added) == send_count(apply_plan(layers, piped), piped.pipeline) == 4
    assert [(c["tensorLabel"], c["microbatch"], c["stages"], c["pass"]) for c in added] == [
        ("a1", i, [0, 1], "forward") for i in range(4)
    ]
    # and pipeline says the before has no stages and the after's schedule, with its bubble
    b = diff["pipeline"]["b"]
    assert diff["pipeline"]["a"] is None
    assert (b["schedule"], b["stages"], b["microbatches"], b["balanced"]) == ("gpipe", 2, 4, False)
    assert b["bubble"] == costed["pipeline"]["bubble"] > 0
    assert diff["pipeline"]["bubbleDelta"] == b["bubble"]
    assert diff["pipeline"]["changed"] == [
        "axis", "schedule", "stages", "devices", "virtualStages", "microbatches", "bubble",
        "balanced",
    ]  # fmt: skip
    # and both plans' devices are the whole mesh's, numbered alike
    assert [d["device"] for d in diff["devices"]] == [f"device {n}" for n in range(4)]
    assert all(d["before"] is not None and d["after"] is not None for d in diff["devices"])


def test_gpipe_against_1f1b_pairs_every_send_and_names_the_schedule(layers: Graph) -> None:
    # given the training step's two halves under GPipe and under 1F1B
    step = chain(train=True)
    gpipe, one_f = _plan("gpipe", schedule="gpipe"), _plan("1f1b", schedule="1f1b")
    # when they are compared
    diff = _diff(step, gpipe, one_f)
    # then the same sends move in both (each microbatch's activation forward and its gradient
    # back, matched one by one): none added or removed
    assert diff["collectives"]["added"] == [] and diff["collectives"]["removed"] == []
    # and the schedule is what changed; GPipe's and 1F1B's bubbles are the same idle fraction
    # ((p-1)/(m+p-1) both, Narayanan et al. 2021 §2.2), so the step time is the cost's for each
    assert diff["pipeline"]["a"]["schedule"] == "gpipe"
    assert diff["pipeline"]["b"]["schedule"] == "1f1b"
    assert "schedule" in diff["pipeline"]["changed"]
    for side, plan in (("before", gpipe), ("after", one_f)):
        costed = cost_report(apply_plan(step, plan), PROFILE, plan=plan)
        assert diff["time"][side] == costed["time"]


def test_more_microbatches_add_their_sends_and_shrink_the_bubble(layers: Graph) -> None:
    # given 1F1B over 4 microbatches and over 8
    four, eight = _plan("m4", schedule="1f1b"), _plan("m8", schedule="1f1b", microbatches=8)
    # when they are compared
    diff = _diff(layers, four, eight)
    # then microbatches 4 to 7 add their sends, and those of 0 to 3 change (each moves half
    # the bytes)
    added = diff["collectives"]["added"]
    assert sorted(c["microbatch"] for c in added) == [4, 5, 6, 7]
    assert {c["kind"] for c in added} == {"send"}
    changed = diff["collectives"]["changed"]
    assert [c["after"]["microbatch"] for c in changed] == [0, 1, 2, 3]
    assert all(c["bytesDelta"] == -c["before"]["bytes"] // 2 for c in changed)
    # and the bubble shrinks ((p-1)/(m+p-1): 1/5 -> 1/9 with equal stages)
    assert diff["pipeline"]["changed"] == ["microbatches", "bubble"]
    assert diff["pipeline"]["bubbleDelta"] < 0


def test_plans_without_stages_are_compared_as_before(layers: Graph) -> None:
    # given two plans without stages
    a, b = _plan("dp"), read_plan({"name": "none", "mesh": MESH})
    # when compared with and without their plans
    with_plans, without = _diff(layers, a, b), _diff(layers, a, b, plans=False)
    # then the answer is the same, with no pipeline section
    assert with_plans == without
    assert "pipeline" not in with_plans
