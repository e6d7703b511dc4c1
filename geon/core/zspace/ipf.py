"""Affine maps and index projection functions (IPFs): the one projection of an index range
(DESIGN.md §4's corner rule, :meth:`IPF.apply_range`) and the one clip rule of a selection
(:func:`selection_of`); re-exported by :mod:`geon.core.zspace`.

>>> f = IPF([[1, 0], [0, 1]], offset=[200, 50], shape=[1, 1])
>>> str(f(ZRange([5, 0], [10, 5])))
'[205:210, 50:55]'

An IPF ``f = (P, o, s)`` maps an index point ``i`` to the box ``[P·i + o, P·i + o + s)`` and an
index range to the bounding box of the images of all its points, computed over every corner (the
two-corner shortcut is wrong for rows that mix signs). An empty index range maps to the empty
range at ``P·a + o``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import add
from typing import Any, overload

from geon.core.errors import ShapeError
from geon.core.zspace.ranges import ZPoint, ZRange, _fmt, _ints

__all__ = ["IPF", "IPFKey", "ZAffineMap", "ipf_of", "selection_of"]


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
        rank: the corner rule itself, unchecked (:meth:`apply_range` checks, then calls it)."""
        shift = self._shift
        if shift is not None:  # the common elementwise case, at C speed
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
        """The bounding box of the images of every point of ``r`` (all corners).

        >>> str(IPF([[1, -1]], offset=[0], shape=[1]).apply_range(ZRange([0, 0], [2, 2])))
        '[-1:2]'
        """
        amap = self.map
        a, b = r.start, r.end
        if amap.in_dim is not None and len(a) != amap.in_dim:
            amap._check_point(a)
        if r.is_empty:
            base = amap(a)
            return ZRange._raw(base, base)
        start, end = self.hull(a, b)
        return ZRange._raw(start, end)


IPFKey = tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[int, ...]]
"""An IPF as ``(projection rows, offset, shape)`` tuples."""


@functools.lru_cache(maxsize=4096)
def ipf_of(key: IPFKey) -> IPF:
    """The IPF ``(projection, offset, shape)``, one object per distinct key: most operations of
    a document repeat a few IPFs, so each is built and checked once in the process (the
    checker's ``clear_caches`` forgets them with ``ipf_of.cache_clear()``).

    >>> key = (((1, 0), (0, 1)), (0, 0), (1, 1))
    >>> ipf_of(key) is ipf_of(key), ipf_of(key).is_identity
    (True, True)
    """
    return IPF(key[0], key[1], key[2])


def selection_of(ipf: IPF, index: ZRange, tensor: ZRange | None, *, read: bool) -> ZRange:
    """The selection an application of index range ``index`` makes through ``ipf``: the
    projection of ``index``; for a read (an input) clipped to the tensor's range ``tensor``
    when one of the same rank is given, because a padded read (pad, a padded conv2d) reaches
    past the tensor and the cells outside are zeros, not reads. A write selects the plain
    projection.

    >>> pad = IPF([[1]], offset=[-1], shape=[3])
    >>> str(selection_of(pad, ZRange([0], [4]), ZRange([0], [4]), read=True))
    '[0:4]'
    >>> str(selection_of(pad, ZRange([0], [4]), ZRange([0], [4]), read=False))
    '[-1:5]'
    """
    projected = ipf.apply_range(index)
    if not read or tensor is None or len(tensor.start) != len(projected.start):
        return projected
    return projected.clip(tensor)
