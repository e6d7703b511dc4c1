"""The memory planner: no two simultaneously live buffers share storage (hypothesis, on random
chains and diamonds), reuse where lifetimes do not overlap, in place where safe, and the
figures it reports."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geon import core as gc
from geon.execute import Buffer, compile_graph, plan_memory, run
from geon.execute.memory import MemoryPlan


def _assert_no_shared_live_storage(buffers: list[Buffer], plan: MemoryPlan) -> None:
    slot = dict(plan.assignment)
    handed = {(b.inplace_of, b.key) for b in buffers if b.key in plan.inplace}
    for i, a in enumerate(buffers):
        s = plan.slots[slot[a.key]]
        assert s.dtype == a.dtype
        assert s.size >= a.size
        for b in buffers[i + 1 :]:
            if slot[a.key] != slot[b.key]:
                continue
            overlap = a.start <= b.end and b.start <= a.end
            handover = (a.key, b.key) in handed and a.end == b.start
            handover |= (b.key, a.key) in handed and b.end == a.start
            assert not overlap or handover, (a, b)


@st.composite
def buffer_sets(draw: st.DrawFn) -> list[Buffer]:
    n = draw(st.integers(1, 30))
    out = []
    for k in range(n):
        start = draw(st.integers(0, 20))
        end = draw(st.integers(start, 25))
        dtype = draw(st.sampled_from(["float32", "float64"]))
        size = draw(st.integers(1, 64))
        src = None
        if out and draw(st.booleans()):
            cand = [b for b in out if b.end == start and b.dtype == dtype]
            src = cand[0].key if cand else None
        out.append(Buffer(f"b{k}", dtype, size, 4 if dtype == "float32" else 8, start, end, src))
    return out


@settings(max_examples=300, deadline=None)
@given(buffer_sets())
def test_random_buffers_never_share_storage_while_live(buffers: list[Buffer]) -> None:
    # given random lifetimes, sizes, dtypes and in-place requests
    # when planned
    plan = plan_memory(buffers)
    # then no two simultaneously live buffers share a slot and the figures are consistent
    _assert_no_shared_live_storage(buffers, plan)
    assert plan.largest_live_bytes <= plan.planned_peak_bytes <= plan.naive_bytes


UNARY = [gc.exp, gc.tanh, gc.negative, gc.sigmoid, gc.relu, gc.square]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[gc.Tensor, gc.Tensor]:
    """A random chain with diamonds: each new tensor applies a unary op to a recent tensor or
    adds two recent tensors."""
    H, W = gc.Axis("H", 3), gc.Axis("W", 2)
    x = gc.placeholder(axes=[H, W], name="x")
    made = [x]
    for _ in range(draw(st.integers(1, 12))):
        a = made[-draw(st.integers(1, min(3, len(made))))]
        if draw(st.booleans()) and len(made) > 1:
            b = made[-draw(st.integers(1, min(3, len(made))))]
            made.append(gc.add(a, b) if draw(st.booleans()) else gc.dimshuffle(a, [W, H]) * 0.5)
        else:
            made.append(draw(st.sampled_from(UNARY))(a))
    return x, made[-1]


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_random_chains_and_diamonds_plan_safely_and_match_reference(
    pair: tuple[gc.Tensor, gc.Tensor],
) -> None:
    # given a random chain/diamond graph, compiled
    x, out = pair
    g = gc.graph([out])
    plan = compile_graph(g)
    # then every buffer lives at least until its last reader (or a view of it) has run
    root = {t: t for t in range(len(plan.tensors))}
    for v in plan.alias_of:
        r = v
        while r in plan.alias_of:
            r = plan.alias_of[r]
        root[v] = r
    ends = {int(b.key): b.end for b in plan.buffers}
    for n, step in enumerate(plan.steps):
        for t in step.read_tensors:
            if root[t] in ends:
                assert ends[root[t]] >= n
    # and the arena views of simultaneously live buffers never share memory
    bound = plan._bind()
    _assert_no_shared_live_storage(list(plan.buffers), plan.memory)
    for i, a in enumerate(plan.buffers):
        for b in plan.buffers[i + 1 :]:
            if a.start <= b.end and b.start <= a.end:
                shared = np.shares_memory(bound[int(a.key)], bound[int(b.key)])
                assert not shared or b.key in plan.memory.inplace, (a, b)
    # and the run equals the reference
    feed = np.random.default_rng(0).standard_normal((3, 2))
    got = run(g, {"x": feed}).outputs[out.id]
    from geon.core.reference import evaluate_graph

    np.testing.assert_allclose(got, evaluate_graph(g, {"x": feed})[out.id], rtol=1e-12, atol=1e-12)
    del x


def test_chain_reuses_two_slots_in_place() -> None:
    # given a 75-op elementwise chain on a 1000-element float64 tensor
    N = gc.Axis("N", 1000)
    x = gc.placeholder(axes=[N], name="x")
    t = x
    for k in range(50):
        t = gc.tanh(t) if k % 2 else gc.exp(t * 0.5)
    plan = compile_graph(gc.graph([t]))
    mem = plan.memory
    # then every op after the first runs in place in one slot: the largest live set
    assert mem.planned_peak_bytes == mem.largest_live_bytes == 8000
    assert mem.naive_bytes == 75 * 8000
    assert len(mem.inplace) == 74


def test_outputs_kept_are_never_overwritten() -> None:
    # given a graph with two outputs, one computed early
    N = gc.Axis("N", 4)
    x = gc.placeholder(axes=[N], name="x")
    early = gc.exp(x, name="early")
    late = gc.tanh(gc.negative(gc.square(early)), name="late")
    g = gc.graph([early, late])
    result = run(g, {"x": np.arange(4.0)}, outputs=[early.id, late.id])
    # then both outputs hold their own values
    np.testing.assert_allclose(result.outputs[early.id], np.exp(np.arange(4.0)))
    np.testing.assert_allclose(result.outputs[late.id], np.tanh(-np.square(np.exp(np.arange(4.0)))))


@pytest.mark.parametrize(
    ("buffers", "peak", "largest", "naive"),
    [
        ([Buffer("a", "float32", 10, 4, 0, 5), Buffer("b", "float32", 10, 4, 1, 2)], 80, 80, 80),
        ([Buffer("a", "float32", 10, 4, 0, 1), Buffer("b", "float32", 20, 4, 2, 3)], 80, 80, 120),
        (
            [Buffer("a", "float32", 10, 4, 0, 1), Buffer("b", "float32", 10, 4, 1, 2, "a")],
            40,
            40,
            80,
        ),
        ([Buffer("a", "float32", 10, 4, 0, 1), Buffer("b", "float64", 10, 8, 2, 3)], 120, 80, 120),
    ],
    ids=["overlapping", "grown-slot", "in-place", "dtypes-apart"],
)
def test_reported_figures(buffers: list[Buffer], peak: int, largest: int, naive: int) -> None:
    plan = plan_memory(buffers)
    assert (plan.planned_peak_bytes, plan.largest_live_bytes, plan.naive_bytes) == (
        peak,
        largest,
        naive,
    )
