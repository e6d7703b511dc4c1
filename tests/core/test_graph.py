"""The document model: lossless JSON, the index, and atomic edits (DESIGN.md §3, §6 ops)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from geon.core.errors import DocumentError
from geon.core.graph import (
    APPLICATION,
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    LAYOUT,
    MESH,
    NOTE,
    OPERATION,
    PLACEMENT,
    TENSOR,
    TENSOR_AXES,
    Graph,
    Node,
    axis_names_of_ref,
    merge_patch,
)

OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
APPS = ("2524fb44-d169-4afd-90fa-09711462e4b3", "2af709e2-c792-4712-80cc-0624ee767115")
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"
Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"
NEW = "00000000-0000-4000-8000-000000000001"


def snapshot(g: Graph) -> str:
    return json.dumps(g.to_json(), indent=2)


# -- constants -------------------------------------------------------------------------------


def test_type_urls_are_the_loom_and_geon_ones() -> None:
    assert TENSOR == "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Tensor"
    assert (
        IPF_INDEX == "http://tensortapestry.org/schemas/loom/2024-01/tag_types.jsd#/tags/IPFIndex"
    )
    assert AXIS == "urn:geon:2026-11:node_types.jsd#/nodes/Axis"
    assert MESH == "urn:geon:2026-11:node_types.jsd#/nodes/Mesh"
    assert TENSOR_AXES == "urn:geon:2026-11:tag_types.jsd#/tags/TensorAxes"
    assert PLACEMENT == "urn:geon:2026-11:tag_types.jsd#/tags/Placement"
    assert LAYOUT == "urn:geon:2026-11:tag_types.jsd#/tags/Layout"


# -- JSON ------------------------------------------------------------------------------------


def test_loom_example_round_trips_byte_for_byte(loom_text: str) -> None:
    assert json.dumps(Graph.from_json(json.loads(loom_text)).to_json(), indent=2) == loom_text


def test_unknown_fields_tags_labels_and_key_order_are_kept() -> None:
    # given a document with unknown top-level and node fields, an unknown tag and odd key order
    text = json.dumps(
        {
            "nodes": [
                {
                    "body": {"message": "m", "zz": 1, "aa": [1, {"b": 2}]},
                    "x-extra": {"keep": True},
                    "tags": {"urn:other:tag": {"v": [1, 2]}, LAYOUT: {"x": 1.5, "y": -2}},
                    "label": "note",
                    "type": NOTE,
                    "id": NEW,
                }
            ],
            "meta": {"author": "a"},
            "id": "00000000-0000-4000-8000-000000000000",
        },
        indent=2,
    )
    # when loaded and saved
    again = json.dumps(Graph.from_json(json.loads(text)).to_json(), indent=2)
    # then nothing changed
    assert again == text


def test_node_order_is_document_order(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    assert [n.id for n in g.nodes] == [n["id"] for n in loom_doc["nodes"]]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], 'document is "[]"; expected a JSON object'),
        ({"nodes": []}, 'document has no "id"; expected a string (a UUID)'),
        ({"id": 3, "nodes": []}, 'document has id "3"; expected a string (a UUID)'),
        ({"id": "g"}, 'document has no "nodes"; expected a list of nodes'),
        ({"id": "g", "nodes": {}}, 'document has nodes "{}"; expected a list of nodes'),
        ({"id": "g", "nodes": [7]}, 'node 0 is "7"; expected a JSON object'),
        (
            {"id": "g", "nodes": [{"type": NOTE, "body": {}}]},
            'node 0 has no "id"; expected a string (a UUID)',
        ),
        (
            {"id": "g", "nodes": [{"id": "a", "body": {}}]},
            'node "a" has no "type"; expected a type URL string',
        ),
        (
            {"id": "g", "nodes": [{"id": "a", "type": NOTE}]},
            'node "a" has no "body"; expected a JSON object',
        ),
        (
            {"id": "g", "nodes": [{"id": "a", "type": NOTE, "body": []}]},
            'node "a" has body "[]"; expected a JSON object',
        ),
        (
            {"id": "g", "nodes": [{"id": "a", "type": NOTE, "body": {}, "tags": 1}]},
            'node "a" has tags "1"; expected a JSON object',
        ),
        (
            {"id": "g", "nodes": [{"id": "a", "type": NOTE, "body": {}, "label": 1}]},
            'node "a" has label "1"; expected a string',
        ),
        (
            {"id": "g", "nodes": [{"id": "a", "type": NOTE, "body": {}}] * 2},
            'node id "a" appears twice; ids must be unique',
        ),
    ],
    ids=[
        "not-object",
        "no-id",
        "id-not-string",
        "no-nodes",
        "nodes-not-list",
        "node-not-object",
        "node-no-id",
        "node-no-type",
        "node-no-body",
        "body-not-object",
        "tags-not-object",
        "label-not-string",
        "duplicate-id",
    ],
)
def test_from_json_refuses_malformed_documents_naming_the_field(data: Any, message: str) -> None:
    with pytest.raises(DocumentError) as info:
        Graph.from_json(data)
    assert str(info.value) == message


def test_node_is_a_frozen_value_with_replace() -> None:
    n = Node(NEW, NOTE, "a", {"message": "m"})
    m = n.replace(label="b")
    assert (n.label, m.label) == ("a", "b")
    assert n == Node(NEW, NOTE, "a", {"message": "m"})
    assert hash(n) == hash(Node(NEW, NOTE, "a", {"message": "m"}))
    with pytest.raises(AttributeError):
        n.label = "c"  # type: ignore[misc]


# -- index -----------------------------------------------------------------------------------


def test_index_reverse_references(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    assert [a.id for a in g.index.applications_of(OP)] == list(APPS)
    assert g.index.operations_using(T0) == (OP,)
    assert g.index.referrers(T0) == (APPS[0], OP, APPS[1])
    assert g.index.references(APPS[0]) == (OP, T0, T1, Z)
    assert [n.id for n in g.of_type(TENSOR)] == [T1, T0, Z]


def test_index_axis_lookups() -> None:
    # given two Axis declarations, a tensor naming H and W-1, and an op with IndexAxes
    g = Graph(
        [
            Node("h", AXIS, body={"name": "H", "length": 2}),
            Node("w", AXIS, body={"name": "W", "length": 3}),
            Node("t", TENSOR, body={}, tags={TENSOR_AXES: {"axes": ["H", "W-1"]}}),
            Node("o", OPERATION, body={}, tags={INDEX_AXES: {"axes": ["H*W"]}}),
        ],
        id="g",
    )
    assert g.index.axis("W").id == "w"  # type: ignore[union-attr]
    assert g.index.axis("K") is None
    assert g.index.tensors_with_axis("W") == ("t",)
    assert g.index.operations_with_index_axis("W") == ("o",)
    # when the tensor's axes change, the index follows
    g.apply([{"op": "update_node", "id": "t", "tags": {TENSOR_AXES: {"axes": ["H"]}}}])
    assert g.index.tensors_with_axis("W") == ()


def test_declarations_of_a_name_are_sorted_once_per_version() -> None:
    # given three declarations of H (a check asks for them once per declaration: n of them)
    g = Graph([Node(n, AXIS, body={"name": "H", "length": 2}) for n in ("a", "b", "c")], id="g")
    first = g.index.axis_declaration_ids("H")
    # then they come in document order, and asking again at the same version sorts nothing
    assert first == ("a", "b", "c")
    assert g.index.axis_declaration_ids("H") is first
    # and an edit is seen at once
    g.apply([{"op": "remove_node", "id": "a"}])
    assert g.index.axis_declaration_ids("H") == ("b", "c")
    assert g.index.axis("H").id == "b"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("ref", "names"),
    [("W", ("W",)), ("W-1", ("W",)), ("W+2", ("W",)), ("H*W", ("H", "W")), (3, ())],
    ids=["plain", "dual", "plus", "composite", "not-string"],
)
def test_axis_names_of_ref(ref: Any, names: tuple[str, ...]) -> None:
    assert axis_names_of_ref(ref) == names


# -- edits -----------------------------------------------------------------------------------


def test_add_update_remove(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    # add appends
    g.apply([{"op": "add_node", "node": {"id": NEW, "type": NOTE, "body": {"message": "hi"}}}])
    assert g.nodes[-1].id == NEW
    # update merges body and tags, replaces the label, keeps the position
    changes = g.apply(
        [
            {
                "op": "update_node",
                "id": T0,
                "label": "x",
                "body": {"dtype": "float32"},
                "tags": {LAYOUT: {"x": 1, "y": 2}},
            }
        ]
    )
    assert [c.id for c in changes] == [T0]
    t0 = g.node(T0)
    assert (t0.label, t0.body["dtype"], t0.body["range"]["end"]) == ("x", "float32", [10, 5])
    assert t0.tags == {LAYOUT: {"x": 1, "y": 2}}
    assert [n.id for n in g.nodes].index(T0) == 4
    # null removes a key
    g.apply([{"op": "update_node", "id": T0, "label": None, "tags": {LAYOUT: None}}])
    assert g.node(T0).label is None
    assert "label" not in g.node(T0).to_json()
    assert g.node(T0).tags == {}
    # remove
    g.apply([{"op": "remove_node", "id": NEW}])
    assert NEW not in g


def test_update_never_mutates_the_old_body(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    before = g.node(T0)
    g.apply([{"op": "update_node", "id": T0, "body": {"range": {"end": [10, 6]}}}])
    assert before.body["range"]["end"] == [10, 5]
    assert g.node(T0).body["range"] == {"start": [0, 0], "end": [10, 6]}


def test_merge_patch_follows_rfc_7386() -> None:
    assert merge_patch({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}}) == {
        "a": "z",
        "c": {"d": "e"},
    }
    assert merge_patch({"a": [1, 2]}, {"a": [3]}) == {"a": [3]}
    assert merge_patch({"a": 1}, {"b": {"c": None}}) == {"a": 1, "b": {}}


def test_remove_of_a_referenced_node_is_refused_naming_the_referrers(
    loom_doc: dict[str, Any],
) -> None:
    g = Graph.from_json(loom_doc)
    before = snapshot(g)
    with pytest.raises(DocumentError) as info:
        g.apply([{"op": "remove_node", "id": T0}])
    assert str(info.value) == (
        f'edit op 0 (remove_node): node "{T0}" is referenced by "{APPS[0]}", "{OP}", '
        f'"{APPS[1]}"; remove or change those first, or pass "cascade": true to remove them too'
    )
    assert snapshot(g) == before


def test_cascade_removes_referrers_transitively(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    changes = g.remove_node(T0, cascade=True)
    assert sorted(c.id for c in changes) == sorted([T0, OP, *APPS])
    assert [n.id for n in g.nodes] == [T1, Z]


def test_removing_referrers_first_in_one_batch_is_allowed(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    g.apply(
        [{"op": "remove_node", "id": a} for a in (*APPS, OP)] + [{"op": "remove_node", "id": T0}]
    )
    assert [n.id for n in g.nodes] == [T1, Z]


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ("nope", 'edit ops are "nope"; expected a list of edit operations'),
        ([3], 'edit op 0 is "3"; expected a JSON object with an "op"'),
        (
            [{"op": "rename"}],
            'edit op 0 has op "rename"; expected one of ("add_node", "remove_node", "update_node")',
        ),
        ([{"op": "add_node"}], 'edit op 0 (add_node) has no "node"; expected a node object'),
        (
            [{"op": "add_node", "node": {"id": T0, "type": NOTE, "body": {}}}],
            f'edit op 0 (add_node): node "{T0}" already exists; use a new id',
        ),
        (
            [{"op": "add_node", "node": {"id": NEW, "type": NOTE}}],
            f'edit op 0 (add_node): node "{NEW}" has no "body"; expected a JSON object',
        ),
        (
            [{"op": "remove_node", "id": NEW}],
            f'edit op 0 (remove_node): node "{NEW}" does not exist',
        ),
        (
            [{"op": "remove_node", "id": 5}],
            'edit op 0 (remove_node) has id "5"; expected the id of a node',
        ),
        (
            [{"op": "remove_node", "id": Z, "cascade": "yes"}],
            'edit op 0 (remove_node) has cascade "yes"; expected true or false',
        ),
        (
            [{"op": "update_node", "id": Z, "type": NOTE}],
            'edit op 0 (update_node) has unknown field "type"; expected one of ("op", "id", '
            '"label", "body", "tags")',
        ),
        (
            [{"op": "update_node", "id": Z, "body": [1]}],
            'edit op 0 (update_node) has body "[1]"; expected a JSON object (a merge patch)',
        ),
        (
            [{"op": "update_node", "id": Z, "tags": 1}],
            'edit op 0 (update_node) has tags "1"; expected a JSON object (a merge patch)',
        ),
        (
            [{"op": "update_node", "id": Z, "label": 1}],
            'edit op 0 (update_node) has label "1"; expected a string or null',
        ),
        (
            [{"op": "update_node", "id": Z, "label": "ok"}, {"op": "remove_node", "id": NEW}],
            f'edit op 1 (remove_node): node "{NEW}" does not exist',
        ),
    ],
    ids=[
        "not-list",
        "op-not-object",
        "unknown-op",
        "add-no-node",
        "add-existing",
        "add-malformed",
        "remove-missing",
        "remove-bad-id",
        "cascade-not-bool",
        "update-unknown-field",
        "update-body-not-object",
        "update-tags-not-object",
        "update-bad-label",
        "second-op-fails",
    ],
)
def test_refused_edits_change_nothing(loom_doc: dict[str, Any], ops: Any, message: str) -> None:
    # given the loom example
    g = Graph.from_json(loom_doc)
    before = snapshot(g)
    # when a batch with a bad op is applied; then it is refused with a message naming the value
    with pytest.raises(DocumentError) as info:
        g.apply(ops)
    assert str(info.value) == message
    # and nothing changed (not even the ops before the failing one)
    assert snapshot(g) == before
    assert [a.id for a in g.index.applications_of(OP)] == list(APPS)


def test_remove_then_add_same_id_moves_node_to_the_end(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    g.apply(
        [
            {"op": "remove_node", "id": Z, "cascade": True},
            {"op": "add_node", "node": {"id": Z, "type": NOTE, "body": {"message": "z"}}},
        ]
    )
    assert g.nodes[-1].id == Z
    assert g.node(Z).type == NOTE
    assert [a.id for a in g.index.applications_of(OP)] == []


def test_placement_references_its_mesh() -> None:
    g = Graph(
        [
            Node("m", MESH, body={"name": "m", "axes": {"x": 2}}),
            Node(
                "a",
                APPLICATION,
                body={"operationId": "o"},
                tags={PLACEMENT: {"mesh": "m", "coords": [0]}},
            ),
        ],
        id="g",
    )
    assert g.index.referrers("m") == ("a",)
    with pytest.raises(DocumentError):
        g.remove_node("m")


# -- the name "graph": the builder function hides the submodule on the package ---------------


def test_geon_core_graph_names_the_builder_function_and_the_module_keeps_its_classes() -> None:
    # given the package, its builder and the document module, imported each way people do
    import importlib
    import sys

    import geon.core
    import geon.core.builder
    import geon.core.graph as imported_as
    from geon.core import graph as from_package
    from geon.core.graph import Graph as FromModule

    module = importlib.import_module("geon.core.graph")
    # then the package attribute is the §8 builder function, whichever import spelling is used
    assert from_package is geon.core.builder.graph
    assert imported_as is geon.core.builder.graph
    assert geon.core.graph is geon.core.builder.graph
    # and the module is still the document module, with its classes
    assert module is sys.modules["geon.core.graph"]
    assert module.__name__ == "geon.core.graph"
    assert FromModule is module.Graph
    assert FromModule.__module__ == "geon.core.graph"
    # and the function builds that module's Graph
    built = from_package([geon.core.placeholder(axes=[geon.core.Axis("H", 2)])])
    assert type(built) is FromModule
