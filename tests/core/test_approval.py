"""The stale rule of approvals (issue 18, docs/reviews.md "What an approval covers") on small
documents: what keeps an approval and what makes it stale, named for people."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from geon import core as gc
from geon.core.approval import approval_subject, fingerprint, stale_because
from geon.core.graph import AXIS, LAYOUT, NOTE, OPERATION, PLACEMENT, TENSOR, TENSOR_AXES

GROUP = "urn:geon:2026-11:tag_types.jsd#/tags/Group"
PLAN = {
    "mesh": {"name": "m", "axes": {"tp": 2}},
    "axisMapping": {"F": "tp"},
    "inputs": {},
    "spec": {},
}


def mlp() -> dict[str, Any]:
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
    x = gc.placeholder(axes=[N, D], name="x")
    w = gc.placeholder(axes=[D - 1, F], name="W")
    return gc.graph([gc.dot(x, w, name="h")]).to_json()


def first(document: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(n for n in document["nodes"] if n["type"] == kind)


def changed(edit: Any, plan: dict[str, Any] | None = None) -> list[str]:
    """What ``edit`` (a function changing a copy of the MLP in place) makes stale."""
    before = mlp()
    after = copy.deepcopy(before)
    edit(after)
    return stale_because(approval_subject(before, PLAN), approval_subject(after, plan or PLAN))


def move(doc: dict[str, Any]) -> None:
    for node in doc["nodes"]:
        node.setdefault("tags", {})[LAYOUT] = {"x": 1.0, "y": 2.0}


def relabel(doc: dict[str, Any]) -> None:
    first(doc, OPERATION)["label"] = "hidden"


def group(doc: dict[str, Any]) -> None:
    first(doc, OPERATION).setdefault("tags", {})[GROUP] = {"name": "layer 1"}


def annotate(doc: dict[str, Any]) -> None:
    doc["nodes"].append({"id": "n1", "type": NOTE, "body": {"message": "hello"}})
    first(doc, AXIS)["body"]["doc"] = "the batch"


@pytest.mark.parametrize("edit", [move, relabel, group, annotate])
def test_presentation_changes_keep_the_approval(edit: Any) -> None:
    assert changed(edit) == []


def test_a_kernel_parameter_makes_it_stale() -> None:
    def params(doc: dict[str, Any]) -> None:
        first(doc, OPERATION)["body"]["params"] = {"axes": ["F", "N"]}

    assert changed(params) == ['"op:dot": body.params']  # the builder labels it by kernel


def test_a_dtype_and_an_axis_length_make_it_stale() -> None:
    def dtype(doc: dict[str, Any]) -> None:
        first(doc, TENSOR)["body"]["dtype"] = "float16"

    def length(doc: dict[str, Any]) -> None:
        axis = next(n for n in doc["nodes"] if n["type"] == AXIS and n["body"]["name"] == "F")
        axis["body"]["length"] = 8

    assert changed(dtype) == ['"x": body.dtype']
    assert changed(length) == ['"F": body.length']


def test_a_placement_and_the_axes_of_a_tensor_make_it_stale() -> None:
    def placed(doc: dict[str, Any]) -> None:
        first(doc, OPERATION).setdefault("tags", {})[PLACEMENT] = {"mesh": "m", "coords": [1]}

    def axes(doc: dict[str, Any]) -> None:
        first(doc, TENSOR)["tags"][TENSOR_AXES] = {"axes": ["D", "N"]}

    assert changed(placed) == ['"op:dot": tags.Placement']
    assert changed(axes) == ['"x": tags.TensorAxes']


def test_nodes_added_and_removed_are_named() -> None:
    def remove_x(doc: dict[str, Any]) -> None:
        doc["nodes"] = [n for n in doc["nodes"] if n.get("label") != "x"]

    assert changed(remove_x) == ['"x" removed']


def test_the_plan_fields_are_covered_but_not_its_name() -> None:
    assert changed(lambda doc: None, {**PLAN, "axisMapping": {}}) == ["plan axisMapping"]
    assert changed(lambda doc: None, {**PLAN, "name": "renamed"}) == []


def test_the_fingerprint_follows_the_rule() -> None:
    doc = mlp()
    moved = copy.deepcopy(doc)
    move(moved)
    assert fingerprint(approval_subject(doc, PLAN)) == fingerprint(approval_subject(moved, PLAN))
    assert fingerprint(approval_subject(doc, PLAN)) != fingerprint(approval_subject(doc, None))
