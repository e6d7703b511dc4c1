"""Integer index spaces: points, ranges, affine maps and index projection functions (IPFs).

>>> r = ZRange([0, 0], [10, 5])
>>> r.shape, r.size
((10, 5), 50)
>>> [str(p) for p in r.split(0, chunk=4)]
['[0:4, 0:5]', '[4:8, 0:5]', '[8:10, 0:5]']
>>> f = IPF([[1, 0], [0, 1]], offset=[200, 50], shape=[1, 1])
>>> str(f(ZRange([5, 0], [10, 5])))
'[205:210, 50:55]'

Ranges are half-open boxes ``[start, end)`` in absolute coordinates, as in LoomGraph JSON
(``{"start": [...], "end": [...]}``). An IPF ``f = (P, o, s)`` maps an index point ``i`` to the
box ``[P·i + o, P·i + o + s)`` and an index range to the bounding box of the images of all its
points, computed over every corner (DESIGN.md §4; the two-corner shortcut is wrong for rows that
mix signs). An empty index range maps to the empty range at ``P·a + o``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import add, eq, ge, le
from typing import Any, overload

from geon.core.errors import LimitError, ShapeError, SplitError
from geon.core.limits import INT64_MAX, INT64_MIN, MAX_PIECES, show_int

__all__ = [
    "IPF",
    "TooManyPieces",
    "ZAffineMap",
    "ZPoint",
    "ZRange",
    "bounding_range",
    "split_grid",
    "union_size",
]


class TooManyPieces(LimitError):
    """A split would give more pieces than its limit; ``count`` and ``limit`` say how many."""

    def __init__(self, message: str, count: int, limit: int) -> None:
        super().__init__(message)
        self.count = count
        self.limit = limit


def _ints(values: Iterable[Any], what: str) -> tuple[int, ...]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ShapeError(f'{what} has entry "{v!r}"; expected integers')
        if not INT64_MIN <= v <= INT64_MAX:
            raise ShapeError(
                f'{what} has entry "{show_int(v)}"; expected integers from {INT64_MIN} to '
                f"{INT64_MAX}"
            )
        out.append(int(v))
    return tuple(out)


def _fmt(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


@dataclass(frozen=True, slots=True, init=False)
class ZPoint:
    """A point of an integer space.

    >>> ZPoint([1, 2]).coords, len(ZPoint([1, 2]))
    ((1, 2), 2)
    """

    coords: tuple[int, ...]

    def __init__(self, coords: Iterable[int]) -> None:
        object.__setattr__(self, "coords", _ints(coords, "point"))

    def __len__(self) -> int:
        return len(self.coords)

    def __iter__(self) -> Iterator[int]:
        return iter(self.coords)

    def __getitem__(self, i: int) -> int:
        return self.coords[i]

    def __str__(self) -> str:
        return _fmt(self.coords)


@dataclass(frozen=True, slots=True, init=False)
class ZRange:
    """A half-open box ``[start, end)``; ``start <= end`` in every dim.

    >>> ZRange([0, 0], [2, 3]).contains(ZRange([1, 0], [2, 2]))
    True
    >>> ZRange([1], [0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    geon.core.errors.ShapeError: range has start "[1]" after end "[0]" in dim 0; expected ...
    """

    start: tuple[int, ...]
    end: tuple[int, ...]

    def __init__(self, start: Iterable[int], end: Iterable[int]) -> None:
        s = _ints(start, "range start")
        e = _ints(end, "range end")
        if len(s) != len(e):
            raise ShapeError(
                f'range has start "{_fmt(s)}" of rank {len(s)} and end "{_fmt(e)}" of rank '
                f"{len(e)}; expected equal ranks"
            )
        for d, (a, b) in enumerate(zip(s, e, strict=True)):
            if a > b:
                raise ShapeError(
                    f'range has start "{_fmt(s)}" after end "{_fmt(e)}" in dim {d}; '
                    "expected start <= end"
                )
        object.__setattr__(self, "start", s)
        object.__setattr__(self, "end", e)

    @classmethod
    def _raw(cls, start: tuple[int, ...], end: tuple[int, ...]) -> ZRange:
        """Build without checks (callers guarantee ints, equal ranks and start <= end)."""
        r = _new(cls)
        _set_start(r, start)
        _set_end(r, end)
        return r

    @classmethod
    def from_shape(cls, shape: Iterable[int], start: Iterable[int] | None = None) -> ZRange:
        """``[0, shape)`` or ``[start, start + shape)``.

        >>> str(ZRange.from_shape([2, 3]))
        '[0:2, 0:3]'
        """
        sh = _ints(shape, "shape")
        st = _ints(start, "start") if start is not None else (0,) * len(sh)
        return cls(st, tuple(a + n for a, n in zip(st, sh, strict=True)))

    @classmethod
    def from_json(cls, data: Any) -> ZRange:
        """Load ``{"start": [...], "end": [...]}``; raises :class:`ShapeError` when malformed."""
        if not isinstance(data, dict) or "start" not in data or "end" not in data:
            raise ShapeError(
                f'range "{data!r}" is malformed; expected {{"start": [...], "end": [...]}}'
            )
        start, end = data["start"], data["end"]
        if not isinstance(start, list) or not isinstance(end, list):
            raise ShapeError(f'range "{data!r}" is malformed; expected lists of integers')
        return cls(start, end)

    def to_json(self) -> dict[str, list[int]]:
        return {"start": list(self.start), "end": list(self.end)}

    @property
    def rank(self) -> int:
        return len(self.start)

    @property
    def ndim(self) -> int:
        return len(self.start)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(b - a for a, b in zip(self.start, self.end, strict=True))

    @property
    def size(self) -> int:
        n = 1
        for a, b in zip(self.start, self.end, strict=True):
            n *= b - a
        return n

    @property
    def is_empty(self) -> bool:
        return any(map(eq, self.start, self.end))  # C-level loops: this is a hot path

    def __str__(self) -> str:
        return "[" + ", ".join(f"{a}:{b}" for a, b in zip(self.start, self.end, strict=True)) + "]"

    def _same_rank(self, other_rank: int, what: str) -> None:
        if other_rank != self.rank:
            raise ShapeError(
                f'{what} of rank {other_rank} cannot be compared with range "{self}" of rank '
                f"{self.rank}; expected equal ranks"
            )

    def contains(self, other: ZRange | ZPoint | Sequence[int]) -> bool:
        """Whether ``other`` (a range or a point) lies inside; an empty range lies in any range
        of its rank."""
        if isinstance(other, ZRange):
            if len(other.start) != len(self.start):
                self._same_rank(other.rank, "range")
            if all(map(le, self.start, other.start)) and all(map(ge, self.end, other.end)):
                return True
            return other.is_empty  # an empty range lies in any range of its rank
        coords = tuple(other)
        self._same_rank(len(coords), "point")
        return all(a <= c < b for a, b, c in zip(self.start, self.end, coords, strict=True))

    def __contains__(self, other: object) -> bool:
        if isinstance(other, (ZRange, ZPoint, tuple, list)):
            return self.contains(other)
        return False

    def intersection(self, other: ZRange) -> ZRange | None:
        """The common box, or None when they share no cell."""
        self._same_rank(other.rank, "range")
        start = tuple(max(a, c) for a, c in zip(self.start, other.start, strict=True))
        end = tuple(min(b, d) for b, d in zip(self.end, other.end, strict=True))
        if any(a >= b for a, b in zip(start, end, strict=True)):
            return None
        return ZRange._raw(start, end)

    def difference(self, other: ZRange) -> list[ZRange]:
        """This range minus ``other``, as disjoint non-empty boxes (at most two per dim).

        >>> [str(r) for r in ZRange([0, 0], [4, 4]).difference(ZRange([1, 0], [3, 4]))]
        ['[0:1, 0:4]', '[3:4, 0:4]']
        """
        inter = self.intersection(other)
        if inter is None:
            return [] if self.is_empty else [self]
        out = []
        start, end = list(self.start), list(self.end)
        for d in range(self.rank):
            if start[d] < inter.start[d]:
                cut = end.copy()
                cut[d] = inter.start[d]
                out.append(ZRange._raw(tuple(start), tuple(cut)))
                start[d] = inter.start[d]
            if inter.end[d] < end[d]:
                cut = start.copy()
                cut[d] = inter.end[d]
                out.append(ZRange._raw(tuple(cut), tuple(end)))
                end[d] = inter.end[d]
        return out

    def clip(self, bounds: ZRange) -> ZRange:
        """This range cut to ``bounds``: the common box, or an empty range inside ``bounds``
        (at the nearest edge) when they share no cell. This is what a padded read selects of
        its tensor: cells outside the tensor are zeros, not reads.

        >>> str(ZRange([-1, 0], [3, 6]).clip(ZRange([0, 0], [2, 6])))
        '[0:2, 0:6]'
        >>> str(ZRange([-3], [-1]).clip(ZRange([0], [2])))
        '[0:0]'
        """
        self._same_rank(bounds.rank, "range")
        start = []
        end = []
        for a, b, lo, hi in zip(self.start, self.end, bounds.start, bounds.end, strict=True):
            s = min(max(a, lo), hi)
            start.append(s)
            end.append(max(s, min(b, hi)))
        return ZRange._raw(tuple(start), tuple(end))

    def translate(self, delta: Sequence[int]) -> ZRange:
        d = _ints(delta, "translation")
        self._same_rank(len(d), "translation")
        return ZRange._raw(
            tuple(a + x for a, x in zip(self.start, d, strict=True)),
            tuple(b + x for b, x in zip(self.end, d, strict=True)),
        )

    def cells(self) -> Iterator[tuple[int, ...]]:
        """Every point, in row-major order (for small ranges and tests)."""
        return itertools.product(*(range(a, b) for a, b in zip(self.start, self.end, strict=True)))

    # -- splitting ---------------------------------------------------------------------------

    def _check_dim(self, dim: int) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < self.rank:
            raise SplitError(
                f'dim "{dim}" is out of range for range "{self}" of rank {self.rank}; '
                f"expected 0 <= dim < {self.rank}"
            )

    def split(
        self,
        dim: int,
        *,
        chunk: int | None = None,
        sizes: Sequence[int] | None = None,
        parts: int | None = None,
        limit: int = MAX_PIECES,
    ) -> tuple[ZRange, ...]:
        """Cut along ``dim`` into contiguous pieces, in order. Exactly one of:

        - ``chunk``: pieces of ``chunk`` with a smaller last one (``[0:10]`` by 4 ->
          ``[0:4] [4:8] [8:10]``);
        - ``sizes``: explicit sizes (>= 0) that must sum to the length;
        - ``parts``: ``parts`` pieces whose sizes differ by at most one, larger first
          (as ``numpy.array_split``; more parts than cells gives empty pieces at the end).

        >>> [str(p) for p in ZRange([0], [10]).split(0, parts=3)]
        ['[0:4]', '[4:7]', '[7:10]']

        At most ``limit`` pieces (:data:`~geon.core.limits.MAX_PIECES` unless given): more is
        :class:`TooManyPieces` (a :class:`~geon.core.errors.LimitError`), raised before any
        piece is built.
        """
        count = self.split_count(dim, chunk=chunk, sizes=sizes, parts=parts)
        _check_pieces(count, limit, f"splitting {self} along dim {dim}")
        length = self.end[dim] - self.start[dim]
        if chunk is not None:
            if length == 0:
                return (self,)
            widths = [min(chunk, length - a) for a in range(0, length, chunk)]
        elif parts is not None:
            base, extra = divmod(length, parts)
            widths = [base + 1] * extra + [base] * (parts - extra)
        else:
            assert sizes is not None
            widths = list(sizes)
        out = []
        pos = self.start[dim]
        for w in widths:
            start = (*self.start[:dim], pos, *self.start[dim + 1 :])
            end = (*self.end[:dim], pos + w, *self.end[dim + 1 :])
            out.append(ZRange._raw(start, end))
            pos += w
        return tuple(out)

    def split_count(
        self,
        dim: int,
        *,
        chunk: int | None = None,
        sizes: Sequence[int] | None = None,
        parts: int | None = None,
    ) -> int:
        """How many pieces :meth:`split` gives, without building them; raises the same
        :class:`~geon.core.errors.SplitError` for a bad request.

        >>> ZRange([0], [10**15]).split_count(0, chunk=1)
        1000000000000000
        """
        given = [
            n for n, v in (("chunk", chunk), ("sizes", sizes), ("parts", parts)) if v is not None
        ]
        if len(given) != 1:
            raise SplitError(
                "split needs exactly one of chunk, sizes or parts; got "
                + (", ".join(given) if given else "none")
            )
        self._check_dim(dim)
        length = self.end[dim] - self.start[dim]
        if chunk is not None:
            if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
                raise SplitError(
                    f'chunk "{chunk}" for dim {dim} of length {length} is invalid; '
                    "expected an integer >= 1"
                )
            return max(1, -(-length // chunk))
        if parts is not None:
            if isinstance(parts, bool) or not isinstance(parts, int) or parts < 1:
                raise SplitError(
                    f'parts "{parts}" for dim {dim} of length {length} is invalid; '
                    "expected an integer >= 1"
                )
            return parts
        assert sizes is not None
        widths = list(sizes)
        if any(isinstance(w, bool) or not isinstance(w, int) or w < 0 for w in widths):
            raise SplitError(
                f'sizes "{_fmt(widths)}" for dim {dim} are invalid; expected integers >= 0'
            )
        if sum(widths) != length:
            raise SplitError(
                f'sizes "{_fmt(widths)}" for dim {dim} sum to {sum(widths)}; expected them '
                f"to sum to the length {length} of {self}"
            )
        return len(widths)

    def split_grid(
        self,
        *,
        parts: Mapping[int, int] | None = None,
        chunks: Mapping[int, int] | None = None,
        sizes: Mapping[int, Sequence[int]] | None = None,
        limit: int = MAX_PIECES,
    ) -> tuple[ZRange, ...]:
        """Split several dims at once; the pieces come in row-major order of the split dims.

        >>> [str(p) for p in ZRange([0, 0], [4, 4]).split_grid(parts={0: 2, 1: 2})]
        ['[0:2, 0:2]', '[0:2, 2:4]', '[2:4, 0:2]', '[2:4, 2:4]']

        At most ``limit`` pieces in all, as for :meth:`split`.
        """
        return split_grid(self, parts=parts, chunks=chunks, sizes=sizes, limit=limit)


_new = object.__new__
_set_start = ZRange.__dict__["start"].__set__  # the slot descriptors: faster than setattr
_set_end = ZRange.__dict__["end"].__set__


def _check_pieces(count: int, limit: int, what: str) -> None:
    if count > limit:
        raise TooManyPieces(
            f"{what} gives {show_int(count)} pieces; expected at most {limit}", count, limit
        )


def split_grid(
    r: ZRange,
    *,
    parts: Mapping[int, int] | None = None,
    chunks: Mapping[int, int] | None = None,
    sizes: Mapping[int, Sequence[int]] | None = None,
    limit: int = MAX_PIECES,
) -> tuple[ZRange, ...]:
    """See :meth:`ZRange.split_grid`."""
    requests: dict[int, dict[str, Any]] = {}
    total = 1
    for kind, spec in (("parts", parts), ("chunk", chunks), ("sizes", sizes)):
        for dim, value in (spec or {}).items():
            if dim in requests:
                raise SplitError(f'dim "{dim}" is split twice; expected each dim at most once')
            requests[dim] = {kind: value}
            total *= r.split_count(dim, **requests[dim])
    _check_pieces(total, limit, f"splitting {r} along dims {_fmt(sorted(requests))}")
    if not requests:
        return (r,)
    per_dim = {dim: r.split(dim, **request) for dim, request in requests.items()}
    dims = sorted(per_dim)
    out = []
    for combo in itertools.product(*(per_dim[d] for d in dims)):
        start = list(r.start)
        end = list(r.end)
        for d, piece in zip(dims, combo, strict=True):
            start[d] = piece.start[d]
            end[d] = piece.end[d]
        out.append(ZRange._raw(tuple(start), tuple(end)))
    return tuple(out)


def union_size(ranges: Iterable[ZRange]) -> int:
    """How many cells the union of ``ranges`` (of one rank) covers, each cell counted once.

    >>> union_size([ZRange([0], [6]), ZRange([4], [8]), ZRange([10], [11])])
    9
    """
    disjoint: list[ZRange] = []
    for r in ranges:
        pieces = [] if r.is_empty else [r]
        for d in disjoint:
            pieces = [p for piece in pieces for p in piece.difference(d)]
            if not pieces:
                break
        disjoint.extend(pieces)
    return sum(r.size for r in disjoint)


def bounding_range(ranges: Iterable[ZRange]) -> ZRange | None:
    """The smallest range holding every non-empty range given (None when there is none).

    >>> str(bounding_range([ZRange([0], [2]), ZRange([5], [7])]))
    '[0:7]'
    """
    start: list[int] | None = None
    end: list[int] = []
    for r in ranges:
        if r.is_empty:
            continue
        if start is None:
            start, end = list(r.start), list(r.end)
            continue
        if r.rank != len(start):
            raise ShapeError(
                f'range "{r}" has rank {r.rank}; expected rank {len(start)} like the others'
            )
        for d in range(len(start)):
            start[d] = min(start[d], r.start[d])
            end[d] = max(end[d], r.end[d])
    if start is None:
        return None
    return ZRange._raw(tuple(start), tuple(end))


@dataclass(frozen=True, slots=True, init=False)
class ZAffineMap:
    """``x -> P·x + o``; rows of ``P`` are output dims, columns are input dims.

    >>> ZAffineMap([[1, 0], [0, 2]], [1, 1])([3, 4])
    (4, 9)
    """

    projection: tuple[tuple[int, ...], ...]
    offset: tuple[int, ...]
    in_dim: int | None

    def __init__(
        self,
        projection: Iterable[Iterable[int]],
        offset: Iterable[int] | None = None,
        in_dim: int | None = None,
    ) -> None:
        rows = tuple(_ints(row, "projection row") for row in projection)
        widths = {len(row) for row in rows}
        if len(widths) > 1:
            raise ShapeError(
                f'projection "{[list(r) for r in rows]}" has rows of lengths {sorted(widths)}; '
                "expected every row to have the same length"
            )
        cols = widths.pop() if widths else in_dim
        if in_dim is not None and cols != in_dim:
            raise ShapeError(f"projection has {cols} columns; expected {in_dim} (the index rank)")
        off = _ints(offset, "offset") if offset is not None else (0,) * len(rows)
        if len(off) != len(rows):
            raise ShapeError(
                f'offset "{_fmt(off)}" has {len(off)} entries; expected {len(rows)} (one per '
                "projection row)"
            )
        object.__setattr__(self, "projection", rows)
        object.__setattr__(self, "offset", off)
        object.__setattr__(self, "in_dim", cols)

    @property
    def out_dim(self) -> int:
        return len(self.projection)

    @classmethod
    def identity(cls, n: int) -> ZAffineMap:
        return cls([[int(r == c) for c in range(n)] for r in range(n)], [0] * n, n)

    def _check_point(self, point: Sequence[int]) -> None:
        if self.in_dim is not None and len(point) != self.in_dim:
            raise ShapeError(
                f'point "{_fmt(point)}" has rank {len(point)}; expected {self.in_dim} '
                "(the number of projection columns)"
            )

    def __call__(self, point: Sequence[int] | ZPoint) -> tuple[int, ...]:
        p = tuple(point)
        self._check_point(p)
        return tuple(
            o + sum(c * x for c, x in zip(row, p, strict=True))
            for row, o in zip(self.projection, self.offset, strict=True)
        )

    def to_json(self) -> dict[str, Any]:
        return {"projection": [list(r) for r in self.projection], "offset": list(self.offset)}


@dataclass(frozen=True, slots=True, init=False)
class IPF:
    """An index projection function ``(P, o, s)``: index point ``i`` -> ``[P·i+o, P·i+o+s)``.

    >>> f = IPF([[1, -1]], offset=[0], shape=[1])
    >>> str(f(ZRange([0, 0], [2, 2])))
    '[-1:2]'
    """

    map: ZAffineMap
    shape: tuple[int, ...]
    _rows: tuple[tuple[int, int, tuple[tuple[int, int], ...]], ...] = field(
        compare=False, repr=False
    )
    _shift: tuple[int, ...] | None = field(compare=False, repr=False)

    @overload
    def __init__(
        self,
        projection: Iterable[Iterable[int]],
        offset: Iterable[int] | None = None,
        shape: Iterable[int] | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self, projection: ZAffineMap, offset: None = None, shape: Iterable[int] | None = None
    ) -> None: ...

    def __init__(
        self,
        projection: Iterable[Iterable[int]] | ZAffineMap,
        offset: Iterable[int] | None = None,
        shape: Iterable[int] | None = None,
    ) -> None:
        amap = projection if isinstance(projection, ZAffineMap) else ZAffineMap(projection, offset)
        sh = _ints(shape, "shape") if shape is not None else (1,) * amap.out_dim
        if len(sh) != amap.out_dim:
            raise ShapeError(
                f'shape "{_fmt(sh)}" has {len(sh)} entries; expected {amap.out_dim} (one per '
                "projection row)"
            )
        if any(s < 1 for s in sh):
            raise ShapeError(f'shape "{_fmt(sh)}" has an entry < 1; expected integers >= 1')
        object.__setattr__(self, "map", amap)
        object.__setattr__(self, "shape", sh)
        # per row: offset, shape and the (column, coefficient) pairs that are not zero
        rows = tuple(
            (o, s, tuple((c, k) for c, k in enumerate(row) if k))
            for row, o, s in zip(amap.projection, amap.offset, sh, strict=True)
        )
        object.__setattr__(self, "_rows", rows)
        # P is the identity and every footprint is one cell: the image of [a, b) is [a+o, b+o)
        square = len(amap.projection) == (amap.in_dim or 0)
        plain = square and all(
            terms == ((r, 1),) and s == 1 for r, (_, s, terms) in enumerate(rows)
        )
        object.__setattr__(self, "_shift", amap.offset if plain else None)

    @property
    def projection(self) -> tuple[tuple[int, ...], ...]:
        return self.map.projection

    @property
    def is_identity(self) -> bool:
        """Whether every range is its own image (P is the identity, o = 0, s = 1).

        >>> IPF([[1, 0], [0, 1]]).is_identity, IPF([[1, 0], [0, 1]], offset=[0, 2]).is_identity
        (True, False)
        """
        return self._shift is not None and not any(self._shift)

    @property
    def offset(self) -> tuple[int, ...]:
        return self.map.offset

    @classmethod
    def identity(cls, n: int) -> IPF:
        return cls(ZAffineMap.identity(n), shape=(1,) * n)

    @classmethod
    def from_json(cls, data: Any) -> IPF:
        """Load ``{"affineMap": {"projection", "offset"}, "shape"}``."""
        if not isinstance(data, dict) or not isinstance(data.get("affineMap"), dict):
            raise ShapeError(
                f'IPF "{data!r}" is malformed; expected {{"affineMap": {{"projection", '
                '"offset"}, "shape"}'
            )
        amap = data["affineMap"]
        return cls(amap.get("projection", []), amap.get("offset"), data.get("shape"))

    def to_json(self) -> dict[str, Any]:
        return {"affineMap": self.map.to_json(), "shape": list(self.shape)}

    @overload
    def __call__(self, arg: ZRange) -> ZRange: ...

    @overload
    def __call__(self, arg: Sequence[int] | ZPoint) -> ZRange: ...

    def __call__(self, arg: ZRange | Sequence[int] | ZPoint) -> ZRange:
        if isinstance(arg, ZRange):
            return self.apply_range(arg)
        base = self.map(arg)
        return ZRange._raw(base, tuple(b + s for b, s in zip(base, self.shape, strict=True)))

    def hull(
        self, start: tuple[int, ...], end: tuple[int, ...]
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(start, end)`` of the image of the non-empty range ``[start, end)`` of the right
        rank (unchecked: the fast path of :meth:`apply_range` for callers that know both)."""
        shift = self._shift
        if shift is not None:
            return tuple(map(add, start, shift)), tuple(map(add, end, shift))
        lo_all = []
        hi_all = []
        for o, s, terms in self._rows:
            lo = hi = o
            for c, k in terms:
                if k > 0:
                    lo += k * start[c]
                    hi += k * (end[c] - 1)
                else:
                    lo += k * (end[c] - 1)
                    hi += k * start[c]
            lo_all.append(lo)
            hi_all.append(hi + s)
        return tuple(lo_all), tuple(hi_all)

    def apply_range(self, r: ZRange) -> ZRange:
        """The bounding box of the images of every point of ``r`` (all corners)."""
        amap = self.map
        a, b = r.start, r.end
        if amap.in_dim is not None and len(a) != amap.in_dim:
            amap._check_point(a)
        if r.is_empty:
            base = amap(a)
            return ZRange._raw(base, base)
        shift = self._shift
        if shift is not None:  # the common elementwise case, at C speed
            return ZRange._raw(tuple(map(add, a, shift)), tuple(map(add, b, shift)))
        start = []
        end = []
        for o, s, terms in self._rows:
            lo = hi = o
            for c, k in terms:
                if k > 0:
                    lo += k * a[c]
                    hi += k * (b[c] - 1)
                else:
                    lo += k * (b[c] - 1)
                    hi += k * a[c]
            start.append(lo)
            end.append(hi + s)
        return ZRange._raw(tuple(start), tuple(end))
