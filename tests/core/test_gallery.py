"""The named-axes gallery: every example builds, checks clean, round-trips and runs."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from geon.core.errors import GeonError
from geon.core.graph import APPLICATION, OPERATION, TENSOR, TENSOR_AXES, Graph
from geon.core.reference import evaluate_graph
from geon.examples.gallery import EXAMPLES, build


@pytest.mark.parametrize("slug", list(EXAMPLES), ids=list(EXAMPLES))
def test_example_checks_clean_and_round_trips(slug: str) -> None:
    title, description, make = EXAMPLES[slug]
    assert title and description
    g = make()
    assert g.check() == []
    again = Graph.from_json(json.loads(json.dumps(g.to_json())))
    assert again.to_json() == g.to_json()


def _axes_by_label(g: Graph) -> dict[str, list[str]]:
    return {n.label: n.tags[TENSOR_AXES]["axes"] for n in g.nodes if n.type == TENSOR and n.label}


@pytest.mark.parametrize(
    ("slug", "expected"),
    [
        ("dot-2d", {"x·y": ["H", "N"], "y·x": ["H", "N"]}),
        ("dot-4d", {"scores": ["M", "N"]}),
        ("broadcasting-order", {"a+b": ["C", "H", "W", "N"], "b+a": ["W", "H", "N", "C"]}),
        (
            "reductions",
            {"sum over W": ["H", "N"], "max to (N, H)": ["N", "H"], "mean of all": []},
        ),
        ("cast-axes", {"outer sum (H, K)": ["H", "K"], "elementwise (H)": ["H"]}),
        ("mlp", {"y": ["B", "K"], "hidden": ["B", "D"]}),
        ("conv2d-halos", {"features": ["K", "P", "Q", "N"]}),
        ("pad-new-axis", {"padded": ["T2", "C"]}),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_example_result_axes(slug: str, expected: dict[str, list[str]]) -> None:
    axes = _axes_by_label(build(slug))
    assert {k: axes[k] for k in expected} == expected


def _feeds(g: Graph) -> dict[str, Any]:
    written = {
        s["tensorId"] for n in g.nodes if n.type == OPERATION for s in n.body["outputs"]["result"]
    }
    feeds: dict[str, Any] = {}
    rng = np.random.default_rng(0)
    for n in g.nodes:
        if n.type == TENSOR and n.id not in written and not any("Constant" in t for t in n.tags):
            shape = tuple(
                e - s for s, e in zip(n.body["range"]["start"], n.body["range"]["end"], strict=True)
            )
            feeds[n.id] = rng.normal(size=shape)
    return feeds


@pytest.mark.parametrize("slug", list(EXAMPLES), ids=list(EXAMPLES))
def test_example_runs(slug: str) -> None:
    g = build(slug)
    values = evaluate_graph(g, _feeds(g))
    for n in g.nodes:
        if n.type == TENSOR:
            assert np.all(np.isfinite(values[n.id]))


def test_dot_2d_values() -> None:
    g = build("dot-2d")
    y = next(n for n in g.nodes if n.label == "y")
    yv = np.arange(12.0).reshape(3, 4)
    values = evaluate_graph(g, {y.id: yv})
    labels = {n.label: n.id for n in g.nodes if n.type == TENSOR}
    expected = np.arange(6.0).reshape(2, 3) @ yv
    np.testing.assert_allclose(values[labels["x·y"]], expected)
    np.testing.assert_allclose(values[labels["y·x"]], expected)


def test_conv_shards_overlap_in_halos_and_partition_the_output() -> None:
    g = build("conv2d-halos")
    apps = [n for n in g.nodes if n.type == APPLICATION]
    assert len(apps) == 2
    x_rows = [
        (a.body["inputs"]["x"][0]["range"]["start"][1], a.body["inputs"]["x"][0]["range"]["end"][1])
        for a in apps
    ]
    out_rows = [
        (
            a.body["outputs"]["result"][0]["range"]["start"][1],
            a.body["outputs"]["result"][0]["range"]["end"][1],
        )
        for a in apps
    ]
    # the output height P (8, kept by padding 1) is cut in two halves; the windows [-1:5] and
    # [3:9] overlap by R-1 = 2 rows and are clipped to the image's rows [0:8] (the rest is padding)
    assert out_rows == [(0, 4), (4, 8)]
    assert x_rows == [(0, 5), (3, 8)]


def test_pad_shards_read_only_the_rows_that_exist() -> None:
    # given the padded signal (T=4 padded by 2 before and 1 after into T2=7), cut 2 + 3 + 2
    g = build("pad-new-axis")
    apps = [n for n in g.nodes if n.type == APPLICATION]
    # then the shards' projections [-2:0], [0:3], [3:5] are clipped to the signal's rows [0:4]
    reads = [
        (
            a.body["inputs"]["tensor"][0]["range"]["start"],
            a.body["inputs"]["tensor"][0]["range"]["end"],
        )
        for a in apps
    ]
    assert reads == [([0, 0], [0, 2]), ([0, 0], [3, 2]), ([3, 0], [4, 2])]
    padded = next(n for n in g.nodes if n.label == "padded")
    values = evaluate_graph(g, {})
    expected = np.pad(np.arange(1.0, 9.0).reshape(4, 2), ((2, 1), (0, 0)))
    np.testing.assert_array_equal(values[padded.id], expected)


def test_unknown_example_is_refused() -> None:
    with pytest.raises(GeonError) as e:
        build("nope")
    assert str(e.value) == (
        'gallery example "nope" does not exist; expected one of ("dot-2d", "dot-4d", '
        '"broadcasting-order", "reductions", "cast-axes", "mlp", "conv2d-halos", "pad-new-axis")'
    )
