"""Time and memory per device and per plan (issue 16 items 4 and 5), on hand-computed figures."""

from __future__ import annotations

import pytest

from geon import core as gc
from geon.core.builder.tensor import declared_axes, make_op
from geon.core.plans.cost import cost_report, parse_profile, read_placed
from geon.core.plans.cost.timing import Work, all_work
from geon.core.plans.shards import shard
from tests.core.test_costmodel_collectives import MESH_ID, PROFILE, _mesh, mlp


def test_an_application_takes_its_roofline_time() -> None:
    # given the MLP's first dot split over N on 4 devices: device 0 computes h[F=16, N 0:2]
    g, ids = mlp("N", "D")
    doc = read_placed(g)
    first = int(doc.shards_of(ids["dot1"])[0])
    # flops 2·M·N·K = 2 · (16·2) · 4 = 256; bytes: x 2·4 + w1 4·16 + h 16·2 cells, 4 bytes each
    # = 416; max(256 / (1e12·0.5), 416 / (1e11·0.5), 1e-6) = the floor, 1e-6 s
    assert all_work(doc, PROFILE).of(first) == Work(256, 416, 1e-6)
    no_floor = parse_profile(
        {**PROFILE.to_json(), "device": {**PROFILE.to_json()["device"], "kernelFloor": 0}}
    )
    # without the floor, memory bound: 416 / 5e10 = 8.32e-9 s
    assert all_work(doc, no_floor).of(first).seconds == pytest.approx(8.32e-9, rel=1e-9)


def test_devices_time_and_memory_of_the_mlp_that_all_gathers() -> None:
    # given the MLP, first dot and relu over N, second dot over D, on 4 devices
    g, _ = mlp("N", "D")
    report = cost_report(g, PROFILE)
    gather = 3e-6 + 0.75 * 512 / 1e9
    # then each device: 256 + 32 + 256 flops (dot1 2·(16·2)·4, relu 32 cells, dot2 2·(1·8)·16);
    # each of its 3 applications takes the 1e-6 s floor; it spends the all-gather's seconds
    assert report["devices"][0] == {
        "mesh": MESH_ID,
        "coords": [0],
        "flops": 544,
        "computeSeconds": pytest.approx(3e-6, rel=1e-9),
        "commSeconds": pytest.approx(gather, rel=1e-9),
        # peak at the second dot: inputs x[0:2] 32 + w1 256 + w2[:, 0:1] 64 = 352 (placeholders,
        # not variables: activations), a[:, 0:2] 128 (temporary), the rest of a received 384,
        # y[0:1, :] 32 (the forward's output: activations too)
        "peakBytes": 896,
        "memory": {
            "parameters": 0,
            "gradients": 0,
            "optimizer": 0,
            "activations": 352 + 32,
            "temporaries": 128,
            "communication": 384,
        },
        "overBudget": False,
    }
    assert [d["coords"] for d in report["devices"]] == [[0], [1], [2], [3]]
    # the plan: no overlap, 3 operations of 1e-6 s plus the gather; full overlap: the busiest
    # device's communication (the gather) is longer than the 3e-6 s critical path
    assert report["time"] == {
        "lower": pytest.approx(gather, rel=1e-9),
        "upper": pytest.approx(3e-6 + gather, rel=1e-9),
    }
    assert report["memory"] == {"capacity": 1e6, "imbalancePercent": 0.0, "overBudget": False}


def test_a_plan_over_the_capacity_is_flagged() -> None:
    g, _ = mlp("N", "D")
    small = parse_profile(
        {**PROFILE.to_json(), "device": {**PROFILE.to_json()["device"], "memory": 800}}
    )
    report = cost_report(g, small)
    assert [d["overBudget"] for d in report["devices"]] == [True] * 4
    assert report["memory"]["overBudget"] is True


def test_memory_imbalance_is_max_over_mean() -> None:
    # given h = exp(x) (float32 [N=8, D=4]) over N on 4 devices, then relu run whole on device 0
    N, D = gc.Axis("N", 8), gc.Axis("D", 4)
    h = gc.exp(gc.placeholder(axes=[N, D], name="x", dtype="float32"), name="h")
    a = gc.relu(h, name="a")
    g = gc.graph([a])
    _mesh(g, {"d": 4})
    assert h.op_id and a.op_id
    shard(g, h.op_id, mesh=MESH_ID, over={"N": "d"})
    shard(g, a.op_id, dim="N", parts=1, mesh=MESH_ID)
    report = cost_report(g, PROFILE)
    # device 0 at relu: x[0:2] 32 + h[0:2] 32 + received h[2:8] 96 + a 128 = 288; the others
    # hold x and h blocks, 64; mean 120, so the peak is 140% above it
    assert [d["peakBytes"] for d in report["devices"]] == [288, 64, 64, 64]
    assert report["memory"]["imbalancePercent"] == pytest.approx(140.0, rel=1e-9)


def test_pooling_counts_one_operation_per_window_cell() -> None:
    # given a 3x2 max pooling (stride 1) of img[C=2, H=6, W=5], run whole: the output is
    # [C=2, P=4, Q=4], 32 index cells, each reading a window of 3·2 = 6 cells
    C = gc.Axis("C", 2, roles="Channel")
    H, W = gc.Axis("H", 6, roles="Height"), gc.Axis("W", 5, roles="Width")
    P, Q = gc.Axis("P", 4, roles="Height"), gc.Axis("Q", 4, roles="Width")
    img = gc.placeholder(axes=[C, H, W], name="img", dtype="float32")
    g = gc.graph([gc.max_pool2d(img, [C, P, Q], (3, 2), stride=1, name="pooled")])
    # then its flops are 32 · 6 = 192 comparisons, not the 32 cells it writes
    found = all_work(read_placed(g), PROFILE)
    assert len(found) == 1 and found.of(0).flops == 192


def test_a_concat_moves_bytes_and_computes_nothing() -> None:
    # given a[N=4, F=3] and b[N=4, G=5] joined along F and G into c[N, H=8] (float32)
    N, F, G, H = gc.Axis("N", 4), gc.Axis("F", 3), gc.Axis("G", 5), gc.Axis("H", 8)
    a = gc.placeholder(axes=[N, F], name="a", dtype="float32")
    b = gc.placeholder(axes=[N, G], name="b", dtype="float32")
    c = make_op("op:concat", {"tensors": [a, b]}, {"along": ["F", "G"], "axis": "H"},
                declared_axes([H]), "c")  # fmt: skip
    found = all_work(read_placed(gc.graph([c])), PROFILE)
    # then no flops, and its bytes are what it reads and writes: (12 + 20 + 32) cells · 4
    assert len(found) == 1 and found.of(0)[:2] == (0, 256)
