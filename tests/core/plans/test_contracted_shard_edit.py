"""The editor's ``shard`` edit may name a dot's contracted axis: the same rewrite as a plan's
(partial products over ``F_over_tp`` and a sum with the dot's id), valid and equal when run."""

from __future__ import annotations

import pytest

import geon.core.plans  # noqa: F401  (registers the contracted split with the shard edit)
from geon import core as gc
from geon.core.errors import SplitError
from geon.core.graph import MESH, OPERATION, Graph
from geon.core.plans import shard_op_edits
from geon.execute import run

MESH_ID = "00000000-0000-4000-8000-00000000c0de"


def mlp(f: int = 6) -> Graph:
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", f)
    x = gc.placeholder(axes=[N, D], name="x")
    w1 = gc.placeholder(axes=[D - 1, F], name="W1")
    w2 = gc.placeholder(axes=[F - 1, D], name="W2")
    g = gc.graph([gc.dot(gc.relu(gc.dot(x, w1)), w2, name="y")])
    g.add_node({"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"tp": 3}}})
    return g


def test_shard_over_a_contracted_axis_rewrites_and_runs_equal() -> None:
    # given the MLP's second dot
    graph = mlp()
    dot2 = graph.of_type(OPERATION)[2].id
    # when the shard edit names its contracted F
    graph.apply(shard_op_edits(graph, dot2, mesh=MESH_ID, over={"F": "tp"}))
    # then it is partial products on the 3 tp devices and a sum with the dot's id
    kernels = sorted(op.body["kernel"] for op in graph.of_type(OPERATION))
    assert kernels == ["op:dot", "op:dot_partial", "op:relu", "op:sum"]
    partial = next(op for op in graph.of_type(OPERATION) if op.body["kernel"] == "op:dot_partial")
    assert len(graph.index.applications_of(partial.id)) == 3
    assert graph.index.applications_of(dot2) == []  # whole: replicated on every device
    assert graph.check() == []
    assert max(run(graph, seed=1, sharded=True).max_abs_diff.values()) < 1e-12


def test_unequal_parts_are_refused_by_the_shard_edit() -> None:
    graph = mlp(f=5)
    dot2 = graph.of_type(OPERATION)[2].id
    with pytest.raises(SplitError, match='"F" of length 5 cannot be split into 3 equal parts'):
        shard_op_edits(graph, dot2, mesh=MESH_ID, over={"F": "tp"})
