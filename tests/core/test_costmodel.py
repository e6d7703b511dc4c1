"""The cost model's formulas and hardware profiles (issue 16 item 4): ring collectives, the
roofline per application, profile files and their refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from geon.core.errors import DocumentError, LimitError
from geon.core.plans.cost import (
    DEFAULT_PROFILE,
    Link,
    collective_seconds,
    load_profile,
    parse_profile,
    shipped_profiles,
)

LINK = Link(bandwidth=1e9, latency=1e-6)


@pytest.mark.parametrize(
    ("kind", "n", "nbytes", "expected"),
    [
        # (n-1)·latency + (n-1)/n · bytes/bandwidth = 3e-6 + 0.75 · 4 s
        ("all-gather", 4, 4e9, 3.000003),
        ("reduce-scatter", 4, 4e9, 3.000003),
        # twice the ring: 2 · 3.000003
        ("all-reduce", 4, 4e9, 6.000006),
        # (n-1)·latency + (n-1)/n² · bytes/bandwidth = 3e-6 + 3/16 · 4 s
        ("all-to-all", 4, 4e9, 0.750003),
        # latency + bytes/bandwidth
        ("permute", 4, 4e9, 4.000001),
        ("send", 2, 5e8, 0.500001),
        # 8 devices, 1 MiB: 7e-6 + 7/8 · 1,048,576 / 1e9 = 7e-6 + 917.504e-6
        ("all-gather", 8, 1_048_576, 924.504e-6),
        ("all-reduce", 8, 1_048_576, 1849.008e-6),
        # one device moves nothing
        ("all-reduce", 1, 4e9, 0.0),
    ],
    ids=lambda v: str(v),
)
def test_collective_seconds_match_hand_computed_values(
    kind: Any, n: int, nbytes: float, expected: float
) -> None:
    assert collective_seconds(kind, n, nbytes, LINK) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_formulas_reproduce_nccl_tests_bus_bandwidth(n: int) -> None:
    """nccl-tests (NVIDIA/nccl-tests, doc/PERFORMANCE.md and the ``*GetBw`` functions of
    src/all_reduce.cc, all_gather.cc, reduce_scatter.cc, alltoall.cc) reports ``algBw = S / t``
    and ``busBw = algBw · factor``, with factor ``2(n-1)/n`` for all-reduce and ``(n-1)/n`` for
    all-gather, reduce-scatter and all-to-all, where S is the all-reduce buffer, the whole
    gathered (scattered) buffer, and for all-to-all one rank's buffer (``count·nranks·typesize``).
    On a link with no latency a ring reaches ``busBw`` = the link's bandwidth: so must geon's
    formulas, given the logical bytes (for all-to-all, n ranks' buffers)."""
    link = Link(bandwidth=4.5e11, latency=0.0)
    size = 2**30
    factors = {
        "all-reduce": (size, 2 * (n - 1) / n),
        "all-gather": (size, (n - 1) / n),
        "reduce-scatter": (size, (n - 1) / n),
        "all-to-all": (size * n, (n - 1) / n),
    }
    for kind, (logical, factor) in factors.items():
        seconds = collective_seconds(kind, n, logical, link)  # type: ignore[arg-type]
        bus = size / seconds * factor
        assert bus == pytest.approx(link.bandwidth, rel=1e-9), kind


def test_formulas_reproduce_the_scaling_books_worked_all_gather() -> None:
    """The worked figure of a public reference, from its constants: "How to Scale Your Model"
    (Austin et al., Google DeepMind, 2025; jax-ml/scaling-book, sharding.md, "Some Problems to
    Work", Question 2, first part). AllGather_X([B_X, D_Y]) on a TPU v4p 4x4x4 slice, B = 1024,
    D = 4096 in bfloat16, mesh {X: 4, Y: 4, Z: 4}: each group gathers 2·B·D/Y bytes over X on a
    wraparound ring of 9e10 bytes/s (bidirectional, so the ring moves 9e10 bytes/s one way
    round); the book's answer is 2·B·D / (9e10·Y) = 23 µs. That answer is the large-axis limit
    of the book's own equation, T = volume/bandwidth · (Axis - 1)/Axis, which is geon's ring
    with no latency (its "What Have We Learned?" section): X = 4 gives three quarters of it."""
    volume = 2 * 1024 * 4096 / 4
    ring = Link(bandwidth=9e10, latency=0.0)
    book = 23.3e-6  # 2·1024·4096 / (9e10·4) = 23.30 µs, printed as "23 µs"
    assert volume / ring.bandwidth == pytest.approx(book, rel=1e-3)
    assert collective_seconds("all-gather", 4, volume, ring) == pytest.approx(
        volume / ring.bandwidth * 3 / 4, rel=1e-12
    )
    # and on a long axis, the book's figure itself; a reduce-scatter costs the same, an
    # all-reduce twice (the book's summary table)
    for kind, times in (("all-gather", 1), ("reduce-scatter", 1), ("all-reduce", 2)):
        long_axis = collective_seconds(kind, 10**6, volume, ring)  # type: ignore[arg-type]
        assert long_axis == pytest.approx(times * book, rel=1e-3), kind


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(Exception, match='collective kind "gather" is unknown'):
        collective_seconds("gather", 4, 1.0, LINK)  # type: ignore[arg-type]


# -- profiles -----------------------------------------------------------------------------------


def test_geon_ships_three_profiles_and_a_default() -> None:
    assert shipped_profiles() == ("cpu-host", "h100-sxm-8", "tpu-v5e-16")
    assert DEFAULT_PROFILE == "h100-sxm-8"
    assert load_profile().name == "h100-sxm-8"


@pytest.mark.parametrize("name", ["cpu-host", "h100-sxm-8", "tpu-v5e-16"])
def test_shipped_profiles_round_trip(name: str) -> None:
    profile = load_profile(name)
    assert parse_profile(profile.to_json()) == profile
    assert profile.name == name


def test_the_h100_profile_holds_the_datasheet_figures() -> None:
    # NVIDIA H100 Tensor Core GPU datasheet, SXM5 column (dense figures; docs/cost-model.md)
    p = load_profile("h100-sxm-8")
    assert dict(p.device.flops) == {
        "float64": 67e12,
        "float32": 67e12,
        "float16": 989.5e12,
        "int8": 1979e12,
    }
    assert (p.device.memory_bandwidth, p.device.memory) == (3.35e12, 80e9)
    # NVLink 4: 900 GB/s bidirectional per GPU, 450 GB/s one way
    assert p.link("any axis") == Link(450e9, 2e-6)


def test_a_dtype_the_profile_does_not_list_runs_at_float32() -> None:
    p = load_profile("tpu-v5e-16")
    assert p.peak("int64") == p.peak("float32") == 197e12
    assert p.link("x").bandwidth == 50e9


def test_a_profile_file_is_read_by_path(tmp_path: Path) -> None:
    data = load_profile("cpu-host").to_json()
    data["name"] = "mine"
    data["links"] = {"tp": {"bandwidth": 1e9, "latency": 0}}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    p = load_profile(str(path))
    assert (p.name, p.link("tp"), p.link("dp")) == ("mine", Link(1e9, 0.0), p.default_link)


def _profile(**changes: Any) -> dict[str, Any]:
    data = load_profile("cpu-host").to_json()
    for path, value in changes.items():
        target = data
        *parents, last = path.split("__")
        for key in parents:
            target = target[key]
        target[last] = value
    return data


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"device__efficiency": 1.5},
            'profile field device.efficiency is "1.5"; expected a number > 0 and <= 1',
        ),
        (
            {"device__memory": -1},
            'profile field device.memory is "-1"; expected a number > 0',
        ),
        (
            {"device__kernelFloor": "fast"},
            'profile field device.kernelFloor is "fast"; expected a number >= 0',
        ),
        (
            {"device__flops": {"float33": 1e12, "float32": 1e12}},
            'profile field device.flops has dtype "float33"; expected one of (boolean, ',
        ),
        (
            {"device__flops": {"float64": 1e12}},
            'profile field device.flops lacks "float32"; expected it',
        ),
        (
            {"links": {"tp": {"bandwidth": 0, "latency": 1e-6}}},
            'profile field links.tp.bandwidth is "0"; expected a number > 0',
        ),
        (
            {"defaultLink": {"bandwidth": 1e9}},
            'profile field defaultLink lacks "latency"; expected the keys (bandwidth, latency)',
        ),
        (
            {"device__color": "red"},
            'profile field device has unknown key "color"; expected the keys (flops, ',
        ),
        ({"name": ""}, 'profile field name is ""; expected a string of 1 to 128 characters'),
    ],
    ids=lambda v: str(v)[:40],
)
def test_a_bad_profile_is_refused_naming_the_field(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(DocumentError) as info:
        parse_profile(_profile(**changes))
    assert str(info.value).startswith(message)


def test_too_many_links_are_refused_before_reading_them() -> None:
    links = {f"a{n}": {"bandwidth": 1, "latency": 0} for n in range(65)}
    with pytest.raises(LimitError, match="links has 65 entries; expected at most 64"):
        parse_profile(_profile(links=links))


def test_an_unknown_profile_names_the_shipped_ones(tmp_path: Path) -> None:
    with pytest.raises(DocumentError) as info:
        load_profile(str(tmp_path / "nope.json"))
    assert "is neither a shipped profile nor a readable file" in str(info.value)
    assert "expected one of (cpu-host, h100-sxm-8, tpu-v5e-16)" in str(info.value)


def test_a_profile_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{")
    with pytest.raises(DocumentError, match="is not valid JSON"):
        load_profile(str(path))
