"""The liveness-based memory planner: buffers whose lifetimes do not overlap share storage.

>>> chain = [Buffer("a", "float32", 100, 4, 0, 1), Buffer("b", "float32", 100, 4, 1, 2),
...          Buffer("c", "float32", 100, 4, 2, 3)]
>>> plan = plan_memory(chain)
>>> plan.planned_peak_bytes, plan.naive_bytes, plan.slot_of("a") == plan.slot_of("c")
(800, 1200, True)

A :class:`Buffer` is the storage of one computed tensor: written first at step ``start``, read
last at step ``end`` (steps are positions in the compiled schedule; a graph output is live until
the last step). Two buffers are *simultaneously live* when their ``[start, end]`` intervals
overlap. The planner walks the steps once: at each step it first places the buffers that start
there, then frees the buffers that end there, so a step's inputs and outputs never share storage.
The one exception is **in place**: a buffer may name (``inplace_of``) an input that the executor
proved safe to overwrite (an elementwise op whose operand has the result's layout and dtype, read
for the last time by that op); it then takes that input's slot at the handover step.

Placement is best fit per dtype (the array API has no byte-reinterpreting views, so a slot holds
one dtype): the smallest free slot large enough, else the largest free slot grown to fit, else a
new slot. Reported figures: ``planned_peak_bytes`` (the sum of the slots: what the arena
allocates), ``largest_live_bytes`` (the largest set of buffers live at one step, in-place
handovers counted once: a lower bound for any plan) and ``naive_bytes`` (one buffer per tensor).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Buffer", "MemoryPlan", "Slot", "plan_memory"]


@dataclass(frozen=True, slots=True)
class Buffer:
    """The storage one tensor needs: ``size`` elements of ``dtype`` live over steps
    ``[start, end]``; ``inplace_of`` names a buffer ending at ``start`` whose slot it may take."""

    key: str
    dtype: str
    size: int
    itemsize: int
    start: int
    end: int
    inplace_of: str | None = None

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize


@dataclass(frozen=True, slots=True)
class Slot:
    """One arena buffer: ``size`` elements of ``dtype``."""

    index: int
    dtype: str
    size: int
    itemsize: int

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Where every buffer lives (``assignment``: key -> slot index) and the figures to report."""

    assignment: tuple[tuple[str, int], ...]
    slots: tuple[Slot, ...]
    inplace: tuple[str, ...]
    planned_peak_bytes: int
    largest_live_bytes: int
    naive_bytes: int

    def slot_of(self, key: str) -> int:
        """The slot index of buffer ``key``."""
        return dict(self.assignment)[key]

    def to_json(self) -> dict[str, int]:
        """The figures as JSON (for run summaries)."""
        return {
            "planned_peak_bytes": self.planned_peak_bytes,
            "largest_live_bytes": self.largest_live_bytes,
            "naive_bytes": self.naive_bytes,
            "slots": len(self.slots),
            "in_place": len(self.inplace),
        }


def plan_memory(buffers: Sequence[Buffer]) -> MemoryPlan:
    """Assign every buffer a slot so that no two simultaneously live buffers share one."""
    by_key = {b.key: b for b in buffers}
    starts: dict[int, list[Buffer]] = {}
    ends: dict[int, list[Buffer]] = {}
    for b in buffers:
        if b.end < b.start:
            raise ValueError(f'buffer "{b.key}" ends at step {b.end} before it starts at {b.start}')
        starts.setdefault(b.start, []).append(b)
        ends.setdefault(b.end, []).append(b)
    sizes: list[int] = []
    dtypes: list[tuple[str, int]] = []
    free: dict[str, list[int]] = {}
    slot_of: dict[str, int] = {}
    handed: set[str] = set()
    inplace: list[str] = []
    for step in sorted(set(starts) | set(ends)):
        for b in starts.get(step, ()):
            src = by_key.get(b.inplace_of) if b.inplace_of is not None else None
            if (
                src is not None
                and src.key in slot_of
                and src.end == step
                and src.dtype == b.dtype
                and src.key not in handed
            ):
                s = slot_of[src.key]
                handed.add(src.key)
                inplace.append(b.key)
                sizes[s] = max(sizes[s], b.size)
            else:
                taken = _take(free.setdefault(b.dtype, []), sizes, b.size)
                if taken is not None:
                    s = taken
                else:
                    s = len(sizes)
                    sizes.append(b.size)
                    dtypes.append((b.dtype, b.itemsize))
            slot_of[b.key] = s
        for b in ends.get(step, ()):
            if b.key not in handed:
                free.setdefault(b.dtype, []).append(slot_of[b.key])
    slots = tuple(
        Slot(i, d, n, isz) for i, (n, (d, isz)) in enumerate(zip(sizes, dtypes, strict=True))
    )
    return MemoryPlan(
        assignment=tuple((b.key, slot_of[b.key]) for b in buffers),
        slots=slots,
        inplace=tuple(inplace),
        planned_peak_bytes=sum(s.nbytes for s in slots),
        largest_live_bytes=largest_live_bytes(buffers, inplace),
        naive_bytes=sum(b.nbytes for b in buffers),
    )


def _take(pool: list[int], sizes: list[int], need: int) -> int | None:
    """Best fit from the free slots of one dtype: the smallest that fits, else the largest grown."""
    if not pool:
        return None
    fitting = [s for s in pool if sizes[s] >= need]
    s = min(fitting, key=sizes.__getitem__) if fitting else max(pool, key=sizes.__getitem__)
    pool.remove(s)
    sizes[s] = max(sizes[s], need)
    return s


def largest_live_bytes(buffers: Sequence[Buffer], inplace: Iterable[str] = ()) -> int:
    """The most bytes live at one step; a buffer handed over in place counts once."""
    by_key = {b.key: b for b in buffers}
    handed_at = {
        by_key[k].inplace_of: by_key[k].start for k in inplace if by_key[k].inplace_of is not None
    }
    steps = sorted({b.start for b in buffers} | {b.end for b in buffers})
    best = 0
    for step in steps:
        live = sum(
            b.nbytes for b in buffers if b.start <= step <= b.end and handed_at.get(b.key) != step
        )
        best = max(best, live)
    return best
