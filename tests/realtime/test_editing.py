"""Live co-editing over the websocket: applied edits, refusals, rebases, conflicts, presence,
roles and limits (issue 7). Every message received is checked against the protocol schemas."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from geon.asgi import application
from geon.core.graph import AXIS, INDEX_AXES, LAYOUT, TENSOR, TENSOR_AXES
from geon.examples.gallery import EXAMPLES
from geon.graphs.models import Graph, GraphVersion, Membership, ShardPlan
from geon.graphs.services import do_create_graph, document_issues
from tests.realtime.peers import ORIGIN

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"
Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"
OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
APPS = ["2524fb44-d169-4afd-90fa-09711462e4b3", "2af709e2-c792-4712-80cc-0624ee767115"]
NOTE_ID = "5f1c1c1c-0000-4000-8000-000000000001"
NOTE = {
    "id": NOTE_ID,
    "type": "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Note",
    "body": {"message": "hello"},
}


def stored(graph: Any) -> tuple[int, dict[str, Any], int]:
    """The graph's current version number and document, and how many versions it has."""
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    assert fresh.current_version is not None
    return (
        fresh.current_version.number,
        fresh.current_version.document,
        GraphVersion.objects.filter(graph=fresh).count(),
    )


def nodes_by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["id"]: n for n in document["nodes"]}


async def test_an_applied_edit_reaches_every_client_and_is_stored(
    connect: Any, graph: Any, user: Any, other_user: Any, loom_document: dict[str, Any]
) -> None:
    # given ann and bob (an editor) on the loom graph
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    # when ann relabels t0 and adds a note
    ops = [
        {"op": "update_node", "id": T0, "label": "a"},
        {"op": "add_node", "node": NOTE},
    ]
    mine = await ann.edit("e1", 1, ops)
    theirs = await bob.receive()
    # then both get the same applied message, and version 2 holds the edit
    expected_doc = json.loads(json.dumps(loom_document))
    nodes_by_id(expected_doc)[T0]["label"] = "a"
    expected_doc["nodes"].append(NOTE)
    issues = await database_sync_to_async(document_issues)(expected_doc)
    assert (
        mine
        == theirs
        == {
            "type": "applied",
            "id": "e1",
            "version": 2,
            "ops": ops,
            "issues": issues,
            "issueCounts": {"error": 0, "warning": 0},
            "author": "ann",
        }
    )
    number, document, count = await database_sync_to_async(stored)(graph)
    assert (number, document, count) == (2, expected_doc, 2)
    version = await database_sync_to_async(GraphVersion.objects.get)(graph=graph, number=2)
    assert version.touched == {T0: ["label"], NOTE_ID: ["*"]}
    assert version.author_id == user.pk


REFUSALS = [
    (
        "unknown node",
        [{"op": "update_node", "id": "nope", "label": "x"}],
        "invalid_edit",
        'edit op 0 (update_node): node "nope" does not exist',
    ),
    (
        "malformed op",
        [{"op": "update_node", "id": T0, "colour": "red"}],
        "invalid_edit",
        'edit op 0 (update_node) has unknown field "colour"; expected one of ("op", "id", '
        '"label", "body", "tags")',
    ),
    (
        "removing a referenced tensor",
        [{"op": "remove_node", "id": T0}],
        "invalid_edit",
        f'edit op 0 (remove_node): node "{T0}" is referenced by "{APPS[0]}", "{OP}", '
        f'"{APPS[1]}"; remove or change those first, or pass "cascade": true to remove them too',
    ),
    (
        "a good op then a bad one",
        [{"op": "update_node", "id": T0, "label": "a"}, {"op": "add_node", "node": {"id": 1}}],
        "invalid_edit",
        'edit op 1 (add_node): node has id "1"; expected a string (a UUID)',
    ),
    (
        "a version from the future",
        "future",
        "unknown_version",
        'base version "7" does not exist; expected a version from 1 to 1',
    ),
    (
        "an axis name that exists",
        "axis twice",
        "invalid_edit",
        'edit op 1 (add_axis): axis "K" is already declared; pick another name',
    ),
]


@pytest.mark.parametrize(("label", "ops", "reason", "message"), REFUSALS)
async def test_a_bad_edit_is_rejected_to_the_sender_only_and_changes_nothing(
    label: str,
    ops: Any,
    reason: str,
    message: str,
    connect: Any,
    graph: Any,
    user: Any,
    other_user: Any,
    loom_document: dict[str, Any],
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="viewer"
    )
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    base = 1
    if ops == "future":
        ops, base = [{"op": "update_node", "id": T0, "label": "a"}], 7
    elif ops == "axis twice":
        # given axis K was declared in version 2
        await database_sync_to_async(_declare_k)(graph, user)
        base = 2
        assert (await ann.receive())["type"] == "applied"
        assert (await bob.receive())["type"] == "applied"
        ops = [
            {"op": "set_layout", "id": T0, "x": 1, "y": 2},
            {"op": "add_axis", "axis": {"name": "K", "length": 2}},
        ]
    before = await database_sync_to_async(stored)(graph)
    # when ann sends the edit
    answer = await ann.edit("bad", base, ops)
    # then only she hears why, and the stored document is unchanged
    assert answer == {
        "type": "rejected",
        "id": "bad",
        "reason": reason,
        "message": message,
        "version": base if reason != "unknown_version" else 1,
    }
    assert await bob.nothing()
    assert await database_sync_to_async(stored)(graph) == before
    # and the connection still takes edits
    assert (await ann.edit("good", before[0], [{"op": "add_node", "node": NOTE}]))["version"] == (
        before[0] + 1
    )


def _declare_k(graph: Any, user: Any) -> None:
    from geon.graphs.services import do_apply_edit

    do_apply_edit(user, graph.pk, 1, [{"op": "add_axis", "axis": {"name": "K", "length": 2}}])


async def test_an_edit_on_an_older_version_touching_other_nodes_is_rebased(
    connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    # given ann's edit of t0 made version 2
    await ann.edit("a1", 1, [{"op": "update_node", "id": T0, "label": "a"}])
    await bob.receive()
    # when bob, still on version 1, edits t1 and a different field of t0
    ops = [
        {"op": "update_node", "id": T1, "label": "b"},
        {"op": "update_node", "id": T0, "tags": {LAYOUT: {"x": 5, "y": 6}}},
    ]
    answer = await bob.edit("b1", 1, ops)
    # then it is rebased onto version 2: version 3 holds both edits
    assert (answer["type"], answer["version"], answer["id"]) == ("applied", 3, "b1")
    assert (await ann.receive()) == answer
    number, document, _ = await database_sync_to_async(stored)(graph)
    nodes = nodes_by_id(document)
    assert (number, nodes[T0]["label"], nodes[T1]["label"]) == (3, "a", "b")
    assert nodes[T0]["tags"] == {LAYOUT: {"x": 5, "y": 6}}


@pytest.mark.parametrize(
    ("label", "first", "second", "field"),
    [
        (
            "same label",
            {"op": "update_node", "id": T0, "label": "a"},
            {"op": "update_node", "id": T0, "label": "b"},
            "label",
        ),
        (
            "same body key",
            {"op": "update_node", "id": T0, "body": {"dtype": "int64"}},
            {"op": "update_node", "id": T0, "body": {"dtype": "int8"}},
            "body.dtype",
        ),
        (
            "a node removed since",
            {"op": "remove_node", "id": OP, "cascade": True},
            {"op": "update_node", "id": OP, "label": "x"},
            "*",
        ),
    ],
)
async def test_an_edit_on_an_older_version_touching_the_same_field_is_a_conflict(
    label: str,
    first: dict[str, Any],
    second: dict[str, Any],
    field: str,
    connect: Any,
    graph: Any,
    user: Any,
    other_user: Any,
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    await ann.edit("a1", 1, [first])
    await bob.receive()
    before = await database_sync_to_async(stored)(graph)
    # when bob, on version 1, writes the field ann changed
    answer = await bob.edit("b1", 1, [second])
    # then he is refused with the conflict, ann hears nothing, and nothing changes
    node = second["id"]
    what = "was added or removed" if field == "*" else f'field "{field}" changed'
    assert answer == {
        "type": "rejected",
        "id": "b1",
        "reason": "conflict",
        "message": f'node "{node}" {what} after version 1; reload version 2 and edit again',
        "version": 2,
        "conflicts": [{"id": node, "field": field}],
    }
    assert await ann.nothing()
    assert await database_sync_to_async(stored)(graph) == before


async def test_presence_fans_out_and_is_cleaned_up(
    connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="viewer"
    )
    ann = await connect(user, graph, presence=True)
    me = ann.snapshot["present"][0]
    # when bob connects, he sees ann and himself; ann hears that bob joined
    bob = await connect(other_user, graph, presence=True)
    him = bob.snapshot["present"][1]
    assert bob.snapshot["present"] == [
        me,
        {"client": him["client"], "user": "bob", "name": "bob", "selection": [], "cursor": None},
    ]
    assert await ann.receive() == {"type": "presence", "event": "join", **him}
    # when bob selects t0 and moves his pointer
    await bob.send({"type": "presence", "selection": [T0], "cursor": {"x": 3, "y": 4.5}})
    moved = {**him, "selection": [T0], "cursor": {"x": 3, "y": 4.5}}
    assert await ann.receive() == {"type": "presence", "event": "update", **moved}
    assert await bob.nothing()  # never echoed
    # when bob leaves, ann hears it and a newcomer no longer sees him
    await bob.ws.disconnect()
    assert await ann.receive() == {"type": "presence", "event": "leave", **moved}
    carl = await connect(user, graph, presence=True)
    assert [p["client"] for p in carl.snapshot["present"]] == [
        me["client"],
        carl.snapshot["present"][1]["client"],
    ]


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
async def test_a_viewer_may_watch_but_not_edit(
    role: str, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(Membership.objects.create)(graph=graph, user=other_user, role=role)
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    before = await database_sync_to_async(stored)(graph)
    answer = await bob.edit("b1", 1, [{"op": "update_node", "id": T0, "label": "b"}])
    assert answer == {
        "type": "rejected",
        "id": "b1",
        "reason": "forbidden",
        "message": f'your role on graph "{graph.title}" is "{role}"; '
        'this needs "editor" or "owner"',
        "version": 1,
    }
    assert await ann.nothing()
    assert await database_sync_to_async(stored)(graph) == before
    # but he sees ann's edits live
    applied = await ann.edit("a1", 1, [{"op": "update_node", "id": T0, "label": "a"}])
    assert await bob.receive() == applied


async def test_a_stranger_is_refused_at_connect(
    graph: Any, other_user: Any, session_cookie: Callable[[Any], bytes]
) -> None:
    cookie = await database_sync_to_async(session_cookie)(other_user)
    ws = WebsocketCommunicator(
        application, f"/ws/graphs/{graph.pk}/", headers=[ORIGIN, (b"cookie", cookie)]
    )
    # accepted, then closed with the code that says why (a browser sees it)
    assert await ws.connect() == (True, None)
    assert await ws.receive_output() == {
        "type": "websocket.close",
        "code": 4404,
        "reason": "no such graph, or no role on it",
    }


def axes_graph(user: Any) -> Any:
    document = EXAMPLES["dot-2d"].build().to_json()
    return do_create_graph(owner=user, title="dot", document=document)


async def test_renaming_an_axis_rewrites_every_reference(connect: Any, user: Any) -> None:
    graph = await database_sync_to_async(axes_graph)(user)
    ann = await connect(user, graph)
    document = ann.snapshot["document"]
    refs_before = [
        ref
        for n in document["nodes"]
        for url in (TENSOR_AXES, INDEX_AXES)
        for ref in (n.get("tags") or {}).get(url, {}).get("axes", [])
    ]
    assert "W-1" in refs_before
    # when ann renames W to V and resizes nothing
    answer = await ann.edit("r", 1, [{"op": "set_axis", "name": "W", "rename": "V"}])
    # then the Axis and every TensorAxes/IndexAxes reference say V, keeping dual levels
    assert (answer["type"], answer["issues"]) == ("applied", ann.snapshot["issues"])
    _, stored_doc, _ = await database_sync_to_async(stored)(graph)
    names = [n["body"]["name"] for n in stored_doc["nodes"] if n["type"] == AXIS]
    refs_after = [
        ref
        for n in stored_doc["nodes"]
        for url in (TENSOR_AXES, INDEX_AXES)
        for ref in (n.get("tags") or {}).get(url, {}).get("axes", [])
    ]
    assert "W" not in names and "V" in names
    assert refs_after == [r.replace("W", "V") for r in refs_before]


async def test_resizing_an_axis_is_checked_live(connect: Any, user: Any) -> None:
    graph = await database_sync_to_async(axes_graph)(user)
    ann = await connect(user, graph)
    answer = await ann.edit("r", 1, [{"op": "set_axis", "name": "H", "length": 7}])
    # the tensors' ranges no longer agree with H's new length: the checker says so
    assert answer["type"] == "applied"
    assert "TensorAxesAgreement" in {i["constraint"] for i in answer["issues"]}
    _, stored_doc, _ = await database_sync_to_async(stored)(graph)
    assert answer["issues"] == await database_sync_to_async(document_issues)(stored_doc)


async def test_sharding_an_operation_is_one_atomic_edit(
    connect: Any, graph: Any, user: Any
) -> None:
    ann = await connect(user, graph)
    answer = await ann.edit("s", 1, [{"op": "shard", "operation": OP, "dim": 1, "parts": 5}])
    # the two old Applications are removed and five new ones added, and the graph checks clean
    assert answer["type"] == "applied"
    assert [op["op"] for op in answer["ops"]] == ["remove_node"] * 2 + ["add_node"] * 5
    assert answer["issues"] == []
    _, stored_doc, _ = await database_sync_to_async(stored)(graph)
    apps = [n for n in stored_doc["nodes"] if n["type"].endswith("/Application")]
    assert len(apps) == 5
    # a bad request is refused with the core's message
    refused = await ann.edit("s2", 2, [{"op": "shard", "operation": OP, "dim": 1, "parts": 9}])
    assert (refused["reason"], refused["message"]) == (
        "invalid_edit",
        "edit op 0 (shard): splitting [0:10, 0:5] gives 4 empty shards (such as [0:10, 5:5]); "
        "expected fewer parts than index points in the split dims",
    )


async def test_removing_with_cascade_takes_the_referencing_nodes(
    connect: Any, graph: Any, user: Any
) -> None:
    ann = await connect(user, graph)
    answer = await ann.edit("c", 1, [{"op": "remove_node", "id": T0, "cascade": True}])
    assert answer["type"] == "applied"
    _, stored_doc, _ = await database_sync_to_async(stored)(graph)
    assert [n["id"] for n in stored_doc["nodes"]] == [T1, Z]


@pytest.mark.parametrize(
    ("label", "frame", "error"),
    [
        (
            "too large",
            "big",
            {
                "code": "message_too_large",
                "message": "the message has 2100 bytes; at most 2048 are allowed (split the edit)",
            },
        ),
        (
            "edit without a base version",
            '{"type": "edit", "id": "e", "ops": [{"op": "remove_node", "id": "x"}]}',
            {
                "code": "invalid_message",
                "message": "edit at $: 'baseVersion' is a required property",
            },
        ),
    ],
)
@override_settings(GEON_WS_MAX_MESSAGE_BYTES=2048)
async def test_frames_over_the_limits_get_an_error_and_the_connection_stays_usable(
    label: str, frame: str, error: dict[str, str], connect: Any, graph: Any, user: Any
) -> None:
    ann = await connect(user, graph)
    if frame == "big":
        frame = json.dumps({"type": "ping", "id": "x" * 2074})
    await ann.ws.send_to(text_data=frame)
    answer = await ann.receive()
    assert answer == {
        "type": "error",
        **error,
        "error": error,
        **({"id": "e"} if label != "too large" else {}),
    }
    await ann.send({"type": "ping", "id": "p"})
    assert await ann.receive() == {"type": "pong", "id": "p"}


@override_settings(GEON_MAX_OPS_PER_EDIT=2)
async def test_too_many_ops_in_one_edit_are_refused(connect: Any, graph: Any, user: Any) -> None:
    ann = await connect(user, graph)
    ops = [{"op": "update_node", "id": T0, "label": str(i)} for i in range(3)]
    assert await ann.edit("e", 1, ops) == {
        "type": "rejected",
        "id": "e",
        "reason": "too_many_ops",
        "message": "the edit has 3 ops; at most 2 are allowed in one edit",
        "version": 1,
    }
    assert (await database_sync_to_async(stored)(graph))[0] == 1


@override_settings(GEON_WS_EDITS_PER_SECOND=1, GEON_WS_EDIT_BURST=2)
async def test_edits_over_the_rate_are_refused_then_accepted_again(
    connect: Any, graph: Any, user: Any
) -> None:
    ann = await connect(user, graph)
    answers = [
        await ann.edit(f"e{i}", 1 + i, [{"op": "update_node", "id": T0, "label": str(i)}])
        for i in range(3)
    ]
    assert [a["type"] for a in answers] == ["applied", "applied", "rejected"]
    assert answers[2] == {
        "type": "rejected",
        "id": "e2",
        "reason": "rate_limited",
        "message": "too many edits; at most 1 per second (with bursts of 2) are allowed on one "
        "connection",
        "version": 3,
    }
    assert (await database_sync_to_async(stored)(graph))[0] == 3
    await ann.send({"type": "ping"})
    assert await ann.receive() == {"type": "pong", "id": None}


async def test_a_tensor_added_with_axes_is_checked(connect: Any, user: Any) -> None:
    graph = await database_sync_to_async(axes_graph)(user)
    ann = await connect(user, graph)
    tensor = {
        "id": "7c0d5a2e-0000-4000-8000-000000000002",
        "type": TENSOR,
        "body": {"dtype": "float32", "range": {"start": [0], "end": [3]}},
        "tags": {TENSOR_AXES: {"axes": ["Nope"]}},
    }
    answer = await ann.edit("t", 1, [{"op": "add_node", "node": tensor}])
    flagged = [i for i in answer["issues"] if tensor["id"] in i["nodeIds"]]
    assert [i["constraint"] for i in flagged] == ["TensorAxesAgreement"]


async def test_rest_writes_reach_live_clients(
    connect: Any, graph: Any, user: Any, loom_document: dict[str, Any]
) -> None:
    from geon.graphs.services import (
        do_apply_edit,
        do_delete_plan,
        do_generate_plan,
        do_save_plan,
        do_update_graph,
    )

    ann = await connect(user, graph)
    # an edit through the REST API arrives as applied without an id
    ops = [{"op": "update_node", "id": T0, "label": "rest"}]
    await database_sync_to_async(do_apply_edit)(user, graph.pk, 1, ops)
    applied = await ann.receive()
    assert (applied["type"], applied["id"], applied["version"], applied["ops"]) == (
        "applied",
        None,
        2,
        ops,
    )
    # a plan generated through the REST API with an edit id arrives as applied with that id
    # (the editor that asked records it as its own undo step)
    plan = await database_sync_to_async(ShardPlan.objects.create)(
        graph=graph, name="whole", mesh={"name": "m", "axes": {"x": 1}}, spec={}
    )
    await database_sync_to_async(do_generate_plan)(user, graph.pk, plan.pk, 2, edit_id="plan-2-1")
    generated = await ann.receive()
    assert (generated["type"], generated["id"], generated["version"]) == ("applied", "plan-2-1", 3)
    # and every change to the graph's plans is announced, for editors to reload their list
    assert await ann.receive() == {"type": "plans", "author": "ann"}
    await database_sync_to_async(do_save_plan)(user, graph, "renamed", plan.mesh, {}, plan)
    assert await ann.receive() == {"type": "plans", "author": "ann"}
    await database_sync_to_async(do_delete_plan)(user, graph, plan.pk)
    assert await ann.receive() == {"type": "plans", "author": "ann"}
    # a replaced document arrives as a fresh snapshot, with who is here
    await database_sync_to_async(do_update_graph)(
        user, graph.pk, base_version=3, document=loom_document
    )
    fresh = await ann.receive()
    assert (fresh["type"], fresh["version"], fresh["document"], fresh["present"]) == (
        "snapshot",
        4,
        loom_document,
        ann.snapshot["present"],
    )


async def test_edits_sent_at_once_each_get_their_own_version_in_order(
    connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    # given ann and bob, each with two connections to the graph
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    peers = [
        await connect(user, graph),
        await connect(other_user, graph),
        await connect(user, graph),
        await connect(other_user, graph),
    ]
    # when all four send an edit on version 1 before any answer (different nodes or fields)
    ops = [
        [{"op": "update_node", "id": T0, "label": "a"}],
        [{"op": "update_node", "id": T1, "label": "b"}],
        [{"op": "add_node", "node": NOTE}],
        [{"op": "update_node", "id": T0, "tags": {LAYOUT: {"x": 1, "y": 2}}}],
    ]
    for n, (peer, edit) in enumerate(zip(peers, ops, strict=True)):
        await peer.send({"type": "edit", "id": f"e{n}", "baseVersion": 1, "ops": edit})
    # then every client gets all four applied, versions 2 to 5 in order, and the same ones
    heard = [[await peer.receive() for _ in ops] for peer in peers]
    assert all(h == heard[0] for h in heard)
    assert [m["type"] for m in heard[0]] == ["applied"] * 4
    assert [m["version"] for m in heard[0]] == [2, 3, 4, 5]
    assert sorted(m["id"] for m in heard[0]) == ["e0", "e1", "e2", "e3"]
    number, document, count = await database_sync_to_async(stored)(graph)
    nodes = nodes_by_id(document)
    assert (number, count, nodes[T0]["label"], nodes[T1]["label"]) == (5, 5, "a", "b")
    assert nodes[T0]["tags"] == {LAYOUT: {"x": 1, "y": 2}}
    assert nodes[NOTE_ID] == NOTE


def _apply_batch(graph: Any, user: Any, other_user: Any) -> tuple[list[Any], list[Any]]:
    from unittest import mock

    from geon.graphs.services import editing as services

    requests = [
        services.EditRequest(user, 1, [{"op": "update_node", "id": T0, "label": "a"}], "a1"),
        # the same field as the edit before it in the batch, on version 1: a conflict
        services.EditRequest(user, 1, [{"op": "update_node", "id": T0, "label": "b"}], "a4"),
        # a refused op after a valid one: nothing of it is applied
        services.EditRequest(
            user,
            2,
            [
                {"op": "set_layout", "id": T0, "x": 1, "y": 2},
                {"op": "update_node", "id": "nope", "label": "x"},
            ],
            "a2",
        ),
        # a viewer's edit: refused, and the others are still applied
        services.EditRequest(other_user, 2, [{"op": "add_node", "node": NOTE}], "b2"),
        services.EditRequest(user, 1, [{"op": "update_node", "id": T1, "label": "c"}], "a3"),
    ]
    Membership.objects.filter(graph=graph, user=other_user).update(role="viewer")
    with mock.patch.object(services, "publish_applied") as publish:
        results = services.do_apply_edits(graph.pk, requests)
    return results, [c.args[1] for c in publish.call_args_list]


async def test_a_batch_of_edits_is_one_commit_with_a_decision_for_each(
    graph: Any, user: Any, other_user: Any, loom_document: dict[str, Any]
) -> None:
    from geon.graphs.edits import EditRefused
    from geon.graphs.services import AccessDenied, Applied

    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    # when five edits are applied together (bob made a viewer first): a good one, a conflict,
    # a bad one, a viewer's and a rebased one
    results, published = await database_sync_to_async(_apply_batch)(graph, user, other_user)
    # then the good and the rebased one are versions 2 and 3, the others are refused
    assert [type(r) for r in results] == [Applied, EditRefused, EditRefused, AccessDenied, Applied]
    first, conflict, bad, _, rebased = results
    assert isinstance(first, Applied) and isinstance(rebased, Applied)
    assert (first.version, rebased.version) == (2, 3)
    assert isinstance(conflict, EditRefused) and isinstance(bad, EditRefused)
    assert (conflict.reason, conflict.details["version"]) == ("conflict", 2)
    assert (bad.reason, bad.details["version"]) == ("invalid_edit", 2)
    # and the applied edits were published together once committed, in version order
    assert [[(m["id"], m["version"]) for m in batch] for batch in published] == [
        [("a1", 2), ("a3", 3)]
    ]
    number, document, count = await database_sync_to_async(stored)(graph)
    nodes = nodes_by_id(document)
    before = nodes_by_id(loom_document)
    assert (number, count, nodes[T0]["label"], nodes[T1]["label"]) == (3, 3, "a", "c")
    assert nodes[T0].get("tags") == before[T0].get("tags")
    assert NOTE_ID not in nodes


def _versions(graph: Any) -> list[tuple[int, bool, bool]]:
    """(number, has a snapshot, has ops) of every version of the graph."""
    rows = GraphVersion.objects.filter(graph=graph).order_by("number")
    return [(v.number, v.snapshot is not None, v.ops is not None) for v in rows]


@override_settings(GEON_SNAPSHOT_EVERY=3)
async def test_live_edits_store_the_whole_document_once_the_graph_is_quiet(
    connect: Any, graph: Any, user: Any
) -> None:
    # given ann on a graph that keeps a snapshot every 3 versions
    ann = await connect(user, graph)
    # when she makes versions 2 to 4 (3 passes the multiple)
    for n in range(3):
        answer = await ann.edit(f"e{n}", 1 + n, [{"op": "update_node", "id": T0, "label": f"v{n}"}])
        assert (answer["type"], answer["version"]) == ("applied", 2 + n)
    # then, once nobody edits, a version after the multiple holds the whole document beside
    # its ops, and the others only their ops
    for _ in range(100):
        versions = await database_sync_to_async(_versions)(graph)
        if sum(whole for _, whole, _ in versions) == 2:
            break
        await asyncio.sleep(0.05)
    assert versions[0] == (1, True, False)
    assert versions[1] == (2, False, True)
    assert [whole for _, whole, _ in versions[2:]].count(True) == 1
    assert all(ops for _, _, ops in versions[1:])
    # and every version reads back as it was made
    number, document, count = await database_sync_to_async(stored)(graph)
    assert (number, count, nodes_by_id(document)[T0]["label"]) == (4, 4, "v2")


@override_settings(GEON_SNAPSHOT_EVERY=2)
async def test_a_deferred_snapshot_waits_for_its_caller_and_replays_stay_right(
    graph: Any, user: Any
) -> None:
    await database_sync_to_async(_deferred_snapshot_story)(graph, user)


def _deferred_snapshot_story(graph: Any, user: Any) -> None:
    from geon.graphs import services

    def edit(label: str, base: int, **kwargs: Any) -> list[Any]:
        request = services.EditRequest(
            user, base, [{"op": "update_node", "id": T0, "label": label}]
        )
        return services.do_apply_edits(graph.pk, [request], **kwargs)

    # when version 2 passes the multiple with the snapshot deferred
    edit("a", 1, defer_snapshot=True)
    # then it has only its ops, and the snapshot is due since 0 versions, then 1
    assert (_versions(graph), services.snapshot_due(graph.pk)) == (
        [(1, True, False), (2, False, True)],
        0,
    )
    edit("b", 2, defer_snapshot=True)
    assert services.snapshot_due(graph.pk) == 1
    # when its caller stores it: the current version (3) gets the whole document
    services.do_store_snapshot(graph.pk)
    assert services.snapshot_due(graph.pk) is None
    assert _versions(graph) == [(1, True, False), (2, False, True), (3, True, True)]
    # and a REST edit passing the next multiple stores it after its commit
    services.do_apply_edit(user, graph.pk, 3, [{"op": "update_node", "id": T1, "label": "c"}])
    assert _versions(graph)[3] == (4, True, True)
    # and each version reads back as it was made: from a snapshot or replayed from one
    labels = [
        (nodes_by_id(v.document)[T0].get("label"), nodes_by_id(v.document)[T1].get("label"))
        for v in GraphVersion.objects.filter(graph=graph).order_by("number")
    ]
    before = (
        nodes_by_id(GraphVersion.objects.get(graph=graph, number=1).document)[T1].get("label"),
    )
    assert labels[1:] == [("a", *before), ("b", *before), ("b", "c")]


# --- edit ids: an edit sent again is answered, not applied twice (issue 14, item 4) -----------


async def test_an_edit_sent_twice_is_one_version_answered_twice_to_its_sender_only(
    connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    # given ann and bob (an editor) on the graph
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    ops = [{"op": "update_node", "id": T0, "label": "a"}, {"op": "add_node", "node": NOTE}]
    first = await ann.edit("e1", 1, ops)
    assert await bob.receive() == first
    # and a later edit of bob's, so that the repeat is not the current version
    later = await bob.edit("b1", 2, [{"op": "update_node", "id": T1, "label": "b"}])
    assert await ann.receive() == later
    before = await database_sync_to_async(stored)(graph)
    # when ann sends "e1" again (say, after a reconnect that lost its applied), on version 1
    again = await ann.edit("e1", 1, ops)
    # then she alone is answered with the version it made and its stored ops, and the issues
    # of the document now; nothing is stored and bob hears nothing
    assert again == {**first, "issues": later["issues"], "issueCounts": later["issueCounts"]}
    assert (again["version"], again["ops"]) == (2, ops)
    assert await bob.nothing()
    assert await database_sync_to_async(stored)(graph) == before
    # and an edit id is the sender's own: bob's "e1" is a new edit
    theirs = await bob.edit("e1", 3, [{"op": "update_node", "id": T1, "label": "c"}])
    assert (theirs["type"], theirs["id"], theirs["version"], theirs["author"]) == (
        "applied",
        "e1",
        4,
        "bob",
    )
    assert await ann.receive() == theirs


async def test_copies_of_one_edit_sent_at_once_make_one_version(
    connect: Any, graph: Any, user: Any
) -> None:
    # given ann on the graph with two connections (a reconnect that overlapped the old line)
    ann = await connect(user, graph)
    ann_again = await connect(user, graph)
    ops = [{"op": "update_node", "id": T0, "label": "a"}]
    # when both send the same edit before either is answered
    edit = {"type": "edit", "id": "e1", "baseVersion": 1, "ops": ops}
    await ann.send(edit)
    await ann_again.send(edit)
    # then one is applied (everybody hears it once) and the other answered with it alone
    heard = [await ann.receive(), await ann_again.receive()]
    for peer in (ann, ann_again):
        while not await peer.nothing():
            heard.append(await peer.receive())
    # (one publish to both clients, one answer to the repeat's sender)
    assert [(m["type"], m["id"], m["version"]) for m in heard] == [("applied", "e1", 2)] * 3
    number, document, count = await database_sync_to_async(stored)(graph)
    assert (number, count, nodes_by_id(document)[T0]["label"]) == (2, 2, "a")
    assert await database_sync_to_async(_edit_ids)(graph) == [(1, None), (2, "e1")]


def _edit_ids(graph: Any) -> list[tuple[int, str | None]]:
    """(number, edit id) of every version of the graph."""
    rows = GraphVersion.objects.filter(graph=graph).order_by("number")
    return list(rows.values_list("number", "edit_id"))


def _batch_with_copies(graph: Any, user: Any) -> list[Any]:
    from geon.graphs import services

    label = [{"op": "update_node", "id": T0, "label": "a"}]
    requests = [
        services.EditRequest(user, 1, label, "e1"),
        services.EditRequest(user, 1, [{"op": "update_node", "id": T1, "label": "b"}], "e2"),
        # the same id again in the same batch, even with other ops: answered from the first
        services.EditRequest(user, 1, [{"op": "update_node", "id": T1, "label": "x"}], "e1"),
    ]
    return services.do_apply_edits(graph.pk, requests)


async def test_a_copy_inside_one_batch_is_answered_from_the_first(
    connect: Any, graph: Any, user: Any
) -> None:
    from geon.graphs.services import Applied

    ann = await connect(user, graph)
    # when one batch holds "e1", "e2" and "e1" again
    results = await database_sync_to_async(_batch_with_copies)(graph, user)
    # then "e1" and "e2" are versions 2 and 3, and the copy is answered with version 2
    assert all(isinstance(r, Applied) for r in results)
    first, _, copy = results
    assert [(r.version, r.repeated) for r in results] == [(2, False), (3, False), (2, True)]
    assert copy.ops == first.ops == [{"op": "update_node", "id": T0, "label": "a"}]
    # and the clients hear of the two versions only
    assert [(m["id"], m["version"]) for m in [await ann.receive(), await ann.receive()]] == [
        ("e1", 2),
        ("e2", 3),
    ]
    assert await ann.nothing()
    number, document, count = await database_sync_to_async(stored)(graph)
    assert (number, count, nodes_by_id(document)[T1]["label"]) == (3, 3, "b")
    assert await database_sync_to_async(_edit_ids)(graph) == [(1, None), (2, "e1"), (3, "e2")]


async def test_a_refused_edit_keeps_no_id_and_can_be_sent_again(
    connect: Any, graph: Any, user: Any
) -> None:
    ann = await connect(user, graph)
    refused = await ann.edit("e1", 1, [{"op": "update_node", "id": "nope", "label": "a"}])
    assert (refused["type"], refused["reason"]) == ("rejected", "invalid_edit")
    applied = await ann.edit("e1", 1, [{"op": "update_node", "id": T0, "label": "a"}])
    assert (applied["type"], applied["version"]) == ("applied", 2)
    assert await database_sync_to_async(_edit_ids)(graph) == [(1, None), (2, "e1")]


# --- snapshot.role -------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["viewer", "reviewer", "editor", "owner"])
async def test_a_snapshot_carries_the_users_role(
    role: str, connect: Any, graph: Any, user: Any, other_user: Any, loom_document: dict[str, Any]
) -> None:
    from geon.graphs.services import do_update_graph

    await database_sync_to_async(Membership.objects.create)(graph=graph, user=other_user, role=role)
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    assert (ann.snapshot["role"], bob.snapshot["role"]) == ("owner", role)
    # and so does the fresh snapshot of a document replaced through the REST API
    await database_sync_to_async(do_update_graph)(
        user, graph.pk, base_version=1, document=loom_document
    )
    fresh = [await ann.receive(), await bob.receive()]
    assert [(m["type"], m["version"], m["role"]) for m in fresh] == [
        ("snapshot", 2, "owner"),
        ("snapshot", 2, role),
    ]
