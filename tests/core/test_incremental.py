"""The incremental checker gives exactly what a full check gives, after any edit sequence."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geon.core.checks import IncrementalChecker, check
from geon.core.errors import DocumentError
from geon.core.graph import (
    APPLICATION,
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    MESH,
    NOTE,
    OPERATION,
    PLACEMENT,
    TENSOR,
    TENSOR_AXES,
    Graph,
)
from geon.core.plans.shards import shard

OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
MESH_ID = "00000000-0000-4000-8000-0000000000e0"
AXIS_IDS = ("00000000-0000-4000-8000-0000000000a0", "00000000-0000-4000-8000-0000000000a1")


def fresh_check(g: Graph) -> list[Any]:
    """A full check of an independent copy (no caches shared with ``g``)."""
    return check(Graph.from_json(json.loads(json.dumps(g.to_json()))))


def base_graph(loom_doc: dict[str, Any]) -> Graph:
    """The loom example plus axes, a mesh, placements and a named second operation."""
    g = Graph.from_json(copy.deepcopy(loom_doc))
    g.apply(
        [
            {
                "op": "add_node",
                "node": {"id": AXIS_IDS[0], "type": AXIS, "body": {"name": "H", "length": 10}},
            },
            {
                "op": "add_node",
                "node": {"id": AXIS_IDS[1], "type": AXIS, "body": {"name": "W", "length": 5}},
            },
            {
                "op": "add_node",
                "node": {"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"x": 2}}},
            },
            {"op": "update_node", "id": Z, "tags": {TENSOR_AXES: {"axes": ["H", "W"]}}},
            {"op": "update_node", "id": T0, "tags": {TENSOR_AXES: {"axes": ["H", "W"]}}},
        ]
    )
    shard(
        g,
        OP,
        dim=0,
        parts=2,
        mesh=MESH_ID,
        new_id=iter([f"00000000-0000-4000-8000-0000000001{i:02d}" for i in range(100)]).__next__,
    )
    return g


def new_id(data: st.DataObject) -> str:
    return f"00000000-0000-4000-8000-{data.draw(st.integers(0x200, 0x2FF)):012x}"


def pick(data: st.DataObject, g: Graph, node_type: str | None = None) -> str | None:
    ids = [n.id for n in g.nodes if node_type is None or n.type == node_type]
    return data.draw(st.sampled_from(ids)) if ids else None


def random_edit(data: st.DataObject, g: Graph) -> list[dict[str, Any]]:
    kind = data.draw(
        st.sampled_from(
            [
                "app-range",
                "app-index",
                "app-op",
                "app-placement",
                "tensor-dtype",
                "tensor-range",
                "tensor-axes",
                "op-output",
                "op-input",
                "op-index-axes",
                "axis-length",
                "axis-name",
                "add-axis",
                "remove",
                "remove-cascade",
                "add-note",
                "add-app-copy",
                "label",
                "mesh-axes",
                "op-signature",
                "unknown-tag",
            ]
        ),
        label="edit",
    )
    ints = st.integers(-1, 12)
    if kind in ("app-range", "app-index", "app-op", "app-placement", "add-app-copy"):
        app = pick(data, g, APPLICATION)
        if app is None:
            return []
        node = g.node(app)
        if kind == "app-range":
            return [
                {
                    "op": "update_node",
                    "id": app,
                    "body": {
                        "outputs": {
                            "result": [
                                {
                                    "tensorId": Z,
                                    "range": {
                                        "start": [data.draw(ints), 0],
                                        "end": [data.draw(ints), 5],
                                    },
                                }
                            ]
                        }
                    },
                }
            ]
        if kind == "app-index":
            return [
                {
                    "op": "update_node",
                    "id": app,
                    "tags": {
                        IPF_INDEX: {"start": [data.draw(ints), 0], "end": [data.draw(ints), 5]}
                    },
                }
            ]
        if kind == "app-op":
            target = pick(data, g)
            return [{"op": "update_node", "id": app, "body": {"operationId": target}}]
        if kind == "app-placement":
            return [
                {
                    "op": "update_node",
                    "id": app,
                    "tags": {
                        PLACEMENT: {
                            "mesh": data.draw(st.sampled_from([MESH_ID, T0, AXIS_IDS[0]])),
                            "coords": [data.draw(st.integers(0, 3))],
                        }
                    },
                }
            ]
        copy_of = node.to_json()
        copy_of["id"] = new_id(data)
        return [{"op": "add_node", "node": copy_of}]
    if kind in ("tensor-dtype", "tensor-range", "tensor-axes"):
        t = pick(data, g, TENSOR)
        if t is None:
            return []
        if kind == "tensor-dtype":
            dtype = data.draw(st.sampled_from(["int32", "float32", "int31", 7]))
            return [{"op": "update_node", "id": t, "body": {"dtype": dtype}}]
        if kind == "tensor-range":
            return [
                {
                    "op": "update_node",
                    "id": t,
                    "body": {"range": {"start": [data.draw(ints), 0], "end": [data.draw(ints), 5]}},
                }
            ]
        axes = data.draw(st.lists(st.sampled_from(["H", "W", "K", "W-1"]), max_size=3))
        return [{"op": "update_node", "id": t, "tags": {TENSOR_AXES: {"axes": axes}}}]
    if kind in ("op-output", "op-input", "op-index-axes", "op-signature"):
        op = pick(data, g, OPERATION)
        if op is None:
            return []
        body = g.node(op).body
        if kind == "op-index-axes":
            axes = data.draw(st.lists(st.sampled_from(["H", "W", "K"]), max_size=2))
            return [
                {
                    "op": "update_node",
                    "id": op,
                    "tags": {
                        INDEX_AXES: {"axes": axes} if axes else None,
                        IPF_INDEX: None
                        if data.draw(st.booleans())
                        else {"start": [0, 0], "end": [10, 5]},
                    },
                }
            ]
        if kind == "op-signature":
            return [
                {
                    "op": "update_node",
                    "id": op,
                    "tags": {IPF_SIGNATURE: None},
                }
            ]
        target = pick(data, g, TENSOR) or T0
        side, key = ("outputs", "result") if kind == "op-output" else ("inputs", "tensors")
        items = copy.deepcopy(body.get(side, {}).get(key, []))
        if not items:
            return []
        items[0]["tensorId"] = target
        return [{"op": "update_node", "id": op, "body": {side: {key: items}}}]
    if kind in ("axis-length", "axis-name", "add-axis"):
        if kind == "add-axis":
            return [
                {
                    "op": "add_node",
                    "node": {
                        "id": new_id(data),
                        "type": AXIS,
                        "body": {
                            "name": data.draw(st.sampled_from(["H", "W", "K"])),
                            "length": data.draw(st.sampled_from([None, 0, 5, 10])),
                        },
                    },
                }
            ]
        ax = pick(data, g, AXIS)
        if ax is None:
            return []
        if kind == "axis-length":
            return [
                {
                    "op": "update_node",
                    "id": ax,
                    "body": {"length": data.draw(st.sampled_from([None, 0, 5, 10, 11]))},
                }
            ]
        return [
            {
                "op": "update_node",
                "id": ax,
                "body": {"name": data.draw(st.sampled_from(["H", "W", "K"]))},
            }
        ]
    if kind in ("remove", "remove-cascade"):
        target = pick(data, g)
        if target is None:
            return []
        return [{"op": "remove_node", "id": target, "cascade": kind == "remove-cascade"}]
    if kind == "add-note":
        return [
            {"op": "add_node", "node": {"id": new_id(data), "type": NOTE, "body": {"message": "m"}}}
        ]
    if kind == "mesh-axes":
        if MESH_ID not in g:
            return []
        return [
            {
                "op": "update_node",
                "id": MESH_ID,
                "body": {"axes": {"x": data.draw(st.integers(1, 3))}},
            }
        ]
    if kind == "unknown-tag":
        target = pick(data, g)
        return [{"op": "update_node", "id": target, "tags": {"urn:x:tag": {"v": 1}}}]
    target = pick(data, g)
    return [{"op": "update_node", "id": target, "label": data.draw(st.sampled_from(["a", None]))}]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.data())
def test_incremental_equals_full_check_after_random_edits(
    loom_doc: dict[str, Any], data: st.DataObject
) -> None:
    # given a sharded, named, placed graph and its incremental checker
    g = base_graph(loom_doc)
    checker = IncrementalChecker(g)
    assert checker.issues == fresh_check(g)
    for _ in range(data.draw(st.integers(1, 12), label="steps")):
        ops = random_edit(data, g)
        before_doc = json.dumps(g.to_json())
        before_issues = checker.issues
        try:
            after = checker.apply(ops)
        except DocumentError:
            # a refused edit changes nothing
            assert json.dumps(g.to_json()) == before_doc
            assert checker.issues == before_issues
            continue
        # then the incremental result is exactly the full check's
        assert after == fresh_check(g)


def test_incremental_rechecks_only_the_neighbourhood(loom_doc: dict[str, Any]) -> None:
    # given the loom example
    g = Graph.from_json(loom_doc)
    checker = IncrementalChecker(g)
    assert checker.rechecked == 6
    # when one application's label changes; then it, its operation and its 3 tensors are re-checked
    checker.apply(
        [{"op": "update_node", "id": "2524fb44-d169-4afd-90fa-09711462e4b3", "label": "shard 1"}]
    )
    assert checker.rechecked == 5


def test_refused_edit_raises_and_keeps_issues(loom_doc: dict[str, Any]) -> None:
    g = Graph.from_json(loom_doc)
    checker = IncrementalChecker(g)
    with pytest.raises(DocumentError):
        checker.apply([{"op": "remove_node", "id": T0}])
    assert checker.issues == []
    assert len(g) == 6


def test_axis_edit_reaches_tensors_and_operations(loom_doc: dict[str, Any]) -> None:
    # given tensors named by axis H, declared once
    g = base_graph(loom_doc)
    checker = IncrementalChecker(g)
    # when the declaration is renamed, the tensors that name H are re-checked too
    checker.apply([{"op": "update_node", "id": AXIS_IDS[0], "body": {"name": "K"}}])
    assert checker.issues == fresh_check(g)
    assert checker.rechecked >= 4


def test_graph_check_after_an_axis_edit_is_not_stale(loom_doc: dict[str, Any]) -> None:
    # given a graph checked once (so every node has cached results)
    g = base_graph(loom_doc)
    check(g)
    # when two declarations swap names through plain Graph edits (no IncrementalChecker)
    g.apply([{"op": "update_node", "id": AXIS_IDS[1], "body": {"name": "H"}}])
    check(g)
    g.apply([{"op": "update_node", "id": AXIS_IDS[0], "body": {"name": "W"}}])
    # then checking the same graph again equals checking a fresh copy
    assert check(g) == fresh_check(g)


def crowded_graph(loom_doc: dict[str, Any], n: int) -> Graph:
    """The loom example with ``n`` more copies of its first application, so that the overlaps
    of the operation's output are more than one constraint may list on a node."""
    g = Graph.from_json(copy.deepcopy(loom_doc))
    first = next(n.to_json() for n in g.nodes if n.type == APPLICATION)
    g.apply(
        [
            {
                "op": "add_node",
                "node": {**first, "id": f"00000000-0000-4000-8000-0000000003{k:02d}"},
            }
            for k in range(n)
        ]
    )
    return g


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.data())
def test_incremental_equals_full_check_when_issues_are_bounded(
    loom_doc: dict[str, Any], data: st.DataObject
) -> None:
    # given 12 copies of one application: 78 overlapping pairs, 20 listed and a summary
    g = crowded_graph(loom_doc, 12)
    checker = IncrementalChecker(g)
    assert checker.issues == fresh_check(g)
    assert checker.issues[-1].type == "IssuesNotListed"
    for _ in range(data.draw(st.integers(1, 8), label="steps")):
        apps = [n.id for n in g.nodes if n.type == APPLICATION]
        kind = data.draw(st.sampled_from(["remove", "copy", "rows", "op-rows"]))
        if kind == "remove" and apps:
            ops: list[dict[str, Any]] = [
                {"op": "remove_node", "id": data.draw(st.sampled_from(apps))}
            ]
        elif kind == "copy" and apps:
            source = g.index.get(data.draw(st.sampled_from(apps)))
            assert source is not None
            ops = [{"op": "add_node", "node": {**source.to_json(), "id": new_id(data)}}]
        elif kind == "rows" and apps:
            a, b = sorted(data.draw(st.tuples(st.integers(0, 10), st.integers(0, 10))))
            ops = [
                {
                    "op": "update_node",
                    "id": data.draw(st.sampled_from(apps)),
                    "tags": {IPF_INDEX: {"start": [a, 0], "end": [b, 5]}},
                }
            ]
        else:
            end = data.draw(st.integers(1, 10))
            result = [{"tensorId": Z, "range": {"start": [0, 0], "end": [end, 5]}}]
            ops = [{"op": "update_node", "id": OP, "body": {"outputs": {"result": result}}}]
        try:
            after = checker.apply(ops)
        except DocumentError:
            continue
        # then the incremental result, summaries included, is exactly the full check's
        assert after == fresh_check(g)
        assert sum(i.constraint == "ApplicationOutputRangeCoverageIsExact" for i in after) <= 21
