"""Where a step reads and writes: tensors as arrays of their ranges, units of work and their
regions, and the readers that fetch a region (DESIGN.md §4's projections, §7's runs).

A tensor is stored as an array of its range's shape, so a selection ``[205:210, 50:55]`` of a
tensor at ``[200:210, 50:55]`` is the slice ``[5:10, 0:5]`` of its array
(:meth:`TensorInfo.local`). A named operation's regions are the projections of its index range
(the whole range in a logical run, the Application's ``IPFIndex`` in a sharded one) through the
IPF of each operand (:func:`operands_of`, built once per operation from the dims
:func:`geon.core.ops.infer` derives, projected by :meth:`geon.core.zspace.IPF.apply_range`).
Regions of pad and conv2d may extend past the tensor and read zeros there (their padding), which is
how a conv shard reads its halo: :func:`reader` fetches the part inside the tensor that
:func:`geon.core.zspace.selection_of` clips. Positional (loom) operations read and write their
selections as written.

>>> from geon.core.zspace import IPF, ZRange
>>> x = TensorInfo(0, "x", None, "float32", ZRange([200, 50], [210, 55]))
>>> x.local(IPF.identity(2).apply_range(ZRange([205, 50], [210, 55])))
(slice(5, 10, None), slice(0, 5, None))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from geon.core.axes import Ref
from geon.core.dtypes import DTYPE_BYTES
from geon.core.errors import ExecutionError, quote
from geon.core.graph import Node
from geon.core.ops import Dim, Inference
from geon.core.zspace import IPF, ZRange
from geon.execute.backend import Backend

__all__ = [
    "ZERO_FILL_KERNELS",
    "Operand",
    "Read",
    "Reader",
    "TensorInfo",
    "Unit",
    "describe",
    "local_slices",
    "operands_of",
    "read_of",
    "reader",
]

Array = Any
Reader = Callable[[list[Any]], Array]
# their reads past a tensor's edge read zeros (the pooling kernels mask them: -inf for max)
ZERO_FILL_KERNELS = ("op:pad", "op:conv2d", "op:max_pool2d", "op:avg_pool2d")


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """A Tensor node as the executor sees it: where it lies (``range``) and how it is named."""

    index: int
    id: str
    label: str | None
    dtype: str
    range: ZRange
    axes: tuple[str, ...] | None = None
    shape: tuple[int, ...] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", self.range.shape)

    @property
    def name(self) -> str:
        """How messages name it: the label, else the id."""
        return self.label or self.id

    @property
    def start(self) -> tuple[int, ...]:
        return self.range.start

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * DTYPE_BYTES[self.dtype]

    def local(self, region: ZRange) -> tuple[slice, ...]:
        """The slices of this tensor's array that hold the absolute ``region``."""
        return tuple(
            slice(a - s, b - s)
            for a, b, s in zip(region.start, region.end, self.start, strict=True)
        )

    def covers(self, region: ZRange) -> bool:
        """Whether ``region`` lies inside the tensor."""
        return self.range.contains(region)


@dataclass(frozen=True, slots=True)
class Read:
    """One operand a unit reads: its IO key, its tensor and the absolute ``region`` (which may
    reach past the tensor for pad and conv2d; ``inside`` is the part within it)."""

    key: str
    tensor: int
    region: ZRange
    inside: ZRange


@dataclass(slots=True)
class Unit:
    """One unit of work before lowering: an operation, or one Application of it."""

    op: Node
    app: Node | None
    kernel: str
    inf: Inference | None  # None: a positional (loom) operation
    reads: list[Read]
    out: tuple[int, ZRange]  # (tensor index, absolute region written)
    local: dict[str, Any] = field(default_factory=dict)  # kernel facts (a slice's index)


def describe(unit: Unit) -> str:
    """How messages name a unit: its Application and operation, or its operation."""
    if unit.app is not None:
        return f"application {quote(unit.app.id)} of operation {quote(unit.op.id)}"
    return f"operation {quote(unit.op.id)}"


@dataclass(frozen=True, slots=True)
class Operand:
    """How one operand reads or writes the index space: its IPF, and the dims it spans whole
    although its tensor has length 0 there (an IPF's footprint is at least one cell wide, so
    :meth:`region` cuts those back to empty)."""

    ipf: IPF
    empty: tuple[int, ...] = ()

    def region(self, index: ZRange) -> ZRange:
        """The absolute region the operand touches for the index range ``index``."""
        found = self.ipf.apply_range(index)
        if not self.empty:
            return found
        end = list(found.end)
        for d in self.empty:
            end[d] = found.start[d]
        return ZRange(found.start, end)


def operands_of(
    inf: Inference,
    tensors: Mapping[str, Sequence[TensorInfo]],
    length: Callable[[Ref], int],
    known: dict[Any, dict[str, list[Operand]]],
) -> dict[str, list[Operand]]:
    """Every operand of an operation by IO key (``"result"`` for the output), built once per
    operation from :meth:`Inference.signature` (which turns each operand's dims, composite
    flatten dims included, into projection rows, offsets from the tensor's start and window
    shapes). One difference: a dim that follows no index column (a reduced or contracted dim)
    spans its tensor's actual length, which is what the kernel reads.

    ``known`` remembers them for one compilation (``length`` fixed) by what they depend on: the
    dims and the operand tensors' ranges; most operations of a graph share them."""
    key = (inf.dims, tuple((k, tuple(t.range for t in infos)) for k, infos in tensors.items()))
    found = known.get(key)
    if found is not None:
        return found
    starts = {k: [t.start for t in infos] for k, infos in tensors.items()}
    signature = inf.signature(starts, length)
    out: dict[str, list[Operand]] = {}
    for side in ("inputs", "outputs"):
        for k, entries in signature[side].items():
            out[k] = [
                _operand(entry, inf.operand_dims(k, pos), tensors[k][pos])
                for pos, entry in enumerate(entries)
            ]
    known[key] = out
    return out


def _operand(entry: Mapping[str, Any], dims: Sequence[Dim], info: TensorInfo) -> Operand:
    shape = list(entry["shape"])
    empty = []
    for d, dim in enumerate(dims):
        if not (dim.terms or dim.merged or isinstance(dim.extent, int)):
            shape[d] = info.shape[d] or 1
            if not info.shape[d]:
                empty.append(d)
    amap = entry["affineMap"]
    return Operand(IPF(amap["projection"], amap["offset"], shape), tuple(empty))


def local_slices(ipf: IPF, dims: Sequence[Dim], index: ZRange, region: ZRange) -> list[int | slice]:
    """A slice's index within the ``region`` it reads for ``index``: each sliced dim starts at the
    image of the index start and steps by its coefficient; a dropped dim is position 0."""
    first = ipf.map(index.start)
    out: list[int | slice] = []
    for d, dim in enumerate(dims):
        if not dim.terms:
            out.append(0)
            continue
        col, coef = dim.terms[0]
        n = index.end[col] - index.start[col]
        begin = first[d] - region.start[d]
        stop = begin + coef * (n - 1) + (1 if coef > 0 else -1)
        out.append(slice(begin, stop if stop >= 0 else None, coef))
    return out


def reader(unit: Unit, read: Read, info: TensorInfo, be: Backend) -> Reader:
    """A function from the run's values to the array ``read`` reads: the tensor itself, a view of
    it, or (pad and conv2d reaching past the tensor) a zero-filled array holding the part inside.
    A region past the tensor for any other kernel is refused."""
    t = read.tensor
    region = read.region
    if read.inside == region:
        if region.shape == info.shape:
            return _knowing(lambda values: values[t], read)
        idx = info.local(region)
        return _knowing(lambda values: values[t][idx], read)
    if unit.kernel not in ZERO_FILL_KERNELS:
        raise ExecutionError(
            f"{describe(unit)} reads {region} of tensor {quote(info.name)}, which lies at "
            f"{info.range}; expected a region inside the tensor"
        )
    src = info.local(read.inside)
    dst = tuple(
        slice(lo - a, hi - a)
        for lo, hi, a in zip(read.inside.start, read.inside.end, region.start, strict=True)
    )
    shape = region.shape
    xp = be.xp
    dtype = be.dtype(info.dtype)

    def padded(values: list[Any]) -> Array:
        z = xp.zeros(shape, dtype=dtype)
        z[dst] = values[t][src]
        return z

    return _knowing(padded, read)


def _knowing(fn: Reader, read: Read) -> Reader:
    """``fn``, remembering the :class:`Read` it fetches (for :func:`read_of`)."""
    fn.geon_read = read  # type: ignore[attr-defined]
    return fn


def read_of(fn: Reader) -> Read | None:
    """The :class:`Read` a :func:`reader` fetches (the region a step reads, for measuring what
    a sharded run moves between devices); None for any other function."""
    found = getattr(fn, "geon_read", None)
    return found if isinstance(found, Read) else None
