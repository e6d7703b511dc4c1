"""The websocket of one graph, ``/ws/graphs/<id>/`` (DESIGN.md §6; messages in
:mod:`geon.graphs.protocol`).

On connect the server sends ``snapshot``; clients send ``edit``, ``presence`` and ``ping``, and
receive ``applied``/``rejected``, other clients' ``presence``, ``run`` events and ``pong``.
Close codes: 4401 not signed in, 4404 no such graph (or no access to it); the handshake is
accepted first, so that a browser sees the code (a refused handshake is only "1006").

An ``edit`` whose id its sender already used on the graph is not applied again: the sender
alone gets the ``applied`` of the version it made (see
:func:`geon.graphs.services.editing.do_apply_edits`).

The consumer only translates: it parses a frame, calls a service and sends what it returns.
Edits go through the graph's edit queue (:mod:`geon.graphs.services.queue`); run events come
from the runs' live feed (:mod:`geon.graphs.services.feeds`), published or polled.

A change of the graph's members, owner or existence reaches every open socket of it through
the channel layer group (``graph.access``, on commit): each checks its user's role again and is
told the new one (``access``), or gets ``error access_removed`` and is closed with 4404.

Limits: frames over ``GEON_WS_MAX_MESSAGE_BYTES`` and frames that are not JSON (or nest too
deep, see :func:`geon.graphs.protocol.parse_message`) get an ``error`` and the connection stays
usable; edits and presence updates are rate-limited per connection (token buckets), and a
client's presence updates are merged: the latest goes out at most every
:data:`PRESENCE_INTERVAL_SECONDS`. A database that cannot be reached (or a SQLite file locked
past its busy timeout) during an edit gives the sender ``rejected unavailable``; the edit is
not applied and the next one is tried afresh.

Presence is kept per process (:mod:`geon.graphs.services.presence`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from django.conf import settings
from django.utils import timezone

from geon.graphs.edits import EditRefused
from geon.graphs.protocol import CLIENT_MESSAGES, InvalidMessage, message_errors, parse_message
from geon.graphs.services import presence
from geon.graphs.services.access import AccessDenied, GraphNotFound
from geon.graphs.services.documents import current_version_number, snapshot
from geon.graphs.services.editing import Applied, EditRequest
from geon.graphs.services.feeds import Delivered, Feed, Item, feed_of_event, follow, unfollow
from geon.graphs.services.publishing import graph_group, user_group
from geon.graphs.services.queue import UNAVAILABLE, EditQueue
from geon.graphs.services.sharing import check_link_access, share_link_key

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
#: "Try again later" (RFC 6455 registry): the database could not be reached at connect.
CLOSE_TRY_AGAIN = 1013
TRY_AGAIN = "the database is unavailable; try again later"
#: A client's presence updates go out at most this often; the ones between are merged.
PRESENCE_INTERVAL_SECONDS = 0.05


class TokenBucket:
    """At most ``burst`` at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class GraphConsumer(AsyncJsonWebsocketConsumer):
    """One signed-in client of a graph: snapshot, edits, presence and run events."""

    group: str | None = None
    person_group: str | None = None
    client_id: str = ""
    #: Set once access is gone: nothing more is sent on this socket.
    revoked: bool = False

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Call the handler of ``message`` (as Channels does) without first closing stale
        database connections on the sync thread.

        Channels makes that hop to the one thread that runs all database work for every
        message, frames and channel-layer events alike: with 20 clients each ``applied`` of a
        batch queued 20 hops behind the batch's own write. Every database call here goes
        through ``database_sync_to_async``, which closes stale connections itself.
        """
        handler = getattr(self, get_handler_name(message), None)
        if handler is not None:
            await handler(message)
            return
        feed = feed_of_event(message["type"])  # another app's live feed (runs)
        if feed is None:
            raise ValueError(f'no handler for message type "{message["type"]}"')
        await self.deliver(feed, message[feed.item])

    async def refuse(self, code: int, reason: str) -> None:
        """Accept the handshake, then close with ``code``: a browser sees the code and can
        stop reconnecting (a handshake refused with HTTP 403 reaches it as 1006)."""
        await self.accept()
        await self.close(code=code, reason=reason)

    async def connect(self) -> None:
        user = self.scope["user"]
        # "anyone with the link can view": ?link=<key> of a live share link opens the graph
        # read-only, signed in or not (a signed-in member keeps their own role)
        self.link_key = share_link_key(self.scope)
        self.link_only = False
        if not user.is_authenticated and self.link_key is None:
            await self.refuse(CLOSE_UNAUTHENTICATED, "not signed in")
            return
        graph_id = self.scope["url_route"]["kwargs"]["graph_id"]
        try:
            graph, role, self.link_only = await database_sync_to_async(check_link_access)(
                user, graph_id, self.link_key
            )
        except GraphNotFound:
            await self.refuse(CLOSE_NOT_FOUND, "no such graph, or no role on it")
            return
        except UNAVAILABLE:
            log.warning("the database is unavailable; refusing a websocket for now", exc_info=True)
            await self.refuse(CLOSE_TRY_AGAIN, TRY_AGAIN)
            return
        self.graph_id = graph.pk
        self.graph_title = graph.title  # a person reads the refusal: the name, not the id
        self.role = role
        self.delivered = Delivered()
        edit_rate = settings.GEON_WS_EDITS_PER_SECOND
        self.edit_limit = TokenBucket(edit_rate, settings.GEON_WS_EDIT_BURST)
        presence_rate = settings.GEON_WS_PRESENCE_PER_SECOND
        self.presence_limit = TokenBucket(presence_rate, 2 * presence_rate)
        self.presence_task: asyncio.Task[None] | None = None
        self.presence_sent_at = 0.0
        self.group = graph_group(graph.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        # what concerns the person, whichever graph they have open (a review's notification)
        self.person_group = user_group(user.pk) if user.is_authenticated else None
        if self.person_group is not None:
            await self.channel_layer.group_add(self.person_group, self.channel_name)
        await self.accept()
        since = timezone.now()
        self.client_id = uuid.uuid4().hex[:12]
        signed_in = user.is_authenticated
        self.me: dict[str, Any] = {
            "client": self.client_id,
            "user": user.get_username() if signed_in else "",
            "name": (user.get_full_name() or user.get_username()) if signed_in else "visitor",
            "selection": [],
            "cursor": None,
        }
        presence.arrive(str(graph.pk), self.me)
        try:
            first = await database_sync_to_async(snapshot)(graph)
        except UNAVAILABLE:  # the document could not be read: the client comes back later
            log.warning("the database is unavailable; closing a new websocket", exc_info=True)
            await self.close(code=CLOSE_TRY_AGAIN, reason=TRY_AGAIN)
            return
        await self.send_snapshot(first)
        await self.announce("join")
        follow(str(graph.pk), self, since)

    async def disconnect(self, code: int) -> None:
        await self.leave()

    async def leave(self) -> None:
        """Stop hearing of the graph: feeds, presence (others hear ``leave``), group."""
        if self.group is None:
            return
        await unfollow(str(self.graph_id), self)
        if self.presence_task is not None:
            self.presence_task.cancel()
        if presence.depart(str(self.graph_id), self.client_id):
            await self.announce("leave")
        await self.channel_layer.group_discard(self.group, self.channel_name)
        if self.person_group is not None:
            await self.channel_layer.group_discard(self.person_group, self.channel_name)
        self.group = None

    async def send(
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False
    ) -> None:
        """Send a frame, unless access is gone (events already queued stay unsent)."""
        if not self.revoked:
            await super().send(text_data, bytes_data, close)

    async def graph_access(self, event: dict[str, Any]) -> None:
        """The graph's members, owner or existence changed (on some process): check this
        user's role again; tell them a new one, or close when there is none."""
        try:
            _, role, self.link_only = await database_sync_to_async(check_link_access)(
                self.scope["user"], self.graph_id, self.link_key
            )
        except GraphNotFound:
            await self.revoke()
            return
        except UNAVAILABLE:  # the next change, or the next edit, checks again
            log.warning("re-checking access to graph %s failed", self.graph_id, exc_info=True)
            return
        if role != self.role:
            self.role = role
            await self.send_json({"type": "access", "role": role})

    async def revoke(self) -> None:
        """Access is gone: say so, stop every update, and close with 4404."""
        if self.revoked:
            return
        await self.send_error(
            "access_removed",
            f'you no longer have a role on graph "{self.graph_title}" (removed, or the graph '
            "was deleted); ask its owner for access",
        )
        self.revoked = True
        await self.leave()
        await self.close(code=CLOSE_NOT_FOUND, reason="access removed")

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Every client frame must be a JSON object; anything else is answered, not fatal."""
        if self.revoked:
            return
        frame = text_data if text_data is not None else (bytes_data or b"")
        size = len(frame.encode() if isinstance(frame, str) else frame)
        limit = settings.GEON_WS_MAX_MESSAGE_BYTES
        if size > limit:
            await self.send_error(
                "message_too_large",
                f"the message has {size} bytes; at most {limit} are allowed (split the edit)",
            )
            return
        try:
            content = parse_message(frame)
        except InvalidMessage as error:
            await self.send_error("invalid_message", str(error))
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if not isinstance(kind, str) or kind not in CLIENT_MESSAGES:  # a list is no dict key
            expected = ", ".join(f'"{t}"' for t in CLIENT_MESSAGES)
            shown = json.dumps(kind)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            await self.send_error(
                "unknown_message_type",
                f"message type {shown} is not supported; expected one of {expected}",
            )
            return
        if kind == "presence" and not self.presence_limit.take():  # refused before any more work
            rate = settings.GEON_WS_PRESENCE_PER_SECOND
            await self.send_error(
                "rate_limited",
                f"too many presence updates; at most {rate} per second (with bursts of "
                f"{2 * rate}) are allowed on one connection",
            )
            return
        problems = message_errors(content, CLIENT_MESSAGES)
        if problems:
            edit_id = content.get("id")
            await self.send_error(
                "invalid_message",
                "; ".join(problems),
                edit_id if isinstance(edit_id, str) else None,
            )
            return
        if kind == "edit":
            await self.receive_edit(content)
        elif kind == "presence":
            await self.receive_presence(content)
        else:
            await self.send_json({"type": "pong", "id": content.get("id")})

    async def receive_edit(self, content: dict[str, Any]) -> None:
        edit_id = content["id"]
        user = self.scope["user"]
        if self.link_only:
            await self.reject(
                edit_id,
                "forbidden",
                f'you opened graph "{self.graph_title}" through a view-only link; ask its owner '
                "for a role to edit it",
            )
            return
        if not self.edit_limit.take():
            rate = settings.GEON_WS_EDITS_PER_SECOND
            await self.reject(
                edit_id,
                "rate_limited",
                f"too many edits; at most {rate} per second (with bursts of "
                f"{settings.GEON_WS_EDIT_BURST}) are allowed on one connection",
            )
            return
        request = EditRequest(
            user, content["baseVersion"], content["ops"], edit_id, content.get("message", "")
        )
        try:
            result = await EditQueue.submit(self.graph_id, request)
        except UNAVAILABLE as error:  # rolled back: nothing of the edit is stored or live
            log.warning("edit %s of graph %s: database unavailable", edit_id, self.graph_id)
            await self.reject(
                edit_id,
                "unavailable",
                f"the database is unavailable ({str(error) or type(error).__name__}); the edit "
                "was not applied: send it again in a moment",
                version=await self.version_or(content["baseVersion"]),
            )
            return
        if isinstance(result, Applied) and result.repeated:  # told to nobody else
            await self.send_json(result.message(edit_id))
        elif isinstance(result, EditRefused):
            await self.reject(edit_id, result.reason, str(result), **result.details)
        elif isinstance(result, AccessDenied):
            await self.reject(edit_id, "forbidden", str(result))
        elif isinstance(result, GraphNotFound):
            await self.revoke()

    async def version_or(self, fallback: int) -> int:
        """The graph's current version number, or ``fallback`` while the database is away."""
        try:
            return await database_sync_to_async(current_version_number)(self.graph_id)
        except UNAVAILABLE:
            return fallback

    async def reject(self, edit_id: str, reason: str, message: str, **details: Any) -> None:
        version = details.pop("version", None)
        if version is None:
            version = await database_sync_to_async(current_version_number)(self.graph_id)
        await self.send_json(
            {
                "type": "rejected",
                "id": edit_id,
                "reason": reason,
                "message": message,
                "version": version,
                **details,
            }
        )

    async def receive_presence(self, content: dict[str, Any]) -> None:
        """Take the latest selection and cursor (within the rate, checked by
        :meth:`receive_json`); the other clients get them at most every
        :data:`PRESENCE_INTERVAL_SECONDS` (updates in between are merged into one)."""
        for key in ("selection", "cursor"):
            if key in content:
                self.me[key] = content[key]
        if self.presence_task is None or self.presence_task.done():
            self.presence_task = asyncio.create_task(self.send_presence())

    async def send_presence(self) -> None:
        """Announce this client's latest presence, once the interval since the last passed."""
        wait = self.presence_sent_at + PRESENCE_INTERVAL_SECONDS - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self.presence_sent_at = time.monotonic()
        if self.group is not None:
            await self.announce("update")

    async def announce(self, event: str) -> None:
        assert self.group is not None
        message = {"type": "presence", "event": event, **self.me}
        await self.channel_layer.group_send(
            self.group, {"type": "graph.presence", "message": message}
        )

    async def graph_presence(self, event: dict[str, Any]) -> None:
        """Another client joined, left or moved (never echoed to the client itself)."""
        message = event["message"]
        if message["client"] == self.client_id:
            return
        presence.heard(str(self.graph_id), message, listening=self.group is not None)
        await self.send_json(self.unnamed(message))

    def unnamed(self, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry`` as this client may see it: a visitor who is not signed in (through a share
        link) sees no names of others."""
        if self.scope["user"].is_authenticated:
            return entry
        return {**entry, "user": "", "name": "someone"}

    async def graph_applied(self, event: dict[str, Any]) -> None:
        """A batch of edits was stored: every client gets each ``applied``, in version order
        (encoded once, not once per client: :mod:`geon.graphs.services.publishing`)."""
        for frame in event["frames"]:
            await self.send(text_data=frame)

    async def graph_plans(self, event: dict[str, Any]) -> None:
        """The graph's shard plans changed: every client reloads its list."""
        await self.send_json(event["message"])

    async def graph_replaced(self, event: dict[str, Any]) -> None:
        """The document was replaced through the REST API: a fresh snapshot."""
        await self.send_snapshot(event["message"])

    async def send_snapshot(self, message: dict[str, Any]) -> None:
        """Send a ``snapshot`` (:func:`~geon.graphs.services.documents.snapshot`) with this
        client's own parts: who is connected and this user's role."""
        present = [self.unnamed(p) for p in presence.present(str(self.graph_id))]
        await self.send_json({**message, "present": present, "role": self.role})

    async def send_error(self, code: str, message: str, edit_id: str | None = None) -> None:
        """An ``error``: its code and message at the top and (as before) in ``error``."""
        reply: dict[str, Any] = {
            "type": "error",
            "code": code,
            "message": message,
            "error": {"code": code, "message": message},
        }
        if edit_id is not None:
            reply["id"] = edit_id
        await self.send_json(reply)

    async def deliver(self, feed: Feed, item: Item) -> None:
        """Send a feed's item (a run's state), unless this client has it or a later one."""
        message = self.delivered.message(feed, item)
        if message is not None:
            await self.send_json(message)


class NoGraph(AsyncWebsocketConsumer):
    """Any other websocket path (say ``/ws/graphs/not-a-uuid/``): accepted, then closed with
    4404, as for a graph that does not exist."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND, reason="no such graph")
