"""Sharding an operation into Applications (DESIGN.md §4 shard plans, issue 3)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from geon.core.constraints import check
from geon.core.errors import DocumentError, GeonError, SplitError
from geon.core.graph import (
    APPLICATION,
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    MESH,
    OPERATION,
    PLACEMENT,
    TENSOR,
    TENSOR_AXES,
    Graph,
)
from geon.core.sharding import Mesh, device_bytes, shard, shard_ranges
from geon.core.zspace import ZRange

OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
OLD_APPS = ("2524fb44-d169-4afd-90fa-09711462e4b3", "2af709e2-c792-4712-80cc-0624ee767115")
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"
Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"
MESH_ID = "00000000-0000-4000-8000-0000000000e0"


def ids() -> Callable[[], str]:
    counter = itertools.count(100)
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"


def app_ranges(g: Graph, op: str = OP) -> list[tuple[str, list[str], str]]:
    """(index, input ranges, output range) of each application, as text."""
    out = []
    for app in g.index.applications_of(op):
        ins = [str(ZRange.from_json(s["range"])) for s in app.body["inputs"]["tensors"]]
        res = str(ZRange.from_json(app.body["outputs"]["result"][0]["range"]))
        out.append((str(ZRange.from_json(app.tags[IPF_INDEX])), ins, res))
    return out


def test_sharding_in_two_reproduces_the_loom_example(loom_doc: dict[str, Any]) -> None:
    # given the example with its applications removed
    g = Graph.from_json(loom_doc)
    g.apply([{"op": "remove_node", "id": a} for a in OLD_APPS])
    # when sharded along dim 0 into 2 parts
    shard(g, OP, dim=0, parts=2, new_id=ids())
    # then the applications select what loom's did, and the graph checks clean
    assert app_ranges(g) == [
        ("[0:5, 0:5]", ["[0:5, 0:5]", "[200:205, 50:55]"], "[0:5, 0:5]"),
        ("[5:10, 0:5]", ["[5:10, 0:5]", "[205:210, 50:55]"], "[5:10, 0:5]"),
    ]
    assert check(g) == []


@pytest.mark.parametrize(
    ("kwargs", "indexes"),
    [
        ({"dim": 0, "chunk": 4}, ["[0:4, 0:5]", "[4:8, 0:5]", "[8:10, 0:5]"]),
        ({"dim": "0", "sizes": [1, 9]}, ["[0:1, 0:5]", "[1:10, 0:5]"]),
        ({"dim": 1, "parts": 2}, ["[0:10, 0:3]", "[0:10, 3:5]"]),
        ({"grid": {0: 2, 1: 2}}, ["[0:5, 0:3]", "[0:5, 3:5]", "[5:10, 0:3]", "[5:10, 3:5]"]),
    ],
    ids=["chunk-4-smaller-last", "sizes", "parts-dim-1", "grid"],
)
def test_resharding_replaces_the_old_applications(
    loom_doc: dict[str, Any], kwargs: dict[str, Any], indexes: list[str]
) -> None:
    g = Graph.from_json(loom_doc)
    changes = shard(g, OP, new_id=ids(), **kwargs)
    assert [r[0] for r in app_ranges(g)] == indexes
    assert all(a not in g for a in OLD_APPS)
    assert sorted(c.id for c in changes if c.new is None) == sorted(OLD_APPS)
    assert check(g) == []


def test_chunked_selections_are_projected_with_offsets(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    shard(g, OP, dim=0, chunk=4, new_id=ids())
    assert [r[1][1] for r in app_ranges(g)] == [
        "[200:204, 50:55]",
        "[204:208, 50:55]",
        "[208:210, 50:55]",
    ]


def window_graph() -> tuple[Graph, str]:
    """y[i] = x[i] + x[i+1] + x[i+2]: a window kernel with named index axis "N"."""
    x, y, op, n = (f"00000000-0000-4000-8000-00000000000{k}" for k in (1, 2, 3, 4))
    ipf_in = {"affineMap": {"projection": [[1]], "offset": [0]}, "shape": [3]}
    ipf_out = {"affineMap": {"projection": [[1]], "offset": [0]}, "shape": [1]}
    doc = {
        "id": "00000000-0000-4000-8000-000000000000",
        "nodes": [
            {"id": n, "type": AXIS, "body": {"name": "N", "length": 8}},
            {
                "id": x,
                "type": TENSOR,
                "body": {"dtype": "float32", "range": {"start": [0], "end": [10]}},
            },
            {
                "id": y,
                "type": TENSOR,
                "body": {"dtype": "float32", "range": {"start": [0], "end": [8]}},
            },
            {
                "id": op,
                "type": OPERATION,
                "body": {
                    "kernel": "custom:window3",
                    "inputs": {"x": [{"tensorId": x, "range": {"start": [0], "end": [10]}}]},
                    "outputs": {"result": [{"tensorId": y, "range": {"start": [0], "end": [8]}}]},
                },
                "tags": {
                    INDEX_AXES: {"axes": ["N"]},
                    IPF_SIGNATURE: {"inputs": {"x": [ipf_in]}, "outputs": {"result": [ipf_out]}},
                },
            },
        ],
    }
    return Graph.from_json(doc), op


def test_window_projection_gives_halos_and_exact_output_coverage() -> None:
    # given a window op whose index range comes from its IndexAxes (N = 8)
    g, op = window_graph()
    # when sharded by index-axis name into 3 parts
    shard(g, op, dim="N", parts=3, new_id=ids())
    apps = g.index.applications_of(op)
    ins = [str(ZRange.from_json(a.body["inputs"]["x"][0]["range"])) for a in apps]
    outs = [str(ZRange.from_json(a.body["outputs"]["result"][0]["range"])) for a in apps]
    # then inputs overlap by the halo while outputs partition the result
    assert ins == ["[0:5]", "[3:8]", "[6:10]"]
    assert outs == ["[0:3]", "[3:6]", "[6:8]"]
    assert check(g) == []


def test_shards_are_placed_on_the_mesh(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    g.add_node({"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"x": 2, "y": 2}}})
    # row-major over the devices
    shard(g, OP, dim=0, parts=3, mesh=MESH_ID, new_id=ids())
    assert [a.tags[PLACEMENT] for a in g.index.applications_of(OP)] == [
        {"mesh": MESH_ID, "coords": [0, 0]},
        {"mesh": MESH_ID, "coords": [0, 1]},
        {"mesh": MESH_ID, "coords": [1, 0]},
    ]
    # over named mesh axes: dim 1 over "y", dim 0 over "x"
    shard(g, OP, mesh=MESH_ID, over={1: "y", 0: "x"}, new_id=ids())
    placed = [
        (str(ZRange.from_json(a.tags[IPF_INDEX])), a.tags[PLACEMENT]["coords"])
        for a in g.index.applications_of(OP)
    ]
    assert placed == [
        ("[0:5, 0:3]", [0, 0]),
        ("[0:5, 3:5]", [0, 1]),
        ("[5:10, 0:3]", [1, 0]),
        ("[5:10, 3:5]", [1, 1]),
    ]
    assert check(g) == []
    # and the cost model counts the bytes each device reads and writes (int32 = 4 bytes)
    assert device_bytes(g)[(MESH_ID, (0, 0))] == {"inputs": 2 * 15 * 4, "outputs": 15 * 4}


def test_mesh_coordinates_are_row_major() -> None:
    m = Mesh("m", "m", (("x", 2), ("y", 3)))
    assert [m.coords(i) for i in range(6)] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"op_id": "nope", "dim": 0, "parts": 2},
            DocumentError,
            'operation "nope" does not exist; expected the id of one of the 1 operations in the '
            "graph",
        ),
        (
            {"op_id": T0, "dim": 0, "parts": 2},
            DocumentError,
            f'node "{T0}" is a Tensor; expected an Operation',
        ),
        (
            {"op_id": OP, "dim": 2, "parts": 2},
            SplitError,
            f'dim "2" is not an index dim of operation "{OP}"; expected 0..1',
        ),
        (
            {"op_id": OP, "dim": "H", "parts": 2},
            SplitError,
            f'axis "H" cannot be resolved: operation "{OP}" has no IndexAxes; expected a dim '
            "number 0..1",
        ),
        (
            {"op_id": OP, "dim": 0, "parts": 11},
            SplitError,
            "splitting [0:10, 0:5] gives 1 empty shards (such as [10:10, 0:5]); expected fewer "
            "parts than index points in the split dims",
        ),
        (
            {"op_id": OP, "dim": 0, "sizes": [3, 3]},
            SplitError,
            'sizes "[3, 3]" for dim 0 sum to 6; expected them to sum to the length 10 of '
            "[0:10, 0:5]",
        ),
        (
            {"op_id": OP, "dim": 0, "parts": 2, "mesh": T0},
            DocumentError,
            f'mesh "{T0}" does not exist; expected the id of a Mesh node',
        ),
        ({"op_id": OP, "parts": 2}, SplitError, "a split needs a dim (or a grid); none was given"),
        (
            {"op_id": OP, "over": {0: "x"}},
            SplitError,
            "splitting over mesh axes needs a mesh; none was given",
        ),
    ],
    ids=[
        "missing-op",
        "not-an-op",
        "dim-out-of-range",
        "axis-without-index-axes",
        "empty-shards",
        "bad-sizes",
        "mesh-missing",
        "no-dim",
        "over-without-mesh",
    ],
)
def test_refused_shardings_name_the_problem_and_change_nothing(
    loom_doc: dict[str, Any], kwargs: dict[str, Any], error: type, message: str
) -> None:
    g = Graph.from_json(loom_doc)
    before = json.dumps(g.to_json())
    op_id = kwargs.pop("op_id")
    with pytest.raises(error) as info:
        shard(g, op_id, new_id=ids(), **kwargs)
    assert str(info.value) == message
    assert json.dumps(g.to_json()) == before


def test_unknown_index_axis_name_lists_the_valid_ones() -> None:
    g, op = window_graph()
    with pytest.raises(SplitError) as info:
        shard(g, op, dim="K", parts=2)
    assert str(info.value) == (
        f'axis "K" is not an index axis of operation "{op}"; expected one of ("N") or a dim '
        "number 0..0"
    )


def test_operation_without_signature_cannot_be_sharded(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    g.apply([{"op": "update_node", "id": OP, "tags": {IPF_SIGNATURE: None}}])
    with pytest.raises(GeonError) as info:
        shard(g, OP, dim=0, parts=2)
    assert str(info.value) == (
        f'operation "{OP}" has no IPFSignature; expected one to project the shards\' index '
        "ranges onto its tensors"
    )


def test_shard_ranges_grid_and_errors() -> None:
    r = ZRange([0, 0], [4, 4])
    assert [str(s) for s in shard_ranges(r, dim=1, chunk=3)] == ["[0:4, 0:3]", "[0:4, 3:4]"]
    with pytest.raises(SplitError) as info:
        shard_ranges(r, dim=0, grid={0: 2})
    assert str(info.value) == (
        "a grid split takes no dim, parts, chunk or sizes; give one or the other"
    )


def test_sharded_applications_are_valid_loom_nodes(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    shard(g, OP, dim=0, parts=4, new_id=ids())
    apps = [n for n in g.to_json()["nodes"] if n["type"] == APPLICATION]
    assert [sorted(a) for a in apps] == [["body", "id", "tags", "type"]] * 4
    assert sorted(apps[0]["body"]) == ["inputs", "operationId", "outputs"]
    assert sorted(apps[0]["tags"]) == [IPF_INDEX]
    assert TENSOR_AXES not in apps[0]["tags"]
