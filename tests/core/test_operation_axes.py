"""The graph model's reading of an operation's axes (geon.core.operation_axes, issue 37): the
same refusal the checker words as an issue, read without the checker."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from geon import core as gc
from geon.core.checks import check
from geon.core.graph import OPERATION, TENSOR, TENSOR_AXES, Graph
from geon.core.operation_axes import infer_operation


def _dot_with_collision() -> tuple[Graph, str, str]:
    """A dot whose x reads W where it should read W-1, and the ids of the op and of x."""
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1], name="x")
    z = gc.dot(x, gc.placeholder(axes=[W, N], name="y"), name="z")
    g = gc.graph([z])
    op = next(n.id for n in g.nodes if n.type == OPERATION)
    x_id = next(n.id for n in g.nodes if n.type == TENSOR and n.label == "x")
    g.update_node(x_id, tags={TENSOR_AXES: {"axes": ["H", "W"]}})
    return g, op, x_id


def test_the_checker_words_the_models_refusal() -> None:
    # given a dot whose operands collide on W
    g, op, _ = _dot_with_collision()
    # when the model reads the operation and the checker checks the graph
    inf, refusal = infer_operation(g.index, g.node(op))
    issues = [i for i in check(g) if i.constraint == "OperationAxesInference"]
    # then both say the same sentence; the checker adds its summary and the kernel
    assert inf is None and refusal is not None
    assert (refusal.reason, refusal.kind) == ("infer", "AxisError")
    assert [i.message for i in issues] == [refusal.message]
    assert issues[0].summary == "Operation axes do not infer"
    assert issues[0].params == {"kernel": "op:dot"}


def test_a_node_id_that_is_not_a_uuid_stops_the_checker_but_not_the_reading() -> None:
    # given the same dot, the operation renamed to an id that is not a UUID
    g, op, _ = _dot_with_collision()
    data = g.to_json()
    renamed = Graph.from_json({**data, "nodes": [_rename(n, op, "dot-z") for n in data["nodes"]]})
    # when the model reads the operation and the checker checks the graph
    _, refusal = infer_operation(renamed.index, renamed.node("dot-z"))
    constraints = {i.constraint for i in check(renamed)}
    # then the model still reads the axes (the node conforms), while the checker reports the id
    # and leaves the operation's axes until SchemaConformance has nothing to say
    assert refusal is not None and refusal.reason == "infer"
    assert "SchemaConformance" in constraints
    assert "OperationAxesInference" not in constraints


def _rename(node: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``node`` (JSON) with the id ``old`` replaced by ``new`` wherever it appears."""
    return json.loads(json.dumps(node).replace(f'"{old}"', f'"{new}"'))
