"""Every user string is escaped: hostile labels render literally, and Graphviz never complains."""

from __future__ import annotations

from typing import Any

import pytest
from render_helpers import DotView, SvgView

from geon.core.graph import NOTE, OPERATION, TENSOR, Graph
from geon.core.issues import Issue
from geon.render import render, to_dot

GRAPH_ID = "00000000-0000-4000-8000-000000000000"
TENSOR_ID = "00000000-0000-4000-8000-000000000001"

HOSTILE = [
    ("double quotes", 'say "hi"'),
    ("angle brackets and ampersand", "<b>bold</b> & <script>alert(1)</script>"),
    ("html entity text", "&amp; &lt; &#39;"),
    ("single quotes", "it's"),
    ("graphviz escapes", r"\N \G \E \T \H \L \n \l \r"),
    ("backslashes", "a\\b\\\\c\\"),
    ("dot syntax", '"]; evil [label="x'),
    ("braces and pipes", "{a|b} <p> }"),
    ("unicode", "Δx · 変数 🙂"),
]


def graph_with_tensor_label(label: str) -> Graph:
    node = {
        "id": TENSOR_ID,
        "type": TENSOR,
        "label": label,
        "body": {"dtype": "int8", "range": {"start": [0], "end": [3]}},
    }
    return Graph.from_json({"id": GRAPH_ID, "nodes": [node]})


@pytest.mark.parametrize(("case", "label"), HOSTILE, ids=[c for c, _ in HOSTILE])
def test_hostile_labels_render_literally_in_svg(
    case: str, label: str, capfd: pytest.CaptureFixture[str]
) -> None:
    # given a tensor whose label is hostile text
    graph = graph_with_tensor_label(label)
    # when it is rendered to SVG
    svg = SvgView.parse(render(graph, "svg"))
    # then the SVG is well-formed, has the one node, and shows the label exactly
    group = svg.node_group("node-" + TENSOR_ID)
    assert len(svg.groups("node")) == 1, case
    assert svg.lines(group) == [label, "int8", "3"], case
    # and Graphviz reported no error or warning (a bad label would fall back with an error)
    err = capfd.readouterr().err
    assert "Error" not in err and "Warning" not in err, (case, err)


@pytest.mark.parametrize(("case", "label"), HOSTILE, ids=[c for c, _ in HOSTILE])
def test_hostile_text_is_kept_in_the_dot_text(case: str, label: str) -> None:
    # given a hostile label, when the DOT text is parsed back
    view = DotView.parse(to_dot(graph_with_tensor_label(label)))
    # then it is still one node with the label as its first line
    assert view.agraph.nodes() == ["tensor0"], case
    assert view.text("tensor0").split("\n")[0] == label, case


def test_hostile_issue_text_reaches_the_tooltip_literally() -> None:
    # given an issue on the tensor whose summary and message are hostile
    graph = graph_with_tensor_label("t")
    summary = 'bad "dtype" <int8> & \\N'
    message = "line one\nline two \\n \\\\ 'q'"
    issue = Issue("TensorDTypesAreValid", "X", summary, message, node_ids=(TENSOR_ID,))
    # when it is rendered to SVG
    svg = SvgView.parse(render(graph, "svg", [issue]))
    group = svg.node_group("node-" + TENSOR_ID)
    # then the tooltip shows the issue exactly, then what the node is
    assert svg.tooltip(group) == (
        f"error: TensorDTypesAreValid: {summary}\n{message}\n\nTensor {TENSOR_ID}"
    )
    assert svg.lines(group)[-1] == f"error: {summary}"


@pytest.mark.parametrize(
    ("case", "text", "shown"),
    [
        ("control characters are replaced", "a\x00b\x07c", "a\ufffdb\ufffdc"),
        ("a lone surrogate is replaced", "a\ud800b", "a\ufffdb"),
        ("tabs become spaces", "a\tb", "a b"),
        ("long labels are cut", "x" * 100, "x" * 47 + "…"),
    ],
)
def test_text_xml_cannot_carry_is_replaced_and_long_text_is_cut(
    case: str, text: str, shown: str
) -> None:
    # given a tensor labelled with such text, when rendered to SVG
    svg = SvgView.parse(render(graph_with_tensor_label(text), "svg"))
    # then the label shows the cleaned text
    assert svg.lines(svg.node_group("node-" + TENSOR_ID))[0] == shown, case


def test_hostile_text_in_notes_kernels_and_keys_renders(capfd: pytest.CaptureFixture[str]) -> None:
    # given hostile text in a note, a kernel name, an IO key and a node type
    nodes: list[dict[str, Any]] = [
        {
            "id": TENSOR_ID,
            "type": TENSOR,
            "body": {"dtype": "int8", "range": {"start": [0], "end": [2]}},
        },
        {"id": "n", "type": NOTE, "body": {"message": '<a href="x">&</a>\n\\G'}},
        {
            "id": "op",
            "type": OPERATION,
            "body": {
                "kernel": "<k&>",
                "inputs": {'x"<y>': [{"tensorId": TENSOR_ID, "range": {"start": [0], "end": [2]}}]},
            },
        },
        {"id": "w", "type": 'urn:"<x>"#/nodes/W&', "body": {}},
    ]
    graph = Graph.from_json({"id": GRAPH_ID, "nodes": nodes})
    # when rendered to SVG
    svg = SvgView.parse(render(graph, "svg"))
    # then each shows its text literally
    assert svg.lines(svg.node_group("node-n")) == ['<a href="x">&</a>', "\\G"]
    assert svg.lines(svg.node_group("node-op")) == ["<k&>"]
    assert svg.lines(svg.node_group("node-w")) == ["w", "W&"]
    edge_text = ["".join(t.itertext()) for g in svg.groups("edge") for t in g.iter()]
    assert 'x"<y>' in edge_text
    err = capfd.readouterr().err
    assert "Error" not in err and "Warning" not in err, err
