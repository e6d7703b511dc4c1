"""Ranges: points, half-open boxes, their splits and unions, and the one parser of a document's
``{"start", "end"}`` (DESIGN.md §3 and §4; re-exported by :mod:`geon.core.zspace`).

>>> r = ZRange([0, 0], [10, 5])
>>> r.shape, r.size
((10, 5), 50)
>>> [str(p) for p in r.split(0, chunk=4)]
['[0:4, 0:5]', '[4:8, 0:5]', '[8:10, 0:5]']
>>> str(parse_range({"start": [200, 50], "end": [210, 55]}))
'[200:210, 50:55]'

Ranges are half-open boxes ``[start, end)`` in absolute coordinates, as in LoomGraph JSON.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import eq, ge, le
from typing import Any

from geon.core.errors import LimitError, ShapeError, SplitError, quote
from geon.core.limits import INT64_MAX, INT64_MIN, MAX_PIECES, show_int

__all__ = [
    "MAX_RANK",
    "TooManyPieces",
    "ZPoint",
    "ZRange",
    "bounding_range",
    "parse_range",
    "range_problem",
    "split_grid",
    "union_size",
]

MAX_RANK = 64
"""The highest rank of a range in a document (the schema's ``intVector`` has ``maxItems`` 64)."""


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
        problem = _order_problem(s, e)
        if problem is not None:
            raise ShapeError(problem)
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
    nonempty = [r for r in ranges if not r.is_empty]
    if not nonempty:
        return None
    rank = len(nonempty[0].start)
    for r in nonempty:
        if len(r.start) != rank:
            raise ShapeError(f'range "{r}" has rank {r.rank}; expected rank {rank} like the others')
    # per dim, the least start and the greatest end (zip(*...) turns ranges into dims)
    start = tuple(map(min, zip(*[r.start for r in nonempty], strict=True)))
    end = tuple(map(max, zip(*[r.end for r in nonempty], strict=True)))
    return ZRange._raw(start, end)


# --------------------------------------------------------------------------------------------
# Ranges in documents: the one parser (everyone who reads a range from JSON calls it)

_INTS = frozenset({int})


def parse_range(data: Any, *, exact: bool = False) -> ZRange | None:
    """``{"start": [...], "end": [...]}`` as a :class:`ZRange`, or None when it is not one (it
    never raises): integer lists of equal rank (at most ``MAX_RANK``) with start <= end. Whole
    floats count as integers, as in JSON Schema; booleans do not.

    ``exact`` accepts only the plain form that the range schema accepts as it stands (exactly
    these two keys, Python ints within int64), so a range it returns needs no schema validation
    (the checker's fast path relies on it).

    >>> str(parse_range({"start": [0, 2.0], "end": [4, 3]}))
    '[0:4, 2:3]'
    >>> parse_range({"start": [2], "end": [1]}) is None
    True
    >>> parse_range({"start": [0.0], "end": [1]}, exact=True) is None
    True
    """
    if type(data) is not dict or (exact and len(data) != 2):
        return None
    s, e = data.get("start"), data.get("end")
    if type(s) is not list or type(e) is not list or len(s) != len(e) or len(s) > MAX_RANK:
        return None
    if not _INTS.issuperset(map(type, s + e)):  # C-level loops: this runs for every range
        if exact:
            return None
        s, e = _int_vector(s), _int_vector(e)
        if s is None or e is None:
            return None
    elif exact and s and (min(s) < INT64_MIN or max(e) > INT64_MAX):  # start <= end holds below
        return None
    if not all(map(le, s, e)):
        return None
    return ZRange._raw(tuple(s), tuple(e))


def range_problem(data: Any) -> str | None:
    """Why ``{"start", "end"}`` with integer lists is still not a range (ranks differ, or a start
    lies after its end), in the words :class:`ZRange` refuses it with; None when it is one or
    when its lists are not integer lists.

    >>> print(range_problem({"start": [0, 3], "end": [2, 1]}))
    range has start "[0, 3]" after end "[2, 1]" in dim 1; expected start <= end
    """
    start = _int_vector(data.get("start")) if isinstance(data, dict) else None
    end = _int_vector(data.get("end")) if isinstance(data, dict) else None
    if start is None or end is None:
        return None
    return _order_problem(start, end)


def _int_vector(value: Any) -> tuple[int, ...] | None:
    """A JSON list of integers (whole floats included) as ints, else None."""
    if type(value) is not list:
        return None
    out = []
    for v in value:
        if type(v) is int:
            out.append(v)
        elif isinstance(v, float) and v.is_integer():
            out.append(int(v))
        else:
            return None
    return tuple(out)


def _order_problem(start: Sequence[int], end: Sequence[int]) -> str | None:
    """Why ``start`` and ``end`` do not make a range, or None."""
    if len(start) != len(end):
        return (
            f"range has start {quote(list(start))} of rank {len(start)} and end "
            f"{quote(list(end))} of rank {len(end)}; expected equal ranks"
        )
    for d, (a, b) in enumerate(zip(start, end, strict=True)):
        if a > b:
            return (
                f"range has start {quote(list(start))} after end {quote(list(end))} in dim {d}; "
                "expected start <= end"
            )
    return None
