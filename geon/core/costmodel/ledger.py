"""The memory ledger of a plan (DESIGN.md §9, issue 16 item 5): per device, the peak of the bytes
it holds along the run order (not the sum of everything it ever holds), split into

- ``inputs``: the distinct cells it reads of graph inputs (tensors no operation writes), held for
  the whole run;
- ``outputs``: the distinct cells it writes of graph outputs (tensors no operation reads), held
  from the operation writing them to the end;
- ``temporaries``: the distinct cells it writes of every other tensor, held from the operation
  writing them until the last operation reading the tensor (on any device) has run;
- ``communication``: the distinct cells it reads of a tensor that another device writes and it
  does not (the receive buffers of collectives), held from the first to the last operation
  reading them there.

A step is one operation of the run order; an allocation is live from its first step to its
last, both included. The split reported is the one at the peak step (the earliest, on ties).
Against the profile's capacity: a device over it is flagged, and the plan's imbalance is the
busiest device's peak over the mean peak, in percent above it (``(max - mean) / mean · 100``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from geon.core.costmodel.placed import Box, Device, PlacedDocument, boxes_union_size

__all__ = ["KINDS", "DeviceMemory", "imbalance_percent", "memory_ledger"]

KINDS = ("inputs", "outputs", "temporaries", "communication")


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """One device's peak bytes and their split at the peak step."""

    peak: int
    split: tuple[tuple[str, int], ...]

    def to_json(self) -> dict[str, Any]:
        return dict(self.split)


def memory_ledger(doc: PlacedDocument) -> dict[Device, DeviceMemory]:
    """Per device of the plan (idle ones too), its peak and split (see the module docstring)."""
    step = {op_id: n for n, op_id in enumerate(doc.order)}
    end = len(doc.order) - 1
    written_by_any: set[str] = set()
    last_read: dict[str, int] = {}
    writes: dict[Device, dict[str, list[Box]]] = {}
    reads: dict[Device, dict[str, list[Box]]] = {}
    first: dict[tuple[Device, str, str], int] = {}
    last: dict[tuple[Device, str], int] = {}
    for op_id in doc.order:
        n = step[op_id]
        for sh in doc.by_op[op_id]:
            for tid, _ in sh.reads:
                last_read[tid] = n
            for tid, _ in sh.writes:
                written_by_any.add(tid)
            d = sh.device
            if d is None:
                continue
            for tid, box in sh.writes:
                writes.setdefault(d, {}).setdefault(tid, []).append(box)
                first.setdefault((d, tid, "w"), n)
            for tid, box in sh.reads:
                reads.setdefault(d, {}).setdefault(tid, []).append(box)
                first.setdefault((d, tid, "r"), n)
                last[(d, tid)] = n
    out = {}
    for d in [*doc.devices(), *(x for x in {*writes, *reads} if x not in set(doc.devices()))]:
        allocations: list[tuple[str, int, int, int]] = []
        own = writes.get(d, {})
        for tid, boxes in own.items():
            nbytes = boxes_union_size(boxes) * doc.element_bytes.get(tid, 0)
            if tid in last_read:
                stop = max(last_read[tid], first[(d, tid, "w")])
                allocations.append(("temporaries", first[(d, tid, "w")], stop, nbytes))
            else:
                allocations.append(("outputs", first[(d, tid, "w")], end, nbytes))
        for tid, boxes in reads.get(d, {}).items():
            mine = own.get(tid, [])
            cells = (
                boxes_union_size([*boxes, *mine]) - boxes_union_size(mine)
                if mine
                else boxes_union_size(boxes)
            )
            nbytes = cells * doc.element_bytes.get(tid, 0)
            if tid not in written_by_any:
                allocations.append(("inputs", 0, end, nbytes))
            elif nbytes:
                allocations.append(("communication", first[(d, tid, "r")], last[(d, tid)], nbytes))
        out[d] = _peak(allocations, len(doc.order))
    return out


def _peak(allocations: list[tuple[str, int, int, int]], steps: int) -> DeviceMemory:
    """The peak step of live allocations ``(kind, first step, last step, bytes)``."""
    deltas = {kind: [0] * (steps + 1) for kind in KINDS}
    for kind, start, stop, nbytes in allocations:
        deltas[kind][start] += nbytes
        deltas[kind][stop + 1] -= nbytes
    live = {kind: list(accumulate(deltas[kind][:steps])) for kind in KINDS}
    totals = [sum(live[kind][s] for kind in KINDS) for s in range(steps)]
    if not totals:
        return DeviceMemory(0, tuple((kind, 0) for kind in KINDS))
    at = max(range(steps), key=totals.__getitem__)
    return DeviceMemory(totals[at], tuple((kind, live[kind][at]) for kind in KINDS))


def imbalance_percent(peaks: list[int]) -> float:
    """How far the largest peak is above the mean, in percent (0 for no or idle devices).

    >>> imbalance_percent([100, 50, 50, 0])
    100.0
    """
    if not peaks or sum(peaks) == 0:
        return 0.0
    mean = sum(peaks) / len(peaks)
    return (max(peaks) - mean) / mean * 100
