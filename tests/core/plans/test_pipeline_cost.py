"""Pipeline stages in a plan and in its cost (issue 33): the plan's ``pipeline`` field checked
(every refusal names the bad value and what is valid), stages by scope or balanced, a ``send``
per microbatch between stages, the step time including the bubble, and the activations in
flight per schedule in per-device memory."""

from __future__ import annotations

import json
from typing import Any

import pytest

from geon.cli import main
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION
from geon.core.plans import PlanError, apply_plan, read_plan
from geon.core.plans.cost import cost_report, load_profile
from geon.core.plans.cost.ledger import memory_ledger
from geon.core.plans.cost.placed import read_placed
from geon.core.plans.cost.report import device_rows
from geon.core.plans.cost.schedules import simulate, stage_orders
from tests.core.plans.pipeline_docs import chain

PROFILE = load_profile("h100-sxm-8")
HALVES = [["layers.0", "layers.1"], ["layers.2", "layers.3"]]


def _plan(**pipeline: Any) -> dict[str, Any]:
    return {
        "name": "pp",
        "mesh": {"axes": {"pp": 2, "dp": 2}},
        "axisMapping": {"N": "dp"},
        "pipeline": {"axis": "pp", "microbatches": 4, "schedule": "gpipe", "stages": HALVES}
        | pipeline,
    }


def _cost(graph: Any, data: dict[str, Any]) -> dict[str, Any]:
    plan = read_plan(data)
    return cost_report(apply_plan(graph, plan), PROFILE, plan=plan)


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ({"axis": "tp"}, 'pipeline axis "tp" is not an axis of the mesh; expected one of ("pp"'),
        ({"microbatches": 0}, 'pipeline microbatches is "0"; expected an integer from 1 to 1024'),
        ({"microbatches": 5000}, "expected an integer from 1 to 1024"),
        ({"schedule": "zb"}, 'pipeline schedule "zb" is unknown; expected one of "gpipe"'),
        ({"virtualStages": 2}, 'virtualStages is "2" under schedule "gpipe"; expected 1'),
        (
            {"schedule": "interleaved", "virtualStages": 2, "microbatches": 3},
            "expected virtualStages >= 2 and microbatches a multiple of 2",
        ),
        ({"stages": [["layers.0"]]}, 'stages is a list of 1; expected "balanced" or a list of 2'),
        ({"stages": [["layers.0"], []]}, 'pipeline stage 1 is "[]"; expected a list of 1 to 256'),
        ({"extra": 1}, 'pipeline has field "extra"; expected only "axis"'),
    ],
)
def test_a_bad_pipeline_is_refused_naming_the_value(pipeline: dict[str, Any], message: str) -> None:
    with pytest.raises(PlanError) as found:
        read_plan(_plan(**pipeline))
    assert message in str(found.value)


def test_the_pipeline_axis_carries_stages_only() -> None:
    data = _plan() | {"axisMapping": {"N": "pp"}}
    with pytest.raises(PlanError, match='axis mapping "N" names mesh axis "pp", which carries'):
        read_plan(data)


def test_a_pipelined_plan_is_written_on_one_stages_mesh_and_round_trips() -> None:
    graph = chain()
    plan = read_plan(_plan())
    assert read_plan(plan.to_json()) == plan
    placed = apply_plan(graph, plan)
    # then the applications sit on the dp devices of one stage (the stage plan), as dp=2 alone
    alone = apply_plan(
        graph, {"name": "pp", "mesh": {"axes": {"dp": 2}}, "axisMapping": {"N": "dp"}}
    )
    assert len(placed.of_type(APPLICATION)) == len(alone.of_type(APPLICATION)) == 16
    assert placed.check() == []
    # and the graph it came from did not change
    assert graph.of_type(APPLICATION) == []


def test_forward_pipeline_cost_has_sends_per_microbatch_and_the_bubble() -> None:
    report = _cost(chain(), _plan())
    pipe = report["pipeline"]
    assert (pipe["schedule"], pipe["stages"], pipe["microbatches"]) == ("gpipe", 2, 4)
    # one tensor crosses (a1, layer 1's output read by layer 2): a send per microbatch, the
    # quarter of what one dp device holds (32 rows x 32 x 4 bytes / 4)
    sends = [c for c in report["collectives"] if c["kind"] == "send"]
    assert [s["microbatch"] for s in sends] == [0, 1, 2, 3]
    assert {s["bytesPerDevice"] for s in sends} == {32 * 32 * 4 // 4}
    assert {tuple(s["meshAxes"]) for s in sends} == {("pp",)}
    assert {tuple(s["stages"]) for s in sends} == {(0, 1)}
    # equal stages: the step is (m + p - 1) stage times plus the sends, the bubble in it
    f = pipe["forwardSeconds"]
    assert f[0] == pytest.approx(f[1])
    grid = simulate(stage_orders("gpipe", 2, 4, backward=False), f, [0.0, 0.0], pipe["sendSeconds"])
    assert report["time"]["upper"] == pytest.approx(grid.seconds)
    assert report["time"]["upper"] >= 5 * f[0]
    assert pipe["bubble"] == pytest.approx(grid.bubble) and pipe["bubble"] > 0
    # the grid has every forward box, and every device of the 2 x 2 mesh is reported
    assert len(pipe["grid"]) == 8
    assert sorted(tuple(d["coords"]) for d in report["devices"]) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_balanced_stages_cut_equal_layers_in_halves() -> None:
    graph = chain()
    explicit = _cost(graph, _plan())["pipeline"]
    balanced = _cost(graph, _plan(stages="balanced"))["pipeline"]
    assert balanced["stageSeconds"] == pytest.approx(explicit["stageSeconds"])


def test_balanced_needs_as_many_scopes_as_stages() -> None:
    data = _plan(stages="balanced") | {"mesh": {"axes": {"pp": 8, "dp": 2}}}
    with pytest.raises(GeonError, match="cut the top-level Group scopes into 8 stages but the doc"):
        _cost(chain(), data)


def test_a_stage_holding_no_operation_is_refused() -> None:
    with pytest.raises(
        GeonError, match=r"pipeline stage 1 scope \"layers.9\" matches no operation"
    ):
        _cost(chain(), _plan(stages=[["layers.0"], ["layers.9"]]))


def test_training_step_time_and_activations_in_flight_per_schedule() -> None:
    graph = chain(train=True)
    gpipe = _cost(graph, _plan(microbatches=8))
    one_f_one_b = _cost(graph, _plan(microbatches=8, schedule="1f1b"))
    # the backward runs on its forward's stage, sent back per microbatch too
    sends = [c for c in gpipe["collectives"] if c["kind"] == "send"]
    assert sorted({c["pass"] for c in sends}) == ["backward", "forward"] and len(sends) == 16
    assert gpipe["pipeline"]["backwardSeconds"][0] > 0
    # GPipe keeps all 8 microbatches' activations on each stage; 1F1B p - r: 2 on the first
    assert gpipe["pipeline"]["inFlight"] == [8.0, 8.0]
    assert one_f_one_b["pipeline"]["inFlight"] == [2.0, 1.0]
    first = next(d for d in gpipe["devices"] if d["stage"] == 0)["memory"]["activations"]
    first_1f1b = next(d for d in one_f_one_b["devices"] if d["stage"] == 0)
    assert first_1f1b["memory"]["activations"] * 4 == first > 0
    # and the step time is the schedule's, the bubble inside it
    for report in (gpipe, one_f_one_b):
        pipe = report["pipeline"]
        busy = sum(d["computeSeconds"] for d in report["devices"] if d["coords"][1] == 0)
        assert pipe["bubble"] == pytest.approx(1 - busy / (2 * report["time"]["upper"]))


def test_geon_cost_with_a_pipelined_plan_prints_the_pipeline(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    doc, plan = tmp_path / "doc.json", tmp_path / "plan.json"
    doc.write_text(json.dumps(chain().to_json()))
    plan.write_text(json.dumps(_plan(schedule="1f1b")))
    assert main(["cost", str(doc), "--plan", str(plan)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"schedule", "stages", "microbatches", "bubble", "stageSeconds", "grid"} <= set(
        report["pipeline"]
    )
    assert report["pipeline"]["schedule"] == "1f1b"
    # and a stage that holds nothing is refused in one line, exit 2, nothing printed
    plan.write_text(json.dumps(_plan(stages=[["layers.0"], ["nowhere"]])))
    assert main(["cost", str(doc), "--plan", str(plan)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("geon cost: pipeline stage 1") and "Traceback" not in err


def test_the_rest_devices_of_a_pipelined_plan_are_the_written_plans_with_its_ledger() -> None:
    # given the 4-layer chain under 2 pipeline stages x 2 data-parallel devices
    plan = read_plan(_plan())
    placed = apply_plan(chain(), plan)
    report = cost_report(placed, PROFILE, plan=plan)
    # when the REST answer's devices are read off the report
    rows = device_rows(placed, report)
    # then they are the devices the plan as written uses (the mesh less the pipeline axis),
    # each with the peak and temporaries of that document's ledger (the one memory model),
    # not the pipelined report's (whose devices are the whole mesh's)
    ledger = memory_ledger(read_placed(placed))
    assert [(r["coords"], r["total"], r["temporaries"]) for r in rows] == [
        (list(d[1]), m.peak, dict(m.split)["temporaries"]) for d, m in ledger.items()
    ]
    assert [r["coords"] for r in rows] == [[0], [1]]
    assert [d["coords"] for d in report["devices"]] == [[0, 0], [0, 1], [1, 0], [1, 1]]
