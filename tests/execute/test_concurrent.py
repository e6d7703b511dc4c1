"""Sharded runs execute the Applications of one operation concurrently (issue 5): results are
bit-identical to running them one after another, concurrent Applications never share storage,
and progress stays serial and ordered."""

from __future__ import annotations

import json
import threading
from importlib import resources
from typing import Any

import numpy as np
import pytest

from geon import core as gc
from geon.core.errors import ExecutionError
from geon.core.graph import OPERATION, Graph
from geon.core.sharding import shard
from geon.execute import Progress, compile_graph, run
from geon.execute.program import shard_workers


def loom() -> Graph:
    text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
    return Graph.from_json(json.loads(text))


def conv(parts: int = 4) -> Graph:
    Ci, Hi = gc.Axis("Ci", 2, roles="Channel"), gc.Axis("Hi", 9, roles="Height")
    Wi, B = gc.Axis("Wi", 6, roles="Width"), gc.Axis("B", 2)
    R, S = gc.Axis("R", 3, roles="Height"), gc.Axis("S", 3, roles="Width")
    K = gc.Axis("K", 3, roles="Channelout")
    P, Q = gc.Axis("P", 9, roles="Height"), gc.Axis("Q", 6, roles="Width")
    x = gc.placeholder(axes=[B, Ci, Hi, Wi], name="img")
    f = gc.placeholder(axes=[Ci - 1, R, S, K], name="filt")
    y = gc.conv2d(x, f, [B, K, P, Q], stride=1, padding=1, name="y")
    g = gc.graph([y])
    shard(g, y.op_id, dim="P", parts=parts)
    return g


def mlp(parts: int = 4) -> Graph:
    B, In, Hd, Out = gc.Axis("B", 16), gc.Axis("In", 6), gc.Axis("Hd", 5), gc.Axis("Out", 4)
    x = gc.placeholder(axes=[B, In], name="x")
    w1 = gc.placeholder(axes=[In + 1, Hd], name="w1")
    b1 = gc.placeholder(axes=[Hd], name="b1")
    w2 = gc.placeholder(axes=[Hd + 1, Out], name="w2")
    h = gc.relu(gc.dot(x, w1) + b1, name="h")
    y = gc.tanh(gc.dot(h, w2), name="y")
    g = gc.graph([y])
    for op in g.of_type(OPERATION):
        shard(g, op.id, dim="B", parts=parts)
    return g


def _run(g: Graph, workers: int, backend: str, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> Any:
    monkeypatch.setenv("GEON_SHARD_WORKERS", str(workers))
    return run(g, sharded=True, backend=backend, **kw)


@pytest.mark.parametrize("build", [loom, conv, mlp], ids=["loom-int32", "conv2d-halo", "mlp"])
def test_concurrent_applications_are_bit_identical_to_sequential(
    build: Any, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a sharded graph (the loom example in int32, a conv2d reading halos, an MLP)
    g = build()
    # when it runs with one worker (one Application after another) and with four
    one = _run(g, 1, backend, monkeypatch, seed=4)
    four = _run(g, 4, backend, monkeypatch, seed=4)
    # then every output is the same, bit for bit, and matches the logical run
    assert one.outputs.keys() == four.outputs.keys()
    for tid, a in one.outputs.items():
        assert a.dtype == four.outputs[tid].dtype
        assert a.tobytes() == four.outputs[tid].tobytes()
    assert sorted(four.timings["applications"]) == sorted(one.timings["applications"])


def test_applications_really_run_on_pool_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    # given the conv2d example sharded in 4 and a plan whose kernels record their thread
    monkeypatch.setenv("GEON_SHARD_WORKERS", "4")
    plan = compile_graph(conv(), sharded=True)
    assert plan.groups == ((0, 4),)
    names: list[str] = []
    steps = []
    for st in plan.steps:
        fn = st.fn

        def spy(args: Any, out: Any, fn: Any = fn) -> Any:
            names.append(threading.current_thread().name)
            return fn(args, out)

        steps.append(type(st)(**{**{f: getattr(st, f) for f in st.__slots__}, "fn": spy}))
    plan.steps = tuple(steps)
    # when it runs
    values = {t: np.ones(plan.tensors[t].shape, np.float64) for t in plan.inputs}
    plan.execute(values)
    # then every Application ran on the shard pool, not on the caller's thread
    assert len(names) == 4
    assert all(n.startswith("geon-shard") for n in names)


@pytest.mark.parametrize("build", [loom, conv, mlp], ids=["loom-int32", "conv2d-halo", "mlp"])
def test_concurrent_applications_never_share_a_slot(build: Any) -> None:
    # given a sharded plan with groups of concurrent Applications
    plan = compile_graph(build(), sharded=True)
    assert plan.groups
    slot = dict(plan.memory.assignment)
    # then within every group, the buffers live at any of its steps occupy distinct slots
    for a, b in plan.groups:
        live = [x for x in plan.buffers if x.start <= b - 1 and x.end >= a]
        assert all(x.start <= a and x.end >= b - 1 for x in live)
        slots = [slot[x.key] for x in live]
        assert len(slots) == len(set(slots))


def test_logical_plans_have_no_groups() -> None:
    assert compile_graph(mlp()).groups == ()


def test_progress_is_serial_and_ordered_with_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    # given the MLP sharded 4 ways and a callback that records its thread
    seen: list[tuple[Progress, str]] = []
    g = mlp()
    # when it runs with 4 workers
    _run(
        g,
        4,
        "numpy",
        monkeypatch,
        seed=0,
        on_progress=lambda p: seen.append((p, threading.current_thread().name)),
    )
    # then every step is reported once, in the plan's order, from the calling thread
    plan = compile_graph(g, sharded=True)
    sharded = [p for p, _ in seen if p.phase == "sharded"]
    assert [p.application_id for p in sharded] == [s.application_id for s in plan.steps]
    assert [p.done for p, _ in seen] == list(range(1, len(seen) + 1))
    assert {name for _, name in seen} == {threading.current_thread().name}
    assert all(p.seconds >= 0 for p in sharded)


@pytest.mark.parametrize("raw", ["0", "x", "-2"])
def test_bad_worker_counts_are_refused(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEON_SHARD_WORKERS", raw)
    with pytest.raises(ExecutionError, match="GEON_SHARD_WORKERS"):
        shard_workers()


def test_default_workers_is_the_cpu_count(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.delenv("GEON_SHARD_WORKERS", raising=False)
    assert shard_workers() == max(1, os.cpu_count() or 1)
