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

from geon.core.cost import Device, box_size
from geon.core.costmodel.collectives import Collective
from geon.core.costmodel.placed import PlacedDocument, Shard
from geon.core.costmodel.profiles import Profile
from geon.core.graph import IPF_SIGNATURE
from geon.core.ops import REDUCTIONS, VIEWS

__all__ = [
    "CONTRACTIONS",
    "COPIES",
    "WINDOWS",
    "DeviceTime",
    "Work",
    "all_work",
    "device_times",
    "shard_work",
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
    """One application's flops, bytes moved to and from memory, and seconds (a named tuple: a
    plan has thousands of applications)."""

    flops: int
    bytes: int
    seconds: float


@dataclass(slots=True)
class DeviceTime:
    """One device's totals: flops, compute and communication seconds."""

    flops: int = 0
    compute: float = 0.0
    comm: float = 0.0


def _contracted_cells(doc: PlacedDocument, op_id: str) -> int:
    """``K``: the cells one index point reads of the operation's first input (1 without an
    IPFSignature): a contraction's contracted extents, a pooling's window."""
    op = doc.operation(op_id)
    sig = (op.tags or {}).get(IPF_SIGNATURE)
    if not isinstance(sig, dict):
        return 1
    try:
        first = next(iter(op.body["inputs"]))
        cells = 1
        for extent in sig["inputs"][first][0]["shape"]:
            cells *= int(extent)
        return cells
    except (KeyError, TypeError, IndexError, StopIteration, ValueError):
        return 1


def shard_work(doc: PlacedDocument, shard: Shard, profile: Profile, k: int = 1) -> Work:
    """The flops, bytes and seconds of one application (see the module docstring); ``k`` is
    its operation's contracted cells (:func:`_contracted_cells`, computed once per operation)."""
    kname = doc.operation(shard.op_id).body.get("kernel")
    return _Roofline(doc, profile).work(shard, kname, k)


class _Roofline:
    """The per-application formula with what it looks up per plan bound once: bytes per element,
    the profile's peak per dtype and its memory bandwidth."""

    def __init__(self, doc: PlacedDocument, profile: Profile) -> None:
        dev = profile.device
        self.eb = doc.element_bytes
        self.dtypes = doc.dtypes
        self.profile = profile
        self.flops_per_s: dict[str, float] = {}
        self.bytes_per_s = dev.memory_bandwidth * dev.efficiency
        self.efficiency = dev.efficiency
        self.floor = dev.kernel_floor

    def work(self, shard: Shard, kname: object, k: int) -> Work:
        if kname in VIEWS:
            return Work(0, 0, 0.0)
        eb = self.eb
        written = sum(shard.write_cells)
        per_cell = _PER_CELL.get(kname) if isinstance(kname, str) else None
        if per_cell is not None:
            cells = box_size(shard.index_box) if shard.index_box is not None else written
            flops = per_cell * cells * k
        elif kname in _CELLS_READ:
            flops = sum(shard.read_cells)
        elif kname in COPIES:
            flops = 0
        else:
            flops = written
        nbytes = sum(
            n * eb.get(t, 0) for (t, _), n in zip(shard.reads, shard.read_cells, strict=True)
        )
        nbytes += sum(
            n * eb.get(t, 0) for (t, _), n in zip(shard.writes, shard.write_cells, strict=True)
        )
        dtype = self.dtypes.get(shard.writes[0][0], "float32") if shard.writes else "float32"
        rate = self.flops_per_s.get(dtype)
        if rate is None:
            rate = self.flops_per_s[dtype] = self.profile.peak(dtype) * self.efficiency
        return Work(flops, nbytes, max(flops / rate, nbytes / self.bytes_per_s, self.floor))


def all_work(doc: PlacedDocument, profile: Profile) -> dict[str, Work]:
    """Every shard's work (placed or run whole), by shard id."""
    out: dict[str, Work] = {}
    roofline = _Roofline(doc, profile)
    for op_id in doc.order:
        kname = doc.operation(op_id).body.get("kernel")
        k = _contracted_cells(doc, op_id) if kname in _PER_CELL else 1
        for sh in doc.by_op[op_id]:
            out[sh.id] = roofline.work(sh, kname, k)
    return out


def device_times(
    doc: PlacedDocument, work: dict[str, Work], collectives: Iterable[Collective]
) -> dict[Device, DeviceTime]:
    """Per device of the plan (idle ones too): flops, compute and communication seconds."""
    out = {d: DeviceTime() for d in doc.devices()}
    for sh in doc.shards:
        if sh.device is not None:
            acc = out.setdefault(sh.device, DeviceTime())
            acc.flops += work[sh.id].flops
            acc.compute += work[sh.id].seconds
    for c in collectives:
        for d in c.participants:
            out.setdefault(d, DeviceTime()).comm += c.seconds
    return out


def _operation_seconds(doc: PlacedDocument, op_id: str, work: dict[str, Work]) -> float:
    """``C(o)``: the busiest device's seconds of the operation's Applications."""
    per: dict[Device | None, float] = {}
    for sh in doc.by_op[op_id]:
        per[sh.device] = per.get(sh.device, 0.0) + work[sh.id].seconds
    return max(per.values(), default=0.0)


def time_interval(
    doc: PlacedDocument,
    work: dict[str, Work],
    collectives: Iterable[Collective],
    devices: dict[Device, DeviceTime],
) -> dict[str, float]:
    """``{"lower", "upper"}`` seconds of the plan (see the module docstring)."""
    comm: dict[str, float] = {}
    for c in collectives:
        comm[c.consumer] = comm.get(c.consumer, 0.0) + c.seconds
    writer: dict[str, str] = {}
    finish: dict[str, float] = {}
    upper = 0.0
    for op_id in doc.order:
        own = _operation_seconds(doc, op_id, work)
        upper += own + comm.get(op_id, 0.0)
        before = [
            finish[w]
            for sh in doc.by_op[op_id]
            for t, _ in sh.reads
            if (w := writer.get(t)) is not None and w in finish
        ]
        finish[op_id] = own + max(before, default=0.0)
        for sh in doc.by_op[op_id]:
            for t, _ in sh.writes:
                writer[t] = op_id
    lower = max(
        max(finish.values(), default=0.0),
        max((d.compute for d in devices.values()), default=0.0),
        max((d.comm for d in devices.values()), default=0.0),
    )
    return {"lower": lower, "upper": upper}
