"""Hostile and careless clients on the websocket (issue 13: findings 2, 5, 6, 7, 9; issue 14
item 5): each replays the finding through the real consumer (Channels' communicator, or a real
Daphne where the frame limits are Daphne's) and asserts the documented answer, that nothing was
stored, and that another client is still answered. Work is bounded by counts of frames and
bytes, never by the clock."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.test import Client, override_settings
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Origin

from geon.asgi import application
from geon.cli.serve import WEBSOCKET_MAX_MESSAGE_BYTES
from geon.core.graph import Graph as Document
from geon.graphs.models import Graph, GraphVersion, Membership
from geon.graphs.protocol import SERVER_MESSAGES, message_errors
from geon.graphs.services import do_create_graph
from tests.database import short_busy_timeout, write_locked

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ORIGIN = (b"origin", b"http://localhost")
LOCAL = Origin("http://localhost")
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
TENSOR = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Tensor"
LAYOUT = "urn:geon:2026-11:tag_types.jsd#/tags/Layout"
ACCESS_REMOVED = (
    'you no longer have a role on graph "{}" (removed, or the graph was deleted); ask its '
    "owner for access"
)


@pytest.fixture(autouse=True)
def fresh_channel_layer() -> Iterator[None]:
    """A channel layer of each test's own (the Redis layer's lock is bound to one loop)."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


class Peer:
    """A signed-in websocket client that checks every message against the protocol schemas
    and counts the bytes it received."""

    def __init__(self, ws: WebsocketCommunicator) -> None:
        self.ws = ws
        self.received_bytes = 0
        self.snapshot: dict[str, Any] = {}

    async def receive(self) -> dict[str, Any]:
        output = await self.ws.receive_output(timeout=10)
        assert output["type"] == "websocket.send", output
        self.received_bytes += len(output["text"].encode())
        message: dict[str, Any] = json.loads(output["text"])
        assert message_errors(message, SERVER_MESSAGES) == []
        return message

    async def send(self, message: Any) -> None:
        await self.ws.send_to(text_data=json.dumps(message))

    async def ping(self, ping_id: str) -> None:
        """Another client is still answered."""
        await self.send({"type": "ping", "id": ping_id})
        assert await self.receive() == {"type": "pong", "id": ping_id}

    async def closed(self) -> dict[str, Any]:
        output: dict[str, Any] = await self.ws.receive_output(timeout=10)
        return output


@pytest_asyncio.fixture
async def connect(session_cookie: Callable[[Any], bytes]) -> AsyncIterator[Callable[..., Any]]:
    peers: list[Peer] = []

    async def open_peer(user: Any, graph: Any) -> Peer:
        cookie = await database_sync_to_async(session_cookie)(user)
        ws = WebsocketCommunicator(
            application, f"/ws/graphs/{graph.pk}/", headers=[ORIGIN, (b"cookie", cookie)]
        )
        assert await ws.connect() == (True, None)
        peer = Peer(ws)
        peer.snapshot = await peer.receive()
        assert peer.snapshot["type"] == "snapshot"
        for other in peers:  # the others hear that it joined
            assert (await other.receive())["event"] == "join"
        peers.append(peer)
        return peer

    yield open_peer
    for peer in peers:
        await peer.ws.disconnect()


def stored_version(graph: Any) -> tuple[int, int]:
    """The graph's current version number and how many versions it has."""
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    assert fresh.current_version is not None
    return fresh.current_version.number, GraphVersion.objects.filter(graph=fresh).count()


def share(graph: Any, member: Any, role: str) -> None:
    Membership.objects.create(graph=graph, user=member, role=role)


# --- finding 2: issue explosion ------------------------------------------------------------------


def flawed_document(loom: dict[str, Any], count: int) -> dict[str, Any]:
    """The loom example plus ``count`` tensors whose dtype does not exist (an error each)."""
    extra = [
        {
            "id": str(uuid.UUID(int=n + 1)),
            "type": TENSOR,
            "body": {"dtype": "bogus", "range": {"start": [0], "end": [2]}},
        }
        for n in range(count)
    ]
    return {**loom, "nodes": [*loom["nodes"], *extra]}


def all_issues(document: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Every error of ``document`` in the checker's order, and the counts per severity."""
    every = Document.from_json(document).check()
    errors = [i.to_json() for i in every if i.severity == "error"]
    return errors, {"error": len(errors), "warning": len(every) - len(errors)}


@override_settings(GEON_WS_MAX_ISSUES=3)
async def test_applied_and_snapshot_carry_a_bounded_list_of_issues_and_the_counts(
    connect: Any, user: Any, other_user: Any, loom_document: dict[str, Any]
) -> None:
    # given a shared graph with 40 broken tensors, watched by a viewer
    document = flawed_document(loom_document, 40)
    graph = await database_sync_to_async(do_create_graph)(
        owner=user, title="flawed", document=document
    )
    await database_sync_to_async(share)(graph, other_user, "viewer")
    errors, counts = await database_sync_to_async(all_issues)(document)
    assert counts["error"] >= 40
    ann = await connect(user, graph)
    viewer = await connect(other_user, graph)
    viewer.received_bytes = 0  # the snapshot holds the document: count only what edits send
    # when the owner makes five tiny layout edits
    for n in range(5):
        ops = [{"op": "set_layout", "id": T0, "x": float(n), "y": 0.0}]
        await ann.send({"type": "edit", "id": f"e{n}", "baseVersion": 1 + n, "ops": ops})
        assert (await ann.receive())["type"] == "applied"
    applied = [await viewer.receive() for _ in range(5)]
    # then each applied carries the first 3 errors and the counts of every issue
    assert [(a["type"], a["issues"], a["issueCounts"]) for a in applied] == [
        ("applied", errors[:3], counts)
    ] * 5
    # and what the viewer received for five edits is bounded by the cap, not by the issues
    assert viewer.received_bytes < 5 * (len(json.dumps(errors[:3])) + 1000)
    # and a newcomer's snapshot is bounded the same way; the others are still answered
    newcomer = await connect(user, graph)
    assert (newcomer.snapshot["issues"], newcomer.snapshot["issueCounts"]) == (errors[:3], counts)
    await viewer.ping("still-answered")


async def test_a_snapshot_shows_errors_before_warnings_within_the_cap(
    connect: Any, user: Any, loom_document: dict[str, Any]
) -> None:
    document = flawed_document(loom_document, 2)
    graph = await database_sync_to_async(do_create_graph)(owner=user, title="f", document=document)
    errors, counts = await database_sync_to_async(all_issues)(document)
    with override_settings(GEON_WS_MAX_ISSUES=1):
        peer = await connect(user, graph)
    assert (peer.snapshot["issues"], peer.snapshot["issueCounts"]) == (errors[:1], counts)


# --- finding 5: a revoked member keeps watching ------------------------------------------------

API = "/api/v1"


def rest(user: Any, method: str, path: str, body: Any = None) -> int:
    """A REST call as ``user`` through the Django test client; the status code."""
    client = Client()
    client.force_login(user)
    data = json.dumps(body) if body is not None else None
    call = getattr(client, method)
    response = call(API + path, data, content_type="application/json")
    return int(response.status_code)


@pytest.mark.parametrize(
    ("label", "method", "path", "status"),
    [
        ("member removed", "delete", "/graphs/{graph}/members/bob", 204),
        ("graph deleted", "delete", "/graphs/{graph}", 204),
    ],
)
async def test_a_socket_whose_access_is_gone_is_told_and_closed_at_once(
    label: str,
    method: str,
    path: str,
    status: int,
    connect: Any,
    graph: Any,
    user: Any,
    other_user: Any,
) -> None:
    # given bob watching ann's graph as a viewer
    await database_sync_to_async(share)(graph, other_user, "viewer")
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    # when ann takes his access away (or deletes the graph) through the REST API
    assert await database_sync_to_async(rest)(user, method, path.format(graph=graph.pk)) == status
    # then bob is told at once, and closed with 4404
    assert await bob.receive() == {
        "type": "error",
        "code": "access_removed",
        "message": ACCESS_REMOVED.format(graph.title),
        "error": {"code": "access_removed", "message": ACCESS_REMOVED.format(graph.title)},
    }
    assert await bob.closed() == {
        "type": "websocket.close",
        "code": 4404,
        "reason": "access removed",
    }
    # and ann's socket is still answered (she hears that bob left while the graph exists)
    if label == "member removed":
        assert (await ann.receive())["event"] == "leave"
        await ann.ping("ann")
        await ann.send(
            {
                "type": "edit",
                "id": "after",
                "baseVersion": 1,
                "ops": [{"op": "update_node", "id": T0, "label": "later"}],
            }
        )
        assert (await ann.receive())["type"] == "applied"
        # and bob gets nothing more
        assert await bob.ws.receive_nothing(timeout=0.3)


async def test_a_lowered_role_is_told_and_enforced_on_the_next_edit(
    connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    # given bob editing ann's graph
    await database_sync_to_async(share)(graph, other_user, "editor")
    await connect(user, graph)
    bob = await connect(other_user, graph)
    # when ann lowers his role to viewer
    path = f"/graphs/{graph.pk}/members/bob"
    assert await database_sync_to_async(rest)(user, "put", path, {"role": "viewer"}) == 202
    # then bob hears his new role at once
    assert await bob.receive() == {"type": "access", "role": "viewer"}
    # and his next edit is refused as a viewer's; nothing is stored
    await bob.send(
        {
            "type": "edit",
            "id": "late",
            "baseVersion": 1,
            "ops": [{"op": "update_node", "id": T0, "label": "mine"}],
        }
    )
    answer = await bob.receive()
    assert (answer["type"], answer["reason"]) == ("rejected", "forbidden")
    assert await database_sync_to_async(stored_version)(graph) == (1, 1)
    # and he still watches: a ping is answered
    await bob.ping("bob")


async def test_handing_the_graph_over_tells_both_sockets_their_roles(
    connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(share)(graph, other_user, "editor")
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    path = f"/graphs/{graph.pk}/owner"
    assert await database_sync_to_async(rest)(user, "post", path, {"username": "bob"}) == 200
    assert await ann.receive() == {"type": "access", "role": "editor"}
    assert await bob.receive() == {"type": "access", "role": "owner"}


# --- finding 6: presence floods ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "presence", "problem"),
    [
        (
            "too many ids",
            {"selection": [str(uuid.UUID(int=n)) for n in range(1001)]},
            "is too long",
        ),
        ("an id of a megabyte", {"selection": ["x" * 1_000_000]}, "is too long"),
        ("a cursor far away", {"cursor": {"x": 1e300, "y": 0}}, "is greater than the maximum"),
    ],
)
async def test_oversized_presence_is_refused_and_never_sticks(
    label: str,
    presence: dict[str, Any],
    problem: str,
    connect: Any,
    graph: Any,
    user: Any,
    other_user: Any,
) -> None:
    await database_sync_to_async(share)(graph, other_user, "viewer")
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    ann.received_bytes = 0
    # when bob sends an oversized presence
    await bob.send({"type": "presence", **presence})
    answer = await bob.receive()
    # then he gets invalid_message, ann gets nothing, and a later snapshot does not hold it
    assert (answer["code"], problem in answer["message"]) == ("invalid_message", True)
    assert len(answer["message"]) <= 300  # the answer does not echo the megabyte back
    await ann.ping("ann")
    assert ann.received_bytes == len(json.dumps({"type": "pong", "id": "ann"}))
    newcomer = await connect(user, graph)
    bobs = [p for p in newcomer.snapshot["present"] if p["user"] == "bob"]
    assert [(p["selection"], p["cursor"]) for p in bobs] == [([], None)]


@override_settings(GEON_WS_PRESENCE_PER_SECOND=1)
async def test_a_presence_flood_is_rate_limited_and_merged(
    connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    # given bob (a viewer) and ann
    await database_sync_to_async(share)(graph, other_user, "viewer")
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    # when bob sends 200 presence frames at once, each with 1,000 node ids (36 KB)
    frames = [
        {"type": "presence", "selection": [str(uuid.UUID(int=n * 1000 + i)) for i in range(1000)]}
        for n in range(200)
    ]
    for frame in frames:
        await bob.send(frame)
    await bob.send({"type": "ping", "id": "bob"})  # answered after every presence frame
    refused = 0
    while True:
        answer = await bob.receive()
        if answer["type"] == "pong":
            break
        assert (answer["code"], answer["message"]) == (
            "rate_limited",
            "too many presence updates; at most 1 per second (with bursts of 2) are allowed on "
            "one connection",
        )
        refused += 1
    # then most are refused (1 per second with bursts of 2 pass), and ann gets at most the
    # accepted ones, merged: never more presence frames or bytes than bob got through
    accepted = 200 - refused
    assert accepted <= 50
    await asyncio.sleep(0.2)  # let a merged update that is due go out (not asserted on)
    await ann.send({"type": "ping", "id": "ann"})
    relayed = []
    while True:
        message = await ann.receive()
        if message["type"] == "pong":
            break
        relayed.append(message)
    assert 1 <= len(relayed) <= accepted
    assert {m["selection"][0] for m in relayed} <= {f["selection"][0] for f in frames}
    assert ann.received_bytes <= accepted * (len(json.dumps(frames[0])) + 500)


async def test_rapid_presence_updates_are_merged_to_the_latest(
    connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(share)(graph, other_user, "viewer")
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    for n in range(20):
        await bob.send({"type": "presence", "cursor": {"x": float(n), "y": 0.0}})
    # the latest arrives once the merge interval has passed (however long the layer takes)
    relayed = [(await ann.receive())["cursor"]["x"]]
    while relayed[-1] != 19.0 and len(relayed) <= 20:
        relayed.append((await ann.receive())["cursor"]["x"])
    # at most one per frame, in order, and the last one sent is the last one relayed
    assert relayed == sorted(relayed) and relayed[-1] == 19.0 and len(relayed) <= 20


# --- finding 7: websocket frames (a real Daphne: its limits are the first line) -------------


def daphne_ws_url(base: str, graph: Any) -> str:
    return base.replace("http://", "ws://") + f"/ws/graphs/{graph.pk}/"


@pytest.mark.parametrize(
    ("label", "frame", "code", "message"),
    [
        (
            "2 MiB message",
            json.dumps({"type": "ping", "id": "x" * (2 * 1024 * 1024)}),
            "message_too_large",
            "the message has 2097178 bytes; at most 1048576 are allowed (split the edit)",
        ),
        (
            "100,000 brackets",
            "[" * 100_000,
            "invalid_message",
            "the message is nested too deeply; at most 64 levels of arrays and objects are allowed",
        ),
        (
            "65 levels of nesting",
            json.dumps({"type": "ping", "id": json.loads("[" * 64 + "]" * 64)}),
            "invalid_message",
            "the message is nested too deeply; at most 64 levels of arrays and objects are allowed",
        ),
        (
            "NaN cursor",
            '{"type": "presence", "cursor": {"x": NaN, "y": 0}}',
            "invalid_message",
            'the message holds "NaN"; expected finite numbers only',
        ),
        (
            "a 5,000-digit version",
            '{"type": "edit", "id": "e", "baseVersion": ' + "9" * 5000 + ', "ops": []}',
            "invalid_message",
            "the message holds an integer of more than 4300 digits; expected integers of at "
            "most 9223372036854775807",
        ),
    ],
)
async def test_hostile_frames_get_the_documented_error_and_the_connection_stays_usable(
    label: str,
    frame: str,
    code: str,
    message: str,
    daphne_server: str,
    graph: Any,
    user: Any,
    session_cookie: Callable[[Any], bytes],
) -> None:
    cookie = (await database_sync_to_async(session_cookie)(user)).decode()
    async with ws_connect(
        daphne_ws_url(daphne_server, graph),
        origin=LOCAL,
        additional_headers={"Cookie": cookie},
        max_size=None,
        open_timeout=20,
    ) as ws:
        assert json.loads(await asyncio.wait_for(ws.recv(), 20))["type"] == "snapshot"
        await ws.send(frame)
        answer = json.loads(await asyncio.wait_for(ws.recv(), 20))
        assert message_errors(answer, SERVER_MESSAGES) == []
        assert (answer["code"], answer["message"], answer["error"]["code"]) == (
            code,
            message,
            code,
        )
        await ws.send(json.dumps({"type": "ping", "id": "after"}))
        assert json.loads(await asyncio.wait_for(ws.recv(), 20)) == {"type": "pong", "id": "after"}


async def test_a_message_over_daphnes_limit_is_closed_with_1009_before_it_is_read(
    daphne_server: str, graph: Any, user: Any, session_cookie: Callable[[Any], bytes]
) -> None:
    cookie = (await database_sync_to_async(session_cookie)(user)).decode()
    url = daphne_ws_url(daphne_server, graph)
    headers = {"Cookie": cookie}
    async with ws_connect(
        url,
        origin=LOCAL,
        additional_headers=headers,
        max_size=None,
    ) as other:
        assert json.loads(await asyncio.wait_for(other.recv(), 20))["type"] == "snapshot"
        async with ws_connect(
            url,
            origin=LOCAL,
            additional_headers=headers,
            max_size=None,
        ) as ws:
            await asyncio.wait_for(ws.recv(), 20)
            # when one client sends a 5 MiB message (Daphne takes 4 MiB)
            with pytest.raises(ConnectionClosed) as closed:
                await ws.send("x" * (5 * 1024 * 1024))
                while True:
                    await asyncio.wait_for(ws.recv(), 20)
            # then Daphne closes it with 1009 "message too big" as soon as the frame's header
            # says its size, with a close frame that the client receives (not a dropped line,
            # which a browser shows as 1006 with no reason)
            assert closed.value.rcvd is not None
            assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (
                1009,
                f"received WebSocket message size {5 * 1024 * 1024} exceeds payload limit of "
                f"{WEBSOCKET_MAX_MESSAGE_BYTES} octets",
            )
        # and the other client is still answered
        await other.send(json.dumps({"type": "ping", "id": "other"}))
        while (answer := json.loads(await asyncio.wait_for(other.recv(), 20)))["type"] != "pong":
            assert answer["type"] == "presence"
        assert answer == {"type": "pong", "id": "other"}


# --- finding 9: a refused handshake says why ------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "signed_in", "code"), [("anonymous", False, 4401), ("stranger", True, 4404)]
)
async def test_a_browser_sees_why_its_socket_was_refused(
    label: str,
    signed_in: bool,
    code: int,
    daphne_server: str,
    graph: Any,
    other_user: Any,
    session_cookie: Callable[[Any], bytes],
) -> None:
    headers = {}
    if signed_in:
        headers["Cookie"] = (await database_sync_to_async(session_cookie)(other_user)).decode()
    async with ws_connect(
        daphne_ws_url(daphne_server, graph),
        origin=LOCAL,
        additional_headers=headers,
    ) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 20)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == code


# --- issue 14, item 5: the database is briefly unavailable -------------------------------------


@pytest.fixture
def short_timeout() -> Iterator[float]:
    """SQLite connections opened during the test wait 0.2 s for a lock, not 20 s."""
    with short_busy_timeout() as seconds:
        yield seconds


@pytest.mark.sqlite
async def test_a_locked_database_refuses_the_edit_as_unavailable_and_recovers(
    connect: Any,
    graph: Any,
    user: Any,
    other_user: Any,
    short_timeout: float,
) -> None:
    # given ann editing and bob watching
    await database_sync_to_async(share)(graph, other_user, "viewer")
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    edit = {
        "type": "edit",
        "id": "e1",
        "baseVersion": 1,
        "ops": [{"op": "update_node", "id": T0, "label": "locked"}],
    }
    # when another connection holds the write lock past the busy timeout
    with write_locked():
        await ann.send(edit)
        refused = await ann.receive()
        # then ann's edit is refused as retryable, nothing is stored and bob hears nothing
        assert (refused["type"], refused["id"], refused["reason"], refused["version"]) == (
            "rejected",
            "e1",
            "unavailable",
            1,
        )
        assert refused["message"] == (
            "the database is unavailable (database is locked); the edit was not applied: send "
            "it again in a moment"
        )
        await bob.ping("bob")
    assert await database_sync_to_async(stored_version)(graph) == (1, 1)
    # and once the lock is gone the same edit goes through, from the stored document
    await ann.send(edit)
    applied = await ann.receive()
    assert (applied["type"], applied["version"], applied["ops"]) == ("applied", 2, edit["ops"])
    assert (await bob.receive())["version"] == 2
    assert await database_sync_to_async(stored_version)(graph) == (2, 2)


# --- finding 4 on the websocket: unbounded sharding -------------------------------------------

OPERATION = "26434d32-ccbc-442f-9d78-8bf158b00c6b"


@override_settings(GEON_MAX_OPS_PER_EDIT=3)
async def test_an_unbounded_shard_is_rejected_with_the_version_and_the_socket_stays_usable(
    connect: Any, user: Any, loom_document: dict[str, Any]
) -> None:
    # given the loom example (an operation over [0:10, 0:5]), open on a websocket
    graph = await database_sync_to_async(do_create_graph)(
        owner=user, title="loom", document=loom_document
    )
    peer = await connect(user, graph)
    # when it is sharded into 10**12 parts, and into 5 (past 3 node ops per edit)
    for edit_id, parts in (("huge", 10**12), ("many", 5)):
        ops = [{"op": "shard", "operation": OPERATION, "dim": 0, "parts": parts}]
        await peer.send({"type": "edit", "id": edit_id, "baseVersion": 1, "ops": ops})
    huge, many = await peer.receive(), await peer.receive()
    # then each is rejected (1011 before), naming the version; nothing is stored
    assert (huge["type"], huge["id"], huge["reason"], huge["version"]) == (
        "rejected",
        "huge",
        "invalid_edit",
        1,
    )
    assert (many["type"], many["id"], many["reason"], many["version"]) == (
        "rejected",
        "many",
        "too_many_ops",
        1,
    )
    assert await database_sync_to_async(stored_version)(graph) == (1, 1)
    await peer.ping("still-answered")
