"""What a sharded run measures moving between devices equals what the cost model predicts
(issue 16 item 6): for every collective kind the executor runs, the bytes measured from the
run's own steps (:func:`geon.execute.runner.measure_moves`) equal ``bytes`` of
:func:`geon.core.plans.cost.infer_collectives` on the same document. The documents are those that
pin the kinds in tests/core/test_costmodel_collectives.py."""

from __future__ import annotations

from typing import Any

from geon import core as gc
from geon.core.graph import MESH, Graph
from geon.core.plans import apply_plan
from geon.core.plans.cost import infer_collectives, load_profile, read_placed
from geon.core.plans.shards import shard
from geon.execute import run

MESH_ID = "00000000-0000-4000-8000-0000000000e3"


def _mesh(g: Graph, axes: dict[str, int]) -> None:
    g.add_node({"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": axes}})


def compared(g: Graph, backend: str) -> list[tuple[str, str, str, str, int, int]]:
    """Run ``g`` sharded; per predicted collective: (kind, tensor, producer, consumer,
    predicted bytes, measured bytes). Also checks that the sharded run equals the logical one
    and that nothing moved on an edge the model predicts nothing for."""
    assert g.check() == []
    result = run(g, seed=0, sharded=True, backend=backend)
    assert result.max_abs_diff is not None
    assert all(d < 1e-4 for d in result.max_abs_diff.values()), result.max_abs_diff
    measured = result.measured
    assert measured is not None
    predicted = infer_collectives(read_placed(g), load_profile())
    assert {(c.tensor, c.producer, c.consumer) for c in predicted} <= set(measured)
    out: list[tuple[str, str, str, str, int, int]] = []
    for c in predicted:
        moved = measured[(c.tensor, c.producer, c.consumer)]
        out.append((c.kind, c.tensor, c.producer, c.consumer, c.bytes, moved.payload(c.kind)))
    return out


def mlp(first: str, second: str, devices: int = 4) -> tuple[Graph, dict[str, Any]]:
    """x[N=8, D=4] -> dot W1[D-1, F=16] -> relu -> dot W2[F-1, D] (float32), the first dot and
    relu split over ``first``, the second dot over ``second`` on mesh axis ``d``."""
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
    return g, {"a": a.id, "relu": a.op_id, "dot2": y.op_id}


def test_an_all_gather_measures_the_whole_hidden_tensor(backend: str) -> None:
    # given the first dot and relu split over N on 4 devices, the second dot over D
    g, ids = mlp("N", "D")
    # then the all-gather of a (N·F·4 = 512 bytes) is what the consumers read from the others
    assert compared(g, backend) == [("all-gather", ids["a"], ids["relu"], ids["dot2"], 512, 512)]


def test_an_all_to_all_measures_the_repartitioned_tensor(backend: str) -> None:
    # given the first dot and relu split over F, the second dot over N (it reads all of F)
    g, ids = mlp("F", "N")
    # then a is re-partitioned: the consumers read all 512 bytes of it
    assert compared(g, backend) == [("all-to-all", ids["a"], ids["relu"], ids["dot2"], 512, 512)]


def test_a_conv_halo_measures_the_two_rows_moved(backend: str) -> None:
    # given relu(img[1, 8, 5]) split over its rows on 2 devices, and a 3x3 conv (padding 1)
    # split over its output rows alike
    Ci, Hi = gc.Axis("Ci", 1, roles="Channel"), gc.Axis("Hi", 8, roles="Height")
    Wi = gc.Axis("Wi", 5, roles="Width")
    R, S = gc.Axis("R", 3, roles="Height"), gc.Axis("S", 3, roles="Width")
    K = gc.Axis("K", 2, roles="Channelout")
    P, Q = gc.Axis("P", 8, roles="Height"), gc.Axis("Q", 5, roles="Width")
    r = gc.relu(gc.placeholder(axes=[Ci, Hi, Wi], name="img", dtype="float32"), name="r")
    f = gc.placeholder(axes=[Ci - 1, R, S, K], name="filt", dtype="float32")
    y = gc.conv2d(r, f, [K, P, Q], padding=1, name="y")
    g = gc.graph([y])
    _mesh(g, {"h": 2})
    assert r.op_id and y.op_id
    shard(g, r.op_id, mesh=MESH_ID, over={"Hi": "h"})
    shard(g, y.op_id, mesh=MESH_ID, over={"P": "h"})
    # then the permute moves rows 3 and 4 of r (2 x 5 float32 = 40 bytes)
    assert compared(g, backend) == [("permute", r.id, r.op_id, y.op_id, 40, 40)]


def test_gathering_to_one_device_measures_the_rows_sent(backend: str) -> None:
    # given h split over N on 4 devices, then relu run whole on device (0,)
    N, D = gc.Axis("N", 8), gc.Axis("D", 4)
    h = gc.exp(gc.placeholder(axes=[N, D], name="x", dtype="float32"), name="h")
    a = gc.relu(h, name="a")
    g = gc.graph([a])
    _mesh(g, {"d": 4})
    assert h.op_id and a.op_id
    shard(g, h.op_id, mesh=MESH_ID, over={"N": "d"})
    shard(g, a.op_id, dim="N", parts=1, mesh=MESH_ID)
    # then rows [2:8] (6 x 4 float32 = 96 bytes) are sent to device 0
    assert compared(g, backend) == [("send", h.id, h.op_id, a.op_id, 96, 96)]


def test_a_weight_sharded_over_the_devices_measures_its_all_gather(backend: str) -> None:
    # given data parallel over N on 4 devices, w1[D=4, F=16] float32 held sharded over F
    N, D, F = gc.Axis("N", 8), gc.Axis("D", 4), gc.Axis("F", 16)
    x = gc.placeholder(axes=[N, D], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[D - 1, F], name="w1", dtype="float32")
    h = gc.dot(x, w1, name="h")
    y = gc.dot(gc.relu(h), gc.placeholder(axes=[F - 1, D], name="w2", dtype="float32"))
    plan = {"name": "p", "mesh": {"name": "m", "axes": {"d": 4}}, "axisMapping": {"N": "d"}}
    g = apply_plan(gc.graph([y]), {**plan, "inputs": {"w1": {"over": {"F": "d"}}}})
    # then the first dot all-gathers w1 (256 bytes) from the devices holding it
    assert compared(g, backend) == [("all-gather", w1.id, w1.id, h.op_id, 256, 256)]


def test_megatron_measures_one_all_reduce_of_the_output(backend: str) -> None:
    # given the MLP x[N=4, D=3] (float32) with Megatron's plan: the first dot over its F, the
    # second over its contracted F (partial products on the 3 tp devices, then a sum)
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
    x = gc.placeholder(axes=[N, D], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[D - 1, F], name="W1", dtype="float32")
    w2 = gc.placeholder(axes=[F - 1, D], name="W2", dtype="float32")
    h = gc.relu(gc.dot(x, w1, name="hidden"), name="relu")
    y = gc.dot(h, w2, name="y")
    plan = {"name": "megatron", "mesh": {"name": "m", "axes": {"tp": 3}}}
    g = apply_plan(gc.graph([y]), {**plan, "axisMapping": {"F": "tp"}})
    # then one all-reduce of the N·D·4 = 48 bytes of y, measured as the reduced output whose
    # partial sums came from the other devices
    found = compared(g, backend)
    assert [(kind, tensor, p, m) for kind, tensor, _, _, p, m in found] == [
        ("all-reduce", found[0][1], 48, 48)
    ]
    assert found[0][3] == y.op_id


def test_a_data_parallel_run_measures_nothing(backend: str) -> None:
    # given both dots (and relu) split over the batch N: every device reads what it wrote
    g, _ = mlp("N", "N")
    result = run(g, seed=0, sharded=True, backend=backend)
    # then nothing moved, and a logical run measures nothing at all
    assert result.measured == {}
    assert run(g, seed=0, backend=backend).measured is None


def test_an_operation_left_whole_gathers_what_it_reads_to_every_device(backend: str) -> None:
    # given the first dot and relu split over N on 4 devices, and the second dot left whole:
    # it runs replicated on all 4 devices (geon.core.plans.shards.replica_devices)
    g, ids = mlp("N", "N")
    for app in g.index.applications_of(ids["dot2"]):
        g.remove_node(app.id)
    # then every device gathers the whole of a (N·F·4 = 512 bytes), predicted and measured, and
    # the second dot's result is on every device: nothing moves after it
    assert compared(g, backend) == [("all-gather", ids["a"], ids["relu"], ids["dot2"], 512, 512)]
