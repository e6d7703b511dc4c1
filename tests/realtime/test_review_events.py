"""Review events reach every open websocket of the graph (issue 18, docs/reviews.md "Live
events"): a reviewer's thread and verdict arrive at the author's socket as ``review`` messages
that match the protocol's schema, in order, through the real consumer and channel layer."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from geon.asgi import application
from geon.graphs.models import Membership
from geon.graphs.protocol import SERVER_MESSAGES, message_errors
from geon.reviews.services import writing

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ORIGIN = (b"origin", b"http://localhost")
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"


async def next_review(ws: WebsocketCommunicator) -> dict[str, Any]:
    """The next ``review`` message (presence and the like pass by), checked by its schema."""
    while True:
        message: dict[str, Any] = await ws.receive_json_from(timeout=10)
        assert message_errors(message, SERVER_MESSAGES) == []
        if message["type"] == "review":
            return message


async def test_review_events_reach_the_graphs_sockets(
    graph: Any, user: Any, other_user: Any, session_cookie: Any
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="reviewer"
    )
    cookie = await database_sync_to_async(session_cookie)(user)
    ws = WebsocketCommunicator(
        application, f"/ws/graphs/{graph.pk}/", headers=[ORIGIN, (b"cookie", cookie)]
    )
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from(timeout=10))["type"] == "snapshot"

    review = await database_sync_to_async(writing.do_open_review)(
        user, graph.pk, "Loom add", ["bob"]
    )
    opened = await next_review(ws)
    assert (opened["event"], opened["review"]["title"], opened["review"]["state"]) == (
        "opened",
        "Loom add",
        "open",
    )
    await database_sync_to_async(writing.do_add_thread)(
        other_user, graph.pk, review.pk, {"node": T0}, "why this range?"
    )
    thread = await next_review(ws)
    assert (thread["event"], thread["review"]["openThreads"]) == ("thread", 1)
    await database_sync_to_async(writing.do_give_verdict)(
        other_user, graph.pk, review.pk, "request_changes", "see the thread"
    )
    verdict = await next_review(ws)
    assert verdict["event"] == "verdict"
    assert verdict["review"]["state"] == "changes_requested"
    assert verdict["review"]["activity"] > thread["review"]["activity"]
    await ws.disconnect()
