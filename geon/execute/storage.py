"""Where every computed tensor of a plan lives (DESIGN.md §7: zero-copy views, a liveness-based
memory planner).

In a logical run a view kernel (cast_axes, broadcast, dimshuffle, transpose, slice, flatten,
unflatten) makes its result a zero-copy *view* of its operand. Every other computed tensor gets a
slot of the arena planned by :func:`geon.execute.memory.plan_memory`, in place of an operand where
an elementwise op reads it for the last time with the result's layout and dtype. A tensor written
in pieces that do not tile it is zeroed before its first write. The Applications of a concurrent
group run at once, so a buffer live at one of them is live over the whole group.

>>> from geon.core.zspace import ZRange
>>> x = TensorInfo(0, "x", None, "float32", ZRange([0], [8]))
>>> tiles([ZRange([0], [4]), ZRange([4], [8])], x), tiles([ZRange([0], [4])], x)
(True, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from geon.core.dtypes import DTYPE_BYTES
from geon.core.ops import CATALOGUE
from geon.core.zspace import ZRange
from geon.execute.kernels import ELEMENTWISE_FAMILIES
from geon.execute.memory import Buffer, MemoryPlan, plan_memory
from geon.execute.regions import TensorInfo, Unit
from geon.execute.schedule import disjoint

__all__ = ["VIEW_KERNELS", "Storage", "Uses", "plan_storage", "tiles", "uses_of"]

VIEW_KERNELS = (
    "op:cast_axes",
    "op:broadcast",
    "op:dimshuffle",
    "op:transpose",
    "op:slice",
    "op:flatten",
    "op:unflatten",
)


@dataclass(frozen=True, slots=True)
class Storage:
    """The storage decisions of a plan: ``alias_of`` (a view tensor -> the tensor it views),
    ``zero_at`` (a step -> the tensors it zeroes first), ``whole`` (tensors one step writes
    entirely), the ``buffers`` the memory planner was given (keys: tensor indexes) and its plan."""

    alias_of: dict[int, int]
    zero_at: dict[int, list[int]]
    whole: set[int]
    buffers: tuple[Buffer, ...]
    memory: MemoryPlan


@dataclass(frozen=True, slots=True)
class Uses:
    """Who touches each tensor: the units writing it and reading it (by unit number)."""

    written: dict[int, list[int]]
    read_at: dict[int, list[int]]


def plan_storage(
    units: Sequence[Unit],
    uses: Uses,
    tensors: Sequence[TensorInfo],
    keep: Sequence[int],
    constants: Mapping[int, object],
    groups: Sequence[tuple[int, int]],
) -> Storage:
    """Aliases, zeroing and the arena for ``units`` (in schedule order); ``keep`` are the tensors
    a run returns (live to the end), ``constants`` the tensors that come with the plan."""
    alias_of: dict[int, int] = {}
    zero_at: dict[int, list[int]] = {}
    whole: set[int] = set()
    for t, ns in uses.written.items():
        info = tensors[t]
        if len(ns) == 1 and units[ns[0]].out[1] == info.range:
            whole.add(t)
            src = _view_source(units[ns[0]], info, tensors, constants)
            if src is not None:
                alias_of[t] = src
        elif not tiles([units[n].out[1] for n in ns], info):
            zero_at.setdefault(ns[0], []).append(t)
    last = _last_uses(uses, alias_of, set(keep), len(units), len(tensors))
    outside = {t for t in range(len(tensors)) if t not in uses.written}
    span: dict[int, tuple[int, int]] = {}
    for a, b in groups:
        for k in range(a, b):
            span[k] = (a, b - 1)
    buffers: list[Buffer] = []
    for t, ns in uses.written.items():
        if t in alias_of:
            continue
        info = tensors[t]
        first = ns[0]
        inplace = _inplace(units[first], first, info, tensors, whole, alias_of, last, outside)
        buffers.append(
            Buffer(
                str(t),
                info.dtype,
                info.size,
                DTYPE_BYTES[info.dtype],
                # Steps of a group run at once: a buffer live at one is live at all of them,
                # so no two concurrent Applications share a slot.
                span.get(first, (first, first))[0],
                span.get(last[t], (last[t], last[t]))[1],
                str(inplace) if inplace is not None else None,
            )
        )
    return Storage(alias_of, zero_at, whole, tuple(buffers), plan_memory(buffers))


def uses_of(units: Sequence[Unit]) -> Uses:
    """The units writing and reading each tensor, in schedule order."""
    written: dict[int, list[int]] = {}
    read_at: dict[int, list[int]] = {}
    for n, u in enumerate(units):
        written.setdefault(u.out[0], []).append(n)
        for r in u.reads:
            read_at.setdefault(r.tensor, []).append(n)
    return Uses(written, read_at)


def _view_source(
    unit: Unit, info: TensorInfo, tensors: Sequence[TensorInfo], constants: Mapping[int, object]
) -> int | None:
    """The operand a view kernel's result may alias: its first operand, when that is not a
    constant, has the result's dtype and is read from inside its range."""
    if unit.kernel not in VIEW_KERNELS or not unit.reads:
        return None
    read = unit.reads[0]
    src = tensors[read.tensor]
    if read.tensor in constants or src.dtype != info.dtype or not src.covers(read.region):
        return None
    return read.tensor


def _last_uses(
    uses: Uses, alias_of: Mapping[int, int], keep: set[int], end: int, count: int
) -> dict[int, int]:
    """The last step at which each computed tensor's storage is needed, by the tensor whose
    storage it is (a view keeps its base alive; a kept tensor lives to the end)."""

    def root(t: int) -> int:
        while t in alias_of:
            t = alias_of[t]
        return t

    last: dict[int, int] = {}
    for t in range(count):
        if t not in uses.written:
            continue
        ends = [*uses.read_at.get(t, ()), *uses.written[t]]
        stop = end if t in keep else max(ends)
        r = root(t)
        last[r] = max(last.get(r, -1), stop)
    return last


def _inplace(
    unit: Unit,
    step: int,
    info: TensorInfo,
    tensors: Sequence[TensorInfo],
    whole: set[int],
    alias_of: Mapping[int, int],
    last: Mapping[int, int],
    outside: set[int],
) -> int | None:
    """An operand whose storage the unit may overwrite with its result, or None: an elementwise
    op reading, for the last time, a whole arena tensor with the result's dtype, shape and layout
    (operand 0 only when more than two operands are folded)."""
    if info.index not in whole or info.index in alias_of:
        return None
    family = CATALOGUE[unit.kernel].family
    if family not in ELEMENTWISE_FAMILIES:
        return None
    for n, read in enumerate(unit.reads):
        if n > 0 and len(unit.reads) > 2:
            break
        src = read.tensor
        s = tensors[src]
        if (
            src in alias_of
            or src in outside
            or s.dtype != info.dtype
            or s.shape != info.shape
            or read.region != s.range
            or sum(1 for r in unit.reads if r.tensor == src) != 1
            or any(src == alias_of.get(o) for o in alias_of)
        ):
            continue
        aligned = unit.inf is None or family == "unary"
        if not aligned and unit.inf is not None:
            aligned = list(unit.inf.plan["align"][n]) == list(range(len(info.shape)))
        if aligned and last.get(src) == step:
            return src
    return None


def tiles(regions: Sequence[ZRange], info: TensorInfo) -> bool:
    """Whether ``regions`` cover the tensor exactly (pairwise disjoint, sizes summing to it), so
    the writes leave no cell unwritten and the storage needs no zeroing first."""
    return (
        disjoint(regions)
        and sum(r.size for r in regions) == info.size
        and all(info.covers(r) for r in regions)
    )
