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
from geon.execute.kernel_parts import argsort
from geon.execute.kernels import ELEMENTWISE_FAMILIES
from geon.execute.memory import Buffer, MemoryPlan, plan_memory
from geon.execute.regions import TensorInfo, Unit
from geon.execute.schedule import disjoint

__all__ = [
    "VIEW_KERNELS",
    "Storage",
    "Uses",
    "choose_layouts",
    "plan_storage",
    "tiles",
    "uses_of",
]

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
    layouts: Mapping[int, Sequence[int]] | None = None,
) -> Storage:
    """Aliases, zeroing and the arena for ``units`` (in schedule order); ``keep`` are the tensors
    a run returns (live to the end), ``constants`` the tensors that come with the plan,
    ``layouts`` the arena tensors stored in another order of their dims (:func:`choose_layouts`)."""
    layouts = layouts or {}
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
        inplace = _inplace(
            units[first], first, info, tensors, (whole, alias_of, outside, layouts), last
        )
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
    facts: tuple[set[int], Mapping[int, int], set[int], Mapping[int, Sequence[int]]],
    last: Mapping[int, int],
) -> int | None:
    """An operand whose storage the unit may overwrite with its result, or None: an elementwise
    op reading, for the last time, a whole arena tensor with the result's dtype and size whose
    every cell lies where the result's aligned cell lies (:func:`_same_cells`; operand 0 only
    when more than two operands are folded). ``facts``: the tensors written whole, the views,
    the tensors no step writes, the layouts."""
    whole, alias_of, outside, layouts = facts
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
            or s.size != info.size
            or read.region != s.range
            or sum(1 for r in unit.reads if r.tensor == src) != 1
            or any(src == alias_of.get(o) for o in alias_of)
        ):
            continue
        if unit.inf is None or family == "unary":
            align = list(range(len(s.shape))) if s.shape == info.shape else None
        else:
            align = [int(d) for d in unit.inf.plan["align"][n]]
        if align is not None and _same_cells(align, s, info, layouts) and last.get(src) == step:
            return src
    return None


def _same_cells(
    align: Sequence[int], s: TensorInfo, info: TensorInfo, layouts: Mapping[int, Sequence[int]]
) -> bool:
    """Whether operand ``s``, its dim ``d`` aligned with the result's dim ``align[d]``, holds
    each cell in its storage where the result ``info`` holds the aligned cell: no broadcast
    dim, and both stored in the same order of aligned dims (their layouts)."""
    if len(align) != len(info.shape) or any(
        s.shape[d] != info.shape[a] for d, a in enumerate(align)
    ):
        return False
    ident = range(len(align))
    return [align[d] for d in layouts.get(s.index, ident)] == list(layouts.get(info.index, ident))


def choose_layouts(
    units: Sequence[Unit], uses: Uses, tensors: Sequence[TensorInfo], keep: Sequence[int]
) -> dict[int, tuple[int, ...]]:
    """The tensors worth storing in another order of their dims, and that order (storage dim
    ``i`` is the tensor's dim ``order[i]``): a tensor an elementwise op writes whole and only a
    dimshuffle or transpose reads, whole, is stored in the order that view reads it, so the
    view is contiguous (issue 34). The ONNX importer's ``Add(bias, MatMul(...))`` is the case:
    the named broadcast puts the bias's axis first, and the next op shuffles it back; stored in
    the view's order, the add runs over contiguous memory (in place of the product) and the
    reader after the view (a GELU) reads contiguous memory. Not for kept tensors (results
    leave as they are laid out)."""
    kept = set(keep)
    found: dict[int, tuple[int, ...]] = {}
    for t, ns in uses.written.items():
        info = tensors[t]
        readers = uses.read_at.get(t, [])
        if t in kept or len(ns) != 1 or len(readers) != 1 or len(info.shape) < 2:
            continue
        writer, reader = units[ns[0]], units[readers[0]]
        if writer.out[1] != info.range or writer.inf is None:
            continue
        if CATALOGUE[writer.kernel].family not in ELEMENTWISE_FAMILIES:
            continue
        if reader.inf is None or len(reader.reads) != 1 or reader.reads[0].region != info.range:
            continue
        if tensors[reader.out[0]].dtype != info.dtype:
            continue
        if reader.kernel == "op:dimshuffle":
            order = tuple(argsort([d.column or 0 for d in reader.inf.operand_dims("tensor")]))
        elif reader.kernel == "op:transpose":
            order = tuple(reversed(range(len(info.shape))))
        else:
            continue
        if order != tuple(range(len(order))):
            found[t] = order
    return found


def tiles(regions: Sequence[ZRange], info: TensorInfo) -> bool:
    """Whether ``regions`` cover the tensor exactly (pairwise disjoint, sizes summing to it), so
    the writes leave no cell unwritten and the storage needs no zeroing first."""
    return (
        disjoint(regions)
        and sum(r.size for r in regions) == info.size
        and all(info.covers(r) for r in regions)
    )
