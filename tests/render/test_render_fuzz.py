"""Any document geon can load draws: random bodies and tags never raise and never make Graphviz
complain (which would mean a label fell back to raw text)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from render_helpers import DotView

from geon.core.checks import check
from geon.core.graph import NODE_TYPES, TAG_TYPES, Graph
from geon.render import build, render

IDS = ["a", "b", "c", "d", "e"]
HOSTILE = st.text(
    alphabet=st.sampled_from([*"ab<>&\"'\\\n\t{}|[]NGl\x00\x07é変🙂", "\ud800"]),
    max_size=12,
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False)
    | HOSTILE
    | st.sampled_from(IDS)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE, inner, max_size=4),
    max_leaves=12,
)
RANGES = st.integers(0, 3).flatmap(
    lambda rank: st.fixed_dictionaries(
        {
            "start": st.lists(st.integers(-5, 5), min_size=rank, max_size=rank),
            "end": st.lists(st.integers(5, 12), min_size=rank, max_size=rank),
        }
    )
)
SELECTION = st.fixed_dictionaries({"tensorId": st.sampled_from([*IDS, "ghost"]), "range": RANGES})
SELMAP = st.dictionaries(
    st.sampled_from(["x", "y", "tensors", "result", 'k"<']),
    st.lists(SELECTION, max_size=3),
    max_size=3,
)
BODY_FIELDS = {
    "dtype": st.sampled_from(["int32", "float64", "bogus"]) | JSON,
    "range": RANGES | JSON,
    "kernel": st.sampled_from(["op:add", "op:dot"]) | HOSTILE,
    "inputs": SELMAP | JSON,
    "outputs": SELMAP | JSON,
    "params": st.dictionaries(HOSTILE, JSON, max_size=4) | JSON,
    "operationId": st.sampled_from(IDS) | JSON,
    "message": HOSTILE | JSON,
    "name": st.sampled_from(["H", "W"]) | HOSTILE,
    "length": st.integers(-2, 10) | JSON,
    "roles": st.lists(HOSTILE, max_size=3) | JSON,
    "axes": st.dictionaries(HOSTILE, st.integers(-1, 4) | JSON, max_size=3) | JSON,
}
TAG_VALUES = st.one_of(
    RANGES,
    st.fixed_dictionaries({"axes": st.lists(HOSTILE | st.sampled_from(["H", "W-1"]), max_size=3)}),
    st.fixed_dictionaries(
        {"mesh": st.sampled_from(IDS) | JSON, "coords": st.lists(st.integers(0, 3), max_size=2)}
    ),
    JSON,
)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    nodes = []
    for node_id in draw(st.lists(st.sampled_from(IDS), unique=True, max_size=5)):
        fields = draw(st.lists(st.sampled_from(sorted(BODY_FIELDS)), unique=True, max_size=5))
        node: dict[str, Any] = {
            "id": node_id,
            "type": draw(st.sampled_from(list(NODE_TYPES.values())) | HOSTILE),
            "body": {f: draw(BODY_FIELDS[f]) for f in fields},
        }
        label = draw(st.none() | HOSTILE)
        if label is not None:
            node["label"] = label
        tags = draw(st.lists(st.sampled_from(list(TAG_TYPES.values())), unique=True, max_size=3))
        if tags:
            node["tags"] = {t: draw(TAG_VALUES) for t in tags}
        nodes.append(node)
    return {"id": "00000000-0000-4000-8000-000000000000", "nodes": nodes}


#: Found by this test: an operation whose selection names an Axis node drew an edge to a DOT
#: node that was never declared (axes are cells of one table), so Graphviz made one up.
SELECTS_AN_AXIS = {
    "id": "00000000-0000-4000-8000-000000000000",
    "nodes": [
        {"id": "a", "type": NODE_TYPES["Tensor"], "body": {}},
        {
            "id": "b",
            "type": NODE_TYPES["Operation"],
            "body": {
                "kernel": "op:add",
                "inputs": {"x": [{"tensorId": "d", "range": {"start": [0], "end": [1]}}]},
                "outputs": {},
            },
        },
        {"id": "d", "type": NODE_TYPES["Axis"], "body": {}},
    ],
}


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=documents())
@example(data=SELECTS_AN_AXIS)
def test_any_loadable_document_renders_cleanly(
    data: dict[str, Any], capfd: pytest.CaptureFixture[str]
) -> None:
    # given any document that loads, with its issues
    graph = Graph.from_json(data)
    issues = check(graph)
    # when it is drawn
    diagram = build(graph, issues)
    view = DotView.parse(diagram.text)
    svg = ET.fromstring(render(graph, "svg", issues))
    # then the DOT parses back to the nodes it counted, the SVG is well-formed XML,
    # and Graphviz said nothing
    assert len(view.agraph.nodes()) == diagram.nodes
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    err = capfd.readouterr().err
    assert [ln for ln in err.splitlines() if not ln.startswith("Fontconfig")] == []
