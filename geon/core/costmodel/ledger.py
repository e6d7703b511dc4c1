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

from geon.core.costmodel.placed import Box, Device, PlacedDocument, boxes_union_size, contains

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
    end = len(doc.order) - 1
    written_by_any: set[str] = set()
    last_read: dict[str, int] = {}
    # (device, tensor) -> [first step, last step, boxes, cells of the first box]
    reads: dict[tuple[Device, str], list[Any]] = {}
    writes: dict[tuple[Device, str], list[Any]] = {}
    for n, op_id in enumerate(doc.order):
        for sh in doc.by_op[op_id]:
            for tid, _ in sh.reads:
                last_read[tid] = n
            written_by_any.update(tid for tid, _ in sh.writes)
            d = sh.device
            if d is None:
                continue
            for table, found, cells in (
                (reads, sh.reads, sh.read_cells),
                (writes, sh.writes, sh.write_cells),
            ):
                for (tid, box), c in zip(found, cells, strict=True):
                    entry = table.get((d, tid))
                    if entry is None:
                        table[(d, tid)] = [n, n, [box], c]
                    else:
                        entry[1] = n
                        entry[2].append(box)
    allocations: dict[Device, list[tuple[str, int, int, int]]] = {d: [] for d in doc.devices()}
    for (d, tid), (first, _, boxes, cells) in writes.items():
        nbytes = _cells(boxes, cells) * doc.element_bytes.get(tid, 0)
        if tid in last_read:
            stop = max(last_read[tid], first)
            allocations.setdefault(d, []).append(("temporaries", first, stop, nbytes))
        else:
            allocations.setdefault(d, []).append(("outputs", first, end, nbytes))
    for (d, tid), (first, last, boxes, cells) in reads.items():
        own = writes.get((d, tid))
        if own is None:
            only_read = _cells(boxes, cells)
        elif len(own[2]) == 1 and all(contains(own[2][0], b) for b in boxes):
            only_read = 0
        else:
            only_read = boxes_union_size([*boxes, *own[2]]) - boxes_union_size(own[2])
        nbytes = only_read * doc.element_bytes.get(tid, 0)
        if tid not in written_by_any:
            allocations.setdefault(d, []).append(("inputs", 0, end, nbytes))
        elif nbytes:
            allocations.setdefault(d, []).append(("communication", first, last, nbytes))
    return {d: _peak(found, len(doc.order)) for d, found in allocations.items()}


def _cells(boxes: list[Box], first_cells: int) -> int:
    """The distinct cells of ``boxes`` (``first_cells`` when there is one)."""
    return first_cells if len(boxes) == 1 else boxes_union_size(boxes)


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
