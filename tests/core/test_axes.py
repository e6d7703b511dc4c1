"""Axis declarations, references with dual levels and ordered axis lists (DESIGN.md §2)."""

from __future__ import annotations

import pytest

from geon.core.axes import Axes, Axis, AxisRef, CompositeRef, parse_ref_string, to_ref
from geon.core.errors import AxisError, GeonError

H, W, N = Axis("H", 2), Axis("W", 3), Axis("N", 4)


@pytest.mark.parametrize(
    ("ref", "text", "level"),
    [
        (W - 0, "W", 0),
        (W - 1, "W-1", -1),
        (W + 1, "W+1", 1),
        (W - 2, "W-2", -2),
        ((W - 1) + 1, "W", 0),
        (W.T, "W-1", -1),
        ((W - 1).T, "W", 0),
        ((W + 1).T, "W-2", -2),
    ],
    ids=["W", "W-1", "W+1", "W-2", "W-1+1", "W.T", "W-1.T", "W+1.T"],
)
def test_reference_text_and_level(ref: AxisRef, text: str, level: int) -> None:
    # given a reference built with arithmetic, then its text and level are the written form
    assert str(ref) == text
    assert ref.level == level
    assert ref.length == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [("W", W.ref), ("W-1", W - 1), ("W+1", W + 1), ("W-2", W - 2), (" W - 1 ", W - 1)],
    ids=["W", "W-1", "W+1", "W-2", "spaces"],
)
def test_parse_reference(text: str, expected: AxisRef) -> None:
    # when a reference string is parsed against the declarations, then it is that reference
    assert AxisRef.parse(text, {"W": W}) == expected


def test_parse_composite() -> None:
    # given "H*W-1", when parsed, then it is the composite of H and W-1 with the product length
    ref = AxisRef.parse("H*W-1", {"H": H, "W": W})
    assert ref == CompositeRef((H.ref, W - 1))
    assert str(ref) == "H*W-1"
    assert ref.length == 6
    assert parse_ref_string("H*W+1") == (("H", 0), ("W", 1))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "W--1",
            'axis reference "W--1" is invalid; expected a name with an optional dual level, '
            'e.g. "W", "W-1", "W+1", or a composite "H*W"',
        ),
        ("K", 'axis "K" in "K" is not declared; expected one of ("W")'),
    ],
    ids=["malformed", "undeclared"],
)
def test_parse_refuses(text: str, message: str) -> None:
    with pytest.raises(AxisError) as e:
        AxisRef.parse(text, {"W": W})
    assert str(e.value) == message


def test_level_zero_reference_is_its_axis() -> None:
    # one notion of identity: a level-0 reference equals and hashes like its axis
    assert W.ref == W
    assert hash(W.ref) == hash(W)
    assert W - 1 != W
    assert {W, W.ref, W - 0} == {W}
    assert Axes.of([H, W - 1]) == (H, W - 1)
    assert Axes.of([H, W - 1]) == [H, W - 1]
    assert Axes([H, W - 1]) == Axes.of([H, W - 1])  # type: ignore[arg-type]
    assert hash(Axes.of([H, W])) == hash((H, W))


def test_axes_with_different_declarations_are_different() -> None:
    # given two declarations of "H" with different lengths, then they are different axes
    other = Axis("H", 5)
    assert other != H
    assert other.ref != H.ref
    assert Axis("H", 2) == H


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Axis("2x", 3),
            'axis name "2x" is invalid; expected a letter or "_" followed by letters, '
            'digits or "_"',
        ),
        (lambda: Axis("H", 0), 'axis "H" has length "0"; expected an integer >= 1 or None'),
        (lambda: Axis("H", True), 'axis "H" has length "True"; expected an integer >= 1 or None'),
        (
            lambda: Axis("H", 2, roles="Tall"),
            'axis "H" has role "Tall"; expected one of ("Channel", "Channelout", "Depth", '
            '"Height", "Time", "Width")',
        ),
        (
            lambda: W - 1.5,  # type: ignore[operator]
            'dual level "1.5" for axis "W" is invalid; expected an integer',
        ),
    ],
    ids=["name", "zero-length", "bool-length", "role", "float-level"],
)
def test_axis_refuses(make: object, message: str) -> None:
    with pytest.raises(AxisError) as e:
        make()  # type: ignore[operator]
    assert str(e.value) == message
    assert isinstance(e.value, GeonError)


def test_axis_json_round_trip() -> None:
    # given a full declaration, when written to an Axis body and read back, then it is equal
    a = Axis("C", 8, roles=("Channel",), cls="feature", batch=False, doc="channels")
    body = a.to_json()
    assert body == {
        "name": "C",
        "length": 8,
        "roles": ["Channel"],
        "cls": "feature",
        "doc": "channels",
    }
    assert Axis.from_json(body) == a
    assert Axis.from_json({"name": "N", "length": None}) == Axis("N")


def test_axes_are_duplicate_free() -> None:
    with pytest.raises(AxisError) as e:
        Axes.of([H, W, H])
    assert str(e.value) == (
        'axis "H" appears twice in (H, W, H); the axes of a tensor are duplicate-free'
    )
    # a reference at another level is another axis
    assert Axes.of([H, H - 1]).names == ("H", "H-1")


def test_axes_transpose_reverses_and_maps_levels() -> None:
    # x.T maps level k -> -1-k and reverses the order
    a = Axes.of([H, W - 1, N + 1])
    assert a.T.names == ("N-2", "W", "H-1")
    assert a == a.T.T


def test_axes_lookup() -> None:
    a = Axes.of([H, W - 1])
    assert a.index(W - 1) == 1
    assert W - 1 in a
    assert W not in a
    assert a.lengths == (2, 3)
    with pytest.raises(AxisError) as e:
        a.index(N)
    assert str(e.value) == 'axis "N" is not in (H, W-1); expected one of ("H", "W-1")'


def test_unbound_axis_has_no_shape() -> None:
    a = Axes.of([H, Axis("B")])
    assert a.lengths == (2, None)
    with pytest.raises(AxisError) as e:
        _ = a.shape
    assert str(e.value) == 'axis "B" has no length; bind it (e.g. Axis("B", 4)) first'


def test_composite_refuses_repeats() -> None:
    with pytest.raises(AxisError) as e:
        CompositeRef.of([H, H])
    assert str(e.value) == 'axis "H" appears twice in composite "H*H"; each part appears once'
    assert str(H * W * N) == "H*W*N"
    assert to_ref(H * W).length == 6


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: AxisRef(3), '"3" is not an axis; expected an Axis or an axis name'),  # type: ignore[arg-type]
        (lambda: AxisRef(W, 1.5), 'dual level "1.5" for axis "W" is invalid; expected an integer'),  # type: ignore[arg-type]
        (lambda: CompositeRef((W.ref,)), 'a composite axis needs at least two parts; got "W"'),
        (
            lambda: to_ref("W"),
            "\"'W'\" is not an axis; expected an Axis, an axis reference such as W-1",
        ),
        (
            lambda: parse_ref_string(5),  # type: ignore[arg-type]
            'axis reference "5" is invalid; expected a string such as "W-1"',
        ),
        (
            lambda: Axes("HW"),  # type: ignore[arg-type]
            "\"'HW'\" is not a list of axes; expected e.g. [H, W-1]",
        ),
        (
            lambda: Axis.from_json({"name": "H", "length": 2, "roles": "Height"}),
            'axis "H" has roles "\'Height\'"; expected a list of role names',
        ),
        (
            lambda: Axis("H", 2, cls=3),  # type: ignore[arg-type]
            'axis "H" has cls "3"; expected a string or None',
        ),
    ],
    ids=[
        "ref-not-axis",
        "ref-level",
        "composite-short",
        "to-ref",
        "parse-non-str",
        "axes-str",
        "roles-str",
        "cls",
    ],
)
def test_more_refusals(make: object, message: str) -> None:
    with pytest.raises(AxisError) as e:
        make()  # type: ignore[operator]
    assert str(e.value) == message


def test_reference_from_a_name_and_parse_without_declarations() -> None:
    r = AxisRef("W", -1)  # type: ignore[arg-type]
    assert str(r) == "W-1"
    assert r.length is None
    assert AxisRef.parse("W+1") == AxisRef(Axis("W"), 1)


# -- bounds (issue 13, findings 1 and 8) -----------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: parse_ref_string("A" + " " * 40000 + "!"),
            f'axis reference "A{" " * 39}... (40002 characters)" is too long; expected at most '
            "1024 characters",
        ),
        (
            lambda: Axis("A" * 129, 2),
            f'axis name "{"A" * 40}... (129 characters)" is too long; expected at most 128 '
            "characters",
        ),
        (
            lambda: Axis("H", 2**63),
            'axis "H" has length "9223372036854775808"; expected at most 9223372036854775807',
        ),
        (
            lambda: Axis("H", 10**5000),
            'axis "H" has length "1000000000000... (5001 digits)"; expected at most '
            "9223372036854775807",
        ),
        (
            lambda: parse_ref_string("W+9223372036854775808"),
            'dual level "9223372036854775808" for axis "W" is out of range; expected an integer '
            "from -9223372036854775808 to 9223372036854775807",
        ),
        (
            lambda: (W - 2**62) - (2**62 + 1),
            'dual level "-9223372036854775809" for axis "W" is out of range; expected an '
            "integer from -9223372036854775808 to 9223372036854775807",
        ),
    ],
    ids=["ref-40000-spaces", "name-129", "length-2**63", "length-5001-digits", "level", "shift"],
)
def test_bounds_refuse_before_work(make: object, message: str) -> None:
    with pytest.raises(AxisError) as e:
        make()  # type: ignore[operator]
    assert str(e.value) == message


def test_the_largest_values_are_accepted() -> None:
    # the bounds are inclusive: a 128-character name, an int64 length and level, 1024 characters
    name = "A" * 128
    assert Axis(name, 2**63 - 1).length == 2**63 - 1
    assert parse_ref_string("W-9223372036854775808") == (("W", -(2**63)),)
    text = "H" + " " * 999 + "*" + " " * 20 + "W-1"
    assert len(text) == 1024
    assert parse_ref_string(text) == (("H", 0), ("W", -1))


@pytest.mark.parametrize(
    "text",
    [
        "A" + " " * 1022 + "!",
        "A " + "- " * 510 + "!",
        "A" * 1023 + "!",
        "A -" + " " * 1000 + "1x",
    ],
    ids=["spaces", "signs", "name", "level-spaces"],
)
def test_invalid_references_up_to_the_bound_are_named(text: str) -> None:
    # the shapes that made the old pattern backtrack, at the longest length allowed
    with pytest.raises(AxisError) as e:
        parse_ref_string(text)
    assert str(e.value).startswith(f'axis reference "{text}" is invalid; expected a name')


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "text",
    [
        "A" + " " * 10**6 + "!",
        "A" * 10**6 + "!",
        "A" + " " * 10**6 + "-" + " " * 10**6 + "1" * 10**6 + "!",
    ],
    ids=["spaces", "name", "level"],
)
def test_the_reference_pattern_is_linear(text: str) -> None:
    # bound on work, not a timing assertion: a million characters take milliseconds in one
    # pass, while the old pattern's quadratic backtracking (3.5 s for 40,000 spaces) would run
    # for hours and hit the timeout
    from geon.core.axes import _REF_PART

    assert _REF_PART.fullmatch(text.strip()) is None
