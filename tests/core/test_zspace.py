"""ZRange, IPF and splits (DESIGN.md §4), including loom's known false negatives."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geon.core.errors import LimitError, ShapeError, SplitError
from geon.core.zspace import (
    IPF,
    ZAffineMap,
    ZPoint,
    ZRange,
    bounding_range,
    parse_range,
    range_problem,
    selection_of,
    split_grid,
)

# -- strategies ------------------------------------------------------------------------------


@st.composite
def ranges(draw: st.DrawFn, min_rank: int = 1, max_rank: int = 3, max_len: int = 6) -> ZRange:
    rank = draw(st.integers(min_rank, max_rank))
    start = draw(st.lists(st.integers(-20, 20), min_size=rank, max_size=rank))
    shape = draw(st.lists(st.integers(0, max_len), min_size=rank, max_size=rank))
    return ZRange(start, [a + n for a, n in zip(start, shape, strict=True)])


@st.composite
def nonempty_ranges(draw: st.DrawFn, max_rank: int = 3) -> ZRange:
    rank = draw(st.integers(1, max_rank))
    start = draw(st.lists(st.integers(-20, 20), min_size=rank, max_size=rank))
    shape = draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    return ZRange(start, [a + n for a, n in zip(start, shape, strict=True)])


@st.composite
def ipfs(draw: st.DrawFn, in_dim: int) -> IPF:
    out_dim = draw(st.integers(1, 3))
    proj = draw(
        st.lists(
            st.lists(st.integers(-3, 3), min_size=in_dim, max_size=in_dim),
            min_size=out_dim,
            max_size=out_dim,
        )
    )
    offset = draw(st.lists(st.integers(-10, 10), min_size=out_dim, max_size=out_dim))
    shape = draw(st.lists(st.integers(1, 3), min_size=out_dim, max_size=out_dim))
    return IPF(proj, offset, shape)


def cells_of(r: ZRange) -> set[tuple[int, ...]]:
    return set(r.cells())


# -- ZRange values ---------------------------------------------------------------------------


def test_ranges_are_values_with_equal_hashes() -> None:
    # given two ranges built from lists and tuples
    a, b = ZRange([0, 1], [2, 3]), ZRange((0, 1), (2, 3))
    # then they are equal, hash alike and are immutable
    assert a == b
    assert hash(a) == hash(b)
    assert {a, b} == {a}
    with pytest.raises(AttributeError):
        a.start = (5, 5)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("r", "shape", "size", "text"),
    [
        (ZRange([0, 0], [10, 5]), (10, 5), 50, "[0:10, 0:5]"),
        (ZRange([200, 50], [210, 55]), (10, 5), 50, "[200:210, 50:55]"),
        (ZRange([3], [3]), (0,), 0, "[3:3]"),
        (ZRange([], []), (), 1, "[]"),
    ],
    ids=["origin", "absolute", "empty", "scalar"],
)
def test_shape_size_and_text(r: ZRange, shape: tuple[int, ...], size: int, text: str) -> None:
    assert r.shape == shape
    assert r.size == size
    assert str(r) == text


@pytest.mark.parametrize(
    ("outer", "inner", "expected"),
    [
        (ZRange([0, 0], [10, 5]), ZRange([5, 0], [10, 5]), True),
        (ZRange([0, 0], [10, 5]), ZRange([5, 0], [11, 5]), False),
        (ZRange([0, 0], [10, 5]), ZRange([-1, 0], [2, 5]), False),
        (ZRange([0, 0], [10, 5]), ZRange([50, 50], [50, 60]), True),
        (ZRange([0, 0], [10, 5]), ZPoint([9, 4]), True),
        (ZRange([0, 0], [10, 5]), ZPoint([10, 4]), False),
        (ZRange([0, 0], [10, 5]), (0, 0), True),
    ],
    ids=[
        "inside",
        "past-end",
        "before-start",
        "empty-anywhere",
        "last-point",
        "point-at-end",
        "tuple-point",
    ],
)
def test_contains(outer: ZRange, inner: ZRange | ZPoint | tuple[int, ...], expected: bool) -> None:
    assert outer.contains(inner) is expected


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: ZRange([1, 0], [0, 5]),
            'range has start "[1, 0]" after end "[0, 5]" in dim 0; expected start <= end',
        ),
        (
            lambda: ZRange([0], [1, 2]),
            'range has start "[0]" of rank 1 and end "[1, 2]" of rank 2; expected equal ranks',
        ),
        (lambda: ZRange(["a"], [1]), "range start has entry \"'a'\"; expected integers"),
        (
            lambda: ZRange([0], [2]).contains(ZRange([0, 0], [1, 1])),
            'range of rank 2 cannot be compared with range "[0:2]" of rank 1; expected equal ranks',
        ),
    ],
    ids=["start-after-end", "rank-mismatch", "not-int", "contains-rank"],
)
def test_range_errors_name_the_value(make: object, message: str) -> None:
    with pytest.raises(ShapeError) as info:
        make()  # type: ignore[operator]
    assert str(info.value) == message


def test_json_round_trip() -> None:
    r = ZRange([200, 50], [210, 55])
    assert ZRange.from_json(r.to_json()) == r
    assert r.to_json() == {"start": [200, 50], "end": [210, 55]}


# -- splits ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"chunk": 4}, ["[0:4]", "[4:8]", "[8:10]"]),
        ({"chunk": 5}, ["[0:5]", "[5:10]"]),
        ({"chunk": 20}, ["[0:10]"]),
        ({"parts": 3}, ["[0:4]", "[4:7]", "[7:10]"]),
        ({"parts": 4}, ["[0:3]", "[3:6]", "[6:8]", "[8:10]"]),
        ({"parts": 1}, ["[0:10]"]),
        ({"sizes": [1, 2, 7]}, ["[0:1]", "[1:3]", "[3:10]"]),
    ],
    ids=[
        "chunk-4-smaller-last",
        "chunk-5",
        "chunk-bigger",
        "parts-3",
        "parts-4",
        "parts-1",
        "sizes",
    ],
)
def test_split_one_dim(kwargs: dict[str, object], expected: list[str]) -> None:
    # given [0:10]; when split; then the pieces are as listed
    assert [str(p) for p in ZRange([0], [10]).split(0, **kwargs)] == expected  # type: ignore[arg-type]


def test_chunk_split_is_not_a_chunk_count() -> None:
    # loom's bug: chunking [0:10] "by 4" must give chunks of size 4, not 4 chunks
    pieces = ZRange([0, 0], [10, 3]).split(0, chunk=4)
    assert [p.shape for p in pieces] == [(4, 3), (4, 3), (2, 3)]


def test_split_keeps_other_dims_and_absolute_offsets() -> None:
    pieces = ZRange([200, 50], [210, 55]).split(1, parts=2)
    assert [str(p) for p in pieces] == ["[200:210, 50:53]", "[200:210, 53:55]"]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda r: r.split(2, parts=2),
            SplitError,
            'dim "2" is out of range for range "[0:10, 0:5]" of rank 2; expected 0 <= dim < 2',
        ),
        (
            lambda r: r.split(0, chunk=0),
            SplitError,
            'chunk "0" for dim 0 of length 10 is invalid; expected an integer >= 1',
        ),
        (
            lambda r: r.split(0, parts=0),
            SplitError,
            'parts "0" for dim 0 of length 10 is invalid; expected an integer >= 1',
        ),
        (
            lambda r: r.split(0, sizes=[3, 3]),
            SplitError,
            'sizes "[3, 3]" for dim 0 sum to 6; expected them to sum to the length 10 of '
            "[0:10, 0:5]",
        ),
        (
            lambda r: r.split(1, sizes=[6, -1]),
            SplitError,
            'sizes "[6, -1]" for dim 1 are invalid; expected integers >= 0',
        ),
        (
            lambda r: r.split(0, parts=2, chunk=3),
            SplitError,
            "split needs exactly one of chunk, sizes or parts; got chunk, parts",
        ),
        (
            lambda r: r.split(0),
            SplitError,
            "split needs exactly one of chunk, sizes or parts; got none",
        ),
        (
            lambda r: r.split_grid(parts={0: 2}, chunks={0: 3}),
            SplitError,
            'dim "0" is split twice; expected each dim at most once',
        ),
    ],
    ids=[
        "bad-dim",
        "chunk-0",
        "parts-0",
        "sizes-sum",
        "sizes-negative",
        "two-kinds",
        "no-kind",
        "grid-twice",
    ],
)
def test_split_errors_name_dim_and_sizes(call: object, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call(ZRange([0, 0], [10, 5]))  # type: ignore[operator]
    assert str(info.value) == message


def test_grid_split_is_row_major() -> None:
    pieces = split_grid(ZRange([0, 0, 0], [4, 1, 6]), parts={2: 3, 0: 2})
    assert [str(p) for p in pieces] == [
        "[0:2, 0:1, 0:2]",
        "[0:2, 0:1, 2:4]",
        "[0:2, 0:1, 4:6]",
        "[2:4, 0:1, 0:2]",
        "[2:4, 0:1, 2:4]",
        "[2:4, 0:1, 4:6]",
    ]


@settings(deadline=None)  # correctness, not timing: the machine is shared
@given(st.integers(0, 40), st.integers(1, 12))
def test_parts_split_matches_numpy_array_split(length: int, parts: int) -> None:
    pieces = ZRange([7], [7 + length]).split(0, parts=parts)
    expected = [len(a) for a in np.array_split(np.arange(length), parts)]
    assert [p.shape[0] for p in pieces] == expected


@st.composite
def split_cases(draw: st.DrawFn) -> tuple[ZRange, int, dict[str, object]]:
    r = draw(ranges())
    dim = draw(st.integers(0, r.rank - 1))
    length = r.shape[dim]
    kind = draw(st.sampled_from(["chunk", "parts", "sizes"]))
    if kind == "chunk":
        return r, dim, {"chunk": draw(st.integers(1, 8))}
    if kind == "parts":
        return r, dim, {"parts": draw(st.integers(1, 8))}
    cuts = sorted(draw(st.lists(st.integers(0, length), max_size=4)))
    edges = [0, *cuts, length]
    return r, dim, {"sizes": [b - a for a, b in itertools.pairwise(edges)]}


@settings(max_examples=200, deadline=None)  # correctness, not timing: the machine is shared
@given(split_cases())
def test_split_then_bound_gives_the_range_and_shards_partition_it(
    case: tuple[ZRange, int, dict[str, object]],
) -> None:
    r, dim, kwargs = case
    pieces = r.split(dim, **kwargs)  # type: ignore[arg-type]
    # shards partition it: every cell exactly once
    seen: list[tuple[int, ...]] = [c for p in pieces for c in p.cells()]
    assert sorted(seen) == sorted(r.cells())
    assert all(r.contains(p) for p in pieces)
    # splitting then bounding gives back the range
    if not r.is_empty:
        assert bounding_range(pieces) == r


# -- IPF -------------------------------------------------------------------------------------


def test_ipf_maps_a_point_to_a_box() -> None:
    f = IPF([[1, 0], [0, 1]], [200, 50], [1, 1])
    assert f([5, 0]) == ZRange([205, 50], [206, 51])
    assert f(ZPoint([5, 0])) == ZRange([205, 50], [206, 51])


def test_ipf_maps_a_range_as_the_loom_example() -> None:
    f = IPF([[1, 0], [0, 1]], [200, 50], [1, 1])
    assert f(ZRange([5, 0], [10, 5])) == ZRange([205, 50], [210, 55])


def test_two_corner_footprint_is_wrong_for_mixed_sign_rows() -> None:
    # given a row mixing signs: t = i - j over i, j in [0, 2)
    f = IPF([[1, -1]], [0], [1])
    # when the range is projected; then every corner counts: t spans -1..1
    assert f(ZRange([0, 0], [2, 2])) == ZRange([-1], [2])
    # (the two-corner shortcut P*start, P*(end-1) would give [0:1))


def test_window_projection_gives_a_halo() -> None:
    # conv-like: output index i reads input [i, i + 3)
    f = IPF([[1]], [0], [3])
    assert f(ZRange([4], [8])) == ZRange([4], [10])


def test_empty_range_maps_to_the_empty_range_at_its_start() -> None:
    f = IPF([[2, 0], [0, 1]], [1, 1], [1, 1])
    assert f(ZRange([3, 5], [3, 9])) == ZRange([7, 6], [7, 6])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: IPF([[1, 0], [0]], [0, 0], [1, 1]),
            'projection "[[1, 0], [0]]" has rows of lengths [1, 2]; expected every row to have the '
            "same length",
        ),
        (
            lambda: IPF([[1, 0]], [0, 0], [1]),
            'offset "[0, 0]" has 2 entries; expected 1 (one per projection row)',
        ),
        (
            lambda: IPF([[1, 0]], [0], [1, 1]),
            'shape "[1, 1]" has 2 entries; expected 1 (one per projection row)',
        ),
        (lambda: IPF([[1, 0]], [0], [0]), 'shape "[0]" has an entry < 1; expected integers >= 1'),
        (
            lambda: IPF([[1, 0]], [0], [1])([1, 2, 3]),
            'point "[1, 2, 3]" has rank 3; expected 2 (the number of projection columns)',
        ),
    ],
    ids=["ragged", "offset-length", "shape-length", "zero-shape", "point-rank"],
)
def test_ipf_errors(make: object, message: str) -> None:
    with pytest.raises(ShapeError) as info:
        make()  # type: ignore[operator]
    assert str(info.value) == message


def test_ipf_json_round_trip() -> None:
    data = {"affineMap": {"projection": [[1, 0], [0, 1]], "offset": [200, 50]}, "shape": [1, 1]}
    assert IPF.from_json(data).to_json() == data


def test_affine_map_identity() -> None:
    assert ZAffineMap.identity(2)([3, 4]) == (3, 4)


@settings(deadline=None)  # correctness, not timing: the machine is shared
@given(ranges())
def test_identity_ipf_maps_a_range_to_itself(r: ZRange) -> None:
    assert IPF.identity(r.rank)(r) == (r if not r.is_empty else ZRange(r.start, r.start))


@settings(max_examples=200, deadline=None)  # correctness, not timing: the machine is shared
@given(st.data())
def test_range_footprint_is_the_bounding_box_of_all_point_footprints(data: st.DataObject) -> None:
    r = data.draw(nonempty_ranges())
    f = data.draw(ipfs(r.rank))
    assert f(r) == bounding_range(f(p) for p in r.cells())


@settings(max_examples=200, deadline=None)  # correctness, not timing: the machine is shared
@given(st.data())
def test_projection_of_a_union_contains_the_projections_of_its_parts(data: st.DataObject) -> None:
    r = data.draw(nonempty_ranges())
    f = data.draw(ipfs(r.rank))
    dim = data.draw(st.integers(0, r.rank - 1))
    parts = r.split(dim, parts=data.draw(st.integers(1, 4)))
    whole = f(r)
    for p in parts:
        assert whole.contains(f(p))
    assert bounding_range(f(p) for p in parts if not p.is_empty) == whole


@settings(max_examples=200, deadline=None)  # correctness, not timing: the machine is shared
@given(st.data())
def test_hull_is_apply_range_without_the_checks(data: st.DataObject) -> None:
    r = data.draw(nonempty_ranges())
    f = data.draw(ipfs(r.rank))
    image = f(r)
    assert f.hull(r.start, r.end) == (image.start, image.end)
    identity = IPF.identity(r.rank)
    assert identity.hull(r.start, r.end) == (r.start, r.end)


# -- bounds (issue 13, findings 4 and 8) -----------------------------------------------------


LONG = ZRange([0], [2**40])
"""A range whose pieces, one per point, would need terabytes."""


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("split", "message"),
    [
        (
            lambda: LONG.split(0, parts=10**12),
            "splitting [0:1099511627776] along dim 0 gives 1000000000000 pieces; expected at "
            "most 4096",
        ),
        (
            lambda: LONG.split(0, chunk=1),
            "splitting [0:1099511627776] along dim 0 gives 1099511627776 pieces; expected at "
            "most 4096",
        ),
        (
            lambda: LONG.split(0, parts=5, limit=4),
            "splitting [0:1099511627776] along dim 0 gives 5 pieces; expected at most 4",
        ),
        (
            lambda: ZRange([0, 0], [2**40, 2**40]).split_grid(parts={0: 65}, chunks={1: 2**34}),
            "splitting [0:1099511627776, 0:1099511627776] along dims [0, 1] gives 4160 pieces; "
            "expected at most 4096",
        ),
    ],
    ids=["parts", "chunk", "limit", "grid-product"],
)
def test_splits_beyond_the_limit_are_refused_before_building(
    split: Callable[[], object], message: str
) -> None:
    with pytest.raises(LimitError) as info:
        split()
    assert str(info.value) == message


def test_split_count_says_how_many_pieces_without_building_them() -> None:
    r = ZRange([0, 0], [10**15, 3])
    assert r.split_count(0, chunk=1) == 10**15
    assert r.split_count(0, parts=7) == 7
    assert r.split_count(1, sizes=[1, 0, 2]) == 3
    assert ZRange([0], [0]).split_count(0, chunk=4) == 1
    assert len(r.split(1, parts=4096)) == 4096  # the limit is inclusive


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: ZRange([0], [2**63]),
            'range end has entry "9223372036854775808"; expected integers from '
            "-9223372036854775808 to 9223372036854775807",
        ),
        (
            lambda: ZRange([-(10**5000)], [0]),
            'range start has entry "-1000000000000... (5001 digits)"; expected integers from '
            "-9223372036854775808 to 9223372036854775807",
        ),
        (
            lambda: IPF([[2**64]], [0], [1]),
            'projection row has entry "18446744073709551616"; expected integers from '
            "-9223372036854775808 to 9223372036854775807",
        ),
        (
            lambda: IPF([[1]], [0], [2**63]),
            'shape has entry "9223372036854775808"; expected integers from '
            "-9223372036854775808 to 9223372036854775807",
        ),
    ],
    ids=["range-end", "range-start-5001-digits", "projection", "ipf-shape"],
)
def test_integers_outside_int64_are_refused(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ShapeError) as info:
        make()
    assert str(info.value) == message


def test_int64_extremes_are_accepted() -> None:
    r = ZRange([-(2**63)], [2**63 - 1])
    assert r.shape == (2**64 - 1,)


# -- ranges in documents: the one parser --------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "lenient", "exact"),
    [
        ({"start": [0, 2], "end": [4, 3]}, "[0:4, 2:3]", "[0:4, 2:3]"),
        ({"start": [0, 2.0], "end": [4, 3]}, "[0:4, 2:3]", None),
        ({"start": [], "end": []}, "[]", "[]"),
        ({"start": [0], "end": [1], "extra": 1}, "[0:1]", None),
        ({"start": [0], "end": [2**63]}, "[0:9223372036854775808]", None),
        ({"start": [2], "end": [1]}, None, None),
        ({"start": [0, 0], "end": [1]}, None, None),
        ({"start": [False], "end": [1]}, None, None),
        ({"start": [0.5], "end": [1]}, None, None),
        ({"start": [0] * 65, "end": [1] * 65}, None, None),
        ({"start": "0", "end": [1]}, None, None),
        ([0, 1], None, None),
    ],
    ids=[
        "ints",
        "whole-float",
        "rank-0",
        "extra-key",
        "past-int64",
        "start-after-end",
        "ranks-differ",
        "boolean",
        "fraction",
        "rank-65",
        "not-a-list",
        "not-a-dict",
    ],
)
def test_parse_range_reads_what_a_document_may_hold(
    data: object, lenient: str | None, exact: str | None
) -> None:
    for found, expected in ((parse_range(data), lenient), (parse_range(data, exact=True), exact)):
        assert (str(found) if found is not None else None) == expected


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            {"start": [0, 0], "end": [1]},
            'range has start "[0, 0]" of rank 2 and end "[1]" of rank 1; expected equal ranks',
        ),
        (
            {"start": [0, 3], "end": [2, 1]},
            'range has start "[0, 3]" after end "[2, 1]" in dim 1; expected start <= end',
        ),
        ({"start": [0], "end": [1]}, None),
        ({"start": ["a"], "end": [1]}, None),
    ],
    ids=["ranks", "order", "valid", "not-integers"],
)
def test_range_problem_says_what_zrange_says(data: dict[str, object], problem: str | None) -> None:
    assert range_problem(data) == problem


# -- the clip rule -----------------------------------------------------------------------------

PAD = IPF([[1, 0], [0, 1]], offset=[-1, 0], shape=[3, 1])
"""A window of three rows starting one row before the index: a padded read of a 4x6 tensor."""


@pytest.mark.parametrize(
    ("index", "tensor", "read", "expected"),
    [
        (ZRange([0, 0], [4, 6]), ZRange([0, 0], [4, 6]), True, "[0:4, 0:6]"),
        (ZRange([0, 0], [4, 6]), ZRange([0, 0], [4, 6]), False, "[-1:5, 0:6]"),
        (ZRange([0, 0], [2, 6]), ZRange([0, 0], [4, 6]), True, "[0:3, 0:6]"),
        (ZRange([0, 0], [4, 6]), None, True, "[-1:5, 0:6]"),
        (ZRange([0, 0], [4, 6]), ZRange([0], [4]), True, "[-1:5, 0:6]"),
        (ZRange([9, 0], [10, 6]), ZRange([0, 0], [4, 6]), True, "[4:4, 0:6]"),
    ],
    ids=["read", "write", "read-shard", "no-tensor", "other-rank", "outside"],
)
def test_selection_of_clips_reads_to_the_tensor_and_never_writes(
    index: ZRange, tensor: ZRange | None, read: bool, expected: str
) -> None:
    assert str(selection_of(PAD, index, tensor, read=read)) == expected
