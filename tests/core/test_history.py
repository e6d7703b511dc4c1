"""A version's summary for the history panel (issue 21, "No history"): what an edit did, by the
names people read, and whether it only moved nodes."""

from __future__ import annotations

from typing import Any

from geon import core as gc
from geon.core.editops import Change
from geon.core.graph import APPLICATION, AXIS, LAYOUT, OPERATION, TENSOR_AXES, Graph, Node
from geon.core.history import summarize


def mlp() -> Graph:
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
    x = gc.placeholder(axes=[N, D], name="x")
    w = gc.placeholder(axes=[D - 1, F], name="W")
    return gc.graph([gc.dot(x, w, name="h")])


def by_label(doc: Graph, label: str) -> Node:
    return next(n for n in doc.nodes if n.label == label)


def changed(node: Node, **fields: Any) -> Change:
    return Change(node.id, node, node.replace(**fields))


def test_a_rename_names_both_names() -> None:
    w = by_label(mlp(), "W")
    assert summarize([changed(w, label="V")]) == ('renamed "W" to "V"', False)


def test_moving_nodes_is_layout_only() -> None:
    doc = mlp()
    moves = [changed(n, tags={**n.tags, LAYOUT: {"x": 1, "y": 1}}) for n in doc.nodes[:3]]
    assert summarize(moves) == ("moved 3 nodes", True)


def test_added_removed_and_changed_nodes_are_named_by_kind() -> None:
    doc = mlp()
    x = by_label(doc, "x")
    op = next(n for n in doc.nodes if n.type == OPERATION)
    summary, layout_only = summarize(
        [
            Change(x.id, x, None),
            changed(op, body={**op.body, "params": {"axes": ["F", "N"]}}),
        ]
    )
    assert summary == 'removed tensor "x"; changed the params of "op:dot"'
    assert not layout_only


def test_connections_axes_and_lengths_read_as_what_a_person_did() -> None:
    # the first hour's edits (issue 21): not "changed "op:dot": inputs, outputs, IPFIndex, ..."
    doc = mlp()
    w = by_label(doc, "W")
    op = next(n for n in doc.nodes if n.type == OPERATION)
    only_w = {**op.body, "inputs": {"x": [], "y": op.body["inputs"]["y"]}}
    unwired = op.replace(body=only_w, tags={})
    # connecting x (its output and IPFs derived with it) is one clause
    summary, _ = summarize([Change(op.id, unwired, op)], doc.get)
    assert summary == 'connected "x" to "op:dot"'
    summary, _ = summarize([Change(op.id, op, unwired)], doc.get)
    assert summary == 'disconnected "x" from "op:dot"'
    # a tensor given other axes names them
    axes = {**w.tags, TENSOR_AXES: {"axes": ["D", "F"]}}
    assert summarize([changed(w, tags=axes)]) == ('gave "W" the axes (D, F)', False)
    # an operation whose derived tags alone changed was derived again
    assert summarize([Change(op.id, op, op.replace(tags={}))]) == (
        'derived "op:dot" again',
        False,
    )
    # an axis's new length
    n = next(a for a in doc.nodes if a.type == AXIS and a.body.get("name") == "N")
    assert summarize([changed(n, body={**n.body, "length": 8})]) == (
        'set the length of "N" to 8',
        False,
    )


def test_applications_added_read_as_a_split_of_their_operation() -> None:
    doc = mlp()
    op = next(n for n in doc.nodes if n.type == OPERATION)
    apps = [
        Change(f"a{i}", None, Node(f"a{i}", APPLICATION, None, {"operationId": op.id}))
        for i in range(2)
    ]
    assert summarize(apps, doc.get) == ('split "op:dot" into 2', False)
    removed = [Change(c.id, c.new, None) for c in apps]
    assert summarize(removed, doc.get) == ('removed the split of "op:dot"', False)


def test_many_changes_are_counted_not_listed() -> None:
    doc = mlp()
    renames = [changed(n, label=f"n{i}") for i, n in enumerate(doc.nodes[:6])]
    summary, _ = summarize(renames)
    assert summary.count("renamed") == 3 and summary.endswith("; and 3 more changes")
