"""Pipeline schedules (DESIGN.md §12, issue 33): the order in which each device of a pipeline runs
its microbatches' forward and backward passes, their timing, the bubble, and the activations in
flight.

>>> [a.text for a in stage_orders("1f1b", 2, 3)[0]]
['F0', 'F1', 'B0', 'F2', 'B1', 'B2']
>>> grid = simulate(stage_orders("gpipe", 4, 8), [1.0] * 4, [2.0] * 4)
>>> round(grid.bubble, 6) == round(3 / (8 + 3), 6)
True

**Orders**, per device ``r`` of ``p`` (``m`` microbatches, ``v`` virtual stages per device;
virtual stage ``s = c·p + r`` for the device's chunk ``c``), as PyTorch's
``torch.distributed.pipelining`` schedule classes order them (``tests/core/plans/
test_pipeline_schedules.py`` compares every action with theirs):

- ``gpipe`` (Huang et al. 2019; ``ScheduleGPipe``): every forward, then every backward;
- ``1f1b`` (PipeDream-Flush, Narayanan et al. 2021 §2.2; ``Schedule1F1B``): ``p-1-r`` forwards
  to warm up, then one forward and one backward in turn, then the remaining backwards;
- ``interleaved`` (Narayanan et al. 2021 §2.2; ``ScheduleInterleaved1F1B``): ``(v-1)·p +
  2·(p-1-r)`` warm-up forwards (at most ``v·m``), the device's chunks taken ``p`` microbatches
  at a time (depth first), then forward and backward in turn, backwards through the chunks in
  reverse.

A document with no backward pass (a forward step) runs every forward in microbatch order under
any schedule (PyTorch's ``_ScheduleForwardOnly``).

**Timing** (:func:`simulate`): each device runs its actions in its order, one at a time; the
forward of virtual stage ``s`` for microbatch ``i`` starts once stage ``s-1``'s forward of ``i``
has ended and its activations were sent (``send[s-1]`` seconds), a backward once stage ``s+1``'s
backward of ``i`` (or, on the last stage, its own forward) has ended and the gradient was sent
back. The step ends when the last device finishes (plus each device's once-per-step
``tail`` seconds, the optimizer's update). The **bubble** is the idle fraction of the step,
``1 - Σ busy / (p · step)``; with equal stages and no sends it is GPipe's ``(p-1)/(m+p-1)``
(Huang et al. 2019, §2.3), the same for 1F1B, and the interleaved schedule's idle time over its
busy time is ``(p-1)/(v·m)`` (Narayanan et al. 2021, §2.2): ``bubble_over_busy``.

**Activations in flight** (:func:`in_flight`): per device, the most microbatches (of its chunks)
whose forward has run and whose backward has not, along its order: GPipe keeps all ``m``, 1F1B
at most ``p - r`` (``p`` on the first device); a forward step keeps one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Action", "Box", "Grid", "in_flight", "simulate", "stage_orders"]


@dataclass(frozen=True, slots=True)
class Action:
    """One pass of one microbatch through one virtual stage: ``kind`` ``F`` or ``B``."""

    kind: Literal["F", "B"]
    microbatch: int
    stage: int

    @property
    def text(self) -> str:
        return f"{self.kind}{self.microbatch}"


def _gpipe(p: int, m: int, r: int) -> list[Action]:
    return [Action("F", i, r) for i in range(m)] + [Action("B", i, r) for i in range(m)]


def _one_f_one_b(p: int, m: int, r: int) -> list[Action]:
    warmup = min(p - 1 - r, m)
    out = [Action("F", i, r) for i in range(warmup)]
    forward, backward = warmup, 0
    while forward < m:
        out += [Action("F", forward, r), Action("B", backward, r)]
        forward, backward = forward + 1, backward + 1
    out += [Action("B", i, r) for i in range(backward, m)]
    return out


def _interleaved(p: int, m: int, r: int, v: int) -> list[Action]:
    rounds = max(1, m // p)
    per_round = m // rounds
    total = v * m
    warmup = min((v - 1) * per_round + 2 * (p - 1 - r), total)
    next_f = [0] * v
    next_b = [0] * v

    def forward(step: int) -> Action:
        chunk = (step // per_round) % v
        next_f[chunk] += 1
        return Action("F", next_f[chunk] - 1, chunk * p + r)

    def backward(step: int) -> Action:
        chunk = v - 1 - ((step - warmup) // per_round) % v
        next_b[chunk] += 1
        return Action("B", next_b[chunk] - 1, chunk * p + r)

    out = [forward(step) for step in range(warmup)]
    for step in range(warmup, total):
        out += [forward(step), backward(step)]
    out += [backward(step) for step in range(total, total + warmup)]
    return out


def stage_orders(
    schedule: str, p: int, m: int, v: int = 1, *, backward: bool = True
) -> list[list[Action]]:
    """Per device of the pipeline, its actions in order (see the module docstring)."""
    if not backward:
        return [[Action("F", i, c * p + r) for i in range(m) for c in range(v)] for r in range(p)]
    if schedule == "gpipe":
        return [_gpipe(p, m, r) for r in range(p)]
    if schedule == "1f1b":
        return [_one_f_one_b(p, m, r) for r in range(p)]
    return [_interleaved(p, m, r, v) for r in range(p)]


@dataclass(frozen=True, slots=True)
class Box:
    """One action placed in time on its device."""

    device: int
    action: Action
    start: float
    end: float

    def to_json(self) -> dict[str, object]:
        return {
            "device": self.device,
            "stage": self.action.stage,
            "kind": self.action.kind,
            "microbatch": self.action.microbatch,
            "start": self.start,
            "end": self.end,
        }


@dataclass(slots=True)
class Grid:
    """The schedule in time: every action's box, the step's seconds, each device's busy
    seconds, and the bubble."""

    boxes: list[Box] = field(default_factory=list)
    seconds: float = 0.0
    busy: list[float] = field(default_factory=list)

    @property
    def bubble(self) -> float:
        """The idle fraction of the step over all devices."""
        if not self.busy or self.seconds <= 0:
            return 0.0
        return max(0.0, 1.0 - sum(self.busy) / (len(self.busy) * self.seconds))

    @property
    def bubble_over_busy(self) -> float:
        """Idle seconds over busy seconds (Narayanan et al.'s bubble time fraction)."""
        busy = sum(self.busy)
        return 0.0 if busy <= 0 else len(self.busy) * self.seconds / busy - 1.0


def simulate(
    orders: list[list[Action]],
    forward: list[float],
    backward: list[float],
    send: list[float] | None = None,
    tail: list[float] | None = None,
) -> Grid:
    """Time ``orders`` (one list per device) with per virtual stage ``forward`` and ``backward``
    seconds of one microbatch, ``send[s]`` seconds from stage ``s`` to ``s+1`` (and back), and
    per device ``tail`` seconds at the end (see the module docstring). An order whose
    dependencies can never be met raises ``ValueError`` (the orders here always can)."""
    p, stages = len(orders), len(forward)
    send = send or [0.0] * stages
    done: dict[tuple[str, int, int], float] = {}
    free = [0.0] * p
    at = [0] * p
    grid = Grid(busy=[0.0] * p)
    remaining = sum(map(len, orders))
    while remaining:
        moved = False
        for r in range(p):
            while at[r] < len(orders[r]):
                a = orders[r][at[r]]
                s, i = a.stage, a.microbatch
                if a.kind == "F":
                    need = ("F", s - 1, i) if s > 0 else None
                    delay = send[s - 1] if s > 0 else 0.0
                    length = forward[s]
                else:
                    need = ("B", s + 1, i) if s < stages - 1 else ("F", s, i)
                    delay = send[s] if s < stages - 1 else 0.0
                    length = backward[s]
                if need is not None and need not in done:
                    break
                start = max(free[r], done[need] + delay if need is not None else 0.0)
                end = start + length
                done[(a.kind, s, i)] = end
                free[r] = end
                grid.busy[r] += length
                grid.boxes.append(Box(r, a, start, end))
                at[r] += 1
                remaining -= 1
                moved = True
        if not moved:
            raise ValueError("the pipeline orders wait on each other forever")
    ends = [free[r] + (tail[r] if tail else 0.0) for r in range(p)]
    if tail:
        grid.busy = [b + t for b, t in zip(grid.busy, tail, strict=True)]
    grid.seconds = max(ends, default=0.0)
    return grid


def in_flight(order: list[Action], weight: list[float] | None = None) -> float:
    """The most microbatches (weighted per virtual stage by ``weight``, 1 each by default) whose
    forward has run on this device and whose backward has not, along ``order``; a forward-only
    order holds one microbatch's at a time (the largest weight).

    >>> in_flight(stage_orders("gpipe", 4, 8)[0]), in_flight(stage_orders("1f1b", 4, 8)[0])
    (8.0, 4.0)
    """
    weight = weight or [1.0] * (1 + max((a.stage for a in order), default=0))
    if all(a.kind == "F" for a in order):
        return max((weight[a.stage] for a in order), default=0.0)
    held = most = 0.0
    for a in order:
        held += weight[a.stage] if a.kind == "F" else -weight[a.stage]
        most = max(most, held)
    return most
