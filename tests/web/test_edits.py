"""The edit vocabulary (geon.graphs.edits): expanding higher-level ops, renames, touched fields,
conflicts and diffs, on documents in memory."""

from __future__ import annotations

from typing import Any

import pytest

from geon.core.errors import DocumentError
from geon.core.graph import AXIS, MESH, OPERATION, Graph, Node
from geon.graphs.edits import (
    EditRefused,
    conflicts,
    diff,
    expand,
    rename_ref,
    touched_by_ops,
)

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
            'edit op 0 (set_axis): axis "H" cannot have length "0"; expected an integer >= 1, '
            "or null for not yet bound",
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


@pytest.mark.parametrize(
    ("label", "ops", "message"),
    [
        ("not a list", "nope", 'edit ops are "nope"; expected a list of edit operations'),
        ("not an object", [3], 'edit op 0 is "3"; expected a JSON object with an "op"'),
        (
            "unknown field of a node op",
            [{"op": "remove_node", "id": "h", "force": True}],
            'edit op 0 (remove_node) has unknown field "force"; expected one of ("op", "id", '
            '"cascade")',
        ),
    ],
)
def test_the_server_and_the_document_read_an_ops_shape_alike(
    label: str, ops: Any, message: str
) -> None:
    # given a document
    doc = Graph([axis("h", "H")], id=G)
    # when a malformed edit is applied directly, and as the server does (expanded, then applied)
    with pytest.raises(DocumentError) as by_document:
        doc.copy().apply(ops)
    with pytest.raises(DocumentError) as by_server:
        doc.copy().apply(expand(doc, ops))
    # then both refuse it with the same message, and the document is unchanged
    assert str(by_document.value) == str(by_server.value) == message
    assert [n.id for n in doc.nodes] == ["h"]


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


# -- bounds (issue 13, findings 4 and 8) -----------------------------------------------------

OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
"""The loom example's operation: index range [0:10, 0:5], two Applications."""
MESH_ID = "00000000-0000-4000-8000-0000000000e0"


@pytest.mark.parametrize(
    ("label", "op", "message"),
    [
        (
            "length beyond int64",
            {"op": "set_axis", "name": "H", "length": 2**63},
            'edit op 0 (set_axis) has length "9223372036854775808" for axis "H"; expected at '
            "most 9223372036854775807",
        ),
        (
            "new axis beyond int64",
            {"op": "add_axis", "axis": {"name": "K", "length": 10**4000}},
            'edit op 0 (add_axis) has length "1000000000000... (4001 digits)" for axis "K"; '
            "expected at most 9223372036854775807",
        ),
        (
            "layout NaN",
            {"op": "set_layout", "id": "h", "x": float("nan"), "y": 0},
            'edit op 0 (set_layout) has x "nan"; expected a finite number from '
            "-9223372036854775808 to 9223372036854775807",
        ),
        (
            "layout infinity",
            {"op": "set_layout", "id": "h", "x": 0, "y": float("-inf")},
            'edit op 0 (set_layout) has y "-inf"; expected a finite number from '
            "-9223372036854775808 to 9223372036854775807",
        ),
        (
            "layout beyond int64",
            {"op": "set_layout", "id": "h", "x": 10**30, "y": 0},
            'edit op 0 (set_layout) has x "1000000000000... (31 digits)"; expected a finite '
            "number from -9223372036854775808 to 9223372036854775807",
        ),
    ],
)
def test_numbers_beyond_int64_are_refused(label: str, op: dict[str, Any], message: str) -> None:
    doc = Graph([axis("h", "H")], id=G)
    with pytest.raises(DocumentError) as refused:
        expand(doc, [op])
    assert str(refused.value) == message


def test_the_largest_numbers_are_accepted() -> None:
    doc = Graph([axis("h", "H")], id=G)
    ops = expand(
        doc,
        [
            {"op": "set_axis", "name": "H", "length": 2**63 - 1},
            {"op": "set_layout", "id": "h", "x": -(2**63), "y": 1.5e18},
        ],
    )
    assert [op["op"] for op in ops] == ["update_node", "update_node"]


def refused(doc: Graph, ops: list[dict[str, Any]], **kwargs: Any) -> EditRefused:
    """The refusal of ``ops``, after checking that expanding them changed nothing."""
    before = doc.to_json()
    with pytest.raises(EditRefused) as info:
        expand(doc, ops, **kwargs)
    assert doc.to_json() == before
    return info.value


def test_a_shard_counts_against_the_ops_of_an_edit(loom_document: dict[str, Any]) -> None:
    doc = Graph.from_json(loom_document)
    # 2 removals + 4 new Applications fit in 6 ops; one earlier op leaves room for 3 shards only
    assert (
        len(expand(doc, [{"op": "shard", "operation": OP, "dim": 0, "parts": 4}], max_ops=6)) == 6
    )
    layout = {"op": "set_layout", "id": OP, "x": 0, "y": 0}
    error = refused(
        doc, [layout, {"op": "shard", "operation": OP, "dim": 0, "parts": 4}], max_ops=6
    )
    assert (error.reason, str(error)) == (
        "too_many_ops",
        "edit op 1 (shard): splitting [0:10, 0:5] along dim 0 gives 4 pieces; expected at most "
        "3 (an edit makes at most 6 node ops: its earlier ops take 1 and removing the "
        "operation's Applications 2)",
    )


def test_the_ops_per_edit_setting_bounds_shards(
    loom_document: dict[str, Any], settings: Any
) -> None:
    settings.GEON_MAX_OPS_PER_EDIT = 4
    doc = Graph.from_json(loom_document)
    error = refused(doc, [{"op": "shard", "operation": OP, "dim": 1, "parts": 3}])
    assert (error.reason, str(error)) == (
        "too_many_ops",
        "edit op 0 (shard): splitting [0:10, 0:5] along dim 1 gives 3 pieces; expected at most "
        "2 (an edit makes at most 4 node ops: its earlier ops take 0 and removing the "
        "operation's Applications 2)",
    )


@pytest.mark.timeout(60)
def test_huge_shards_are_refused_before_building(loom_document: dict[str, Any]) -> None:
    # sizes that would need terabytes if anything were built before the refusal
    doc = Graph.from_json(loom_document)
    with pytest.raises(DocumentError) as info:
        expand(doc, [{"op": "shard", "operation": OP, "dim": 0, "parts": 10**12}])
    assert str(info.value) == (
        "edit op 0 (shard): splitting [0:10, 0:5] gives 999999999990 empty shards (such as "
        "[10:10, 0:5]); expected fewer parts than index points in the split dims"
    )
    mesh = {"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"x": 10**12}}}
    with pytest.raises(DocumentError) as info:
        expand(
            doc,
            [
                {"op": "add_node", "node": mesh},
                {"op": "shard", "operation": OP, "mesh": MESH_ID, "over": {"0": "x"}},
            ],
        )
    assert str(info.value) == (
        f'edit op 1 (shard): mesh "{MESH_ID}" has 1000000000000 devices (x=1000000000000); '
        "expected at most 65536"
    )
    assert doc.get(MESH_ID) is None


@pytest.mark.timeout(60)
def test_a_shard_per_point_of_a_huge_axis_is_too_many_ops() -> None:
    from geon import core as gc

    x = gc.placeholder(axes=[gc.Axis("N", 2**40)], name="x")
    y = x + x
    doc = gc.graph([y])
    error = refused(doc, [{"op": "shard", "operation": y.op_id, "dim": "N", "chunk": 1}])
    assert (error.reason, str(error)) == (
        "too_many_ops",
        "edit op 0 (shard): splitting [0:1099511627776] along dim 0 gives 1099511627776 pieces; "
        "expected at most 1000 (an edit makes at most 1000 node ops: its earlier ops take 0 "
        "and removing the operation's Applications 0)",
    )
