"""Collectives inferred on every edge of a placed document (issue 16 item 3): every kind pinned on
a small document, and the issue's numbers for the 2-layer MLP."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from geon import core as gc
from geon.core.errors import LimitError
from geon.core.graph import MESH, Graph
from geon.core.plans import apply_plan, read_plan
from geon.core.plans.cost import Link, cost_report, infer_collectives, parse_profile, read_placed
from geon.core.plans.shards import shard

MESH_ID = "00000000-0000-4000-8000-0000000000e3"
OTHER_MESH = "00000000-0000-4000-8000-0000000000e4"
BW, LAT = 1e9, 1e-6
PROFILE = parse_profile(
    {
        "name": "test",
        "device": {
            "flops": {"float32": 1e12},
            "memoryBandwidth": 1e11,
            "memory": 1e6,
            "efficiency": 0.5,
            "kernelFloor": 1e-6,
        },
        "links": {"slow": {"bandwidth": BW / 10, "latency": LAT}},
        "defaultLink": {"bandwidth": BW, "latency": LAT},
    }
)


def _mesh(g: Graph, axes: dict[str, int], mesh_id: str = MESH_ID) -> None:
    g.add_node({"id": mesh_id, "type": MESH, "body": {"name": "m", "axes": axes}})


def _collectives(g: Graph) -> list[dict[str, Any]]:
    assert g.check() == []
    return [c.to_json() for c in infer_collectives(read_placed(g), PROFILE)]


def mlp(first: str, second: str, devices: int = 4) -> tuple[Graph, dict[str, str]]:
    """The issue's 2-layer MLP ``x[N, D] -> dot W1[D-1, F] -> relu -> dot W2[F-1, D]`` (float32,
    N=8, D=4, F=16), the first dot and relu split over ``first``, the second dot over ``second``,
    on one mesh axis ``d``. Returns the graph and the ids of its tensors and operations."""
    N, D, F = gc.Axis("N", 8), gc.Axis("D", 4), gc.Axis("F", 16)
    x = gc.placeholder(axes=[N, D], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[D - 1, F], name="w1", dtype="float32")
    w2 = gc.placeholder(axes=[F - 1, D], name="w2", dtype="float32")
    h = gc.dot(x, w1, name="h")
    a = gc.relu(h, name="a")
    y = gc.dot(a, w2, name="y")
    g = gc.graph([y])
    _mesh(g, {"d": devices})
    assert h.op_id and a.op_id and y.op_id
    shard(g, h.op_id, mesh=MESH_ID, over={first: "d"})
    shard(g, a.op_id, mesh=MESH_ID, over={first: "d"})
    shard(g, y.op_id, mesh=MESH_ID, over={second: "d"})
    ids = {"a": a.id, "relu": a.op_id, "dot2": y.op_id, "dot1": h.op_id, "h": h.id}
    return g, ids


def test_data_parallel_mlp_has_no_collective() -> None:
    # given both dots (and relu) split over the batch N
    g, _ = mlp("N", "N")
    # then every device reads only what it wrote
    assert _collectives(g) == []


def test_second_dot_over_d_after_the_first_over_n_all_gathers_the_hidden_tensor() -> None:
    # given the first dot and relu split over N on 4 devices, the second dot over D
    g, ids = mlp("N", "D")
    # then exactly one all-gather of the hidden tensor a (F·N·4 = 16·8·4 = 512 bytes):
    # 3·1e-6 + 3/4 · 512 / 1e9 s
    assert _collectives(g) == [
        {
            "kind": "all-gather",
            "tensor": ids["a"],
            "producer": ids["relu"],
            "consumer": ids["dot2"],
            "meshAxes": ["d"],
            "devices": 4,
            "bytes": 512,
            "bytesPerDevice": 512,
            "groups": 1,
            "seconds": pytest.approx(3e-6 + 0.75 * 512 / 1e9, rel=1e-9),
        }
    ]


def test_repartitioning_from_f_to_n_is_an_all_to_all() -> None:
    # given the first dot and relu split over F, the second dot over N (it reads all of F)
    g, ids = mlp("F", "N")
    # then a is re-partitioned from F to N: 3·1e-6 + 3/16 · 512 / 1e9 s
    assert _collectives(g) == [
        {
            "kind": "all-to-all",
            "tensor": ids["a"],
            "producer": ids["relu"],
            "consumer": ids["dot2"],
            "meshAxes": ["d"],
            "devices": 4,
            "bytes": 512,
            "bytesPerDevice": 128,
            "groups": 1,
            "seconds": pytest.approx(3e-6 + 3 / 16 * 512 / 1e9, rel=1e-9),
        }
    ]


def _partial_sums(sum_over: str, then: str | None) -> tuple[Graph, dict[str, str]]:
    """Partial products ``pp[P, N, D]`` (float32, P=4 N=8 D=6) split over P on the 4 devices of
    ``tp`` (device p holds the p-th partial sum), ``s = sum(pp over P)`` split over
    ``sum_over``, and, with ``then``, ``y = dot(s, w[D-1, E])`` split over ``then``."""
    P, N, D, E = gc.Axis("P", 4), gc.Axis("N", 8), gc.Axis("D", 6), gc.Axis("E", 4)
    a = gc.placeholder(axes=[P, N, D], name="a", dtype="float32")
    b = gc.placeholder(axes=[P, N, D], name="b", dtype="float32")
    pp = gc.multiply(a, b, name="pp")
    s = gc.sum(pp, reduction_axes=[P], name="s")
    out = s
    if then is not None:
        out = gc.dot(s, gc.placeholder(axes=[D - 1, E], name="w", dtype="float32"), name="y")
    g = gc.graph([out])
    _mesh(g, {"tp": 4})
    assert pp.op_id and s.op_id and out.op_id
    shard(g, pp.op_id, mesh=MESH_ID, over={"P": "tp"})
    shard(g, s.op_id, mesh=MESH_ID, over={sum_over: "tp"})
    if then is not None:
        shard(g, out.op_id, mesh=MESH_ID, over={then: "tp"})
    return g, {"pp": pp.id, "mul": pp.op_id, "sum": s.op_id, "s": s.id}


def test_partial_sums_reduced_into_a_partitioned_result_are_a_reduce_scatter() -> None:
    # given partial sums over P on tp, reduced by a sum split over N on tp
    g, ids = _partial_sums("N", None)
    # then one reduce-scatter of the result s (N·D·4 = 192 bytes): 3e-6 + 3/4 · 192 / 1e9 s
    assert _collectives(g) == [
        {
            "kind": "reduce-scatter",
            "tensor": ids["pp"],
            "producer": ids["mul"],
            "consumer": ids["sum"],
            "meshAxes": ["tp"],
            "devices": 4,
            "bytes": 192,
            "bytesPerDevice": 48,
            "groups": 1,
            "seconds": pytest.approx(3e-6 + 0.75 * 192 / 1e9, rel=1e-9),
        }
    ]


def test_a_reduce_scatter_then_an_all_gather_of_its_result_is_one_all_reduce() -> None:
    # given the reduce-scatter above, then a dot split over E that reads all of s on each device
    g, ids = _partial_sums("N", "E")
    # then one all-reduce of N·D·4 = 192 bytes and nothing else: 2 · (3e-6 + 3/4 · 192 / 1e9)
    assert _collectives(g) == [
        {
            "kind": "all-reduce",
            "tensor": ids["pp"],
            "producer": ids["mul"],
            "consumer": ids["sum"],
            "meshAxes": ["tp"],
            "devices": 4,
            "bytes": 192,
            "bytesPerDevice": 192,
            "groups": 1,
            "seconds": pytest.approx(2 * (3e-6 + 0.75 * 192 / 1e9), rel=1e-9),
        }
    ]


def _conv(devices: int = 2) -> tuple[Graph, dict[str, str]]:
    """relu(img[Ci=1, Hi=8, Wi=5]) split over Hi, then a 3x3 conv2d (padding 1, output P=8)
    split over its output height P, both on the devices of mesh axis ``h``."""
    Ci, Hi = gc.Axis("Ci", 1, roles="Channel"), gc.Axis("Hi", 8, roles="Height")
    Wi = gc.Axis("Wi", 5, roles="Width")
    R, S = gc.Axis("R", 3, roles="Height"), gc.Axis("S", 3, roles="Width")
    K = gc.Axis("K", 2, roles="Channelout")
    P, Q = gc.Axis("P", 8, roles="Height"), gc.Axis("Q", 5, roles="Width")
    r = gc.relu(gc.placeholder(axes=[Ci, Hi, Wi], name="img", dtype="float32"), name="r")
    f = gc.placeholder(axes=[Ci - 1, R, S, K], name="filt", dtype="float32")
    y = gc.conv2d(r, f, [K, P, Q], padding=1, name="y")
    g = gc.graph([y])
    _mesh(g, {"h": devices})
    assert r.op_id and y.op_id
    shard(g, r.op_id, mesh=MESH_ID, over={"Hi": "h"})
    shard(g, y.op_id, mesh=MESH_ID, over={"P": "h"})
    return g, {"r": r.id, "relu": r.op_id, "conv": y.op_id}


def test_a_conv_split_over_height_exchanges_halos_by_permute() -> None:
    # given relu rows [0:4] on device 0 and [4:8] on device 1, and the conv's rows split alike:
    # device 0 reads row 4 of r, device 1 row 3, each 1 x 1 x 5 float32 = 20 bytes
    g, ids = _conv()
    # then one permute of the two halo rows (40 bytes), each device receiving 20: 1e-6 + 20/1e9
    assert _collectives(g) == [
        {
            "kind": "permute",
            "tensor": ids["r"],
            "producer": ids["relu"],
            "consumer": ids["conv"],
            "meshAxes": ["h"],
            "devices": 2,
            "bytes": 40,
            "bytesPerDevice": 20,
            "groups": 1,
            "seconds": pytest.approx(1e-6 + 20 / 1e9, rel=1e-9),
        }
    ]


def test_gathering_to_one_device_is_a_send() -> None:
    # given h split over N on 4 devices, then relu run whole on device (0,)
    N, D = gc.Axis("N", 8), gc.Axis("D", 4)
    h = gc.exp(gc.placeholder(axes=[N, D], name="x", dtype="float32"), name="h")
    a = gc.relu(h, name="a")
    g = gc.graph([a])
    _mesh(g, {"d": 4})
    assert h.op_id and a.op_id
    shard(g, h.op_id, mesh=MESH_ID, over={"N": "d"})
    shard(g, a.op_id, dim="N", parts=1, mesh=MESH_ID)
    # then devices 1..3 each send their 2 x 4 rows (32 bytes) to device 0, which receives 96:
    # the logical region moved is rows [2:8] (96 bytes); 1e-6 + 96/1e9
    assert _collectives(g) == [
        {
            "kind": "send",
            "tensor": h.id,
            "producer": h.op_id,
            "consumer": a.op_id,
            "meshAxes": ["d"],
            "devices": 4,
            "bytes": 96,
            "bytesPerDevice": 96,
            "groups": 1,
            "seconds": pytest.approx(1e-6 + 96 / 1e9, rel=1e-9),
        }
    ]


def test_a_collective_over_a_slow_axis_uses_its_link() -> None:
    # given the MLP that all-gathers a, on a mesh axis named "slow" (a tenth of the bandwidth)
    g, _ = mlp("N", "D")
    doc = g.to_json()
    for node in doc["nodes"]:
        if node["type"] == MESH:
            node["body"]["axes"] = {"slow": 4}
    # then its seconds use the slow link
    found = _collectives(Graph.from_json(doc))
    slow = Link(BW / 10, LAT)
    assert [c["seconds"] for c in found] == [
        pytest.approx(3 * slow.latency + 0.75 * 512 / slow.bandwidth, rel=1e-9)
    ]


def test_an_unplaced_document_runs_whole_on_one_device() -> None:
    # given a document no plan placed: exp then relu of 8 float64 values (issue 35)
    N = gc.Axis("N", 8)
    y = gc.relu(gc.exp(gc.placeholder(axes=[N], name="x")), name="y")
    g = gc.graph([y])
    # when it is costed
    report = cost_report(g, PROFILE)
    # then it runs on one device with no mesh: every operation's work (8 + 8 flops) and every
    # tensor's memory there (x and y held to the end, exp's result until relu has read it)
    assert report["collectives"] == []
    [device] = report["devices"]
    assert (device["mesh"], device["coords"], device["flops"]) == ("", [], 16)
    assert device["peakBytes"] == 3 * 8 * 8
    assert device["memory"]["activations"] + device["memory"]["temporaries"] == 3 * 8 * 8
    # and it costs what the same document placed whole on a mesh of one device costs
    one = apply_plan(g, read_plan({"name": "one", "mesh": {"axes": {"d": 1}}}))
    placed = cost_report(one, PROFILE)
    assert {k: v for k, v in device.items() if k not in ("mesh", "coords")} == {
        k: v for k, v in placed["devices"][0].items() if k not in ("mesh", "coords")
    }
    assert report["time"] == placed["time"]


def test_union_of_boxes_counts_each_cell_once() -> None:
    from geon.core.plans.cost.placed import boxes_union_size

    grid = [((r, c), (r + 2, c + 3)) for r in (0, 2) for c in (0, 3)]  # a 2 x 2 grid of 4x6
    assert boxes_union_size(grid) == 24
    assert boxes_union_size([*grid, ((1, 1), (3, 4))]) == 24
    assert boxes_union_size([((0, 0), (2, 2)), ((1, 1), (3, 3))]) == 7


def _planned_mlp(inputs: dict[str, Any]) -> tuple[Graph, dict[str, str]]:
    """The unsharded MLP with a plan mapping N to the 4 devices of d, and ``inputs`` placed."""
    from geon.core.plans import apply_plan

    N, D, F = gc.Axis("N", 8), gc.Axis("D", 4), gc.Axis("F", 16)
    x = gc.placeholder(axes=[N, D], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[D - 1, F], name="w1", dtype="float32")
    h = gc.dot(x, w1, name="h")
    y = gc.dot(gc.relu(h), gc.placeholder(axes=[F - 1, D], name="w2", dtype="float32"))
    plan = {"name": "p", "mesh": {"name": "m", "axes": {"d": 4}}, "axisMapping": {"N": "d"}}
    g = apply_plan(gc.graph([y]), {**plan, "inputs": inputs})
    assert h.op_id is not None
    return g, {"x": x.id, "w1": w1.id, "dot1": h.op_id}


def test_a_weight_sharded_over_the_devices_is_all_gathered_where_it_is_read_whole() -> None:
    # given data parallel over N, with w1 [D=4, F=16] float32 sharded over F (FSDP-like)
    g, ids = _planned_mlp({"w1": {"over": {"F": "d"}}})
    # then the first dot all-gathers w1 (256 bytes), produced by the input tensor itself
    assert _collectives(g) == [
        {
            "kind": "all-gather",
            "tensor": ids["w1"],
            "producer": ids["w1"],
            "consumer": ids["dot1"],
            "meshAxes": ["d"],
            "devices": 4,
            "bytes": 256,
            "bytesPerDevice": 256,
            "groups": 1,
            "seconds": pytest.approx(3e-6 + 0.75 * 256 / 1e9, rel=1e-9),
        }
    ]
    # and each device holds its quarter of w1 as an input, the rest while the dot reads it: at
    # the first dot, x[0:2] 32 + w1[:, 0:4] 64 + w2 256 = 352 inputs, 192 received, h 128
    device = cost_report(g, PROFILE)["devices"][0]
    assert (device["peakBytes"], device["memory"]) == (
        672,
        {
            "parameters": 0,
            "gradients": 0,
            "optimizer": 0,
            "activations": 352,  # placeholders
            "temporaries": 128,
            "communication": 192,
        },
    )


def test_an_input_on_one_device_is_sent_to_the_others() -> None:
    # given data parallel over N, with x [N=8, D=4] float32 on device 0 only
    g, ids = _planned_mlp({"x": {"device": [0]}})
    # then devices 1..3 each receive their 2 rows (32 bytes) of x from device 0
    assert _collectives(g) == [
        {
            "kind": "send",
            "tensor": ids["x"],
            "producer": ids["x"],
            "consumer": ids["dot1"],
            "meshAxes": ["d"],
            "devices": 4,
            "bytes": 96,
            "bytesPerDevice": 32,
            "groups": 1,
            "seconds": pytest.approx(1e-6 + 32 / 1e9, rel=1e-9),
        }
    ]


def test_replicated_inputs_move_nothing() -> None:
    g, _ = _planned_mlp({"x": "replicated", "w1": "replicated"})
    assert _collectives(g) == []


class _Placed(NamedTuple):
    """A shard as the rule of moving regions reads it."""

    id: str
    op_id: str
    device: tuple[str, tuple[int, ...]] | None
    reads: tuple[tuple[str, tuple[tuple[int, ...], tuple[int, ...]]], ...]
    writes: tuple[tuple[str, tuple[tuple[int, ...], tuple[int, ...]]], ...]


def _moves(shards: list[_Placed]) -> list[tuple[str, str, str, Any]]:
    """The regions that move between ``shards`` (of one tensor ``t[0:4]``, on mesh ``m`` of 2
    devices), written as a document and read as the cost model reads it."""
    from geon.core.graph import APPLICATION, OPERATION, PLACEMENT, TENSOR
    from geon.core.plans.table import Writes, read_table, regions_that_move

    ids: dict[str, str] = {}

    def node_id(name: str) -> str:
        return ids.setdefault(name, f"00000000-0000-4000-8000-{len(ids):012d}")

    def selected(side: tuple[tuple[str, Any], ...]) -> list[dict[str, Any]]:
        return [
            {"tensorId": node_id(t), "range": {"start": list(a), "end": list(b)}}
            for t, (a, b) in side
        ]

    whole = {"start": [0], "end": [4]}
    nodes: list[dict[str, Any]] = [
        {"id": node_id("m"), "type": MESH, "body": {"name": "m", "axes": {"d": 2}}},
        {"id": node_id("t"), "type": TENSOR, "body": {"dtype": "float32", "range": whole}},
    ]
    for op in dict.fromkeys(s.op_id for s in shards):
        nodes.append({"id": node_id(op), "type": OPERATION, "body": {"kernel": "op:relu"}})
    for s in shards:
        assert s.device is not None
        body = {
            "operationId": node_id(s.op_id),
            "inputs": {"x": selected(s.reads)},
            "outputs": {"y": selected(s.writes)},
        }
        placement = {"mesh": node_id("m"), "coords": list(s.device[1])}
        nodes.append(
            {"id": node_id(s.id), "type": APPLICATION, "body": body, "tags": {PLACEMENT: placement}}
        )
    table = read_table(Graph.from_json({"id": node_id("graph"), "nodes": nodes}))
    writes = Writes.of(table)
    found = regions_that_move(table, writes)
    name = {v: k for k, v in ids.items()}
    return [
        (
            name[table.tensor_ids[t]],
            name[table.ids[writes.rows.shard[w]]],
            name[table.ids[c]],
            (tuple(lo[:1]), tuple(hi[:1])),
        )
        for t, w, c, lo, hi in zip(
            found.tensor,
            found.write,
            found.consumer,
            found.lo.tolist(),
            found.hi.tolist(),
            strict=True,
        )
    ]


def test_a_region_moves_from_the_other_device_that_wrote_it() -> None:
    # given t[0:4] written by rows on devices 0 and 1, and read whole on device 0
    d0, d1 = ("m", (0,)), ("m", (1,))
    p0 = _Placed("p0", "p", d0, (), (("t", ((0,), (2,))),))
    p1 = _Placed("p1", "p", d1, (), (("t", ((2,), (4,))),))
    c0 = _Placed("c0", "c", d0, (("t", ((0,), (4,))),), ())
    # then the rows device 1 wrote move to device 0
    assert _moves([p0, p1, c0]) == [("t", "p1", "c0", ((2,), (4,)))]


def test_a_region_its_own_device_wrote_whole_does_not_move() -> None:
    # given t[0:4] written whole on both devices (replicated), and read whole on device 0
    d0, d1 = ("m", (0,)), ("m", (1,))
    p0 = _Placed("p0", "p", d0, (), (("t", ((0,), (4,))),))
    p1 = _Placed("p1", "p", d1, (), (("t", ((0,), (4,))),))
    c0 = _Placed("c0", "c", d0, (("t", ((0,), (4,))),), ())
    # then nothing moves: device 0 holds it already
    assert _moves([p0, p1, c0]) == []
    # and neither does what another shard of the same operation wrote (an operation never
    # waits on its own output)
    c1 = _Placed("c1", "p", d1, (("t", ((0,), (2,))),), ())
    assert _moves([_Placed("p0", "p", d0, (), (("t", ((0,), (2,))),)), c1]) == []


def test_operations_left_whole_on_a_huge_mesh_are_refused_before_the_work() -> None:
    # given one operation split over d on a mesh of 65,536 devices and two left whole: each
    # would run on every device, 131,072 shards for the cost model
    n = gc.Axis("N", 4)
    a = gc.relu(gc.placeholder(axes=[n], name="x", dtype="float32"), name="a")
    c = gc.relu(gc.relu(a, name="b"), name="c")
    g = gc.graph([c])
    _mesh(g, {"d": 2, "e": 32768})
    assert a.op_id is not None
    shard(g, a.op_id, mesh=MESH_ID, over={"N": "d"})
    # then the cost is refused, naming the counts and what to do, before anything is replicated
    with pytest.raises(LimitError) as refused:
        read_placed(g)
    assert str(refused.value) == (
        'the plan leaves 2 operations whole on mesh "m" of 65536 devices: each runs on every '
        "device, 131072 shards in all; at most 65536 can be costed. Split more of them, or "
        "place the plan on a smaller mesh"
    )
