"""The memory ledger by kind on training steps (issue 32, DESIGN.md §9): what each tensor of a
step counts as, and the data-parallel step's gradient all-reduces."""

from __future__ import annotations

from collections import Counter

from geon import core as gc
from geon.core.autodiff import training_step
from geon.core.graph import Graph
from geon.core.plans import apply_plan
from geon.core.plans.cost import cost_report, load_profile
from geon.core.plans.cost.ledger import KINDS, tensor_kinds
from geon.core.plans.cost.placed import read_placed

B, D, E = gc.Axis("B", 8, batch=True), gc.Axis("D", 4), gc.Axis("E", 2)


def _step(optimizer: str = "adam") -> Graph:
    w1 = gc.variable([D - 1, D], name="w1", dtype="float32")
    w2 = gc.variable([D - 1, E], name="w2", dtype="float32")
    x = gc.placeholder([B, D], name="x", dtype="float32")
    t = gc.placeholder([E, B], name="t", dtype="float32")
    h = gc.relu(gc.dot(x, w1), name="h")
    y = gc.dot(h, w2, name="y")
    return training_step(
        gc.graph([gc.sum(gc.square(y - t), name="loss")]), optimizer=optimizer, lr=0.1
    )


def _kinds(doc: Graph) -> dict[str, str]:
    placed = read_placed(doc)
    kinds = tensor_kinds(placed)
    labels = {n.id: n.label for n in doc.nodes}
    return {
        labels[tid]: KINDS[int(k)]
        for tid, k in zip(placed.table.tensor_ids, kinds, strict=True)
        if labels.get(tid)
    }


def test_each_tensor_of_a_step_counts_as_what_it_is() -> None:
    kinds = _kinds(_step())
    assert {k: kinds[k] for k in ("w1", "w2", "w1.next", "w2.next")} == dict.fromkeys(
        ("w1", "w2", "w1.next", "w2.next"), "parameters"
    )
    optimizer = ("w1.m", "w1.v", "w2.m", "w2.v", "step", "w1.m.next", "w2.v.next", "step.next")
    assert {k: kinds[k] for k in optimizer} == dict.fromkeys(optimizer, "optimizer")
    # x and h are read by the backward pass (the weight gradients): saved activations; the loss
    # is the forward's output
    assert {k: kinds[k] for k in ("x", "h", "loss")} == dict.fromkeys(
        ("x", "h", "loss"), "activations"
    )
    # y feeds only the forward's subtraction: a temporary
    assert kinds["y"] == "temporaries"
    # and the weights' gradients, which the optimizer reads, are gradients
    step = _step()
    placed = read_placed(step)
    found = Counter(KINDS[int(k)] for k in tensor_kinds(placed))
    assert found["gradients"] == 2


def test_a_forward_document_has_parameters_activations_and_temporaries_only() -> None:
    w = gc.variable([D - 1, E], name="w", dtype="float32")
    x = gc.placeholder([B, D], name="x", dtype="float32")
    kinds = _kinds(gc.graph([gc.relu(gc.relu(gc.dot(x, w), name="a"), name="y")]))
    assert kinds == {"w": "parameters", "x": "activations", "a": "temporaries", "y": "activations"}


def test_data_parallel_step_all_reduces_each_weight_gradient() -> None:
    # given the step under data parallelism: the batch over 4 devices
    plan = {"name": "dp", "mesh": {"name": "m", "axes": {"dp": 4}}, "axisMapping": {"B": "dp"},
            "inputs": {"x": {"over": {"B": "dp"}}, "t": {"over": {"B": "dp"}}}}  # fmt: skip
    step = _step("sgd")
    report = cost_report(apply_plan(step, plan), load_profile("h100-sxm-8"))
    # then the two weight gradients (contractions over the split batch) and the loss (a sum
    # over it) are all-reduced
    assert Counter(c["kind"] for c in report["collectives"]) == {"all-reduce": 3}
    reduced = {c["tensor"] for c in report["collectives"]}
    assert len(reduced) == 3
    # and each device's peak is split by kind, the kinds summing to the peak
    for device in report["devices"]:
        assert set(device["memory"]) == set(KINDS)
        assert sum(device["memory"].values()) == device["peakBytes"]
        assert device["memory"]["parameters"] > 0 and device["memory"]["activations"] > 0
