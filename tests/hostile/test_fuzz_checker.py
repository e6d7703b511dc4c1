"""Fuzzing the document checker (issue 13): random mutations of real documents — the gallery,
the loom example, loom's unit-test documents — never make it raise, never make a constraint
fail (an ``InternalError`` issue), and never make it produce more issues than its bounds.

Documents stay small (a few dozen nodes, at most four mutations each: dropped, duplicated and
retyped nodes, deleted keys, values replaced by any JSON, ranges and axis strings changed,
references pointed elsewhere), except for floods of up to 1,100 copies of one node, which reach
the bounds per node and per check. Examples are derandomized (the same ones on every run, so CI is
reproducible) and bounded in count, each under a deadline that catches a hang, not a slow
machine (the slowest, with a flood, checks 1,100 nodes four ways in about a second); the file
runs in about 20 seconds.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geon.core.checks import IncrementalChecker, all_constraints, check, check_document
from geon.core.errors import GeonError
from geon.core.graph import (
    INDEX_AXES,
    IPF_INDEX,
    NODE_TYPES,
    TAG_TYPES,
    TENSOR_AXES,
    Graph,
)
from geon.core.issues import MAX_ISSUES_PER_CHECK, MAX_ISSUES_PER_CONSTRAINT, Issue
from geon.examples.gallery import EXAMPLES

LOOM_EXAMPLE = Path(__file__).parents[2] / "geon" / "examples" / "loom_sharded_add.json"
LOOM_UNIT = Path(__file__).parents[1] / "core" / "loom_unit"


def deterministic_ids(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its id and node ids (fresh UUIDs in the gallery) renamed in order,
    wherever they appear, so that every run fuzzes the same documents."""
    text = json.dumps(document)
    for k, node in enumerate(document["nodes"]):
        text = text.replace(node["id"], f"00000000-0000-4000-8000-{k + 1:012d}")
    renamed: dict[str, Any] = json.loads(text)
    renamed["id"] = "00000000-0000-4000-8000-999999999999"
    return renamed


SEEDS: list[dict[str, Any]] = [
    json.loads(LOOM_EXAMPLE.read_text("utf-8")),
    *(json.loads(p.read_text("utf-8")) for p in sorted(LOOM_UNIT.glob("*.json"))),
    *(deterministic_ids(example.build().to_json()) for example in EXAMPLES.values()),
]
"""The documents mutated: the loom example, loom's unit-test documents, the gallery."""

AXIS_TEXT = st.sampled_from(
    ["H", "W-1", "W+1", "H*W", "N", "K", "", "-", "W--1", "H*", "A" * 70, "1X", " H", "W-99"]
) | st.text(max_size=12)
INTS = st.sampled_from([0, 1, -1, 2, 3, 5, 10, 2**31, 2**63, -(2**63) - 1, 10**30]) | st.integers(
    -20, 20
)
SCALARS = (
    st.none()
    | st.booleans()
    | INTS
    | st.floats(allow_nan=True, allow_infinity=True)
    | AXIS_TEXT
    | st.sampled_from(["int32", "float32", "op:add", "op:dot", "x", "tensors", "result"])
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["start", "end", "axes", "tensorId", "range", "name", "length"])
            | st.text(max_size=6),
            inner,
            max_size=4,
        )
    ),
    max_leaves=8,
)
TYPES = st.sampled_from([*NODE_TYPES.values(), "urn:x:node", ""])
TAGS = st.sampled_from([*TAG_TYPES.values(), "urn:x:tag"])


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (dict keys and list positions)."""
    found = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += paths(v, (*prefix, i))
    return found


def parent_of(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        document = document[step]
    return document


def mutate(data: st.DataObject, document: dict[str, Any]) -> None:
    """One random change of ``document``, in place."""
    nodes = document.get("nodes")
    kind = data.draw(
        st.sampled_from(
            [
                "drop",
                "duplicate",
                "flood",
                "replace",
                "delete",
                "range",
                "axes",
                "type",
                "reference",
                "tag",
            ]
        ),
        label="mutation",
    )
    if not isinstance(nodes, list) or not nodes:
        kind = "replace"  # an earlier mutation replaced or emptied the node list
    elif kind == "flood" and len(nodes) > 1000:
        kind = "duplicate"  # one flood per document keeps each example's work bounded
    if len(paths(document)) < 2:
        return
    if kind == "drop":
        nodes.pop(data.draw(st.integers(0, len(nodes) - 1)))
    elif kind == "duplicate":
        node = copy.deepcopy(data.draw(st.sampled_from(nodes)))
        if data.draw(st.booleans()):
            node["id"] = f"00000000-0000-4000-8000-{data.draw(st.integers(900, 999)):012d}"
        nodes.append(node)
    elif kind == "flood":
        # many copies of one node: overlapping applications, repeated mistakes (the bounds)
        node = data.draw(st.sampled_from(nodes))
        for k in range(data.draw(st.sampled_from([30, 300, 1100]), label="copies")):
            fresh = f"00000000-0000-4000-8000-{10_000 + k:012d}"
            nodes.append({**node, "id": fresh} if isinstance(node, dict) else node)
    elif kind in ("replace", "delete"):
        path = data.draw(st.sampled_from(paths(document)[1:]), label="path")
        parent = parent_of(document, path)
        if kind == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif kind == "delete":
            parent.pop(path[-1])
        else:
            parent[path[-1]] = data.draw(JSON_VALUES, label="value")
    elif kind == "range":
        ranges = [p for p in paths(document) if p and p[-1] in ("start", "end")]
        if ranges:
            path = data.draw(st.sampled_from(ranges), label="path")
            coords = parent_of(document, path)[path[-1]]
            if isinstance(coords, list) and coords and data.draw(st.booleans()):
                coords[data.draw(st.integers(0, len(coords) - 1))] = data.draw(INTS)
            else:
                parent_of(document, path)[path[-1]] = data.draw(st.lists(INTS, max_size=3))
    elif kind == "axes":
        node = data.draw(st.sampled_from(nodes))
        if isinstance(node, dict):
            tag = data.draw(st.sampled_from([TENSOR_AXES, INDEX_AXES]))
            axes = data.draw(st.lists(AXIS_TEXT, max_size=4))
            node.setdefault("tags", {})[tag] = {"axes": axes}
    elif kind == "type":
        node = data.draw(st.sampled_from(nodes))
        if isinstance(node, dict):
            node["type"] = data.draw(TYPES)
    elif kind == "reference":
        refs = [p for p in paths(document) if p and p[-1] in ("tensorId", "operationId", "mesh")]
        if refs:
            path = data.draw(st.sampled_from(refs), label="path")
            other = data.draw(st.sampled_from(nodes))
            parent_of(document, path)[path[-1]] = (
                other.get("id") if isinstance(other, dict) else other
            )
    else:
        node = data.draw(st.sampled_from(nodes))
        if isinstance(node, dict):
            value = data.draw(
                JSON_VALUES | st.builds(lambda a, b: {"start": [a], "end": [b]}, INTS, INTS)
            )
            node.setdefault("tags", {})[data.draw(TAGS)] = value
            if data.draw(st.booleans()):
                node["tags"][IPF_INDEX] = value


def as_text(issues: list[Issue]) -> str:
    """Issues as the JSON a client gets (NaN included, which ``==`` on params would miss)."""
    return json.dumps([i.to_json() for i in issues], default=repr)


def assert_bounded(issues: list[Issue]) -> None:
    """No constraint failed, and the bounds per constraint and node and per check hold."""
    assert [i.message for i in issues if i.type == "InternalError"] == []
    per_node = Counter((i.constraint, i.node_ids[0]) for i in issues if i.node_ids)
    assert max(per_node.values(), default=0) <= MAX_ISSUES_PER_CONSTRAINT + 1
    assert len(issues) <= MAX_ISSUES_PER_CHECK + len(all_constraints()) + 1
    for issue in issues:
        assert len(json.dumps(issue.to_json(), default=repr)) < 8_000


@settings(
    max_examples=300,
    derandomize=True,
    deadline=timedelta(seconds=10),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_mutated_documents_check_without_raising_and_within_bounds(data: st.DataObject) -> None:
    # given a real document with up to four random mutations
    document = copy.deepcopy(data.draw(st.sampled_from(SEEDS), label="seed"))
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        mutate(data, document)
    # when checked as parsed data and as JSON text, then issues come back, bounded
    issues = check_document(document)
    assert_bounded(issues)
    assert as_text(check_document(json.dumps(document))) == as_text(issues)
    # and loading raises only the documented errors; a loaded graph checks incrementally the
    # same as in full
    try:
        graph = Graph.from_json(document)
    except GeonError:
        return
    found = check(graph)
    assert_bounded(found)
    assert as_text(IncrementalChecker(Graph.from_json(document)).issues) == as_text(found)


@settings(max_examples=150, derandomize=True, deadline=timedelta(seconds=10))
@given(JSON_VALUES)
def test_any_json_is_a_document_error_or_issues(value: Any) -> None:
    # any JSON at all (not only mutations of documents) comes back as issues
    assert_bounded(check_document(value))
    assert_bounded(check_document({"id": "00000000-0000-4000-8000-000000000000", "nodes": [value]}))
