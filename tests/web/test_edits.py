"""The edit vocabulary (geon.graphs.edits): expanding higher-level ops, renames, touched fields,
conflicts and diffs, on documents in memory."""

from __future__ import annotations

from typing import Any

import pytest

from geon.core.errors import DocumentError
from geon.core.graph import AXIS, OPERATION, Graph, Node
from geon.graphs.edits import conflicts, diff, expand, rename_ref, touched_by_ops

G = "00000000-0000-4000-8000-000000000000"


def axis(nid: str, name: str, length: int | None = 4) -> Node:
    return Node(nid, AXIS, body={"name": name, "length": length})


@pytest.mark.parametrize(
    ("ref", "expected"),
    [("H", "R"), ("H-1", "R-1"), ("H+2", "R+2"), ("H*W", "R*W"), ("W*H-1", "W*R-1"), ("HH", "HH")],
)
def test_rename_ref_keeps_levels_and_composites(ref: str, expected: str) -> None:
    assert rename_ref(ref, "H", "R") == expected


def test_a_rename_rewrites_op_params_that_name_axes() -> None:
    op = Node(
        "op",
        OPERATION,
        body={
            "kernel": "op:slice",
            "params": {"slices": {"H-1": {"start": 0, "stop": 2}}, "axes": {"H-1": "K"}},
        },
        tags={"urn:geon:2026-11:tag_types.jsd#/tags/IndexAxes": {"axes": ["K", "H"]}},
    )
    doc = Graph([axis("a", "H"), axis("k", "K", 2), op], id=G)
    ops = expand(doc, [{"op": "set_axis", "name": "H", "rename": "R"}])
    doc.apply(ops)
    renamed = doc.node("op")
    assert renamed.body["params"] == {
        "slices": {"R-1": {"start": 0, "stop": 2}},
        "axes": {"R-1": "K"},
    }
    assert renamed.tags == {"urn:geon:2026-11:tag_types.jsd#/tags/IndexAxes": {"axes": ["K", "R"]}}
    assert doc.node("a").body == {"name": "R", "length": 4}


def test_ops_expand_in_order() -> None:
    doc = Graph([], id=G)
    ops = expand(
        doc,
        [
            {"op": "add_axis", "axis": {"name": "H", "length": 2}, "id": "h"},
            {"op": "set_axis", "name": "H", "length": 3},
        ],
    )
    doc.apply(ops)
    assert doc.node("h").body == {"name": "H", "length": 3}


def test_unbinding_an_axis_writes_null() -> None:
    doc = Graph([axis("h", "H")], id=G)
    doc.apply(expand(doc, [{"op": "set_axis", "name": "H", "length": None}]))
    assert doc.node("h").body == {"name": "H", "length": None}


@pytest.mark.parametrize(
    ("label", "op", "message"),
    [
        (
            "unknown axis",
            {"op": "set_axis", "name": "Q", "length": 2},
            'edit op 0 (set_axis): axis "Q" is not declared; expected one of ("H")',
        ),
        (
            "rename to its own name",
            {"op": "set_axis", "name": "H", "rename": "H"},
            None,
        ),
        (
            "bad length",
            {"op": "set_axis", "name": "H", "length": 0},
            'edit op 0 (set_axis) has length "0" for axis "H"; expected an integer >= 1 or null',
        ),
        (
            "nothing to change",
            {"op": "set_axis", "name": "H"},
            'edit op 0 (set_axis) changes nothing; expected "rename" and/or "length"',
        ),
        (
            "bad axis name",
            {"op": "add_axis", "axis": {"name": "1x", "length": 2}},
            'edit op 0 (add_axis) has axis name "1x"; expected a name like "H" or "batch_1" '
            "(letters, digits, _; not starting with a digit)",
        ),
        (
            "layout without y",
            {"op": "set_layout", "id": "h", "x": 1},
            'edit op 0 (set_layout) has y "None"; expected a number',
        ),
        (
            "unknown op",
            {"op": "explode"},
            'edit op 0 has op "explode"; expected one of ("add_node", "remove_node", '
            '"update_node", "set_layout", "add_axis", "set_axis", "shard")',
        ),
        (
            "shard of a missing operation",
            {"op": "shard", "operation": "nope", "dim": 0, "parts": 2},
            'edit op 0 (shard): operation "nope" does not exist; expected the id of one of the 0 '
            "operations in the graph",
        ),
    ],
)
def test_bad_ops_name_the_problem(label: str, op: dict[str, Any], message: str | None) -> None:
    doc = Graph([axis("h", "H")], id=G)
    if message is None:  # renaming to its own name is allowed and changes only the Axis
        assert expand(doc, [op]) == [{"op": "update_node", "id": "h", "body": {"name": "H"}}]
        return
    with pytest.raises(DocumentError) as refused:
        expand(doc, [op])
    assert str(refused.value) == message


def test_touched_fields_and_conflicts() -> None:
    mine = touched_by_ops(
        [
            {"op": "update_node", "id": "a", "label": "x", "tags": {"t": 1}},
            {"op": "remove_node", "id": "b"},
        ]
    )
    assert mine == {"a": ["label", "tags.t"], "b": ["*"]}
    assert conflicts(mine, {"a": ["body.dtype"], "c": ["*"]}) == []
    assert conflicts(mine, {"a": ["tags.t"], "b": ["label"]}) == [
        {"id": "a", "field": "tags.t"},
        {"id": "b", "field": "label"},
    ]


def test_diff_names_nodes_and_fields() -> None:
    old = Graph([axis("h", "H"), axis("w", "W")], id=G)
    new = Graph([axis("h", "H", 8), axis("n", "N")], id=G)
    assert diff(old, new) == {
        "added": ["n"],
        "removed": ["w"],
        "changed": [{"id": "h", "fields": ["body.length"]}],
    }
