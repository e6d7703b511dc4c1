"""Pipeline schedules (issue 33): the per-device order of forward and backward microbatches equals
PyTorch's own ``torch.distributed.pipelining`` schedule classes (``ScheduleGPipe``,
``Schedule1F1B``, ``ScheduleInterleaved1F1B``: their ``pipeline_order``, listed without any GPU
or process group), the bubble equals GPipe's ``(p-1)/(m+p-1)`` (Huang et al. 2019 §2.3) and the
interleaved schedule's ``(p-1)/(v·m)`` of busy time (Narayanan et al. 2021 §2.2), and the
activations in flight are GPipe's ``m`` and 1F1B's ``p - r``."""

from __future__ import annotations

from typing import Any

import pytest
from torch.distributed.pipelining import schedules as torch_schedules

from geon.core.plans.cost.schedules import in_flight, simulate, stage_orders


def _torch_order(schedule: str, p: int, m: int, v: int) -> list[list[tuple[str, Any, Any]]]:
    """PyTorch's order per rank, its F and FULL_BACKWARD actions as (kind, microbatch, stage)."""
    if schedule == "interleaved":
        obj: Any = object.__new__(torch_schedules.ScheduleInterleaved1F1B)
        obj.pp_group_size, obj.n_local_stages, obj._n_microbatches = p, v, m
        obj.number_of_rounds = max(1, m // p)
        obj.microbatches_per_round = m // obj.number_of_rounds
        order = {r: obj._calculate_single_rank_operations(r) for r in range(p)}
    else:
        cls: dict[str, Any] = {
            "gpipe": torch_schedules.ScheduleGPipe,
            "1f1b": torch_schedules.Schedule1F1B,
        }
        obj = object.__new__(cls[schedule])
        obj._num_stages, obj._n_microbatches = p, m
        order = obj._get_pipeline_order()
    kinds = {"FORWARD": "F", "FULL_BACKWARD": "B"}
    out = []
    for r in range(p):
        actions = [a for a in order[r] if a is not None]
        out.append(
            [
                (kinds[a.computation_type.name], a.microbatch_index, a.stage_index)
                for a in actions
                if a.computation_type.name in kinds
            ]
        )
    return out


@pytest.mark.parametrize(
    ("schedule", "p", "m", "v"),
    [
        ("gpipe", 4, 8, 1),
        ("gpipe", 2, 3, 1),
        ("1f1b", 4, 8, 1),
        ("1f1b", 2, 5, 1),
        ("1f1b", 3, 7, 1),
        ("interleaved", 4, 8, 2),
        ("interleaved", 2, 4, 3),
        ("interleaved", 4, 4, 2),
    ],
)
def test_orders_equal_pytorchs(schedule: str, p: int, m: int, v: int) -> None:
    # given PyTorch 2.13's schedule classes, then every device runs the same actions in order
    ours = [
        [(a.kind, a.microbatch, a.stage) for a in order]
        for order in stage_orders(schedule, p, m, v)
    ]
    theirs = _torch_order(schedule, p, m, v)
    if schedule == "1f1b" and m > p - 1:
        # Schedule1F1B._get_pipeline_order (2.13) lists the last rank, which has no warm-up,
        # from F1 to F<m> (a microbatch that does not exist): its forward counter starts at 0 and
        # is incremented before the first steady forward. Its runtime (_step_microbatches) runs
        # F0 B0 F1 B1 ..., which is ours; the other ranks are compared as listed.
        last = theirs.pop()
        assert [a for a in last if a[0] == "F"][-1][1] == m
        assert ours.pop() == [(k, i, p - 1) for i in range(m) for k in "FB"]
    assert ours == theirs


@pytest.mark.parametrize(("p", "m"), [(2, 1), (4, 8), (8, 32), (4, 3)])
def test_gpipe_and_1f1b_bubble_is_huang_et_al(p: int, m: int) -> None:
    # given equal stages, backward twice the forward, no sends
    for schedule in ("gpipe", "1f1b"):
        grid = simulate(stage_orders(schedule, p, m), [1.0] * p, [2.0] * p)
        # then the idle fraction is (p-1)/(m+p-1), and idle over busy (p-1)/m
        assert grid.bubble == pytest.approx((p - 1) / (m + p - 1))
        assert grid.bubble_over_busy == pytest.approx((p - 1) / m)
        assert grid.seconds == pytest.approx((m + p - 1) * 3.0)


@pytest.mark.parametrize(("p", "m", "v"), [(4, 8, 2), (4, 16, 4), (2, 4, 3)])
def test_interleaved_bubble_is_narayanan_et_al(p: int, m: int, v: int) -> None:
    # given each device's work cut into v chunks of equal time
    stages = p * v
    grid = simulate(stage_orders("interleaved", p, m, v), [1 / v] * stages, [2 / v] * stages)
    # then idle over busy is (p-1)/(v·m), v times smaller than 1F1B's
    assert grid.bubble_over_busy == pytest.approx((p - 1) / (v * m))


def test_activations_in_flight_per_schedule() -> None:
    p, m = 4, 8
    # GPipe keeps all m microbatches on every device, 1F1B p - r, a forward step one
    assert [in_flight(o) for o in stage_orders("gpipe", p, m)] == [8.0] * 4
    assert [in_flight(o) for o in stage_orders("1f1b", p, m)] == [4.0, 3.0, 2.0, 1.0]
    assert [in_flight(o) for o in stage_orders("1f1b", p, 2)] == [2.0, 2.0, 2.0, 1.0]
    forward = stage_orders("gpipe", p, m, backward=False)
    assert [in_flight(o) for o in forward] == [1.0] * 4


def test_sends_and_tail_lengthen_the_step() -> None:
    orders = stage_orders("1f1b", 2, 2)
    plain = simulate(orders, [1.0, 1.0], [2.0, 2.0])
    sent = simulate(orders, [1.0, 1.0], [2.0, 2.0], send=[0.5, 0.0], tail=[1.0, 0.0])
    # F1 then B1 wait a send each way on the critical path, and device 0's update runs last
    assert sent.seconds == pytest.approx(plain.seconds + 0.5 * 2 + 1.0)
