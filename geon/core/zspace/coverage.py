"""Coverage: which cells of a target range a set of shards leaves uncovered or covers twice,
cell-exactly by interval arithmetic (DESIGN.md §5, ``ApplicationOutputRangeCoverageIsExact``);
re-exported by :mod:`geon.core.zspace`.

>>> found = coverage(ZRange([0, 0], [4, 4]), [ZRange([0, 0], [2, 4]), ZRange([2, 0], [4, 3])])
>>> [str(g) for g in found.gaps], found.gap_cells, found.overlaps
(['[2:4, 3:4]'], 2, [])

Overlaps are found by a sweep over boxes, gaps by box subtraction; a split (slabs along one dim)
is confirmed by one sorted sweep. The work is bounded (``COVERAGE_WORK_PER_SHARD``,
``COVERAGE_WORK_BASE``, ``MAX_OVERLAPS_COUNTED``) so that a hostile document stays cheap.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import NamedTuple

from geon.core.zspace.ranges import ZRange

__all__ = [
    "COVERAGE_WORK_BASE",
    "COVERAGE_WORK_PER_SHARD",
    "MAX_OVERLAPS_COUNTED",
    "Coverage",
    "coverage",
]


def _slabs_partition(target: ZRange, shards: Sequence[ZRange]) -> bool:
    """Whether ``shards`` cut ``target`` into non-empty slabs along one dim that follow each
    other without gap or overlap — the shape a split gives — by one sorted sweep. False means
    "not this shape", not "not a partition" (``coverage`` then takes the general way)."""
    rank = target.rank
    if rank == 0 or not shards or any(len(s.start) != rank for s in shards):
        return len(shards) == 1 and rank == 0 and shards[0].rank == 0
    ts, te = target.start, target.end
    # per dim, the shards' starts and ends (zip(*...) turns shards into dims)
    starts = list(zip(*[s.start for s in shards], strict=True))
    ends = list(zip(*[s.end for s in shards], strict=True))
    n = len(shards)
    dims = [d for d in range(rank) if starts[d].count(ts[d]) != n or ends[d].count(te[d]) != n]
    if len(dims) > 1:
        return False
    d = dims[0] if dims else 0
    at = ts[d]
    for a, b in sorted(zip(starts[d], ends[d], strict=True)):
        if a != at or b <= a:
            return False
        at = b
    return at == te[d]


def _meets(a: ZRange, b: ZRange) -> bool:
    """Whether two boxes of one rank share a cell (loops in C: the sweeps ask it often)."""
    return all(map(operator.lt, a.start, b.end)) and all(map(operator.lt, b.start, a.end))


class Coverage(NamedTuple):
    """What :func:`coverage` found: the gaps, the overlaps it lists, and how far it got."""

    gaps: list[ZRange]
    """Disjoint boxes of the target that no shard covers, sorted (empty when ``gap_cells`` is
    known but the boxes were too costly to find)."""
    gap_cells: int
    """Cells of the target that no shard covers (a lower bound unless ``gaps_exact``)."""
    gaps_exact: bool
    """Whether ``gap_cells`` is exact."""
    overlaps: list[tuple[int, int, ZRange]]
    """The first overlaps found (pairs of shard positions and the box they share inside the
    target), at most ``max_listed``, sorted by the pair."""
    unlisted: int
    """Overlaps found beyond those listed."""
    complete: bool
    """False when the sweep stopped early (after ``max_counted`` overlaps, or out of work):
    there may be more overlaps than were found."""
    work: int
    """Box operations done (pairs compared, box subtractions): at most the budget."""


MAX_OVERLAPS_COUNTED = 1000
"""The coverage sweep stops after finding this many overlapping pairs of one output selection
(n identical shards overlap in n(n-1)/2 pairs: counting them all is quadratic work); the
summary then says "at least"."""

COVERAGE_WORK_PER_SHARD = 16
"""Box operations (pairs compared, box subtractions) allowed per shard when judging one output
selection, plus ``COVERAGE_WORK_BASE``: a k x k grid of shards takes about k per shard, while
shards laid out against the sweep (a staircase, scattered cells) would take quadratic work and,
by box subtraction, quadratically many gap boxes (400 such shards took 70 s). Beyond it, gaps
and overlaps are judged by counting cells (see :func:`coverage`)."""

COVERAGE_WORK_BASE = 65536
"""Box operations always allowed per output selection (small documents are judged exactly)."""


def coverage(
    target: ZRange,
    shards: Sequence[ZRange],
    max_listed: int | None = None,
    max_counted: int = MAX_OVERLAPS_COUNTED,
    budget: int | None = None,
) -> Coverage:
    """The gaps (disjoint boxes of ``target`` no shard covers) and the overlaps (pairs of shard
    positions and the box they share inside ``target``) — exact, by interval arithmetic,
    within ``budget`` box operations (by default ``COVERAGE_WORK_PER_SHARD`` per shard plus
    ``COVERAGE_WORK_BASE``). At most ``max_listed`` overlaps are listed (all when None) and the
    sweep stops once it has found more than ``max_counted``.

    Out of budget, cells are counted instead: shards that do not overlap leave exactly
    ``target.size - sum(sizes)`` cells unwritten; with overlaps, that is a lower bound (and no
    gap is reported when it is not positive: the overlaps are reported anyway).

    >>> found = coverage(ZRange([0], [10]), [ZRange([0], [6]), ZRange([4], [8])])
    >>> [str(g) for g in found.gaps], [(i, j, str(r)) for i, j, r in found.overlaps]
    (['[8:10]'], [(0, 1, '[4:6]')])
    >>> found = coverage(ZRange([0], [10]), [ZRange([0], [10])] * 100, max_listed=2)
    >>> len(found.overlaps), found.unlisted, found.complete, found.work
    (2, 999, False, 2037)
    """
    if _slabs_partition(target, shards):
        return Coverage([], 0, True, [], 0, True, 0)
    if budget is None:
        budget = COVERAGE_WORK_PER_SHARD * len(shards) + COVERAGE_WORK_BASE
    clipped: list[tuple[int, ZRange]] = []
    for i, s in enumerate(shards):
        c = target.intersection(s) if s.rank == target.rank else None
        if c is not None:
            clipped.append((i, c))
    overlaps: list[tuple[int, int, ZRange]] = []
    found = work = 0
    complete = True
    listing = max_listed if max_listed is not None else len(shards) ** 2
    if clipped:
        rank = target.rank
        # sweep along the dim where shards differ most
        dim = max(range(rank), key=lambda d: len({c.start[d] for _, c in clipped})) if rank else 0
        order = sorted(clipped, key=lambda ic: (ic[1].start[dim] if rank else 0, ic[0]))
        active: list[tuple[int, ZRange]] = []
        for i, c in order:
            work += len(active)
            if work > budget:
                complete = False
                break
            if rank:
                active = [(j, a) for j, a in active if a.end[dim] > c.start[dim]]
            for j, a in active:
                work += 1
                if _meets(a, c):
                    inter = a.intersection(c)
                    assert inter is not None
                    found += 1
                    if len(overlaps) < listing:
                        lo, hi = (j, i) if j < i else (i, j)
                        overlaps.append((lo, hi, inter))
                    if found > max_counted:
                        complete = False
                        break
            if not complete:
                break
            active.append((i, c))
        overlaps.sort(key=lambda t: (t[0], t[1]))
    covered = sum(c.size for _, c in clipped)
    unlisted = found - len(overlaps)
    disjoint = complete and not found
    if disjoint and covered == target.size:
        return Coverage([], 0, True, overlaps, unlisted, complete, work)
    # the gaps by box subtraction, within what is left of the budget
    gaps = [target] if not target.is_empty else []
    for _, c in clipped:
        work += len(gaps)
        if work > budget:
            # out of work: count cells instead (exact when the shards are disjoint)
            cells = target.size - covered
            return Coverage([], max(cells, 0), disjoint, overlaps, unlisted, complete, work)
        nxt: list[ZRange] = []
        for g in gaps:
            if _meets(g, c):
                nxt.extend(g.difference(c))
            else:
                nxt.append(g)
        gaps = nxt
        if not gaps:
            break
    gaps.sort(key=lambda r: (r.start, r.end))
    return Coverage(gaps, sum(g.size for g in gaps), True, overlaps, unlisted, complete, work)
