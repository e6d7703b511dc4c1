"""What inference derives for one op: :class:`Inference` and its operand :class:`Dim` s, and how
they become ``IPFSignature`` entries and selections (DESIGN.md §4, derived projections).

>>> Dim(terms=((0, 1),)).column, identity_dims(2)[1].column
(0, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from geon.core.axes import Axes, Ref
from geon.core.errors import ShapeError
from geon.core.ops.catalogue import Kernel
from geon.core.zspace import IPFKey, ZRange, ipf_of, selection_of


@dataclass(frozen=True, slots=True)
class Dim:
    """How one operand dim reads the op's index space.

    ``terms``: ``(index column, coefficient)``; ``merged``: a composite dim, ``(column, part)``
    merged row-major (coefficients are the products of the later parts' lengths); ``offset``
    relative to the selection start; ``extent`` the ``shape`` entry: an int or a reference whose
    length it is (a contracted or reduced dim, or a conv window).

    >>> Dim(terms=((0, 1),)).column
    0
    """

    terms: tuple[tuple[int, int], ...] = ()
    merged: tuple[tuple[int, Ref], ...] = ()
    offset: int = 0
    extent: int | Ref = 1

    @property
    def column(self) -> int | None:
        """The index column this dim follows one to one, or None."""
        if len(self.terms) == 1 and not self.merged and self.terms[0][1] == 1:
            return self.terms[0][0]
        return None


Lengths = Callable[[Ref], int]
"""Binds an axis reference to its length (the declared one by default)."""

Operands = tuple[tuple[str, tuple[Axes, ...]], ...]
"""Operand axes by IO key, in the kernel's key order."""


def identity_dims(n: int) -> tuple[Dim, ...]:
    return tuple(Dim(terms=((i, 1),)) for i in range(n))


@dataclass(frozen=True, slots=True)
class Inference:
    """What :func:`infer` derives for one op.

    ``inputs`` are the operands' axes by IO key; ``result`` the output axes; ``index`` the index
    axes (= ``result`` except for flatten); ``params`` the canonical params JSON; ``dims`` one
    :class:`Dim` tuple per operand, by IO key (``"result"`` for the output); ``plan`` kernel facts
    for the executor.
    """

    kernel: str
    inputs: Operands
    result: Axes
    index: Axes
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    dims: tuple[tuple[str, tuple[tuple[Dim, ...], ...]], ...] = field(default=(), hash=False)
    plan: dict[str, Any] = field(default_factory=dict, hash=False)

    def operand(self, key: str, position: int = 0) -> Axes:
        """The axes of input ``key`` number ``position``."""
        return dict(self.inputs)[key][position]

    def operand_dims(self, key: str, position: int = 0) -> tuple[Dim, ...]:
        """The dims of input ``key`` (or ``"result"``) number ``position``."""
        return dict(self.dims)[key][position]

    def signature(
        self,
        starts: Mapping[str, Sequence[Sequence[int]]] | None = None,
        lengths: Lengths | None = None,
    ) -> dict[str, Any]:
        """The derived ``IPFSignature`` tag value.

        ``starts`` are the operand *tensors'* range starts by IO key (``"result"`` for the
        output; zeros when absent): params such as slice starts count from the tensor's origin.
        ``lengths`` binds axes that have no declared length."""
        size = lengths or _declared_length
        sig: dict[str, Any] = {"inputs": {}, "outputs": {}}
        rank = len(self.index)
        for key, operands in self.dims:
            side = "outputs" if key == "result" else "inputs"
            entries = []
            for pos, dims in enumerate(operands):
                start = operand_start(starts, key, pos, len(dims))
                entries.append(access_json(dims, start, rank, size))
            sig[side][key] = entries
        return sig

    def selections(
        self,
        ranges: Mapping[str, Sequence[tuple[Sequence[int], Sequence[int]]]],
        lengths: Lengths | None = None,
    ) -> dict[str, list[dict[str, list[int]]]]:
        """The region each operand reads or writes: the projection of the whole index range,
        an input's clipped to its tensor's range (:func:`geon.core.zspace.selection_of` is the
        rule; ``ranges``: ``(start, end)`` per operand by IO key). This is the selection the
        builder writes; for most kernels it is the whole tensor, for a slice the sliced window,
        and for pad the whole (smaller) input.

        >>> from geon.core.axes import Axes, Axis
        >>> from geon.core.ops import infer
        >>> H, H2 = Axis("H", 4), Axis("H2", 2)
        >>> inf = infer("op:slice", {"tensor": [Axes.of([H])]},
        ...             {"slices": {"H": {"start": 1, "stop": 3}}, "axes": {"H": "H2"}}, {"H2": H2})
        >>> inf.selections({"tensor": [([0], [4])], "result": [([0], [2])]})["tensor"]
        [{'start': [1], 'end': [3]}]
        """
        size = lengths or _declared_length
        rank = len(self.index)
        index = ZRange([0] * rank, [size(r) for r in self.index])
        starts = {key: [r[0] for r in group] for key, group in ranges.items()}
        out: dict[str, list[dict[str, list[int]]]] = {}
        for key, operands in self.dims:
            found = []
            for pos, dims in enumerate(operands):
                start = operand_start(starts, key, pos, len(dims))
                ipf = ipf_of(access_key(dims, start, rank, size))
                tensor = ZRange(*ranges[key][pos])
                sel = selection_of(ipf, index, tensor, read=key != "result")
                found.append({"start": list(sel.start), "end": list(sel.end)})
            out[key] = found
        return out

    def index_range(self, lengths: Lengths | None = None) -> dict[str, list[int]]:
        """The op's ``IPFIndex``: ``[0, length)`` per index axis."""
        size = lengths or _declared_length
        return {"start": [0] * len(self.index), "end": [size(r) for r in self.index]}

    def index_json(self) -> dict[str, list[str]]:
        """The op's ``IndexAxes`` tag value."""
        return {"axes": list(self.index.names)}


def _declared_length(ref: Ref) -> int:
    length = ref.length
    if length is None:
        raise ShapeError(
            f'axis "{ref}" has no length; bind it to derive projections '
            f'(e.g. Axis("{ref.axes[0].name}", 4))'
        )
    return length


def operand_start(
    starts: Mapping[str, Sequence[Sequence[int]]] | None, key: str, pos: int, rank: int
) -> list[int]:
    if starts is None or key not in starts or pos >= len(starts[key]):
        return [0] * rank
    start = list(starts[key][pos])
    if len(start) != rank:
        raise ShapeError(f'selection "{key}[{pos}]" starts at {start}; expected {rank} coordinates')
    return start


def access_key(dims: Sequence[Dim], start: Sequence[int], rank: int, size: Lengths) -> IPFKey:
    """The IPF an operand with ``dims`` reads through, its range starting at ``start``, as
    ``(projection rows, offset, shape)`` (:func:`geon.core.zspace.ipf_of` builds it once)."""
    projection: list[tuple[int, ...]] = []
    offset: list[int] = []
    shape: list[int] = []
    for dim, s in zip(dims, start, strict=True):
        row = [0] * rank
        for col, coef in dim.terms:
            row[col] += coef
        if dim.merged:
            stride = 1
            for col, part in reversed(dim.merged):
                row[col] += stride
                stride *= size(part)
        projection.append(tuple(row))
        offset.append(s + dim.offset)
        shape.append(dim.extent if isinstance(dim.extent, int) else size(dim.extent))
    return tuple(projection), tuple(offset), tuple(shape)


def access_json(
    dims: Sequence[Dim], start: Sequence[int], rank: int, size: Lengths
) -> dict[str, Any]:
    """:func:`access_key` as an ``IPFSignature`` entry."""
    projection, offset, shape = access_key(dims, start, rank, size)
    return {
        "affineMap": {"projection": [list(row) for row in projection], "offset": list(offset)},
        "shape": list(shape),
    }


def make_inference(
    k: Kernel,
    ins: Operands,
    result: Axes,
    index: Axes,
    params: dict[str, Any],
    in_dims: Mapping[str, list[tuple[Dim, ...]]],
    out_dims: tuple[Dim, ...] | None = None,
    plan: dict[str, Any] | None = None,
) -> Inference:
    dims = [(key, tuple(in_dims[key])) for key, _ in ins if key in in_dims]
    dims.append(("result", (out_dims if out_dims is not None else identity_dims(len(result)),)))
    return Inference(k.name, ins, result, index, params, tuple(dims), plan or {})
