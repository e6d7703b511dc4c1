"""render(): SVG, PNG and DOT in process, format errors and size limits checked before layout."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import pytest
from render_helpers import SvgView, loom_graph

from geon.core.errors import GeonError, LimitError
from geon.core.graph import NOTE, Graph
from geon.render import FORMATS, RenderFormatError, render, to_dot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def test_the_formats_are_svg_png_and_dot() -> None:
    assert FORMATS == ("svg", "png", "dot")


def test_svg_of_the_loom_example_has_its_nodes_edges_and_cluster() -> None:
    # given the loom example, when rendered to SVG
    svg = SvgView.parse(render(loom_graph(), "svg"))
    # then the XML holds six node groups, nine edge groups and one cluster
    assert svg.root.tag == "{http://www.w3.org/2000/svg}svg"
    assert (len(svg.groups("node")), len(svg.groups("edge")), len(svg.groups("cluster"))) == (
        6,
        9,
        1,
    )
    # and each document node is addressable by its id
    ids = sorted(str(g.get("id")) for g in svg.groups("node"))
    assert ids == sorted("node-" + n.id for n in loom_graph().nodes)


def test_png_of_the_loom_example_is_a_png_of_a_sensible_size() -> None:
    # given the loom example, when rendered to PNG
    data = render(loom_graph(), "png")
    # then it is a PNG a few hundred pixels on each side and tens of kilobytes
    assert data[:8] == PNG_SIGNATURE
    width, height = png_size(data)
    assert 400 <= width <= 1600, width
    assert 200 <= height <= 900, height
    assert 10_000 <= len(data) <= 400_000, len(data)


def test_dot_format_is_the_dot_source() -> None:
    # given the loom example, then its "dot" rendering is the DOT text, unlaid out
    data = render(loom_graph(), "dot")
    assert data == to_dot(loom_graph()).encode("utf-8")
    assert b"pos=" not in data


def test_rendering_needs_no_graphviz_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a PATH with no program at all (so no system "dot")
    monkeypatch.setenv("PATH", str(tmp_path))
    # when the loom example is rendered, then SVG and PNG still come out (Graphviz in process)
    assert render(loom_graph(), "svg")[:5] == b"<?xml"
    assert render(loom_graph(), "png")[:8] == PNG_SIGNATURE
    assert os.environ["PATH"] == str(tmp_path)


@pytest.mark.parametrize("fmt", ["pdf", "SVG", "", "svg "])
def test_an_unknown_format_is_refused_naming_it(fmt: str) -> None:
    # given a format geon does not render, then the error names it and the valid ones
    with pytest.raises(RenderFormatError) as exc:
        render(loom_graph(), fmt)  # type: ignore[arg-type]
    assert str(exc.value) == (
        f'render format "{fmt}" is not supported; expected one of ("svg", "png", "dot")'
    )
    assert isinstance(exc.value, GeonError)


def notes(n: int) -> Graph:
    nodes: list[dict[str, Any]] = [
        {"id": f"n{i}", "type": NOTE, "body": {"message": str(i)}} for i in range(n)
    ]
    return Graph.from_json({"id": "00000000-0000-4000-8000-000000000000", "nodes": nodes})


@pytest.mark.parametrize(
    ("case", "fmt", "kwargs", "message"),
    [
        (
            "too many nodes for svg",
            "svg",
            {"max_nodes": 4},
            "the diagram has 5 nodes; the limit is 4 (render a smaller graph, or its DOT text "
            "and lay it out yourself)",
        ),
        (
            "too many nodes for png",
            "png",
            {"max_nodes": 1},
            "the diagram has 5 nodes; the limit is 1 (render a smaller graph, or its DOT text "
            "and lay it out yourself)",
        ),
    ],
)
def test_a_diagram_over_the_node_limit_is_refused_before_layout(
    case: str, fmt: str, kwargs: dict[str, int], message: str
) -> None:
    # given five notes and a smaller limit, then rendering is refused with the sizes named
    with pytest.raises(LimitError) as exc:
        render(notes(5), fmt, **kwargs)  # type: ignore[arg-type]
    assert str(exc.value) == message, case


def test_a_diagram_over_the_edge_limit_is_refused_before_layout() -> None:
    # given the loom example (nine edges) and a limit of eight
    with pytest.raises(LimitError) as exc:
        render(loom_graph(), "svg", max_edges=8)
    # then rendering is refused naming the count
    assert str(exc.value) == (
        "the diagram has 9 edges; the limit is 8 (render a smaller graph, or its DOT text and "
        "lay it out yourself)"
    )


def test_the_dot_source_is_not_limited() -> None:
    # given five notes and a node limit of one, then the DOT source is still written
    assert render(notes(5), "dot", max_nodes=1).count(b"shape=note") == 5


def test_a_diagram_at_the_limit_renders() -> None:
    # given five notes and a limit of five, then the SVG has the five nodes
    svg = SvgView.parse(render(notes(5), "svg", max_nodes=5))
    assert len(svg.groups("node")) == 5


def test_an_empty_document_renders() -> None:
    # given a document without nodes, then it renders to an SVG with no node
    svg = SvgView.parse(render(notes(0), "svg"))
    assert len(svg.groups("node")) == 0
