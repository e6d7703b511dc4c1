"""The DOT builder (DESIGN.md §7): what is drawn, read back through pygraphviz's parser."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from render_helpers import (
    LOOM_APP_HIGH,
    LOOM_APP_LOW,
    LOOM_OP,
    LOOM_T0,
    LOOM_T1,
    LOOM_Z,
    DotView,
    loom_graph,
    loom_json,
)

import geon.core as gc
from geon.core.checks import check
from geon.core.graph import (
    APPLICATION,
    AXIS,
    IPF_INDEX,
    MESH,
    NOTE,
    OPERATION,
    PLACEMENT,
    TENSOR,
    TENSOR_AXES,
    Graph,
)
from geon.core.plans.shards import shard
from geon.render import build, to_dot
from geon.render.labels import TIMES as X
from geon.render.palette import PALETTE, assign

GRAPH_ID = "00000000-0000-4000-8000-000000000000"


def uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def rng(start: list[int], end: list[int]) -> dict[str, list[int]]:
    return {"start": start, "end": end}


def graph_of(*nodes: dict[str, Any]) -> Graph:
    return Graph.from_json({"id": GRAPH_ID, "nodes": list(nodes)})


def tensor(n: int, start: list[int], end: list[int], **kw: Any) -> dict[str, Any]:
    node: dict[str, Any] = {
        "id": uid(n),
        "type": TENSOR,
        "body": {"dtype": "float32", "range": rng(start, end)},
    }
    node.update(kw)
    return node


# -- the loom example ------------------------------------------------------------------------


def test_loom_example_draws_exactly_its_tensors_operation_and_applications() -> None:
    # given the loom example (z = t0 + t1 in two shards)
    graph = loom_graph()
    # when its DOT text is parsed back
    view = DotView.parse(to_dot(graph))
    t0, t1, z = (view.name_of(i) for i in (LOOM_T0, LOOM_T1, LOOM_Z))
    op, low, high = (view.name_of(i) for i in (LOOM_OP, LOOM_APP_LOW, LOOM_APP_HIGH))
    # then there are exactly six nodes: three tensors, and the operation with its two
    # applications in one cluster
    assert view.agraph.is_directed()
    assert sorted(view.agraph.nodes()) == sorted([t0, t1, z, op, low, high])
    assert view.clusters() == {"cluster_op0": {op, low, high}}
    # and each is drawn with its shape and label
    shapes = {name: view.attr(name, "shape") for name in (t0, t1, z, op, low, high)}
    assert shapes == {t0: "box3d", t1: "box3d", z: "box3d", op: "tab", low: "box", high: "box"}
    assert view.text(t0) == f"t0\nint32\n10{X}5"
    assert view.text(t1) == f"t1\nint32\n10{X}5\nat [200:210, 50:55]"
    assert view.text(z) == f"z\nint32\n10{X}5"
    assert view.text(op) == "op:add\nindex [0:10, 0:5]"
    assert view.text(low) == "shard 1\n[0:5, 0:5]"
    assert view.text(high) == "shard 2\n[5:10, 0:5]"
    assert view.attr(low, "style") == "rounded,filled"
    assert view.cluster_attr("cluster_op0", "label").endswith("<b>2 applications</b></font>")


def test_loom_example_edges_follow_every_selection() -> None:
    # given the loom example
    view = DotView.parse(to_dot(loom_graph()))
    t0, t1, z = (view.name_of(i) for i in (LOOM_T0, LOOM_T1, LOOM_Z))
    op, low, high = (view.name_of(i) for i in (LOOM_OP, LOOM_APP_LOW, LOOM_APP_HIGH))
    # then the edges are the operation's and the applications' selections, labelled with the IO
    # key and, for applications, the selected range
    assert view.edges() == {
        (t0, op, "tensors[0]"),
        (t1, op, "tensors[1]"),
        (op, z, "result"),
        (t0, low, "tensors[0]\n[0:5, 0:5]"),
        (t1, low, "tensors[1]\n[200:205, 50:55]"),
        (low, z, "result\n[0:5, 0:5]"),
        (t0, high, "tensors[0]\n[5:10, 0:5]"),
        (t1, high, "tensors[1]\n[205:210, 50:55]"),
        (high, z, "result\n[5:10, 0:5]"),
    }
    assert len(view.agraph.edges()) == 9


def test_build_counts_what_it_draws() -> None:
    # given the loom example, when it is built
    diagram = build(loom_graph())
    # then the counts match the drawing
    assert (diagram.nodes, diagram.edges, diagram.clusters) == (6, 9, 1)
    assert diagram.text == to_dot(loom_graph())


def test_an_operation_and_its_applications_share_one_palette_colour() -> None:
    # given the loom example
    view = DotView.parse(to_dot(loom_graph()))
    op, low = view.name_of(LOOM_OP), view.name_of(LOOM_APP_LOW)
    # then the tab is filled with the operation's palette colour, which outlines its shards and
    # its cluster
    colour = assign([LOOM_OP])[LOOM_OP]
    assert colour.strong in PALETTE
    assert view.attr(op, "fillcolor") == colour.strong
    assert view.attr(low, "color") == colour.strong
    assert view.attr(low, "fillcolor") == colour.shard
    assert view.cluster_attr("cluster_op0", "color") == colour.strong
    assert view.cluster_attr("cluster_op0", "fillcolor") == colour.cluster


def test_the_dot_text_is_deterministic() -> None:
    # given the same document loaded twice, then its DOT text is the same
    assert to_dot(Graph.from_json(loom_json())) == to_dot(Graph.from_json(loom_json()))


# -- colours ---------------------------------------------------------------------------------


def test_operation_colours_are_distinct_and_stable_when_others_come_and_go() -> None:
    # given twelve operations (the palette's size)
    ids = [uid(n) for n in range(12)]
    colours = assign(ids)
    # then each has its own colour
    assert len({c.strong for c in colours.values()}) == 12
    # and an operation whose hash collides with no earlier one keeps its colour without them
    alone = assign([ids[0]])
    assert alone[ids[0]] == colours[ids[0]]


def test_no_operation_is_drawn_in_the_error_red() -> None:
    # given a hundred operations, then none gets the colour reserved for errors
    colours = assign(uid(n) for n in range(100))
    assert "#D62728" not in {c.strong for c in colours.values()}


# -- named axes ------------------------------------------------------------------------------


def named_dot_graph() -> Graph:
    H, W, N = gc.Axis("H", 2, roles="Height"), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1], name="x")
    y = gc.placeholder(axes=[W, N], name="y")
    return gc.graph([gc.dot(x, y, name="z")])


def test_named_tensors_show_their_axes_with_lengths() -> None:
    # given x (H, W-1) · y (W, N) built with the authoring API
    graph = named_dot_graph()
    view = DotView.parse(to_dot(graph))
    by_label = {n.label: view.name_of(n.id) for n in graph.of_type(TENSOR)}
    # then each tensor names its axes with their lengths (not the positional shape)
    assert view.text(by_label["x"]) == "x\nfloat64 · constant\nH=2, W-1=3"
    assert view.text(by_label["y"]) == "y\nfloat64\nW=3, N=4"
    assert view.text(by_label["z"]) == "z\nfloat64\nH=2, N=4"
    # and the operation names its index axes
    op = graph.of_type(OPERATION)[0]
    assert view.text(view.name_of(op.id)) == "op:dot\nindex H 0:2, N 0:4"


def test_axis_declarations_form_a_legend_table() -> None:
    # given the named graph (axes H, W, N declared)
    view = DotView.parse(to_dot(named_dot_graph()))
    # then one table node in the legend cluster lists them, a column each: name, length, roles
    assert view.clusters()["cluster_legend"] == {"axes"}
    assert view.text("axes") == "axisHWNlength234rolesHeight"
    assert view.cluster_attr("cluster_legend", "label").endswith("<b>axes</b></font>")


def test_sharded_named_applications_show_index_axes_and_placement() -> None:
    # given the named graph with a 2-device mesh, its dot sharded over H onto the mesh
    graph = named_dot_graph()
    mesh_id = uid(77)
    graph.add_node({"id": mesh_id, "type": MESH, "body": {"name": "gpus", "axes": {"x": 2}}})
    op = graph.of_type(OPERATION)[0]
    shard(graph, op.id, dim="H", parts=2, mesh=mesh_id, new_id=iter([uid(1), uid(2)]).__next__)
    view = DotView.parse(to_dot(graph))
    # then the applications sit in the operation's cluster with their ranges per index axis and
    # their mesh coordinates
    op_name = view.name_of(op.id)
    apps = {view.name_of(uid(1)), view.name_of(uid(2))}
    assert view.clusters()["cluster_op0"] == {op_name, *apps}
    assert view.text(view.name_of(uid(1))) == "shard 1\nH 0:1, N 0:4\non gpus (0)"
    assert view.text(view.name_of(uid(2))) == "shard 2\nH 1:2, N 0:4\non gpus (1)"
    # and the mesh is drawn in the legend
    assert view.clusters()["cluster_legend"] == {"axes", view.name_of(mesh_id)}
    assert view.text(view.name_of(mesh_id)) == "mesh gpus\nx=2 · 2 devices"
    assert view.attr(view.name_of(mesh_id), "shape") == "component"
    assert view.cluster_attr("cluster_legend", "label").endswith("<b>axes and meshes</b></font>")


# -- other node kinds and broken documents ---------------------------------------------------


@pytest.mark.parametrize(
    ("label", "node", "shape", "text"),
    [
        (
            "note",
            {"id": uid(1), "type": NOTE, "label": "todo", "body": {"message": "shard over N"}},
            "note",
            "todo\nshard over N",
        ),
        (
            "long note wraps at 40 characters",
            {"id": uid(1), "type": NOTE, "body": {"message": "word " * 12}},
            "note",
            "word word word word word word word word\nword word word word",
        ),
        (
            "positional tensor at an offset",
            tensor(1, [200, 50], [210, 55], label="t"),
            "box3d",
            f"t\nfloat32\n10{X}5\nat [200:210, 50:55]",
        ),
        (
            "unlabelled tensor shows its short id",
            tensor(1, [0], [4]),
            "box3d",
            "00000000\nfloat32\n4",
        ),
        ("scalar tensor", tensor(1, [], [], label="s"), "box3d", "s\nfloat32\nscalar"),
        (
            "axes tag whose rank disagrees shows the names only",
            tensor(1, [0], [4], label="t", tags={TENSOR_AXES: {"axes": ["H", "W"]}}),
            "box3d",
            "t\nfloat32\nH, W",
        ),
        (
            "malformed tensor body",
            {"id": uid(1), "type": TENSOR, "label": "bad", "body": {"dtype": 3, "range": "x"}},
            "box3d",
            "bad\n?\n?",
        ),
        (
            "application whose operation does not exist",
            {"id": uid(1), "type": APPLICATION, "body": {"operationId": "gone"}},
            "box",
            '00000000\noperation "gone" not found',
        ),
        (
            "node of an unknown type",
            {"id": uid(1), "type": "urn:x:types#/nodes/Widget", "label": "w", "body": {}},
            "box",
            "w\nWidget",
        ),
        (
            "operation with params and no index",
            {
                "id": uid(1),
                "type": OPERATION,
                "body": {"kernel": "op:sum", "params": {"reduction_axes": ["H"]}},
            },
            "tab",
            "op:sum\nreduction_axes=[H]",
        ),
    ],
)
def test_each_node_kind_is_drawn_with_its_shape_and_label(
    label: str, node: dict[str, Any], shape: str, text: str
) -> None:
    # given a document with one node
    graph = graph_of(node)
    # when it is drawn
    view = DotView.parse(to_dot(graph))
    name = view.name_of(node["id"])
    # then the node has the expected shape and text
    assert view.attr(name, "shape") == shape, label
    assert view.text(name) == text, label


def test_a_reference_to_a_missing_tensor_is_drawn_as_a_missing_node() -> None:
    # given an operation reading a tensor that does not exist
    op = {
        "id": uid(2),
        "type": OPERATION,
        "body": {
            "kernel": "op:relu",
            "inputs": {"tensor": [{"tensorId": "ghost", "range": rng([0], [4])}]},
            "outputs": {"result": [{"tensorId": uid(1), "range": rng([0], [4])}]},
        },
    }
    view = DotView.parse(to_dot(graph_of(tensor(1, [0], [4], label="y"), op)))
    # then a dashed red "missing node" box stands in for it, and the edge still points at it
    assert view.text("missing0") == "missing node\nghost"
    assert view.attr("missing0", "style") == "dashed,filled"
    assert view.attr("missing0", "color") == "#D62728"
    assert view.edges() == {
        ("missing0", "op0", "tensor"),
        ("op0", view.name_of(uid(1)), "result"),
    }


def test_applications_of_an_operation_are_drawn_in_index_order() -> None:
    # given the loom example, whose applications come high shard first in the document
    graph = loom_graph()
    first = next(n for n in graph.nodes if n.type == APPLICATION)
    assert first.tags[IPF_INDEX] == rng([5, 0], [10, 5])
    # when drawn, then the shard at the origin is "shard 1" and is emitted first
    text = to_dot(graph)
    low, high = text.index("node-" + LOOM_APP_LOW), text.index("node-" + LOOM_APP_HIGH)
    assert low < high


def test_a_placement_on_a_missing_mesh_names_the_mesh_id() -> None:
    # given the loom example with one application placed on a mesh that does not exist
    data = loom_json()
    app = next(n for n in data["nodes"] if n["id"] == LOOM_APP_LOW)
    app["tags"][PLACEMENT] = {"mesh": "m-404", "coords": [1, 0]}
    view = DotView.parse(to_dot(Graph.from_json(data)))
    # then the application says where it was placed
    assert view.text(view.name_of(LOOM_APP_LOW)) == "shard 1\n[0:5, 0:5]\non m-404 (1, 0)"


def test_a_document_id_that_is_unsafe_is_not_used_as_an_element_id() -> None:
    # given a tensor whose id holds quotes and backslashes
    node = tensor(1, [0], [2], label="t")
    node["id"] = 'a"b\\c'
    view = DotView.parse(to_dot(graph_of(node, {"id": uid(9), "type": AXIS, "body": {}})))
    # then it is drawn without an id attribute (its name is geon's own)
    assert view.attr("tensor0", "id") == ""
    assert view.text("tensor0") == "t\nfloat32\n2"


def test_long_operation_params_wrap_and_are_cut_after_three_lines() -> None:
    # given an operation with many parameters
    params = {f"p{i}": [i, i + 1] for i in range(12)}
    view = DotView.parse(
        to_dot(
            graph_of({"id": uid(1), "type": OPERATION, "body": {"kernel": "k", "params": params}})
        )
    )
    # then they show as key=value pairs wrapped at 44 characters, three lines at most
    assert view.text("op0") == (
        "k\n"
        "p0=[0, 1], p1=[1, 2], p2=[2, 3], p3=[3, 4],\n"
        "p4=[4, 5], p5=[5, 6], p6=[6, 7], p7=[7, 8],\n"
        "p8=[8, 9], p9=[9, 10], p10=[10, 11], …"
    )


def test_the_axes_legend_wraps_after_ten_axes() -> None:
    # given twelve axis declarations
    axes = [
        {"id": uid(n), "type": AXIS, "body": {"name": f"A{n}", "length": n + 1}} for n in range(12)
    ]
    view = DotView.parse(to_dot(graph_of(*axes)))
    # then the table has two blocks: ten columns, then two
    assert view.text("axes") == ("axisA0A1A2A3A4A5A6A7A8A9length12345678910axisA10A11length1112")


def chain(n: int) -> Graph:
    """x -> relu -> relu -> ... (n operations), positional."""
    nodes: list[dict[str, Any]] = [tensor(0, [0], [4], label="x0")]
    for i in range(n):
        nodes.append(tensor(i + 1, [0], [4], label=f"x{i + 1}"))
        nodes.append(
            {
                "id": uid(100 + i),
                "type": OPERATION,
                "body": {
                    "kernel": "op:relu",
                    "inputs": {"tensor": [{"tensorId": uid(i), "range": rng([0], [4])}]},
                    "outputs": {"result": [{"tensorId": uid(i + 1), "range": rng([0], [4])}]},
                },
            }
        )
    return graph_of(*nodes)


@pytest.mark.parametrize(("ops", "rankdir"), [(1, "LR"), (4, "LR"), (5, "TB"), (40, "TB")])
def test_deep_graphs_are_laid_out_top_to_bottom(ops: int, rankdir: str) -> None:
    # given a chain of operations, then up to four in a row read left to right, more top down
    view = DotView.parse(to_dot(chain(ops)))
    assert view.agraph.graph_attr["rankdir"] == rankdir


def test_a_cycle_between_operations_still_draws() -> None:
    # given two operations that read each other's result (a cycle the checker reports)
    a, b = tensor(1, [0], [2], label="a"), tensor(2, [0], [2], label="b")

    def op(n: int, src: str, dst: str) -> dict[str, Any]:
        return {
            "id": uid(n),
            "type": OPERATION,
            "body": {
                "kernel": "op:relu",
                "inputs": {"tensor": [{"tensorId": src, "range": rng([0], [2])}]},
                "outputs": {"result": [{"tensorId": dst, "range": rng([0], [2])}]},
            },
        }

    graph = graph_of(a, b, op(3, uid(1), uid(2)), op(4, uid(2), uid(1)))
    # when drawn, then both edges of each operation are there
    view = DotView.parse(to_dot(graph, check(graph)))
    assert len(view.agraph.edges()) == 4
    assert view.attr("op0", "class") == "issue-error"
