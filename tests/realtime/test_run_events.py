"""The websocket of a graph: snapshot on connect, refusals, and run events from a real worker."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings

from geon import core as gc
from geon.asgi import application
from geon.graphs.protocol import SERVER_MESSAGES, message_errors
from geon.graphs.services import do_create_graph, document_issues
from geon.runs.models import Run
from geon.runs.services import check_can_run, do_queue_run

ORIGIN = (b"origin", b"http://localhost")
STATUS_ORDER = ["queued", "running", "done"]


def communicator(graph_id: Any, *headers: tuple[bytes, bytes]) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, f"/ws/graphs/{graph_id}/", headers=list(headers))


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_connect_sends_the_snapshot(
    graph: Any, user: Any, session_cookie: Callable[[Any], bytes], loom_document: dict[str, Any]
) -> None:
    # given ann's graph and her signed-in websocket
    ws = communicator(
        graph.pk, ORIGIN, (b"cookie", await database_sync_to_async(session_cookie)(user))
    )
    # when she connects
    connected, _ = await ws.connect()
    snapshot = await ws.receive_json_from(timeout=10)
    await ws.disconnect()
    # then the first message is the snapshot of version 1 with the checker's issues
    assert connected is True
    assert message_errors(snapshot, SERVER_MESSAGES) == []
    client = snapshot["present"][0]["client"]
    assert snapshot == {
        "type": "snapshot",
        "document": loom_document,
        "version": 1,
        "issues": await database_sync_to_async(document_issues)(loom_document),
        "issueCounts": {"error": 0, "warning": 0},
        "present": [
            {"client": client, "user": "ann", "name": "ann", "selection": [], "cursor": None}
        ],
        "role": "owner",
    }


@pytest.mark.parametrize(
    ("label", "who", "graph_id", "origin", "expected"),
    [
        ("anonymous visitor", None, "graph", ORIGIN, (4401, "not signed in")),
        ("another user", "other", "graph", ORIGIN, (4404, "no such graph, or no role on it")),
        ("unknown graph", "owner", "unknown", ORIGIN, (4404, "no such graph, or no role on it")),
        ("not a graph id", "owner", "not-a-uuid", ORIGIN, (4404, "no such graph")),
        ("not a graph path", "owner", "../../elsewhere", ORIGIN, (4404, "no such graph")),
        ("foreign origin", "owner", "graph", (b"origin", b"http://evil.example"), None),
    ],
)
@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_connect_is_refused(
    label: str,
    who: str | None,
    graph_id: str,
    origin: tuple[bytes, bytes],
    expected: tuple[int, str] | None,
    graph: Any,
    user: Any,
    other_user: Any,
    session_cookie: Callable[[Any], bytes],
) -> None:
    # given a visitor who may not see the graph
    headers = [origin]
    if who is not None:
        visitor = user if who == "owner" else other_user
        headers.append((b"cookie", await database_sync_to_async(session_cookie)(visitor)))
    target = {"graph": graph.pk, "unknown": uuid.uuid4()}.get(graph_id, graph_id)
    # when they connect
    ws = communicator(target, *headers)
    connected, code = await ws.connect()
    if expected is None:  # a foreign page: the handshake itself is refused (CSRF defence)
        assert (connected, code) == (False, 1000)
        return
    # then the socket is accepted and closed before any message, with the code that says
    # why: a browser sees the code (a refused handshake reaches it as 1006)
    assert (connected, code) == (True, None)
    assert await ws.receive_output() == {
        "type": "websocket.close",
        "code": expected[0],
        "reason": expected[1],
    }


@pytest.mark.parametrize(
    ("label", "frame", "error"),
    [
        (
            "unknown type",
            '{"type": "shout"}',
            {
                "code": "unknown_message_type",
                "message": 'message type "shout" is not supported; expected one of "edit", '
                '"presence", "ping"',
            },
        ),
        (
            "not an object",
            "[1, 2]",
            {
                "code": "unknown_message_type",
                "message": 'message type null is not supported; expected one of "edit", '
                '"presence", "ping"',
            },
        ),
        (
            "a type that is a list",
            '{"type": ["edit"]}',
            {
                "code": "unknown_message_type",
                "message": 'message type ["edit"] is not supported; expected one of "edit", '
                '"presence", "ping"',
            },
        ),
        (
            "not JSON",
            "hello",
            {
                "code": "invalid_message",
                "message": "the message is not JSON (Expecting value: line 1 column 1 (char 0)); "
                "expected an object",
            },
        ),
    ],
)
@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_client_message_the_server_does_not_take_gets_an_error(
    label: str,
    frame: str,
    error: dict[str, str],
    graph: Any,
    user: Any,
    session_cookie: Callable[[Any], bytes],
) -> None:
    ws = communicator(
        graph.pk, ORIGIN, (b"cookie", await database_sync_to_async(session_cookie)(user))
    )
    await ws.connect()
    await ws.receive_json_from(timeout=10)
    # when the client sends a frame the server does not take
    await ws.send_to(text_data=frame)
    answer = await ws.receive_json_from(timeout=10)
    # then it is answered with an error and the connection stays open
    await ws.send_to(text_data=frame)
    again = await ws.receive_json_from(timeout=10)
    await ws.disconnect()
    assert answer == again == {"type": "error", **error, "error": error}
    assert message_errors(answer, SERVER_MESSAGES) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_run_events_from_the_worker_process_reach_the_websocket(
    celery_worker: Any, graph: Any, user: Any, session_cookie: Callable[[Any], bytes]
) -> None:
    # given a connected client and a real worker process
    ws = communicator(
        graph.pk, ORIGIN, (b"cookie", await database_sync_to_async(session_cookie)(user))
    )
    await ws.connect()
    await ws.receive_json_from(timeout=10)
    # when a run is queued
    checked = await database_sync_to_async(check_can_run)(user, graph.pk, "numpy")
    run = await database_sync_to_async(do_queue_run)(checked, user)
    events = []
    while not events or events[-1]["event"] not in ("done", "failed"):
        events.append(await ws.receive_json_from(timeout=60))
    await ws.disconnect()
    # then the client saw it queued, then done, executed by the worker process (not this one)
    last = events[-1]["run"]
    assert (events[-1]["event"], last["status"], last["id"], last["error"]) == (
        "done", "done", run.pk, "",
    )  # fmt: skip
    assert last["workerPid"] == celery_worker.pid
    assert last["workerPid"] != os.getpid()
    assert [message_errors(e, SERVER_MESSAGES) for e in events] == [[] for _ in events]
    statuses = [e["run"]["status"] for e in events]
    assert [e["type"] for e in events] == ["run"] * len(events)
    assert statuses == sorted(statuses, key=STATUS_ORDER.index)
    if settings.GEON_RUN_EVENTS_BY_POLLING:
        # polled rows may skip a state, but the queued event is published in this process
        assert statuses[0] == "queued"
    else:
        # through Redis, every event the worker publishes arrives
        assert statuses == ["queued", "running", "running", "done"]
        assert [e["run"]["progress"] for e in events] == [0.0, 0.0, 1.0, 1.0]
    stored = await database_sync_to_async(Run.objects.get)(pk=run.pk)
    assert (stored.status, stored.worker_pid) == ("done", celery_worker.pid)


def chain(steps: int) -> dict[str, Any]:
    """A document of ``2 * steps`` operations on 2000 x 2000 floats: long enough (a second or
    more) that the consumer's polling of the row (every 0.25 s) sees it running."""
    H, W = gc.Axis("H", 2000), gc.Axis("W", 2000)
    x = gc.placeholder(axes=[H, W], name="x")
    y = x
    for _ in range(steps):
        y = gc.exp(y * 0.5)
    document: dict[str, Any] = gc.graph([y]).to_json()
    return document


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_progress_of_every_operation_reaches_the_websocket(
    celery_worker: Any, user: Any, session_cookie: Callable[[Any], bytes]
) -> None:
    # given a graph of 50 operations and a connected client
    graph = await database_sync_to_async(do_create_graph)(
        owner=user, title="Chain", document=chain(25)
    )
    ws = communicator(
        graph.pk, ORIGIN, (b"cookie", await database_sync_to_async(session_cookie)(user))
    )
    await ws.connect()
    await ws.receive_json_from(timeout=10)
    # when a run is queued and executed by the worker
    checked = await database_sync_to_async(check_can_run)(user, graph.pk, "numpy")
    await database_sync_to_async(do_queue_run)(checked, user)
    events = []
    while not events or events[-1]["event"] not in ("done", "failed"):
        events.append(await ws.receive_json_from(timeout=120))
    await ws.disconnect()
    # then progress events arrived, each naming the operation just finished, in order
    progress = [e["run"] for e in events if e["event"] == "progress" and e["run"]["step"]]
    assert [message_errors(e, SERVER_MESSAGES) for e in events] == [[] for _ in events]
    assert (events[0]["event"], events[-1]["event"], events[-1]["run"]["progress"]) == (
        "queued", "done", 1.0,
    )  # fmt: skip
    assert [(r["step"]["total"], r["step"]["phase"]) for r in progress] == [
        (50, "logical") for _ in progress
    ]
    assert [r["progress"] for r in progress] == [r["step"]["done"] / 50 for r in progress]
    assert [r["step"]["done"] for r in progress] == sorted({r["step"]["done"] for r in progress})
    ops = [r["step"]["operationId"] for r in progress]
    assert [r["step"]["kernel"] for r in progress] == [
        "op:exp" if done % 2 == 0 else "op:multiply"
        for done in (r["step"]["done"] for r in progress)
    ]
    assert len(set(ops)) == len(ops)
    if settings.GEON_RUN_EVENTS_BY_POLLING:
        # polling reads the row a few times a second: it sees some of the 50 steps, not all
        assert 1 <= len(progress) <= 50
    else:
        # through Redis, every step arrives
        assert [r["step"]["done"] for r in progress] == list(range(1, 51))
