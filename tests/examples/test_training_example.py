"""The gallery's training step (issue 32) under its three plans: what each costs, compared."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from geon.core.plans import apply_plan
from geon.core.plans.cost import cost_report, load_profile
from geon.examples.training import WEIGHT_AXIS, training_example
from geon.graphs.gallery import examples

LABELS: dict[str, str] = {}


@pytest.fixture(scope="module")
def costs() -> dict[str, dict[str, Any]]:
    doc, plans = training_example()
    LABELS.update({n.id: n.label for n in doc.nodes if n.label})
    profile = load_profile("h100-sxm-8")
    return {p["name"]: cost_report(apply_plan(doc, p), profile) for p in plans}


def _kinds(report: dict[str, Any]) -> Counter[str]:
    return Counter(c["kind"] for c in report["collectives"])


def test_data_parallel_all_reduces_every_weight_gradient_and_the_loss(costs: Any) -> None:
    assert _kinds(costs["Data parallel"]) == {"all-reduce": len(WEIGHT_AXIS) + 1}


def test_megatron_reduces_only_what_its_split_leaves_partial(costs: Any) -> None:
    assert _kinds(costs["Megatron tensor parallel"]) == {"all-reduce": 6}


def test_fully_sharded_gathers_weights_and_halves_what_each_device_stores(costs: Any) -> None:
    fsdp, dp = costs["Fully sharded data parallel"], costs["Data parallel"]
    kinds = _kinds(fsdp)
    # every weight is gathered before it is read whole (forward, and backward where the dot's
    # gradient reads it relabelled); its update runs on its own shard, so m and v are not
    gathered = {LABELS[c["tensor"]] for c in fsdp["collectives"] if c["kind"] == "all-gather"}
    assert gathered == set(WEIGHT_AXIS)
    # every weight's gradient is reduce-scattered to the shard its update runs on; only the
    # loss is all-reduced
    assert (kinds["reduce-scatter"], kinds["all-reduce"]) == (len(WEIGHT_AXIS), 1)
    for name in ("parameters", "optimizer"):
        assert fsdp["devices"][0]["memory"][name] < dp["devices"][0]["memory"][name]
    assert fsdp["devices"][0]["peakBytes"] < dp["devices"][0]["peakBytes"]


def test_the_gallery_saves_the_step_with_its_three_plans() -> None:
    (entry,) = [e for e in examples() if e.key == "training-step"]
    names = [p["name"] for p in entry.plans]
    assert names == ["Data parallel", "Megatron tensor parallel", "Fully sharded data parallel"]
    ops = {n["id"] for n in entry.document["nodes"]}
    assert set(entry.plans[2]["spec"]) <= ops and entry.plans[2]["spec"]
