"""The issue's exact numbers for Megatron on the 2-layer MLP (issue 16): a plan that splits the
second dot's contracted F has exactly one reduction of N·D·4 bytes and nothing between the two
dots; data parallel has none; the second dot over D after the first over N all-gathers the
hidden tensor (the other kinds are pinned in tests/core/test_costmodel_collectives.py)."""

from __future__ import annotations

from typing import Any

import pytest

from geon import core as gc
from geon.core.graph import OPERATION, Graph
from geon.core.plans import apply_plan
from geon.core.plans.cost import infer_collectives, parse_profile, read_placed

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
        "links": {},
        "defaultLink": {"bandwidth": 1e9, "latency": 1e-6},
    }
)
N, D, F = 8, 4, 16


def mlp() -> Graph:
    """``x[N, D] -> dot W1[D-1, F] -> relu -> dot W2[F-1, D]`` in float32."""
    n, d, f = gc.Axis("N", N), gc.Axis("D", D), gc.Axis("F", F)
    x = gc.placeholder(axes=[n, d], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[d - 1, f], name="w1", dtype="float32")
    w2 = gc.placeholder(axes=[f - 1, d], name="w2", dtype="float32")
    return gc.graph([gc.dot(gc.relu(gc.dot(x, w1, name="h"), name="a"), w2, name="y")])


def collectives(graph: Graph, **plan: Any) -> list[dict[str, Any]]:
    placed = apply_plan(graph, {"name": "p", "mesh": {"axes": {"dp": 2, "tp": 4}}, **plan})
    assert placed.check() == []
    return [c.to_json() for c in infer_collectives(read_placed(placed), PROFILE)]


def test_megatron_has_exactly_one_all_reduce_of_n_d_4_bytes() -> None:
    # given the first dot over its index F and the second over its contracted F, on tp = 4
    graph = mlp()
    dot2 = graph.of_type(OPERATION)[2].id
    found = collectives(graph, axisMapping={"F": "tp"})
    # then one all-reduce over tp of the logical reduced region, N·D·4 bytes, into the second
    # dot's output (its sum keeps the dot's id), and nothing between the two dots:
    # 2·(3·1e-6 + 3/4 · 128 / 1e9) s
    assert found == [
        {
            "kind": "all-reduce",
            "tensor": found[0]["tensor"],
            "producer": found[0]["producer"],
            "consumer": dot2,
            "meshAxes": ["tp"],
            "devices": 4,
            "bytes": N * D * 4,
            "bytesPerDevice": N * D * 4,
            "groups": 2,
            "seconds": pytest.approx(2 * (3e-6 + 0.75 * N * D * 4 / 1e9), rel=1e-9),
        }
    ]


def test_megatron_by_a_spec_entry_is_the_same_reduction() -> None:
    graph = mlp()
    dot2 = graph.of_type(OPERATION)[2].id
    found = collectives(graph, axisMapping={"F": "tp"}, spec={dot2: {"over": {"F": "tp"}}})
    assert [(c["kind"], c["bytes"], c["meshAxes"]) for c in found] == [
        ("all-reduce", N * D * 4, ["tp"])
    ]


def test_data_parallel_has_no_collective() -> None:
    assert collectives(mlp(), axisMapping={"N": "dp"}) == []


def test_second_dot_over_d_after_the_first_over_n_all_gathers_the_hidden_tensor() -> None:
    graph = mlp()
    dot1, relu, dot2 = (op.id for op in graph.of_type(OPERATION))
    over_n = {"over": {"N": "dp"}}
    found = collectives(graph, spec={dot1: over_n, relu: over_n, dot2: {"over": {"D": "dp"}}})
    assert [(c["kind"], c["producer"], c["bytes"]) for c in found] == [
        ("all-gather", relu, F * N * 4)
    ]
