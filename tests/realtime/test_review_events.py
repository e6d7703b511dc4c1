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
from geon.graphs.services import do_apply_edit
from geon.graphs.services.documents import current_version_number
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


async def next_of(ws: WebsocketCommunicator, kind: str) -> dict[str, Any]:
    """The next message of ``kind``, checked by its schema."""
    while True:
        message: dict[str, Any] = await ws.receive_json_from(timeout=10)
        assert message_errors(message, SERVER_MESSAGES) == []
        if message["type"] == kind:
            return message


async def test_notifications_reach_the_person_and_a_stale_approval_shows_live(
    graph: Any, user: Any, other_user: Any, session_cookie: Any
) -> None:
    # given bob, a reviewer, with the graph open, and ann with it open too
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="reviewer"
    )
    sockets = []
    for person in (other_user, user):
        cookie = await database_sync_to_async(session_cookie)(person)
        ws = WebsocketCommunicator(
            application, f"/ws/graphs/{graph.pk}/", headers=[ORIGIN, (b"cookie", cookie)]
        )
        assert (await ws.connect())[0]
        sockets.append(ws)
    bob, ann = sockets
    # when ann asks bob to review: bob's socket gets the notification, with his unread count
    review = await database_sync_to_async(writing.do_open_review)(
        user, graph.pk, "Loom add", ["bob"]
    )
    told = await next_of(bob, "notification")
    assert (told["notification"]["kind"], told["unread"]) == ("review_requested", 1)
    assert told["notification"]["url"] == f"/graphs/{graph.pk}/?review={review.pk}"
    # when bob approves and ann then changes a tensor's dtype (what the approval covers)
    await database_sync_to_async(writing.do_give_verdict)(
        other_user, graph.pk, review.pk, "approve"
    )
    approved = await next_review(ann)
    while approved["event"] != "verdict":
        approved = await next_review(ann)
    assert approved["review"]["state"] == "approved"
    version = await database_sync_to_async(current_version_number)(graph.pk)
    await database_sync_to_async(do_apply_edit)(
        user, graph.pk, version, [{"op": "update_node", "id": T0, "body": {"dtype": "float16"}}]
    )
    # then ann's open editor gets the review's state at once: the approval stale, state open
    state = await next_review(ann)
    assert state["event"] == "state"
    assert state["review"]["state"] == "open" and state["review"]["verdicts"][0]["stale"]
    # and bob is told his approval went stale
    stale = await next_of(bob, "notification")
    assert stale["notification"]["kind"] == "stale"
    for ws in sockets:
        await ws.disconnect()
