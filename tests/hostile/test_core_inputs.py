"""Hostile inputs to the core (issue 13, findings 1, 4 and 8), replayed through the core API and
the real server paths (Django's test client on the REST API; the websocket's ``shard`` edits go
through :func:`geon.graphs.edits.expand`, tested here directly).

Each refusal is bounded in *work*, not time: the parser's input is refused by its length before
it is scanned, a split is counted before any piece is built (with sizes that would need
terabytes if it were built first), and answers stay small (bytes are counted).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.test import Client

from geon import core as gc
from geon.core.axes import Axes, AxisRef
from geon.core.errors import AxisError, DocumentError, LimitError
from geon.core.graph import AXIS, MESH, TENSOR_AXES, Graph
from geon.core.limits import INT64_MAX, MAX_AXIS_REF_LENGTH
from geon.core.plans.shards import shard
from geon.graphs.edits import expand
from geon.graphs.models import Graph as StoredGraph
from geon.graphs.models import GraphVersion, ShardPlan
from geon.graphs.services import do_create_graph

API = "/api/v1"
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
AXIS_ID = "00000000-0000-4000-8000-0000000000a1"
MESH_ID = "00000000-0000-4000-8000-0000000000e0"
LONG_REF = "A" + " " * 40000 + "!"
"""The finding's axis string: 7.6 s in /api/v1/validate before the fix."""

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(120)]


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(f"{API}{path}", json.dumps(body), content_type="application/json")


def with_tensor_axes(document: dict[str, Any], axes: list[str]) -> dict[str, Any]:
    doc = copy.deepcopy(document)
    for node in doc["nodes"]:
        if node["id"] == T0:
            node.setdefault("tags", {})[TENSOR_AXES] = {"axes": axes}
    return doc


def versions(graph: Any) -> int:
    return GraphVersion.objects.filter(graph=graph).count()


# -- finding 1: axis references ---------------------------------------------------------------


def test_a_long_axis_reference_is_one_small_issue_from_validate(
    client: Client, loom_document: dict[str, Any]
) -> None:
    # no sign-in: the body of the finding, 43 KB
    graphs = StoredGraph.objects.count()
    response = post(client, "/validate", with_tensor_axes(loom_document, [LONG_REF]))
    assert response.status_code == 200
    issues = response.json()["issues"]
    assert [(i["constraint"], i["nodeIds"]) for i in issues] == [("SchemaConformance", [T0])]
    assert issues[0]["message"] == (
        f'node "{T0}" tag "{TENSOR_AXES}".axes[0]: value "A{" " * 59}..." has 40002 characters; '
        "expected at most 1024"
    )
    assert len(response.content) < 2_000  # the 40 KB string is not echoed back
    assert StoredGraph.objects.count() == graphs  # validate stores nothing


def test_a_long_axis_reference_is_refused_by_the_core_before_it_is_scanned() -> None:
    with pytest.raises(AxisError) as info:
        AxisRef.parse(LONG_REF)
    assert str(info.value) == (
        f'axis reference "A{" " * 39}... (40002 characters)" is too long; expected at most 1024 '
        "characters"
    )
    with pytest.raises(AxisError):
        Axes.parse([LONG_REF], {"A": gc.Axis("A", 2)})


def test_the_checker_reads_references_up_to_the_bound(loom_document: dict[str, Any]) -> None:
    # the longest reference the schema accepts, with the shape that backtracked: the checker
    # names it in one pass (the old pattern was quadratic in the spaces)
    text = "A" + " " * (MAX_AXIS_REF_LENGTH - 2) + "!"
    issues = Graph.from_json(with_tensor_axes(loom_document, [text])).check()
    messages = [i.message for i in issues if i.constraint != "SchemaConformance"]
    assert len(messages) == 1
    assert f'axis reference "{text}" is invalid; expected a name' in messages[0]


# -- finding 4: unbounded sharding --------------------------------------------------------------


@pytest.mark.parametrize(
    ("ops", "error", "message"),
    [
        (
            [{"op": "shard", "operation": OP, "dim": 0, "parts": 1_000_000}],
            DocumentError,
            "edit op 0 (shard): splitting [0:10, 0:5] gives 999990 empty shards (such as "
            "[10:10, 0:5]); expected fewer parts than index points in the split dims",
        ),
        (
            [{"op": "shard", "operation": OP, "dim": 0, "parts": 10**12}],
            DocumentError,
            "edit op 0 (shard): splitting [0:10, 0:5] gives 999999999990 empty shards (such as "
            "[10:10, 0:5]); expected fewer parts than index points in the split dims",
        ),
        (
            [
                {
                    "op": "add_node",
                    "node": {
                        "id": MESH_ID,
                        "type": MESH,
                        "body": {"name": "m", "axes": {"x": 10**12}},
                    },
                },
                {"op": "shard", "operation": OP, "mesh": MESH_ID, "over": {"1": "x"}},
            ],
            DocumentError,
            f'edit op 1 (shard): mesh "{MESH_ID}" has 1000000000000 devices (x=1000000000000); '
            "expected at most 65536",
        ),
    ],
    ids=["parts-10**6", "parts-10**12", "mesh-10**12"],
)
def test_shard_edits_of_the_finding_are_refused_before_building(
    loom_document: dict[str, Any], ops: list[dict[str, Any]], error: type, message: str
) -> None:
    doc = Graph.from_json(loom_document)
    before = doc.to_json()
    with pytest.raises(error) as info:
        expand(doc, ops)
    assert str(info.value) == message
    assert doc.to_json() == before


def big_document() -> dict[str, Any]:
    """y = x + x over an axis of 2**40 points: one shard per point would need terabytes."""
    x = gc.placeholder(axes=[gc.Axis("N", 2**40)], name="x")
    return gc.graph([x + x]).to_json()


def test_a_shard_per_point_is_too_many_ops_over_rest(client: Client, user: Any) -> None:
    document = big_document()
    graph = do_create_graph(owner=user, title="big", document=document)
    [op_id] = [n["id"] for n in document["nodes"] if n["type"].endswith("/Operation")]
    client.force_login(user)
    body = {"baseVersion": 1, "ops": [{"op": "shard", "operation": op_id, "dim": "N", "chunk": 1}]}
    response = post(client, f"/graphs/{graph.pk}/edits", body)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_many_ops"
    assert response.json()["error"]["message"] == (
        "edit op 0 (shard): splitting [0:1099511627776] along dim 0 gives 1099511627776 pieces; "
        "expected at most 1000 (an edit makes at most 1000 node ops: its earlier ops take 0 "
        "and removing the operation's Applications 0)"
    )
    assert versions(graph) == 1


def test_more_parts_than_points_is_refused_over_rest(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    body = {"baseVersion": 1, "ops": [{"op": "shard", "operation": OP, "dim": 0, "parts": 10**12}]}
    response = post(client, f"/graphs/{graph.pk}/edits", body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_edit"
    assert versions(graph) == 1


def test_a_plan_on_a_mesh_of_10_to_the_12_devices_is_refused(
    client: Client, user: Any, graph: Any
) -> None:
    client.force_login(user)
    plan = {
        "name": "p",
        "mesh": {"name": "m", "axes": {"x": 10**12}},
        "spec": {OP: {"over": {"0": "x"}}},
    }
    response = post(client, f"/graphs/{graph.pk}/plans", plan)
    assert response.status_code == 422
    assert "65536" in response.json()["error"]["message"]
    assert ShardPlan.objects.count() == 0
    assert versions(graph) == 1


def test_the_core_refuses_the_finding_before_building() -> None:
    doc = Graph.from_json(big_document())
    [op] = [n.id for n in doc.nodes if n.type.endswith("/Operation")]
    with pytest.raises(LimitError):
        shard(doc, op, dim="N", parts=10**12)
    with pytest.raises(LimitError):
        shard(doc, op, dim="N", chunk=1)
    doc.add_node({"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"x": 10**12}}})
    with pytest.raises(LimitError):
        shard(doc, op, mesh=MESH_ID, over={"N": "x"})
    assert list(doc.index.applications_of(op)) == []


@pytest.mark.parametrize(
    ("shard_op", "message"),
    [
        (
            {"dim": 0, "parts": "x" * 1_000_000},
            'edit op 0 (shard): parts "' + "x" * 77 + '..." is not an integer; expected an '
            "integer >= 1",
        ),
        (
            {"dim": 0, "sizes": {"5": 5}},
            'edit op 0 (shard): sizes "{"5": 5}" is not a list of integers; expected integers '
            ">= 0 that sum to the length of the split dim",
        ),
        (
            {"grid": [[0, 2]]},
            'edit op 0 (shard): grid "[[0, 2]]" is invalid; expected {dim: parts} such as {"H": 2}',
        ),
        (
            {"mesh": [MESH_ID], "over": {"0": "x"}},
            f'edit op 0 (shard): mesh "["{MESH_ID}"]" does not exist; expected the id of a Mesh '
            "node",
        ),
    ],
    ids=["parts-a-megabyte-of-text", "sizes-an-object", "grid-a-list", "mesh-a-list"],
)
def test_malformed_shard_parameters_are_refused_in_a_short_message(
    loom_document: dict[str, Any], shard_op: dict[str, Any], message: str
) -> None:
    # given the document, when a shard op of the websocket has a malformed parameter
    doc = Graph.from_json(loom_document)
    before = doc.to_json()
    with pytest.raises(DocumentError) as info:
        expand(doc, [{"op": "shard", "operation": OP, **shard_op}])
    # then it is refused naming the value, cut short, and nothing changed
    assert str(info.value) == message
    assert doc.to_json() == before


# -- finding 8: huge integers -----------------------------------------------------------------


def test_an_axis_length_of_10_to_the_4000_is_an_issue(
    client: Client, loom_document: dict[str, Any]
) -> None:
    doc = copy.deepcopy(loom_document)
    doc["nodes"].append({"id": AXIS_ID, "type": AXIS, "body": {"name": "K", "length": 10**4000}})
    response = post(client, "/validate", doc)
    assert response.status_code == 200
    found = [(i["constraint"], i["message"]) for i in response.json()["issues"]]
    assert (
        "SchemaConformance",
        f'node "{AXIS_ID}" body.length: value "1000000000000... (4001 digits)" is more than '
        f"{INT64_MAX}; expected at most {INT64_MAX}",
    ) in found


def test_an_operation_range_of_10_to_the_4000_is_an_issue(loom_document: dict[str, Any]) -> None:
    doc = copy.deepcopy(loom_document)
    [op] = [n for n in doc["nodes"] if n["id"] == OP]
    op["body"]["outputs"]["result"][0]["range"]["end"][0] = 10**4000
    issues = Graph.from_json(doc).check()
    assert [i.constraint for i in issues if i.node_ids == (OP,)][:1] == ["SchemaConformance"]


def test_a_tensor_range_end_of_10_to_the_4000_is_an_issue(
    client: Client, loom_document: dict[str, Any]
) -> None:
    doc = copy.deepcopy(loom_document)
    [t0] = [n for n in doc["nodes"] if n["id"] == T0]
    t0["body"]["range"]["end"][0] = 10**4000
    response = post(client, "/validate", doc)
    assert response.status_code == 200
    assert [i["constraint"] for i in response.json()["issues"]][:1] == ["SchemaConformance"]
