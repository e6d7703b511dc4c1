"""Epilogues fused into a conv (issue #34): a conv's bias add, and the relu after it, run in the
conv's step, equal to the three kernels run as written (the reference evaluator); anything
else (an intermediate kept or read twice, a dtype mix, a sharded plan, another order of the
add's dims) runs as written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from geon import core as gc
from geon.core.graph import Graph
from geon.core.reference import evaluate_graph as reference
from geon.execute import run
from geon.execute.plan import compile_graph

Bt, Ci = gc.Axis("Bt", 3), gc.Axis("Ci", 2, roles="Channel")
Hi, Wi = gc.Axis("Hi", 7, roles="Height"), gc.Axis("Wi", 6, roles="Width")
R, S = gc.Axis("R", 3, roles="Height"), gc.Axis("S", 2, roles="Width")
K = gc.Axis("K", 4, roles="Channelout")
P, Q = gc.Axis("P", 4, roles="Height"), gc.Axis("Q", 4, roles="Width")


def _cnn(
    *, relu: bool = True, order: str = "BKPQ", dtype: str = "float32", bias_dtype: str = ""
) -> tuple[Graph, dict[str, Any], dict[str, str]]:
    """A padded, strided conv, its bias added along the output channels, then a relu."""
    rng = np.random.default_rng(3)
    x = gc.placeholder(axes=[Bt, Ci, Hi, Wi], name="x", dtype=dtype)
    f = gc.placeholder(axes=[Ci - 1, R, S, K], name="f", dtype=dtype)
    b = gc.placeholder(axes=[K], name="b", dtype=bias_dtype or dtype)
    axes = {"B": Bt, "K": K, "P": P, "Q": Q}
    y = gc.conv2d(x, f, [axes[c] for c in order], stride=2, padding=1, name="conv")
    added = gc.add(y, b, axes=[axes[c] for c in order], name="added")
    out = gc.relu(added, name="y") if relu else added
    feeds = {
        "x": rng.standard_normal((3, 2, 7, 6)).astype(dtype),
        "f": rng.standard_normal((2, 3, 2, 4)).astype(dtype),
        "b": rng.standard_normal(4).astype(bias_dtype or dtype),
    }
    ids = {"conv": y.id, "added": added.id, "y": out.id}
    return gc.graph([out]), feeds, ids


def _kernels(g: Graph, **kw: Any) -> list[str]:
    return [s.kernel for s in compile_graph(g, **kw).steps]


@pytest.mark.parametrize("relu", [True, False], ids=["add-relu", "add"])
@pytest.mark.parametrize("order", ["BKPQ", "PBQK"])
def test_a_conv_bias_and_relu_run_in_the_convs_step(backend: str, relu: bool, order: str) -> None:
    # given a conv, its bias add and (or not) a relu, nothing in between kept
    g, feeds, ids = _cnn(relu=relu, order=order)
    # then the plan has the conv's step alone, and the result equals the three run as written
    assert _kernels(g, backend=backend) == ["op:conv2d"]
    out = "y" if relu else "added"
    got = run(g, feeds, backend=backend).by_key()[out]
    want = reference(g, feeds)
    np.testing.assert_allclose(got, want[ids[out]], rtol=1e-5, atol=1e-5)
    assert got.dtype == np.float32
    if relu:
        assert got.min() == 0.0 and got.max() > 0.0  # the clamp did something


def test_what_cannot_fuse_runs_as_written() -> None:
    g, feeds, ids = _cnn()
    conv, added, y = ids["conv"], ids["added"], ids["y"]
    # an intermediate kept: the ops after it stay
    assert _kernels(g, keep=[conv, y]) == ["op:conv2d", "op:add", "op:relu"]
    assert _kernels(g, keep=[added, y]) == ["op:conv2d", "op:relu"]
    # a bias of another dtype, and a sharded plan (its steps are one per operation)
    mixed, mixed_feeds, mixed_ids = _cnn(bias_dtype="float64")
    assert _kernels(mixed) == ["op:conv2d", "op:add", "op:relu"]
    assert _kernels(g, sharded=True) == ["op:conv2d", "op:add", "op:relu"]
    for graph, inputs, out in ((mixed, mixed_feeds, mixed_ids["y"]), (g, feeds, y)):
        got = run(graph, inputs, sharded=True).by_key()["y"]
        want = reference(graph, inputs)[out]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_an_add_in_another_order_of_dims_runs_as_written() -> None:
    # given the bias add writing (K, Bt, P, Q) from a (Bt, K, P, Q) conv
    rng = np.random.default_rng(4)
    x = gc.placeholder(axes=[Bt, Ci, Hi, Wi], name="x", dtype="float32")
    f = gc.placeholder(axes=[Ci - 1, R, S, K], name="f", dtype="float32")
    b = gc.placeholder(axes=[K], name="b", dtype="float32")
    y = gc.conv2d(x, f, [Bt, K, P, Q], stride=2, padding=1, name="conv")
    out = gc.relu(gc.add(y, b, axes=[K, Bt, P, Q], name="added"), name="y")
    g = gc.graph([out])
    assert _kernels(g) == ["op:conv2d", "op:add", "op:relu"]
    feeds = {
        "x": rng.standard_normal((3, 2, 7, 6)).astype(np.float32),
        "f": rng.standard_normal((2, 3, 2, 4)).astype(np.float32),
        "b": rng.standard_normal(4).astype(np.float32),
    }
    got = run(g, feeds).by_key()["y"]
    np.testing.assert_allclose(got, reference(g, feeds)[out.id], rtol=1e-5, atol=1e-5)
