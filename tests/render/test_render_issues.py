"""Issues on the diagram: nodes named by errors in red with the summary, warnings in amber."""

from __future__ import annotations

from render_helpers import (
    LOOM_APP_LOW,
    LOOM_OP,
    LOOM_T0,
    DotView,
    SvgView,
    label_text,
    loom_json,
)

from geon.core.checks import check
from geon.core.graph import AXIS, Graph
from geon.core.issues import Issue
from geon.render import render, to_dot
from geon.render.labels import TIMES as X

RED = "#D62728"


def test_a_checker_error_outlines_its_node_in_red_with_the_summary() -> None:
    # given the loom example whose tensor t0 has a dtype that does not exist
    data = loom_json()
    t0 = next(n for n in data["nodes"] if n["id"] == LOOM_T0)
    t0["body"]["dtype"] = "int33"
    graph = Graph.from_json(data)
    issues = check(graph)
    assert [(i.constraint, i.summary, i.node_ids) for i in issues] == [
        ("TensorDTypesAreValid", "Tensor dtype is not valid", (LOOM_T0,))
    ]
    # when drawn with its issues
    view = DotView.parse(to_dot(graph, issues))
    name = view.name_of(LOOM_T0)
    # then t0 is outlined in red, says the issue's summary and has it in full in its tooltip
    assert view.attr(name, "color") == RED
    assert view.attr(name, "penwidth") == "2.5"
    assert view.attr(name, "fillcolor") == "#FDECEA"
    assert view.attr(name, "class") == "issue-error"
    assert view.text(name) == f"t0\nint33\n10{X}5\nerror: Tensor dtype is not valid"
    assert view.attr(name, "tooltip") == (
        f"error: TensorDTypesAreValid: Tensor dtype is not valid\n{issues[0].message}"
        f"\n\nTensor {LOOM_T0}"
    ).replace("\\", "\\\\\\\\").replace("\n", "\\n")
    # and the nodes no issue names are not
    assert view.attr(view.name_of(LOOM_APP_LOW), "class") == ""


def test_nodes_without_issues_are_drawn_plain() -> None:
    # given the loom example, which has no issue
    graph = Graph.from_json(loom_json())
    assert check(graph) == []
    # then drawing it with its (empty) issues is drawing it without issues
    assert to_dot(graph, []) == to_dot(graph)
    assert "issue-error" not in to_dot(graph, check(graph))


def test_warnings_are_amber_and_info_is_not_drawn() -> None:
    # given one warning and one info issue on the operation
    graph = Graph.from_json(loom_json())
    warn = Issue("C", "T", "Looks odd", "m", severity="warning", node_ids=(LOOM_OP,))
    info = Issue("C", "T", "Fyi", "m", severity="info", node_ids=(LOOM_T0,))
    view = DotView.parse(to_dot(graph, [warn, info]))
    # then the operation is outlined in amber and says so; the info draws nothing
    op = view.name_of(LOOM_OP)
    assert view.attr(op, "color") == "#E08E0B"
    assert view.text(op).split("\n")[-1] == "warning: Looks odd"
    assert view.attr(view.name_of(LOOM_T0), "tooltip") == f"Tensor {LOOM_T0}"
    assert view.agraph.graph_attr["label"].count("1 warning") == 1


def test_issues_naming_no_drawn_node_go_to_the_caption() -> None:
    # given a document whose id is not a UUID (an issue on the document, no node)
    data = loom_json()
    data["id"] = "not-a-uuid"
    graph = Graph.from_json(data)
    issues = check(graph)
    assert [i.summary for i in issues] == ["Document id is not a UUID"]
    # when drawn, then the caption counts it and names it
    view = DotView.parse(to_dot(graph, issues))
    assert label_text(view.agraph.graph_attr["label"]) == (
        "1 error\nerror: Document id is not a UUID"
    )
    assert view.agraph.graph_attr["labelloc"] == "b"


def test_an_axis_with_an_error_is_a_red_column_in_the_legend() -> None:
    # given two declarations, one with an invalid length
    nodes = [
        {"id": "a1", "type": AXIS, "body": {"name": "H", "length": 2}},
        {"id": "a2", "type": AXIS, "body": {"name": "W", "length": 0}},
    ]
    graph = Graph.from_json({"id": "00000000-0000-4000-8000-000000000000", "nodes": nodes})
    issues = [i for i in check(graph) if i.constraint == "AxisDeclarations"]
    assert [(i.summary, i.node_ids) for i in issues] == [("Axis declaration is invalid", ("a2",))]
    view = DotView.parse(to_dot(graph, issues))
    # then the legend table is outlined in red, the bad axis's name and length cells are red
    # and the tooltip says why
    label = view.attr("axes", "label")
    assert label.count('bgcolor="#FDECEA"') == 2
    assert view.attr("axes", "color") == RED
    assert view.attr("axes", "tooltip") == (
        f"axis W: error: AxisDeclarations: Axis declaration is invalid\\n{issues[0].message}"
    )


def test_highlighted_nodes_are_marked_in_the_svg() -> None:
    # given the loom example with an error on one application
    graph = Graph.from_json(loom_json())
    issue = Issue("C", "T", "Shard is wrong", "m", node_ids=(LOOM_APP_LOW,))
    # when rendered to SVG
    svg = SvgView.parse(render(graph, "svg", [issue]))
    # then exactly that node's group carries the issue class and red outline
    marked = [g.get("id") for g in svg.groups("issue-error")]
    assert marked == ["node-" + LOOM_APP_LOW]
    group = svg.node_group("node-" + LOOM_APP_LOW)
    strokes = {p.get("stroke") for p in group.iter() if p.get("stroke") not in (None, "none")}
    assert strokes == {RED.lower()}
