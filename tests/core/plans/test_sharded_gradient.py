"""A weight's gradient under fully sharded data parallelism (issue 32): contracted over a batch
split over ``dp`` into a weight stored and updated over ``dp``, it is a partial product on each
device and a sum split like the update that reads it: a reduce-scatter, not an all-reduce."""

from __future__ import annotations

from collections import Counter
from typing import Any

from geon import core as gc
from geon.core.graph import Graph
from geon.core.plans import apply_plan
from geon.core.plans.cost import cost_report, load_profile
from geon.execute import run

PROFILE = load_profile("h100-sxm-8")
N, D, F = gc.Axis("N", 4), gc.Axis("D", 6), gc.Axis("F", 2)


def step() -> tuple[Graph, str, str]:
    """``w.next = w - dot(x, dy)`` (x[N, D], dy[N, F], w[D, F] in float64): the gradient
    contracts the batch N. The ids of the gradient's and the update's operations."""
    x = gc.placeholder(axes=[N, D], name="x")
    dy = gc.placeholder(axes=[N - 1, F], name="dy")
    w = gc.variable(axes=[D, F], name="w")
    grad = gc.dot(x, dy, name="w.grad")
    update = gc.subtract(w, grad, name="w.next")
    assert grad.op_id is not None and update.op_id is not None
    return gc.graph([update]), grad.op_id, update.op_id


def fsdp(update: str | None) -> dict[str, Any]:
    """The batch over dp, w stored over dp along D, and (``update``) w's update split so."""
    return {
        "name": "fsdp",
        "mesh": {"axes": {"dp": 2}},
        "axisMapping": {"N": "dp"},
        "inputs": {
            "x": {"over": {"N": "dp"}},
            "dy": {"over": {"N": "dp"}},
            "w": {"over": {"D": "dp"}},
        },
        "spec": {} if update is None else {update: {"over": {"D": "dp"}}},
    }


def test_a_gradient_read_by_a_sharded_update_is_reduce_scattered() -> None:
    # given the step with the update split over D on dp, like the weight it updates
    g, grad, update = step()
    # when the plan is written and costed
    placed = apply_plan(g, fsdp(update))
    report = cost_report(placed, PROFILE)
    # then the partial products are reduce-scattered to the sum, split over D like the update:
    # each device receives its half of the [D, F] float64 gradient (6 x 2 x 8 / 2 bytes)
    [c] = report["collectives"]
    assert (c["kind"], c["meshAxes"], c["consumer"]) == ("reduce-scatter", ["dp"], grad)
    assert (c["bytes"], c["bytesPerDevice"]) == (6 * 2 * 8, 6 * 2 * 8 // 2)
    # and run Application by Application, every tensor equals the logical run's
    result = run(placed, seed=0, sharded=True)
    assert "w.next" in result.max_abs_diff
    assert max(result.max_abs_diff.values()) < 1e-12


def test_a_gradient_read_whole_is_all_reduced() -> None:
    # given the same step with the update left whole (data parallelism's)
    g, grad, update = step()
    # when costed
    report = cost_report(apply_plan(g, fsdp(None)), PROFILE)
    # then the partial products are all-reduced: every device needs the whole gradient (and
    # the whole weight, gathered from its halves)
    kinds = Counter((c["kind"], c["consumer"]) for c in report["collectives"])
    assert kinds == Counter({("all-reduce", grad): 1, ("all-gather", update): 1})
