"""The gallery's training step (issue 32, "Checked against what no one here wrote") compiled by
XLA under its three plans on the forced CPU host devices: the collectives geon predicts, per kind,
against those in the compiled program (the JAX engine,
:func:`geon.interop.jax_engine.compile_only`).

Two differences are XLA's own, and each is pinned rather than hidden (docs/cost-model.md,
"Training steps against XLA"):

- XLA **combines** the all-reduces of one program into one (``combined`` counts the tensors), and
  its CPU pipeline has no reduce-scatter creator (the pass that turns an all-reduce followed by a
  slice into a reduce-scatter runs in the GPU and TPU pipelines): a reduce-scatter geon predicts
  compiles as part of that all-reduce, each device then keeping its piece with a
  ``dynamic-slice``. So the tensors reduced and their bytes are compared: geon's reduce-scatters
  and all-reduces together against XLA's all-reduce.
- Under fully sharded data parallelism XLA **reuses the forward's gathered weight** in the
  backward pass (one program: common subexpressions are merged, and the gathered copy stays
  alive from forward to backward), where geon gathers it again before the backward reads it, as
  FSDP implementations do to free it in between. So XLA's all-gathers are geon's forward
  all-gathers plus some of its backward ones.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from geon.core.graph import Graph
from geon.core.plans import apply_plan
from geon.core.plans.cost import load_profile
from geon.examples.training import WEIGHT_AXIS, training_example
from geon.interop.jax_engine import CompiledCollective, compile_only
from geon.interop.verify import predicted_records

PROFILE = load_profile("cpu-host")
GROUP = "urn:geon:2026-11:tag_types.jsd#/tags/Group"
REDUCING = ("all-reduce", "reduce-scatter")
_SLICED_SUM = re.compile(r"= \S+ dynamic-slice\(.*op_name=\"[^\"]*/reduce_sum\"")


@pytest.fixture(scope="module")
def compiled(host_devices: int) -> dict[str, tuple[Graph, list[dict[str, Any]], Any]]:
    """Per plan of the gallery's step: the placed step, geon's collectives, and XLA's run."""
    doc, plans = training_example()
    out = {}
    for plan in plans:
        placed = apply_plan(doc, plan)
        out[plan["name"]] = (placed, predicted_records(placed, PROFILE), compile_only(placed))
    return out


def _reduced(predicted: list[dict[str, Any]]) -> tuple[int, int]:
    """How many tensors geon reduces (all-reduce or reduce-scatter) and their whole bytes."""
    found = [c for c in predicted if c["kind"] in REDUCING]
    return len(found), sum(c["bytes"] for c in found)


def _xla_reduced(collectives: list[CompiledCollective]) -> tuple[int, int]:
    """How many tensors XLA's all-reduces reduce (combined ones counted each) and their bytes."""
    found = [c for c in collectives if c.kind == "all-reduce"]
    return sum(c.combined for c in found), sum(c.bytes_per_device for c in found)


@pytest.mark.parametrize("name", ["Data parallel", "Megatron tensor parallel"])
def test_data_parallel_and_megatron_reduce_what_xla_reduces(compiled: Any, name: str) -> None:
    # given the step under the plan, compiled by XLA
    _, predicted, run = compiled[name]
    # then XLA reduces the same tensors, the same bytes, and gathers nothing (as geon says)
    assert _xla_reduced(run.collectives()) == _reduced(predicted)
    assert {c.kind for c in run.collectives()} == {"all-reduce"}
    assert {c["kind"] for c in predicted} == {"all-reduce"}


def test_fully_sharded_reduce_scatters_what_xla_reduces_and_slices(compiled: Any) -> None:
    # given the step under fully sharded data parallelism, compiled by XLA
    _, predicted, run = compiled["Fully sharded data parallel"]
    kinds = Counter(c["kind"] for c in predicted)
    # then geon reduce-scatters every weight's gradient (its update runs on its own shard) and
    # all-reduces only the loss
    assert (kinds["reduce-scatter"], kinds["all-reduce"]) == (len(WEIGHT_AXIS), 1)
    scattered = {c["consumer"] for c in predicted if c["kind"] == "reduce-scatter"}
    assert len(scattered) == len(WEIGHT_AXIS)
    # and a reduce-scatter's piece is the whole gradient over the 2 devices
    assert all(
        c["bytesPerDevice"] * c["devices"] == c["bytes"]
        for c in predicted
        if c["kind"] == "reduce-scatter"
    )
    # and XLA reduces the same tensors and bytes (its CPU pipeline all-reduces them) ...
    assert _xla_reduced(run.collectives()) == _reduced(predicted)
    # ... and each device then slices out its piece of each summed gradient (XLA names the
    # slice after the sum, jax's reduce_sum), where Adam's update reads it
    sliced = [line for line in run.text.splitlines() if _SLICED_SUM.search(line)]
    assert len(sliced) >= len(WEIGHT_AXIS)


def test_fully_sharded_gathers_are_geons_forward_ones_and_some_backward_ones(
    compiled: Any,
) -> None:
    # given the step under fully sharded data parallelism, compiled by XLA
    placed, predicted, run = compiled["Fully sharded data parallel"]

    def scope(record: dict[str, Any]) -> str:
        group = (placed.node(record["consumer"]).tags or {}).get(GROUP) or {}
        return str(group.get("scope", ""))

    gathers = [c for c in predicted if c["kind"] == "all-gather"]
    forward = Counter(c["bytesPerDevice"] for c in gathers if not scope(c).startswith("backward"))
    backward = Counter(c["bytesPerDevice"] for c in gathers if scope(c).startswith("backward"))
    xla = Counter(c.bytes_per_device for c in run.collectives() if c.kind == "all-gather")
    # then geon gathers every weight once before the forward reads it
    assert sum(forward.values()) == len(WEIGHT_AXIS)
    assert {c["tensorLabel"] for c in gathers} == set(WEIGHT_AXIS)
    # and XLA's all-gathers are those, plus some of geon's backward ones (XLA reuses the
    # forward's gathered copy for the others: the extra all-gathers geon predicts are these)
    assert forward <= xla
    assert xla - forward <= backward
    assert sum(backward.values()) > sum((xla - forward).values())
