"""The pipeline's stage rule held to shared cases (issue 33): one function,
:func:`geon.core.plans.cost.pipelined.stage_rule`, which the server's save
(:func:`~geon.core.plans.cost.pipelined.check_stages`) and the cost model
(:func:`~geon.core.plans.cost.pipelined.operation_stages`) both read; ``pipeline_stage_cases.json``
pins it (documents and pipelines to stages, balanced units or the refusal's words), and the
balanced cut is held to a brute force over every cut."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest

from geon.core.graph import OPERATION
from geon.core.nodes import Node
from geon.core.plans import apply_plan, read_plan
from geon.core.plans.cost import cost_report, load_profile
from geon.core.plans.cost.pipelined import _inherit, _partition, send_count, stage_rule
from geon.core.plans.pipeline import PipelineError, read_pipeline
from tests.core.plans.pipeline_docs import chain

CASES = json.loads((Path(__file__).parent / "pipeline_stage_cases.json").read_text())["cases"]
GROUP = "urn:geon:2026-11:tag_types.jsd#/tags/Group"
SPLIT = "urn:geon:2026-11:tag_types.jsd#/tags/ContractedSplit"


def _node(op: dict[str, Any]) -> Node:
    tags: dict[str, Any] = {}
    if "scope" in op:
        tags[GROUP] = {"scope": op["scope"]}
    split = op.get("split")
    if split is not None and "sum" in split:
        tags[SPLIT] = {"sum": split["sum"]}
    elif split is not None:
        tags[SPLIT] = {"original": {"tags": {GROUP: {"scope": split["original"]}}}}
    body = {
        "kernel": "op:relu",
        "inputs": {"x": [{"tensorId": t} for t in op.get("inputs", [])]},
        "outputs": {"y": [{"tensorId": t} for t in op.get("outputs", [])]},
    }
    return Node(op["id"], OPERATION, None, body, tags)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_stage_rule_case(case: dict[str, Any]) -> None:
    # given the case's operations and a two-stage pipeline
    nodes = [_node(op) for op in case["operations"]]
    ops = {n.id: n for n in nodes}
    data = {"axis": "pp", "microbatches": 2, "schedule": "gpipe", **case["pipeline"]}
    pipeline = read_pipeline(data, (("pp", 2),))
    # when the stage rule reads them, then it refuses in the case's words
    if "refused" in case:
        with pytest.raises(PipelineError) as refused:
            stage_rule(nodes, ops, pipeline)
        assert case["refused"] in str(refused.value)
        return
    rule = stage_rule(nodes, ops, pipeline)
    # or cuts the case's units, or puts each operation on the case's stage
    if "units" in case:
        assert rule.units == case["units"]
    else:
        stages = _inherit(nodes, rule.stage)
        assert dict(zip(ops, stages, strict=True)) == case["stages"]


def _brute(loads: list[float], parts: int) -> float:
    """The least largest run's sum over every cut into ``parts`` non-empty runs."""
    n, best = len(loads), float("inf")
    for cuts in itertools.combinations(range(1, n), parts - 1):
        bounds = (0, *cuts, n)
        best = min(best, max(sum(loads[a:b]) for a, b in itertools.pairwise(bounds)))
    return best


def test_the_balanced_cut_is_a_brute_force_s_least_largest_stage() -> None:
    # given random loads (integers and reals, ties included) of up to 9 scopes
    rng = random.Random(33)
    for _ in range(400):
        n = rng.randint(1, 9)
        parts = rng.randint(1, n)
        if rng.random() < 0.5:
            loads = [float(rng.randint(0, 5)) for _ in range(n)]
        else:
            loads = [rng.uniform(0.0, 3.0) for _ in range(n)]
        # when they are cut into parts stages
        out = _partition(loads, parts)
        # then the stages are contiguous, each non-empty, and the largest is the brute force's
        assert out == sorted(out) and sorted(set(out)) == list(range(parts))
        largest = max(sum(x for x, k in zip(loads, out, strict=True) if k == s) for s in set(out))
        assert largest == pytest.approx(_brute(loads, parts), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("train", [False, True])
def test_the_live_bound_counts_the_sends_the_cost_lists(train: bool) -> None:
    # given four scoped layers (a training step's too) and a plan of two explicit stages
    graph = chain(train=train)
    data = {
        "name": "pp",
        "mesh": {"axes": {"pp": 2, "dp": 2}},
        "axisMapping": {"N": "dp"},
        "pipeline": {
            "axis": "pp",
            "microbatches": 3,
            "schedule": "gpipe",
            "stages": [["layers.0", "layers.1"], ["layers.2", "layers.3"]],
        },
    }
    plan = read_plan(data)
    trial = apply_plan(graph, plan)
    assert plan.pipeline is not None
    # when the sends are counted before the work, then they are the cost's sends
    report = cost_report(trial, load_profile("cpu-host"), plan=plan)
    sends = [c for c in report["collectives"] if c["kind"] == "send"]
    assert send_count(trial, plan.pipeline) == len(sends) == 3 * (2 if train else 1)
    # and balanced counts at least as many as its cut sends
    balanced = read_plan({**data, "pipeline": {**data["pipeline"], "stages": "balanced"}})
    assert balanced.pipeline is not None
    cut = cost_report(trial, load_profile("cpu-host"), plan=balanced)
    sent = len([c for c in cut["collectives"] if c["kind"] == "send"])
    assert send_count(trial, balanced.pipeline) >= sent > 0
