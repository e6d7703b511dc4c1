"""The memory ledger of a plan (DESIGN.md §9, issue 16 item 5): per device, the peak of the bytes
it holds along the run order (not the sum of everything it ever holds), split into

- ``inputs``: the distinct cells it reads of graph inputs (tensors no operation writes), held for
  the whole run; for an input a plan placed (:func:`geon.core.plans.held_regions`), the region
  it holds, whether it reads it or not (what it reads beyond is ``communication``);
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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geon.core.cost import Box, Device, box_size, contains, intersect
from geon.core.costmodel.placed import PlacedDocument, boxes_union_size

__all__ = ["KINDS", "DeviceMemory", "imbalance_percent", "memory_ledger"]

KINDS = ("inputs", "outputs", "temporaries", "communication")


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """One device's peak bytes and their split at the peak step."""

    peak: int
    split: tuple[tuple[str, int], ...]

    def to_json(self) -> dict[str, Any]:
        return dict(self.split)


@dataclass(slots=True)
class _Seen:
    """The regions one device reads (or writes) of each tensor: the first and last step, the
    first box and its cells, and any further boxes (kept in plain dicts: a plan has tens of
    thousands of selections, and a container per selection would wake the garbage collector)."""

    first: dict[str, int] = field(default_factory=dict)
    last: dict[str, int] = field(default_factory=dict)
    box: dict[str, Box] = field(default_factory=dict)
    cells: dict[str, int] = field(default_factory=dict)
    more: dict[str, list[Box]] = field(default_factory=dict)

    def add(self, n: int, found: tuple[tuple[str, Box], ...], cells: tuple[int, ...]) -> None:
        first, box = self.first, self.box
        for (tid, b), c in zip(found, cells, strict=True):
            if tid not in first:
                first[tid] = n
                box[tid] = b
                self.cells[tid] = c
            elif b != box[tid]:
                self.more.setdefault(tid, []).append(b)
            self.last[tid] = n

    def boxes(self, tid: str) -> list[Box]:
        return [self.box[tid], *self.more.get(tid, ())]

    def distinct_cells(self, tid: str) -> int:
        return boxes_union_size(self.boxes(tid)) if tid in self.more else self.cells[tid]


def memory_ledger(doc: PlacedDocument) -> dict[Device, DeviceMemory]:
    """Per device of the plan (idle ones too), its peak and split (see the module docstring)."""
    end = len(doc.order) - 1
    written_by_any: set[str] = set()
    last_read: dict[str, int] = {}
    reads: dict[Device, _Seen] = {}
    writes: dict[Device, _Seen] = {}
    for n, op_id in enumerate(doc.order):
        for sh in doc.by_op[op_id]:
            last_read.update(dict.fromkeys([tid for tid, _ in sh.reads], n))
            written_by_any.update(tid for tid, _ in sh.writes)
            d = sh.device
            if d is not None:
                (reads.get(d) or reads.setdefault(d, _Seen())).add(n, sh.reads, sh.read_cells)
                (writes.get(d) or writes.setdefault(d, _Seen())).add(n, sh.writes, sh.write_cells)
    for tid, held in doc.held.items():  # placed graph inputs: held from the start
        for d, box in held:
            (writes.get(d) or writes.setdefault(d, _Seen())).add(0, ((tid, box),), (box_size(box),))
    allocations: dict[Device, list[tuple[str, int, int, int]]] = {d: [] for d in doc.devices()}
    for d, own in writes.items():
        found = allocations.setdefault(d, [])
        for tid, first in own.first.items():
            nbytes = own.distinct_cells(tid) * doc.element_bytes.get(tid, 0)
            if tid in doc.held:
                found.append(("inputs", 0, end, nbytes))
            elif tid in last_read:
                found.append(("temporaries", first, max(last_read[tid], first), nbytes))
            else:
                found.append(("outputs", first, end, nbytes))
    for d, seen in reads.items():
        found = allocations.setdefault(d, [])
        own = writes.get(d) or _Seen()
        for tid, first in seen.first.items():
            if tid not in own.first:
                only_read = seen.distinct_cells(tid)
            elif tid not in own.more and all(contains(own.box[tid], b) for b in seen.boxes(tid)):
                only_read = 0
            elif tid not in own.more and tid not in seen.more:  # one box each: |R| - |R ∩ W|
                common = intersect(seen.box[tid], own.box[tid])
                only_read = seen.cells[tid] - (box_size(common) if common is not None else 0)
            else:
                mine = own.boxes(tid)
                only_read = boxes_union_size([*seen.boxes(tid), *mine]) - boxes_union_size(mine)
            nbytes = only_read * doc.element_bytes.get(tid, 0)
            if tid not in written_by_any and tid not in doc.held:
                found.append(("inputs", 0, end, nbytes))
            elif nbytes:
                found.append(("communication", first, seen.last[tid], nbytes))
    return {d: _peak(found, len(doc.order)) for d, found in allocations.items()}


def _peak(allocations: list[tuple[str, int, int, int]], steps: int) -> DeviceMemory:
    """The peak step of live allocations ``(kind, first step, last step, bytes)``: per kind, the
    bytes live at each step are the running sum of each allocation's start and end deltas
    (NumPy ``int64``, exact far beyond any device's bytes)."""
    if not steps:
        return DeviceMemory(0, tuple((kind, 0) for kind in KINDS))
    row = {kind: n for n, kind in enumerate(KINDS)}
    deltas = np.zeros((len(KINDS), steps + 1), dtype=np.int64)
    if allocations:
        kinds, starts, stops, sizes = zip(*allocations, strict=True)
        rows = np.fromiter(map(row.__getitem__, kinds), dtype=np.intp, count=len(kinds))
        nbytes = np.array(sizes, dtype=np.int64)
        np.add.at(deltas, (rows, np.array(starts, dtype=np.intp)), nbytes)
        np.add.at(deltas, (rows, np.array(stops, dtype=np.intp) + 1), -nbytes)
    live = np.cumsum(deltas[:, :steps], axis=1)
    at = int(np.argmax(live.sum(axis=0)))  # the earliest peak on ties
    return DeviceMemory(
        int(live[:, at].sum()), tuple((kind, int(live[n, at])) for n, kind in enumerate(KINDS))
    )


def imbalance_percent(peaks: list[int]) -> float:
    """How far the largest peak is above the mean, in percent (0 for no or idle devices).

    >>> imbalance_percent([100, 50, 50, 0])
    100.0
    """
    if not peaks or sum(peaks) == 0:
        return 0.0
    mean = sum(peaks) / len(peaks)
    return (max(peaks) - mean) / mean * 100
