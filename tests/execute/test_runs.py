"""Logical and sharded runs: the loom example, conv2d halos, dot and views sharded, inputs,
progress, timings and the run summary."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geon import core as gc
from geon.core.errors import ExecutionError, ShapeError
from geon.core.graph import IPF_INDEX, OPERATION, Graph
from geon.core.plans.shards import shard
from geon.core.reference import evaluate_graph as reference
from geon.execute import Progress, compile_graph, run

EXAMPLE_OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"
Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"


def loom() -> Graph:
    text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
    return Graph.from_json(json.loads(text))


def test_loom_example_runs_logically_and_sharded_bit_identical(backend: str) -> None:
    # given the loom example: z = t0 + t1, int32, t1 living at [200:210, 50:55]
    t0 = np.arange(50, dtype=np.int32).reshape(10, 5)
    t1 = (np.arange(50, dtype=np.int32) * 7).reshape(10, 5)
    # when it runs sharded (two Applications) and logically
    result = run(loom(), {"t0": t0, "t1": t1}, sharded=True, backend=backend)
    # then both give t0 + t1 exactly, in int32
    assert result.logical is not None
    assert result.outputs[Z].dtype == np.int32
    np.testing.assert_array_equal(result.outputs[Z], t0 + t1)
    np.testing.assert_array_equal(result.logical[Z], t0 + t1)
    assert result.max_abs_diff == {"z": 0.0}
    assert sorted(result.timings["applications"]) == [
        "2524fb44-d169-4afd-90fa-09711462e4b3",
        "2af709e2-c792-4712-80cc-0624ee767115",
    ]


def test_range_offsets_translate_selections() -> None:
    # given the loom example with its first application reading t1 at [205:210, 50:55]
    plan = compile_graph(loom(), sharded=True)
    # when the plan's first step reads its selections
    values: list[Any] = [None] * len(plan.tensors)
    t1 = next(t for t in plan.tensors if t.id == T1)
    values[t1.index] = np.arange(50).reshape(10, 5)
    read = plan.steps[0].reads[1](values)
    # then it is rows 5..9 of t1's 10x5 array, a view without a copy
    assert t1.shape == (10, 5)
    np.testing.assert_array_equal(read, values[t1.index][5:10])
    assert np.shares_memory(read, values[t1.index])


@pytest.mark.parametrize(
    ("padding", "stride", "parts"),
    [(0, 1, 3), (1, 1, 2), (1, 2, 2), (2, 1, 4)],
    ids=["no-padding-3", "padding-1", "stride-2", "padding-2-4-parts"],
)
def test_conv2d_sharded_over_height_with_halos_matches_logical(
    padding: int, stride: int, parts: int, backend: str
) -> None:
    # given a conv2d over a 2x2x9x6 image, sharded into row blocks of its output height
    Ci, Hi = gc.Axis("Ci", 2, roles="Channel"), gc.Axis("Hi", 9, roles="Height")
    Wi, B = gc.Axis("Wi", 6, roles="Width"), gc.Axis("B", 2)
    R, S = gc.Axis("R", 3, roles="Height"), gc.Axis("S", 3, roles="Width")
    K = gc.Axis("K", 3, roles="Channelout")
    P = gc.Axis("P", (9 + 2 * padding - 3) // stride + 1, roles="Height")
    Q = gc.Axis("Q", (6 + 2 * padding - 3) // stride + 1, roles="Width")
    x = gc.placeholder(axes=[B, Ci, Hi, Wi], name="img")
    f = gc.placeholder(axes=[Ci - 1, R, S, K], name="filt")
    y = gc.conv2d(x, f, [B, K, P, Q], stride=stride, padding=padding, name="y")
    g = gc.graph([y])
    shard(g, y.op_id, dim="P", parts=parts)
    # when it runs sharded and logically on seeded inputs
    result = run(g, seed=3, sharded=True, backend=backend)
    # then the shards, each reading its halo rows, assemble the logical result
    assert result.logical is not None
    assert len(result.timings["applications"]) == parts
    assert result.max_abs_diff is not None
    assert result.max_abs_diff["y"] < 1e-12
    want = reference(g, _seeded(g, 3))[y.id]
    np.testing.assert_allclose(result.outputs[y.id], want, rtol=1e-12, atol=1e-12)


def _seeded(g: Graph, seed: int) -> dict[str, np.ndarray]:
    from geon.execute import generate_input

    plan = compile_graph(g)
    rng = np.random.default_rng(seed)
    return {plan.tensors[t].id: generate_input(plan.tensors[t], rng) for t in plan.inputs}


def _mlp(batch: int = 8) -> tuple[Graph, gc.Tensor, gc.Tensor]:
    B, In, Hd, Out = gc.Axis("B", batch), gc.Axis("In", 6), gc.Axis("Hd", 5), gc.Axis("Out", 4)
    x = gc.placeholder(axes=[B, In], name="x")
    w1 = gc.placeholder(axes=[In + 1, Hd], name="w1")
    b1 = gc.placeholder(axes=[Hd], name="b1")
    w2 = gc.placeholder(axes=[Hd + 1, Out], name="w2")
    h = gc.relu(gc.dot(x, w1) + b1, name="h")
    y = gc.sum(gc.tanh(gc.dot(h, w2)), reduction_axes=[Out], name="y")
    return gc.graph([y]), h, y


@pytest.mark.parametrize("axis", ["B", "Hd"], ids=["batch", "features"])
def test_every_op_sharded_matches_logical(axis: str, backend: str) -> None:
    # given a small MLP whose every operation is sharded into 2 or 4 parts
    g, _, y = _mlp()
    for op in g.of_type(
        "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Operation"
    ):
        names = op.tags["urn:geon:2026-11:tag_types.jsd#/tags/IndexAxes"]["axes"]
        if axis in names:
            shard(g, op.id, dim=axis, parts=2)
        elif "B" in names:
            shard(g, op.id, dim="B", parts=4)
    assert g.check() == []
    # when it runs sharded
    result = run(g, seed=1, sharded=True, backend=backend)
    # then it matches the logical run and the reference
    assert result.max_abs_diff is not None
    assert result.max_abs_diff["y"] < 1e-12
    np.testing.assert_allclose(
        result.outputs[y.id], reference(g, _seeded(g, 1))[y.id], rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda x, H, W: gc.slice(x, {H: slice(1, 7, 2)}, axes={H: gc.Axis("H3", 3)}),
        lambda x, H, W: gc.pad(x, {H: (2, 1)}, axes={H: gc.Axis("H11", 11)}),
        lambda x, H, W: gc.dimshuffle(x, [W, H]),
        lambda x, H, W: x.T,
        lambda x, H, W: gc.flatten(x, [H, W]),
        lambda x, H, W: gc.broadcast(x, [H, gc.Axis("N", 2), W]),
        lambda x, H, W: gc.sum(x, reduction_axes=[W]),
        lambda x, H, W: gc.mean(x, out_axes=[W]),
    ],
    ids=["slice", "pad", "dimshuffle", "transpose", "flatten", "broadcast", "sum", "mean"],
)
def test_views_and_reductions_sharded_match_logical(build: Any, backend: str) -> None:
    # given a view or reduction of an 8x3 tensor sharded into 2 along its first index axis
    H, W = gc.Axis("H", 8), gc.Axis("W", 3)
    x = gc.placeholder(axes=[H, W], name="x")
    y = build(x, H, W)
    g = gc.graph([y])
    shard(g, y.op_id, dim=0, parts=2)
    # when it runs sharded
    result = run(g, seed=5, sharded=True, backend=backend)
    # then it equals the logical run and the reference (up to the order of summation)
    assert result.max_abs_diff is not None
    assert next(iter(result.max_abs_diff.values())) < 1e-12
    np.testing.assert_allclose(
        result.outputs[y.id], reference(g, _seeded(g, 5))[y.id], rtol=1e-12, atol=1e-12
    )


def test_progress_reports_every_operation_then_every_application() -> None:
    # given the loom example and a progress callback
    seen: list[Progress] = []
    # when it runs sharded
    run(loom(), seed=0, sharded=True, on_progress=seen.append)
    # then the logical operation is reported, then each application
    assert [(p.phase, p.done, p.total, p.application_id) for p in seen] == [
        ("logical", 1, 3, None),
        ("sharded", 2, 3, "2524fb44-d169-4afd-90fa-09711462e4b3"),
        ("sharded", 3, 3, "2af709e2-c792-4712-80cc-0624ee767115"),
    ]
    assert seen[-1].to_json()["fraction"] == 1.0


def test_summary_is_json_with_timings_memory_and_diff() -> None:
    # given a sharded run of the loom example on known inputs
    t0 = np.ones((10, 5), np.int32)
    t1 = np.full((10, 5), 2, np.int32)
    result = run(loom(), {"t0": t0, "t1": t1}, sharded=True)
    # when it is summarised
    summary = json.loads(json.dumps(result.summary()))
    # then it names the output with its statistics, the diff, timings and memory figures
    assert summary["outputs"] == [
        {"id": Z, "label": "z", "shape": [10, 5], "dtype": "int32", "sum": 150, "min": 3, "max": 3}
    ]
    assert summary["max_abs_diff"] == {"z": 0.0}
    assert summary["mode"] == "sharded"
    assert summary["backend"] == "numpy"
    assert set(summary["timings"]) == {
        "logical",
        "sharded",
        "total",
        "operations",
        "sharded_operations",
        "applications",
    }
    assert set(summary["timings"]["operations"]) == {EXAMPLE_OP}
    assert summary["memory"]["naive_bytes"] == 200


def test_results_are_copies_and_plans_are_reusable() -> None:
    # given a compiled plan run twice with different inputs
    g, _, y = _mlp()
    first = run(g, seed=1).outputs[y.id]
    again = run(g, seed=2).outputs[y.id]
    # then the first result is unchanged by the second run
    np.testing.assert_array_equal(first, run(g, seed=1).outputs[y.id])
    assert not np.array_equal(first, again)


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        (
            {"nope": np.zeros((10, 5))},
            ExecutionError,
            'input "nope" names no single tensor; expected a tensor id or a unique label',
        ),
        (
            {"z": np.zeros((10, 5), np.int32)},
            ExecutionError,
            'input "z" is tensor "z", which an operation computes; feed only the graph\'s inputs',
        ),
        (
            {"t0": np.zeros((5, 10), np.int32)},
            ShapeError,
            'input for tensor "t0" has shape (5, 10); expected (10, 5)',
        ),
        (
            {"t0": np.zeros((10, 5), np.float64)},
            ExecutionError,
            'input "t0" has dtype float64; expected int32 or a dtype that casts to it without '
            "changing kind",
        ),
        (
            {"t0": np.zeros((10, 5), np.int32)},
            ExecutionError,
            'placeholder "t1" has no value; feed an array of shape (10, 5)',
        ),
    ],
    ids=["unknown", "computed", "shape", "dtype", "missing"],
)
def test_bad_inputs_are_refused(inputs: dict[str, Any], error: type, message: str) -> None:
    # given the loom example and bad inputs
    # when it runs / then the error names the input and what would be valid
    with pytest.raises(error) as exc:
        run(loom(), inputs)
    assert str(exc.value) == message


def test_named_placeholder_message_lists_axes() -> None:
    # given a graph with an unfed named placeholder
    g, _, _ = _mlp()
    # when it runs without inputs or seed / then the message gives shape and axes
    with pytest.raises(ExecutionError) as exc:
        run(g, {})
    assert str(exc.value) == (
        "placeholder \"x\" has no value; feed an array of shape (8, 6) (axes ('B', 'In'))"
    )


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ExecutionError) as exc:
        run(loom(), seed=0, backend="tpu")
    assert str(exc.value) == (
        'backend "tpu" is not known; expected one of ("numpy", "cupy", "array_api_strict")'
    )


def test_views_are_zero_copy_in_a_logical_plan() -> None:
    # given a transpose of an input
    H, W = gc.Axis("H", 4), gc.Axis("W", 3)
    x = gc.placeholder(axes=[H, W], name="x")
    y = gc.exp(x.T)
    t = gc.transpose(y)
    g = gc.graph([t])
    plan = compile_graph(g)
    # then the transpose steps make views and only exp's output takes arena storage
    assert [s.alias for s in plan.steps] == [True, False, True]
    assert plan.memory.naive_bytes == 96


@pytest.mark.parametrize(
    "zeroed",
    [False, True],
    ids=["exact-tiling-needs-no-zeroing", "gap-is-zeroed"],
)
def test_sharded_outputs_zeroed_only_when_shards_leave_gaps(zeroed: bool) -> None:
    # given the loom example sharded in two row blocks, the second one removed for the gap case
    g = loom()
    shard(g, EXAMPLE_OP, dim=0, sizes=[5, 5])
    if zeroed:
        apps = g.index.applications_of(EXAMPLE_OP)
        g.apply([{"op": "remove_node", "id": apps[-1].id}])
    plan = compile_graph(g, sharded=True)
    # then the output is zeroed before the first write only when a gap is left
    assert any(step.zero for step in plan.steps) is zeroed
    z = run(g, seed=0, sharded=True).outputs[Z]
    if zeroed:
        assert (z[5:] == 0).all()


SHARDABLE = [
    "add", "add-3-broadcast", "add-int32", "subtract", "relu", "sqrt-int32", "dot",
    "dot-y-lower", "dot-two-pairs", "dot-outer", "sum", "prod", "mean", "cast_axes",
    "broadcast", "dimshuffle", "transpose", "slice", "pad", "flatten", "conv2d",
    "conv2d-stride-pad", "chain-views", "gelu", "softmax", "layer_norm", "max_pool2d-stride-pad",
    "avg_pool2d-exclude-pad",
]  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(SHARDABLE), st.data())
def test_random_shardings_match_the_logical_run(case: str, data: st.DataObject) -> None:
    # given a catalogue case whose every operation is sharded along a random index dim
    from tests.execute.cases import CASES

    out = CASES[case]()
    g = gc.graph([out])
    for op in g.of_type(OPERATION):
        rank = len(op.tags[IPF_INDEX]["end"])
        if rank == 0:
            continue
        dim = data.draw(st.integers(0, rank - 1), label="dim")
        length = op.tags[IPF_INDEX]["end"][dim]
        if case.startswith("flatten") or op.body["kernel"] == "op:flatten":
            dim = 0
            length = op.tags[IPF_INDEX]["end"][0]
        parts = data.draw(st.integers(1, length), label="parts")
        shard(g, op.id, dim=dim, parts=parts)
    # when it runs sharded / then every output equals the logical run
    result = run(g, seed=2, sharded=True)
    assert result.max_abs_diff is not None
    assert all(d < 1e-12 for d in result.max_abs_diff.values()), result.max_abs_diff
