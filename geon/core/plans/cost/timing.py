"""Time per application, per device and per plan (DESIGN.md §9, issue 16 item 4).

**Per application** (a roofline with a floor): ``max(flops / (peak·eff), bytes / (memBW·eff),
kernelFloor)``, with ``peak`` the profile's FLOP/s for the dtype of what it writes, ``bytes`` the
bytes of every region it reads and writes. Its flops, counted on its own region:

- contractions (``op:dot``, ``op:conv2d``, ``op:linear``, ``matmul``): ``2·M·N·K``, i.e. twice the
  index cells times ``K``, the cells one index point reads of the first input (the product of its
  IPF's ``shape``: the contracted extents, and a conv's window times its input channels);
- pooling (``op:max_pool2d``, ``op:avg_pool2d``): the index cells times ``K``, the window's
  cells (one comparison or addition per cell of each window);
- reductions (``op:sum`` ... ``op:mean``, ``row_sum``): the cells read;
- views (``op:broadcast``, ``op:slice``, ...): nothing, and no time (zero-copy);
- copies (``op:concat``, ``op:gather``): no flops; their time is the bytes they move;
- everything else (elementwise, unknown kernels): the cells written.

**Per device**: flops and compute seconds summed over its Applications; communication seconds
summed over the collectives it takes part in.

**Per plan**, an interval over the operations in run order, where an operation's compute time
``C(o)`` is its busiest device's (its Applications on one device run one after another; an
operation that runs whole counts its own time) and ``M(o)`` the seconds of the collectives it
consumes:

- ``upper`` (no overlap): ``Σ_o C(o) + M(o)``, every operation and collective one after another;
- ``lower`` (full overlap): the largest of the critical path of compute alone (``C`` along the
  longest chain of operations writing what the next reads), the busiest device's compute, and the
  busiest device's communication.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from geon.core.graph import IPF_SIGNATURE
from geon.core.ops import REDUCTIONS, VIEWS
from geon.core.plans.cost.collectives import Collective
from geon.core.plans.cost.placed import PlacedDocument
from geon.core.plans.cost.profiles import Profile
from geon.core.plans.table import Device, box_size, group_keys

__all__ = [
    "CONTRACTIONS",
    "COPIES",
    "WINDOWS",
    "AllWork",
    "DeviceTime",
    "Work",
    "all_work",
    "device_times",
    "operation_seconds",
    "segment_sums",
    "time_interval",
]

CONTRACTIONS = ("op:dot", "op:conv2d", "op:linear", "matmul")
"""Kernels counted as ``2·M·N·K``."""

COPIES = ("op:concat", "op:gather")
"""Kernels that only move data: no flops, their bytes still take time."""

WINDOWS = ("op:max_pool2d", "op:avg_pool2d")
"""Kernels counted as index cells times the window's cells."""

_PER_CELL = {**dict.fromkeys(CONTRACTIONS, 2), **dict.fromkeys(WINDOWS, 1)}
"""Flops per index cell and per cell of ``K``: a multiply and an add; a comparison or an add."""

_CELLS_READ = (*REDUCTIONS, "row_sum")


class Work(NamedTuple):
    """One application's flops, bytes moved to and from memory, and seconds."""

    flops: int
    bytes: int
    seconds: float


@dataclass(slots=True)
class AllWork:
    """Every shard's :class:`Work`, as columns indexed by shard."""

    flops: np.ndarray
    bytes: np.ndarray
    seconds: np.ndarray

    def of(self, shard: int) -> Work:
        return Work(int(self.flops[shard]), int(self.bytes[shard]), float(self.seconds[shard]))

    def __len__(self) -> int:
        return len(self.flops)


@dataclass(slots=True)
class DeviceTime:
    """One device's totals: flops, compute and communication seconds."""

    flops: int = 0
    compute: float = 0.0
    comm: float = 0.0


def segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The sum of each segment ``values[offsets[n]:offsets[n + 1]]`` (exact for integers; 0 for
    an empty one).

    >>> segment_sums(np.array([1, 2, 3]), np.array([0, 2, 2, 3])).tolist()
    [3, 0, 3]
    """
    starts, ends = offsets[:-1], offsets[1:]
    sums = (
        np.add.reduceat(np.append(values, values.dtype.type(0)), starts)
        if len(starts)
        else (np.zeros(0, values.dtype))
    )
    sums[starts == ends] = 0
    return sums


def _contracted_cells(doc: PlacedDocument, op: int) -> int:
    """``K``: the cells one index point reads of the operation's first input (1 without an
    IPFSignature): a contraction's contracted extents, a pooling's window."""
    node = doc.operation(op)
    sig = (node.tags or {}).get(IPF_SIGNATURE)
    if not isinstance(sig, dict):
        return 1
    try:
        first = next(iter(node.body["inputs"]))
        cells = 1
        for extent in sig["inputs"][first][0]["shape"]:
            cells *= int(extent)
        return cells
    except (KeyError, TypeError, IndexError, StopIteration, ValueError):
        return 1


def all_work(doc: PlacedDocument, profile: Profile) -> AllWork:
    """Every shard's work (placed or run whole; see the module docstring)."""
    table = doc.table
    rows, n = table.rows, len(table.ids)
    nbytes = segment_sums(rows.cells * table.element_bytes[rows.tensor], table.offsets)
    written = segment_sums(np.where(rows.write, rows.cells, 0), table.offsets)
    read = segment_sums(np.where(rows.write, 0, rows.cells), table.offsets)
    flops = written.copy()
    kernels = [doc.operation(op).body.get("kernel") for op in range(len(table.op_ids))]
    kernel_of = [k if isinstance(k, str) else "" for k in kernels]
    view = np.array([k in VIEWS for k in kernel_of], dtype=bool)[table.op]
    by_read = np.array([k in _CELLS_READ for k in kernel_of], dtype=bool)[table.op]
    copy = np.array([k in COPIES for k in kernel_of], dtype=bool)[table.op]
    flops[by_read] = read[by_read]
    flops[copy] = 0
    counted = [op for op, k in enumerate(kernel_of) if k in _PER_CELL]
    if counted:
        per_op = {op: _PER_CELL[kernel_of[op]] * _contracted_cells(doc, op) for op in counted}
        for s in np.flatnonzero(np.isin(table.op, counted)).tolist():
            box = table.index_box(s)
            cells = box_size(box) if box is not None else int(written[s])
            flops[s] = per_op[int(table.op[s])] * cells
    # the peak of the dtype each shard writes first (float32 when it writes nothing)
    writes = np.flatnonzero(rows.write)
    shards_writing, first, _ = group_keys(rows.shard[writes])
    dev = profile.device
    rates = {d: profile.peak(d) * dev.efficiency for d in {*table.dtypes, "float32"}}
    rate_of = np.array([rates[d] for d in table.dtypes] or [0.0])
    rate = np.full(n, rates["float32"])
    rate[shards_writing] = rate_of[rows.tensor[writes[first]]]
    seconds = np.maximum(
        np.maximum(flops / rate, nbytes / (dev.memory_bandwidth * dev.efficiency)),
        dev.kernel_floor,
    )
    flops[view], nbytes[view], seconds[view] = 0, 0, 0.0
    return AllWork(flops, nbytes, seconds)


def device_times(
    doc: PlacedDocument, work: AllWork, collectives: Iterable[Collective]
) -> dict[Device, DeviceTime]:
    """Per device of the plan (idle ones too): flops, compute and communication seconds."""
    table = doc.table
    devices = doc.devices()
    placed = table.placed
    known = set(devices)
    used = group_keys(table.device[placed])[0].tolist()
    everyone = [*devices, *(d for d in used if d not in known)]
    n = len(table.devices)
    flops = np.zeros(n, dtype=np.int64)
    np.add.at(flops, table.device[placed], work.flops[placed])
    compute = np.bincount(table.device[placed], weights=work.seconds[placed], minlength=n)
    out = {table.devices[d]: DeviceTime(int(flops[d]), float(compute[d])) for d in everyone}
    for c in collectives:
        for d in c.participants:
            out.setdefault(d, DeviceTime()).comm += c.seconds
    return out


def _tensors_by_op(ops: np.ndarray, tensors: np.ndarray, n_tensors: int) -> dict[int, list[int]]:
    """The distinct tensors of each operation's rows."""
    keys = group_keys(ops * n_tensors + tensors)[0]
    out: dict[int, list[int]] = {}
    for op, t in zip((keys // n_tensors).tolist(), (keys % n_tensors).tolist(), strict=True):
        (out.get(op) or out.setdefault(op, [])).append(t)
    return out


def operation_seconds(doc: PlacedDocument, work: AllWork) -> np.ndarray:
    """``C(o)`` of every operation (indices of the table's ``op_ids``): its busiest device's
    seconds (an unplaced shard is a device too)."""
    table = doc.table
    slots = len(table.devices) + 1
    keys, _, at = group_keys(table.op * slots + table.device + 1)
    per_device = np.bincount(at, weights=work.seconds, minlength=len(keys))
    own = np.zeros(len(table.op_ids))
    np.maximum.at(own, keys // slots, per_device)
    return own


def time_interval(
    doc: PlacedDocument,
    work: AllWork,
    collectives: Iterable[Collective],
    devices: dict[Device, DeviceTime],
) -> dict[str, float]:
    """``{"lower", "upper"}`` seconds of the plan (see the module docstring)."""
    table = doc.table
    rows = table.rows
    comm: dict[str, float] = {}
    for c in collectives:
        comm[c.consumer] = comm.get(c.consumer, 0.0) + c.seconds
    own = operation_seconds(doc, work)
    # the tensors each operation reads and writes, for the critical path
    op_rows = table.op[rows.shard]
    read_by = _tensors_by_op(op_rows[~rows.write], rows.tensor[~rows.write], len(table.tensor_ids))
    wrote = _tensors_by_op(op_rows[rows.write], rows.tensor[rows.write], len(table.tensor_ids))
    writer: dict[int, int] = {}
    finish: dict[int, float] = {}
    upper = 0.0
    own_of = own.tolist()
    for op in doc.order:
        mine = own_of[op]
        upper += mine + comm.get(table.op_ids[op], 0.0)
        before = [
            finish[w]
            for t in read_by.get(op, ())
            if (w := writer.get(t)) is not None and w in finish
        ]
        finish[op] = mine + max(before, default=0.0)
        for t in wrote.get(op, ()):
            writer[t] = op
    lower = max(
        max(finish.values(), default=0.0),
        max((d.compute for d in devices.values()), default=0.0),
        max((d.comm for d in devices.values()), default=0.0),
    )
    return {"lower": lower, "upper": upper}
