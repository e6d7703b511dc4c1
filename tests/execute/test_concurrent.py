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
from threadpoolctl import threadpool_limits

from geon import core as gc
from geon.core.errors import ExecutionError
from geon.core.graph import OPERATION, Graph
from geon.core.plans.shards import shard
from geon.execute import Progress, compile_graph, run
from geon.execute.program import shard_workers, threads_for_group


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


def matmul_mlp(rows: int, k: int, n: int, parts: int = 8) -> Graph:
    """``relu(x[B, K] . w[K, N] + b[N])`` with every operation sharded ``parts`` ways along ``B``
    (``rows`` rows an Application): a dot group, an add group and a relu group."""
    B, K, N = gc.Axis("B", rows * parts), gc.Axis("K", k), gc.Axis("N", n)
    x = gc.placeholder(axes=[B, K], name="x", dtype="float32")
    w = gc.placeholder(axes=[K + 1, N], name="w", dtype="float32")
    b = gc.placeholder(axes=[N], name="b", dtype="float32")
    g = gc.graph([gc.relu(gc.dot(x, w) + b, name="y")])
    for op in g.of_type(OPERATION):
        shard(g, op.id, dim="B", parts=parts)
    return g


def _decisions(plan: Any) -> dict[str, int]:
    """Each group's kernel and the threads it gets."""
    return {plan.steps[a].kernel: plan.group_workers(a, b) for a, b in plan.groups}


def test_a_matmul_step_counts_its_multiply_adds() -> None:
    # given the dot of x[B, K=1024] and w[K, N=4096] sharded 8 ways (64 rows an Application)
    plan = compile_graph(matmul_mlp(64, 1024, 4096), sharded=True)
    by_kernel = {st.kernel: st for st in plan.steps}
    # then each dot Application does 64 x 4096 x 1024 multiply-adds, elementwise steps none
    assert plan.step_macs(by_kernel["op:dot"]) == 64 * 4096 * 1024 == 268_435_456
    assert plan.step_macs(by_kernel["op:add"]) == plan.step_macs(by_kernel["op:relu"]) == 0


def test_a_conv_step_contracts_channels_and_window() -> None:
    # given the conv2d example (Ci 2, a 3x3 window) sharded along P
    plan = compile_graph(conv(), sharded=True)
    for st in plan.steps:
        # then each Application's multiply-adds are its output elements x Ci x R x S
        assert st.out_index is not None
        written = int(np.prod([s.stop - s.start for s in st.out_index]))
        assert plan.step_macs(st) == written * 2 * 3 * 3


def test_tiny_groups_run_on_the_calling_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # given no GEON_SHARD_WORKERS and the small MLP: 8 tiny Applications per operation
    monkeypatch.delenv("GEON_SHARD_WORKERS", raising=False)
    plan = compile_graph(mlp(parts=8), sharded=True)
    assert plan.groups
    # then no group pays for threads: dots of 2x5x6 multiply-adds, tiny elementwise ops
    assert {plan.group_workers(a, b) for a, b in plan.groups} == {1}
    names: list[str] = []
    steps = []
    for st in plan.steps:

        def spy(args: Any, out: Any, fn: Any = st.fn) -> Any:
            names.append(threading.current_thread().name)
            return fn(args, out)

        steps.append(type(st)(**{**{f: getattr(st, f) for f in st.__slots__}, "fn": spy}))
    plan.steps = tuple(steps)
    plan.execute({t: np.ones(plan.tensors[t].shape, np.float64) for t in plan.inputs})
    # and every Application ran on the caller's thread
    assert set(names) == {threading.current_thread().name}


def _cores() -> int:
    """The threads a group of 8 that pays for threads gets on this machine."""
    import os

    return min(max(1, os.cpu_count() or 1), 8)


def test_large_matmuls_use_the_workers_when_blas_runs_on_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given no GEON_SHARD_WORKERS, BLAS on one thread and the 8-way MLP layer of
    # bench_sharded (compiled, not run)
    monkeypatch.delenv("GEON_SHARD_WORKERS", raising=False)
    plan = compile_graph(matmul_mlp(64, 1024, 4096), sharded=True)
    with threadpool_limits(limits=1, user_api="blas"):
        decisions = _decisions(plan)
    # then the dot group runs on every core; the add and relu groups (262k elements an
    # Application, memory-bound) run on one thread
    assert decisions == {"op:dot": _cores(), "op:add": 1, "op:relu": 1}


def test_matmuls_use_the_workers_from_the_threshold_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from geon.execute.program import THREADED_MACS

    monkeypatch.delenv("GEON_SHARD_WORKERS", raising=False)
    # given dots of 16 x 512 x 512 = 2**22 multiply-adds an Application, and of one column less
    at = compile_graph(matmul_mlp(16, 512, 512), sharded=True)
    below = compile_graph(matmul_mlp(16, 512, 511), sharded=True)
    # then, BLAS on one thread, the first uses the workers and the second the calling thread
    assert THREADED_MACS == 16 * 512 * 512
    with threadpool_limits(limits=1, user_api="blas"):
        assert _decisions(at)["op:dot"] == _cores()
        assert _decisions(below)["op:dot"] == 1


@pytest.mark.parametrize(
    ("macs", "apps", "cores", "blas", "threads"),
    [
        (0, 8, 2, 1, 1),  # 8 elementwise Applications, whatever their size
        (2**22 - 1, 8, 2, 1, 1),  # matmuls too small to amortise the hand-off
        (2**28, 8, 2, 1, 2),  # 8 large matmuls, BLAS on one thread: every core
        (2**28, 8, 16, 1, 8),  # capped by the Applications
        (2**28, 8, 2, 2, 1),  # BLAS already on both cores: one GEMM after another
        (2**28, 8, 16, 4, 8),  # BLAS on 4 of 16 cores: the workers
        (2**28, 8, 1, 1, 1),  # one core
    ],
)
def test_the_rule_from_the_work(macs: int, apps: int, cores: int, blas: int, threads: int) -> None:
    got = threads_for_group(macs=macs, applications=apps, cores=cores, blas_threads=blas)
    assert got == threads


@pytest.mark.parametrize("raw", ["1", "3"])
def test_the_environment_overrides_the_rule(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # given GEON_SHARD_WORKERS set, a large matmul group and tiny groups of 8
    monkeypatch.setenv("GEON_SHARD_WORKERS", raw)
    large = compile_graph(matmul_mlp(64, 1024, 4096), sharded=True)
    tiny = compile_graph(mlp(parts=8), sharded=True)
    # then every group gets that many threads (capped by its Applications), whatever its work
    assert set(_decisions(large).values()) == {int(raw)}
    assert {tiny.group_workers(a, b) for a, b in tiny.groups} == {int(raw)}
    assert tiny.group_workers(0, 2) == min(int(raw), 2)
