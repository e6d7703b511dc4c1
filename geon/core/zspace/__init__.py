"""Integer index spaces: points, ranges, affine maps, index projection functions (IPFs) and
coverage — the one place for range arithmetic (DESIGN.md §4).

>>> r = ZRange([0, 0], [10, 5])
>>> r.shape, r.size
((10, 5), 50)
>>> [str(p) for p in r.split(0, chunk=4)]
['[0:4, 0:5]', '[4:8, 0:5]', '[8:10, 0:5]']
>>> f = IPF([[1, 0], [0, 1]], offset=[200, 50], shape=[1, 1])
>>> str(f(ZRange([5, 0], [10, 5])))
'[205:210, 50:55]'

- :mod:`~geon.core.zspace.ranges`: ``ZPoint``, ``ZRange`` (difference, clip, splits),
  ``bounding_range``, ``union_size``, and ``parse_range``, the one parser of a document's
  ``{"start", "end"}``.
- :mod:`~geon.core.zspace.ipf`: ``ZAffineMap``, ``IPF`` with ``apply_range`` (the corner rule:
  an IPF ``(P, o, s)`` maps a point ``i`` to ``[P·i + o, P·i + o + s)`` and a range to the
  bounding box of its corners' images), and ``selection_of``, the one clip rule of a padded read.
- :mod:`~geon.core.zspace.coverage`: ``coverage`` (gaps and overlaps of shards, cell-exact).
"""

from geon.core.zspace.coverage import (
    COVERAGE_WORK_BASE,
    COVERAGE_WORK_PER_SHARD,
    MAX_OVERLAPS_COUNTED,
    Coverage,
    coverage,
)
from geon.core.zspace.ipf import IPF, IPFKey, ZAffineMap, ipf_of, selection_of
from geon.core.zspace.ranges import (
    MAX_RANK,
    TooManyPieces,
    ZPoint,
    ZRange,
    bounding_range,
    parse_range,
    range_problem,
    split_grid,
    union_size,
)

__all__ = [
    "COVERAGE_WORK_BASE",
    "COVERAGE_WORK_PER_SHARD",
    "IPF",
    "MAX_OVERLAPS_COUNTED",
    "MAX_RANK",
    "Coverage",
    "IPFKey",
    "TooManyPieces",
    "ZAffineMap",
    "ZPoint",
    "ZRange",
    "bounding_range",
    "coverage",
    "ipf_of",
    "parse_range",
    "range_problem",
    "selection_of",
    "split_grid",
    "union_size",
]
