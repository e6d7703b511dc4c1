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

from dataclasses import dataclass
from typing import Any

import numpy as np

from geon.core.cost import Resident, cells_only_read, resident
from geon.core.costmodel.placed import PlacedDocument
from geon.core.shard_table import Device, group_keys

__all__ = ["KINDS", "DeviceMemory", "imbalance_percent", "memory_ledger"]

KINDS = ("inputs", "outputs", "temporaries", "communication")
_INPUTS, _OUTPUTS, _TEMPORARIES, _COMMUNICATION = range(len(KINDS))


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """One device's peak bytes and their split at the peak step."""

    peak: int
    split: tuple[tuple[str, int], ...]

    def to_json(self) -> dict[str, Any]:
        return dict(self.split)


def memory_ledger(doc: PlacedDocument) -> dict[Device, DeviceMemory]:
    """Per device of the plan (idle ones too), its peak and split (see the module docstring)."""
    table = doc.table
    rows = table.rows
    steps = len(doc.order)
    end = steps - 1
    n_tensors = len(table.tensor_ids)
    step_of_op = np.full(len(table.op_ids), -1, dtype=np.int64)
    step_of_op[doc.order] = np.arange(steps)
    step = step_of_op[table.op[rows.shard]]
    ordered = step >= 0
    device = table.device[rows.shard]
    reading = ordered & ~rows.write
    last_read = np.full(n_tensors, -1, dtype=np.int64)
    np.maximum.at(last_read, rows.tensor[reading], step[reading])
    written_by_any = np.zeros(n_tensors, dtype=bool)
    written_by_any[rows.tensor[ordered & rows.write]] = True
    held = np.zeros(n_tensors, dtype=bool)
    h_tensor = np.array([t for t, _, _ in doc.held], dtype=np.intp)
    h_device = np.array([d for _, d, _ in doc.held], dtype=np.intp)
    held[h_tensor] = True
    width = rows.lo.shape[1]
    h_lo = np.zeros((len(doc.held), width), dtype=np.int64)
    h_hi = np.ones((len(doc.held), width), dtype=np.int64)
    for n, (_, _, (start, stop)) in enumerate(doc.held):
        h_lo[n, : len(start)], h_hi[n, : len(stop)] = start, stop
    h_cells = np.prod(h_hi - h_lo, axis=1, dtype=np.int64)

    def side(mask: np.ndarray, extra: bool) -> Resident:
        parts = [
            (device[mask], rows.tensor[mask], step[mask], rows.lo[mask], rows.hi[mask],
             rows.cells[mask])
        ]  # fmt: skip
        if extra:  # placed graph inputs: held from the start
            zero = np.zeros(len(h_tensor), dtype=np.int64)
            parts.append((h_device, h_tensor, zero, h_lo, h_hi, h_cells))
        d, t, n, lo, hi, cells = (np.concatenate(c) for c in zip(*parts, strict=True))
        return resident(d, t, n, lo, hi, cells, n_tensors, table.ranks)

    placed = ordered & (device >= 0)
    writes = side(placed & rows.write, True)
    reads = side(placed & ~rows.write, False)
    eb = table.element_bytes
    # what each device writes: inputs it holds, temporaries until their last reader, outputs
    w_bytes = writes.cells * eb[writes.tensor]
    w_held = held[writes.tensor]
    w_read = last_read[writes.tensor] >= 0
    kind = np.where(w_held, _INPUTS, np.where(w_read, _TEMPORARIES, _OUTPUTS))
    w_first = np.where(w_held, 0, writes.first)
    w_last = np.where(w_held | ~w_read, end, np.maximum(last_read[writes.tensor], writes.first))
    written = (kind, w_first, w_last, w_bytes, writes.device)
    # what each device reads and does not write itself: graph inputs, or received
    only_read = cells_only_read(reads, writes, n_tensors, table.ranks)
    r_bytes = only_read * eb[reads.tensor]
    graph_input = ~written_by_any[reads.tensor] & ~held[reads.tensor]
    keep = graph_input | (r_bytes != 0)
    received = (
        np.where(graph_input, _INPUTS, _COMMUNICATION)[keep],
        np.where(graph_input, 0, reads.first)[keep],
        np.where(graph_input, end, reads.last)[keep],
        r_bytes[keep],
        reads.device[keep],
    )
    kind, first, last, nbytes, owner = (
        np.concatenate(pair) for pair in zip(written, received, strict=True)
    )
    order = np.argsort(owner, kind="stable")
    kind, first, last, nbytes, owner = (c[order] for c in (kind, first, last, nbytes, owner))
    devices = doc.devices()
    known = set(devices)
    everyone = [*devices, *(d for d in group_keys(owner)[0].tolist() if d not in known)]
    bounds = np.searchsorted(owner, everyone), np.searchsorted(owner, everyone, side="right")
    out = {}
    for d, a, b in zip(everyone, *bounds, strict=True):
        part = slice(a, b)
        out[table.devices[d]] = _peak(kind[part], first[part], last[part], nbytes[part], steps)
    return out


def _peak(
    kinds: np.ndarray, starts: np.ndarray, stops: np.ndarray, sizes: np.ndarray, steps: int
) -> DeviceMemory:
    """The peak step of live allocations (each of a kind, an index of :data:`KINDS`, live from
    its first step to its last and of some bytes): per kind, the bytes live at each step are the
    running sum of each allocation's start and end deltas (NumPy ``int64``, exact far beyond any
    device's bytes)."""
    if not steps:
        return DeviceMemory(0, tuple((kind, 0) for kind in KINDS))
    deltas = np.zeros((len(KINDS), steps + 1), dtype=np.int64)
    np.add.at(deltas, (kinds, starts), sizes)
    np.add.at(deltas, (kinds, stops + 1), -sizes)
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
