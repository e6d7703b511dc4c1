"""Sharding an operation into Applications (DESIGN.md §4 shard plans, issue 3)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geon.core.checks import check
from geon.core.errors import DocumentError, GeonError, LimitError, SplitError
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
from geon.core.plans.cost.cells import device_bytes, transfer_bytes, transfers
from geon.core.plans.cost.ledger import memory_ledger
from geon.core.plans.cost.placed import read_placed
from geon.core.plans.shards import Mesh, shard, shard_edits, shard_ranges
from geon.core.plans.table import UNPLACED
from geon.core.zspace import ZRange
from tests.core.conftest import example_text

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


def test_shard_edits_returns_the_ops_of_a_shard_and_changes_nothing(
    loom_doc: dict[str, Any],
) -> None:
    # given the example, and a copy of it sharded by shard
    g = Graph.from_json(loom_doc)
    sharded = Graph.from_json(loom_doc)
    shard(sharded, OP, dim=1, parts=2, new_id=ids())
    # when the ops of the same shard are asked for
    ops = shard_edits(g, OP, dim=1, parts=2, new_id=ids())
    # then the graph is unchanged, and the ops remove the old applications and add one per shard
    assert g.to_json() == loom_doc
    assert [(o["op"], o.get("id", o.get("node", {}).get("id"))) for o in ops] == [
        ("remove_node", OLD_APPS[0]),
        ("remove_node", OLD_APPS[1]),
        ("add_node", "00000000-0000-4000-8000-000000000100"),
        ("add_node", "00000000-0000-4000-8000-000000000101"),
    ]
    # and applying them gives what shard gave
    g.apply(ops)
    assert g.to_json() == sharded.to_json()


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


# -- cost model: transfers between devices and memory per device ------------------------------

MESH2 = "00000000-0000-4000-8000-0000000000e2"
D0, D1, D2 = (MESH2, (0,)), (MESH2, (1,)), (MESH2, (2,))


def _with_mesh(g: Graph, size: int) -> Graph:
    g.add_node({"id": MESH2, "type": MESH, "body": {"name": "line", "axes": {"d": size}}})
    return g


def _matmul_chain(second_over: str) -> tuple[Graph, dict[str, str]]:
    """h = x·w1 sharded over M (rows) on 2 devices, then y = h·w2 sharded over ``second_over``."""
    from geon import core as gc

    M, K, N, P = gc.Axis("M", 4), gc.Axis("K", 3), gc.Axis("N", 6), gc.Axis("P", 2)
    x = gc.placeholder(axes=[M, K], name="x")
    w1 = gc.placeholder(axes=[K + 1, N], name="w1")
    w2 = gc.placeholder(axes=[N + 1, P], name="w2")
    h = gc.dot(x, w1, name="h")
    y = gc.dot(h, w2, name="y")
    g = _with_mesh(gc.graph([y]), 2)
    assert h.op_id is not None and y.op_id is not None
    shard(g, h.op_id, mesh=MESH2, over={"M": "d"})
    shard(g, y.op_id, mesh=MESH2, over={second_over: "d"})
    ids = {n.label: n.id for n in g.nodes if n.type == TENSOR and n.label}
    return g, ids


def test_a_second_matmul_split_on_another_axis_gathers_h_from_the_other_device() -> None:
    # given h (M=4, N=6, float64) computed by rows on devices 0 and 1, then y = h·w2 split over P
    g, ids = _matmul_chain("P")
    assert check(g) == []
    # when the transfers are computed
    found = transfers(g)
    # then each device receives the half of h the other wrote: 2 x 6 x 8 = 96 bytes each way
    assert [(t.tensor_id, str(t.region), t.bytes, t.source, t.target) for t in found] == [
        (ids["h"], "[2:4, 0:6]", 96, D1, D0),
        (ids["h"], "[0:2, 0:6]", 96, D0, D1),
    ]
    assert transfer_bytes(g) == {(D1, D0): 96, (D0, D1): 96}


def test_a_second_matmul_split_on_the_same_rows_moves_nothing() -> None:
    # given both matmuls split by rows M, on the same devices
    g, _ = _matmul_chain("M")
    # then every shard reads what its own device wrote
    assert transfers(g) == []
    assert transfer_bytes(g) == {}


def test_bytes_per_device_count_cells_once() -> None:
    # given the chain whose second matmul is split over P (device d reads all of h)
    g, _ = _matmul_chain("P")
    # when the bytes each device reads and writes are counted
    touched = device_bytes(g)
    # then device 0 reads x[0:2] (48 B), w1 (144 B), the half of h it does not write (96 B)
    # and w2[:, 0:1] (48 B), and writes h[0:2] (96 B) and y[:, 0:1] (32 B)
    assert touched == {
        D0: {"inputs": 48 + 144 + 96 + 48, "outputs": 96 + 32},
        D1: {"inputs": 48 + 144 + 96 + 48, "outputs": 96 + 32},
    }


def test_padded_reads_hold_zero_filled_temporaries() -> None:
    # given x (T=4, C=2, float64) padded by 2 before and 1 after into T2=7, cut 2 + 3 + 2 over
    # three devices
    from geon import core as gc

    T, T2, C = gc.Axis("T", 4), gc.Axis("T2", 7), gc.Axis("C", 2)
    x = gc.placeholder(axes=[T, C], name="x")
    p = gc.pad(x, {T: (2, 1)}, axes={T: T2}, name="p")
    g = _with_mesh(gc.graph([p]), 3)
    assert p.op_id is not None
    shard(g, p.op_id, dim="T2", sizes=[2, 3, 2], mesh=MESH2)
    # when the memory ledger of each device is read (the one memory model, issue 37)
    ledger = memory_ledger(read_placed(g))
    # then the first shard reads no row of x into a zero buffer of 2 x 2 cells, the second reads
    # rows [0:3] in place, and the third reads row [3:4] into a 2 x 2 buffer: the buffers are
    # temporaries, the rows of x read and of p written activations (the batch, the result)
    found = {d: (m.peak, dict(m.split)["temporaries"]) for d, m in ledger.items()}
    assert found == {
        D0: (2 * 2 * 8 + 2 * 2 * 8, 2 * 2 * 8),
        D1: (3 * 2 * 8 + 3 * 2 * 8, 0),
        D2: (1 * 2 * 8 + 2 * 2 * 8 + 2 * 2 * 8, 2 * 2 * 8),
    }
    assert transfers(g) == []


def test_unplaced_applications_run_whole_on_one_device(loom_doc: dict[str, Any]) -> None:
    # given the loom example, sharded without a mesh (no Application is placed)
    g = Graph.from_json(loom_doc)
    # then the document runs whole on the one unplaced device (issue 35): it reads both int32
    # [0:10, 0:5] inputs and writes the sum, and nothing moves
    assert device_bytes(g) == {UNPLACED: {"inputs": 2 * 10 * 5 * 4, "outputs": 10 * 5 * 4}}
    assert transfers(g) == []


def test_resharding_rows_to_columns_is_an_all_to_all() -> None:
    # given h (M=4, N=6, float64) computed by rows on devices 0 and 1, then relu(h) by columns
    from geon import core as gc

    M, K, N = gc.Axis("M", 4), gc.Axis("K", 3), gc.Axis("N", 6)
    h = gc.dot(gc.placeholder(axes=[M, K]), gc.placeholder(axes=[K + 1, N]), name="h")
    r = gc.relu(h, name="r")
    g = _with_mesh(gc.graph([r]), 2)
    assert h.op_id is not None and r.op_id is not None
    shard(g, h.op_id, mesh=MESH2, over={"M": "d"})
    shard(g, r.op_id, mesh=MESH2, over={"N": "d"})
    # when the transfers are computed
    found = transfers(g)
    # then each device sends the other the quarter of h it wrote and the other reads: 2x3x8 B
    assert [(str(t.region), t.bytes, t.source, t.target) for t in found] == [
        ("[2:4, 0:3]", 48, D1, D0),
        ("[0:2, 3:6]", 48, D0, D1),
    ]


# -- bounds (issue 13, finding 4): refused before any shard is built -------------------------

BIG = 2**40
"""An index length whose shards, one per point, would need terabytes."""


def big_graph(mesh_axes: dict[str, int] | None = None) -> tuple[Graph, str]:
    """y = x + x over one axis "N" of length 2**40 (nothing is allocated), with a Mesh."""
    from geon import core as gc

    n = gc.Axis("N", BIG)
    x = gc.placeholder(axes=[n], name="x")
    y = x + x
    g = gc.graph([y])
    g.add_node({"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": mesh_axes or {"x": 2}}})
    return g, y.op_id


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("mesh_axes", "kwargs", "error", "message"),
    [
        (
            None,
            {"dim": "N", "parts": 10**12},
            LimitError,
            "splitting [0:1099511627776] along dim 0 gives 1000000000000 pieces; expected at "
            "most 4096",
        ),
        (
            None,
            {"dim": "N", "chunk": 1},
            LimitError,
            "splitting [0:1099511627776] along dim 0 gives 1099511627776 pieces; expected at "
            "most 4096",
        ),
        (
            None,
            {"dim": "N", "parts": 4097},
            LimitError,
            "splitting [0:1099511627776] along dim 0 gives 4097 pieces; expected at most 4096",
        ),
        (
            None,
            {"grid": {"N": 10**12}},
            LimitError,
            "splitting [0:1099511627776] along dims [0] gives 1000000000000 pieces; expected at "
            "most 4096",
        ),
        (
            {"x": 10**12},
            {"mesh": MESH_ID, "over": {"N": "x"}},
            LimitError,
            f'mesh "{MESH_ID}" has 1000000000000 devices (x=1000000000000); expected at most 65536',
        ),
        (
            {"x": 1024, "y": 1024},
            {"mesh": MESH_ID, "dim": "N", "parts": 2},
            LimitError,
            f'mesh "{MESH_ID}" has 1048576 devices (x=1024 x y=1024); expected at most 65536',
        ),
        (
            {f"a{i}": 1 for i in range(17)},
            {"mesh": MESH_ID, "dim": "N", "parts": 2},
            LimitError,
            f'mesh "{MESH_ID}" has 17 axes; expected at most 16',
        ),
        (
            {"x": 0},
            {"mesh": MESH_ID, "dim": "N", "parts": 2},
            DocumentError,
            f'mesh "{MESH_ID}" axis "x" has size "0"; expected an integer >= 1',
        ),
    ],
    ids=[
        "parts-10**12",
        "chunk-1",
        "parts-4097",
        "grid",
        "mesh-axis-10**12",
        "mesh-devices",
        "mesh-axes",
        "mesh-size-0",
    ],
)
def test_huge_shardings_are_refused_before_building(
    mesh_axes: dict[str, int] | None, kwargs: dict[str, Any], error: type, message: str
) -> None:
    # given an index space of 2**40 points, when asked for more shards than the bound, then
    # the refusal names the count and the bound, and the document is unchanged (building 10**12
    # shards first would exhaust memory, not answer)
    g, op = big_graph(mesh_axes)
    before = json.dumps(g.to_json())
    with pytest.raises(error) as info:
        shard(g, op, **kwargs)
    assert str(info.value) == message
    assert json.dumps(g.to_json()) == before


def test_more_parts_than_points_is_refused_before_building(loom_doc: dict[str, Any]) -> None:
    # the empty shards are counted, not built: 10**12 parts of 10 points
    g = Graph.from_json(loom_doc)
    with pytest.raises(SplitError) as info:
        shard(g, OP, dim=0, parts=10**12)
    assert str(info.value) == (
        "splitting [0:10, 0:5] gives 999999999990 empty shards (such as [10:10, 0:5]); "
        "expected fewer parts than index points in the split dims"
    )
    with pytest.raises(SplitError) as info:
        shard(g, OP, grid={0: 10**12, 1: 10**12})
    assert str(info.value) == (
        "splitting [0:10, 0:5] gives 9999999999999... (24 digits) empty shards (such as "
        "[0:1, 5:5]); expected fewer parts than index points in the split dims"
    )


def _built_empty_message(r: ZRange, grid: dict[int, int]) -> str | None:
    """The message of the empty-shards refusal worked out from the built shards."""
    shards = r.split_grid(parts=grid)
    empty = [str(s) for s in shards if s.is_empty]
    if not empty:
        return None
    return (
        f"splitting {r} gives {len(empty)} empty shards (such as {empty[0]}); "
        "expected fewer parts than index points in the split dims"
    )


@pytest.mark.parametrize("shape", [(3,), (2, 3), (3, 1, 2)], ids=["1d", "2d", "3d"])
def test_counted_empty_shards_are_the_built_ones(shape: tuple[int, ...]) -> None:
    # the refusal counts the empty shards and finds the first without building them: it says
    # exactly what building them would (every grid of 1..5 parts over every set of dims)
    r = ZRange([5] * len(shape), [5 + n for n in shape])
    dims = range(len(shape))
    for k in range(1, len(shape) + 1):
        for chosen in itertools.combinations(dims, k):
            for parts in itertools.product(range(1, 6), repeat=k):
                grid = dict(zip(chosen, parts, strict=True))
                try:
                    shard_ranges(r, grid=grid)
                    got = None
                except SplitError as e:
                    got = str(e)
                assert got == _built_empty_message(r, grid), grid


def test_a_lower_limit_is_honoured(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    with pytest.raises(LimitError) as info:
        shard(g, OP, dim=0, parts=5, limit=4)
    assert str(info.value) == (
        "splitting [0:10, 0:5] along dim 0 gives 5 pieces; expected at most 4"
    )
    shard(g, OP, dim=0, parts=4, limit=4, new_id=ids())
    assert len(g.index.applications_of(OP)) == 4


def test_a_dim_number_too_long_to_be_one_is_a_name(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    with pytest.raises(SplitError) as info:
        shard(g, OP, dim="1" * 5000, parts=2)
    assert str(info.value).startswith(f'axis "{"1" * 5000}" cannot be resolved')


# -- malformed parameters: refused as GeonError, naming the value --------------------------------

MESH_XY = {
    "op": "add_node",
    "node": {"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"x": 2, "y": 2}}},
}


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"dim": 0, "parts": "2"},
            SplitError,
            'parts "2" is not an integer; expected an integer >= 1',
        ),
        (
            {"dim": 0, "chunk": True},
            SplitError,
            'chunk "true" is not an integer; expected an integer >= 1',
        ),
        (
            {"dim": 0, "sizes": 10},
            SplitError,
            'sizes "10" is not a list of integers; expected integers >= 0 that sum to the '
            "length of the split dim",
        ),
        (
            {"dim": 0, "sizes": [5, "5"]},
            SplitError,
            'sizes "[5, "5"]" is not a list of integers; expected integers >= 0 that sum to the '
            "length of the split dim",
        ),
        (
            {"grid": [0, 2]},
            SplitError,
            'grid "[0, 2]" is invalid; expected {dim: parts} such as {"H": 2}',
        ),
        (
            {"grid": {"0": 2.5}},
            SplitError,
            'grid "{"0": 2.5}" is invalid; expected {dim: parts} such as {"H": 2}',
        ),
        (
            {"grid": {"0": 2, 0: 5}},
            SplitError,
            'grid names dim 0 twice ("0" and "0"); expected each dim at most once',
        ),
        (
            {"mesh": MESH_ID, "over": "x"},
            SplitError,
            'over "x" is invalid; expected {dim: mesh axis} such as {"N": "dp"}',
        ),
        (
            {"mesh": MESH_ID, "over": {"0": ["x"]}},
            SplitError,
            'over "{"0": ["x"]}" is invalid; expected {dim: mesh axis} such as {"N": "dp"}',
        ),
        (
            {"mesh": MESH_ID, "over": {"0": "x", "1": "x"}},
            SplitError,
            'over puts dims 0 and 1 both on mesh axis "x"; expected each mesh axis at most once',
        ),
        (
            {"dim": 0, "parts": 2, "mesh": ["m"]},
            DocumentError,
            'mesh "["m"]" does not exist; expected the id of a Mesh node',
        ),
        (
            {"dim": 0, "parts": 2, "mesh": {(1,): "x"}},
            DocumentError,
            "mesh \"{(1,): 'x'}\" does not exist; expected the id of a Mesh node",
        ),
        (
            {"op_id": [OP], "dim": 0, "parts": 2},
            DocumentError,
            f'operation "["{OP}"]" does not exist; expected the id of one of the 1 operations '
            "in the graph",
        ),
    ],
    ids=[
        "parts-text",
        "chunk-bool",
        "sizes-int",
        "sizes-text-item",
        "grid-list",
        "grid-float-parts",
        "grid-dim-twice",
        "over-text",
        "over-list-axis",
        "over-mesh-axis-twice",
        "mesh-list",
        "mesh-not-json",
        "op-list",
    ],
)
def test_malformed_parameters_are_refused_naming_them(
    loom_doc: dict[str, Any], kwargs: dict[str, Any], error: type, message: str
) -> None:
    # given the example with a 2 x 2 mesh
    g = Graph.from_json(loom_doc)
    g.apply([MESH_XY])
    before = json.dumps(g.to_json())
    # when sharded with a malformed parameter
    op_id = kwargs.pop("op_id", OP)
    with pytest.raises(error) as info:
        shard(g, op_id, new_id=ids(), **kwargs)
    # then the refusal names it and what is valid, and nothing changed
    assert str(info.value) == message
    assert json.dumps(g.to_json()) == before


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
SHARD_PARAMS = st.dictionaries(
    st.sampled_from(["dim", "parts", "chunk", "sizes", "grid", "mesh", "over"]),
    JSON_VALUES | st.sampled_from([MESH_ID, "x", "0", 0, 1, 2, [5, 5], {"0": 2}, {"1": "y"}]),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(params=SHARD_PARAMS)
def test_no_malformed_parameter_escapes_as_anything_but_a_geon_error(
    params: dict[str, Any],
) -> None:
    # given the example with a 2 x 2 mesh (built here: hypothesis reruns the body)
    g = Graph.from_json(json.loads(example_text()))
    g.apply([MESH_XY])
    # when sharded with any JSON values as parameters, then it shards or refuses as GeonError
    try:
        ops = shard_edits(g, OP, new_id=ids(), **params)
    except GeonError:
        return
    assert [op["op"] for op in ops[:2]] == ["remove_node", "remove_node"]
