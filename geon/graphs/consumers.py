"""The websocket of one graph, ``/ws/graphs/<id>/`` (DESIGN.md §6; messages in
:mod:`geon.graphs.protocol`).

On connect the server sends ``snapshot``; clients send ``edit``, ``presence`` and ``ping``, and
receive ``applied``/``rejected``, other clients' ``presence``, ``run`` events and ``pong``.
Close codes: 4401 not signed in, 4404 no such graph (or no access to it); the handshake is
accepted first, so that a browser sees the code (a refused handshake is only "1006").

An ``edit`` whose id its sender already used on the graph is not applied again: the sender
alone gets the ``applied`` of the version it made (see :func:`services.do_apply_edits`).

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

Presence is kept per process (:data:`PRESENT`): with several web processes behind the Redis
channel layer, ``presence`` events still reach every client, but a ``snapshot``'s ``present``
lists only the clients of the same process.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
import uuid
from typing import Any

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from geon.core.errors import GeonError
from geon.graphs import services
from geon.graphs.edits import EditRefused
from geon.graphs.protocol import CLIENT_MESSAGES, InvalidMessage, message_errors, parse_message
from geon.runs.models import Run
from geon.runs.services import EVENT_OF_STATUS, runs_changed_since

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
#: "Try again later" (RFC 6455 registry): the database could not be reached at connect.
CLOSE_TRY_AGAIN = 1013
TRY_AGAIN = "the database is unavailable; try again later"
#: The database errors that mean "not now" (unreachable, locked past the busy timeout, a
#: connection lost), not "never": the sender may try again.
UNAVAILABLE = (OperationalError, InterfaceError)
#: A client's presence updates go out at most this often; the ones between are merged.
PRESENCE_INTERVAL_SECONDS = 0.05
#: At most this many queued edits of one graph are written in one transaction.
EDITS_PER_COMMIT = 50
#: At most this many transactions follow one another in one call to the database thread
#: before other database work of the process (connects, run polls) gets a turn.
COMMITS_PER_CALL = 4
#: A due snapshot of a graph is stored once no edit of it came for this long (or once it is
#: ``GEON_SNAPSHOT_EVERY`` versions overdue).
SNAPSHOT_QUIET_SECONDS = 0.05
STATUS_ORDER = {
    Run.Status.QUEUED: 0,
    Run.Status.RUNNING: 1,
    Run.Status.DONE: 2,
    Run.Status.FAILED: 2,
}


#: The clients connected to each graph in this process: graph id -> client id -> entry.
PRESENT: dict[str, dict[str, dict[str, Any]]] = {}


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
        if handler is None:
            raise ValueError(f'no handler for message type "{message["type"]}"')
        await handler(message)

    async def refuse(self, code: int, reason: str) -> None:
        """Accept the handshake, then close with ``code``: a browser sees the code and can
        stop reconnecting (a handshake refused with HTTP 403 reaches it as 1006)."""
        await self.accept()
        await self.close(code=code, reason=reason)

    async def connect(self) -> None:
        user = self.scope["user"]
        if not user.is_authenticated:
            await self.refuse(CLOSE_UNAUTHENTICATED, "not signed in")
            return
        graph_id = self.scope["url_route"]["kwargs"]["graph_id"]
        try:
            graph, role = await database_sync_to_async(services.check_access)(user, graph_id)
        except services.GraphNotFound:
            await self.refuse(CLOSE_NOT_FOUND, "no such graph, or no role on it")
            return
        except UNAVAILABLE:
            log.warning("the database is unavailable; refusing a websocket for now", exc_info=True)
            await self.refuse(CLOSE_TRY_AGAIN, TRY_AGAIN)
            return
        self.graph_id = graph.pk
        self.graph_title = graph.title  # a person reads the refusal: the name, not the id
        self.role = role
        self.sent: dict[int, tuple[int, float]] = {}
        self.edits = TokenBucket(settings.GEON_WS_EDITS_PER_SECOND, settings.GEON_WS_EDIT_BURST)
        presence_rate = settings.GEON_WS_PRESENCE_PER_SECOND
        self.presence = TokenBucket(presence_rate, 2 * presence_rate)
        self.presence_task: asyncio.Task[None] | None = None
        self.presence_sent_at = 0.0
        self.group = services.graph_group(graph.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        since = timezone.now()
        self.client_id = uuid.uuid4().hex[:12]
        self.me = {
            "client": self.client_id,
            "user": user.get_username(),
            "name": user.get_full_name() or user.get_username(),
            "selection": [],
            "cursor": None,
        }
        present = PRESENT.setdefault(str(graph.pk), {})
        present[self.client_id] = self.me
        try:
            snapshot = await database_sync_to_async(services.snapshot)(graph)
        except UNAVAILABLE:  # the document could not be read: the client comes back later
            log.warning("the database is unavailable; closing a new websocket", exc_info=True)
            await self.close(code=CLOSE_TRY_AGAIN, reason=TRY_AGAIN)
            return
        await self.send_snapshot(snapshot)
        await self.announce("join")
        if settings.GEON_RUN_EVENTS_BY_POLLING:
            RunPoller.join(str(graph.pk), self, since)

    async def disconnect(self, code: int) -> None:
        await self.leave()

    async def leave(self) -> None:
        """Stop hearing of the graph: run events, presence (others hear ``leave``), group."""
        if self.group is None:
            return
        if settings.GEON_RUN_EVENTS_BY_POLLING:
            await RunPoller.leave(str(self.graph_id), self)
        if self.presence_task is not None:
            self.presence_task.cancel()
        present = PRESENT.get(str(self.graph_id), {})
        if present.pop(self.client_id, None) is not None:
            await self.announce("leave")
        if not present:
            PRESENT.pop(str(self.graph_id), None)
        await self.channel_layer.group_discard(self.group, self.channel_name)
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
            _, role = await database_sync_to_async(services.check_access)(
                self.scope["user"], self.graph_id
            )
        except services.GraphNotFound:
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
        if kind == "presence" and not self.presence.take():  # refused before any more work
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
        if not self.edits.take():
            rate = settings.GEON_WS_EDITS_PER_SECOND
            await self.reject(
                edit_id,
                "rate_limited",
                f"too many edits; at most {rate} per second (with bursts of "
                f"{settings.GEON_WS_EDIT_BURST}) are allowed on one connection",
            )
            return
        request = services.EditRequest(
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
        if isinstance(result, services.Applied) and result.repeated:  # told to nobody else
            await self.send_json(result.message(edit_id))
        elif isinstance(result, EditRefused):
            await self.reject(edit_id, result.reason, str(result), **result.details)
        elif isinstance(result, services.AccessDenied):
            await self.reject(edit_id, "forbidden", str(result))
        elif isinstance(result, services.GraphNotFound):
            await self.revoke()

    async def version_or(self, fallback: int) -> int:
        """The graph's current version number, or ``fallback`` while the database is away."""
        try:
            return await database_sync_to_async(services.current_version_number)(self.graph_id)
        except UNAVAILABLE:
            return fallback

    async def reject(self, edit_id: str, reason: str, message: str, **details: Any) -> None:
        version = details.pop("version", None)
        if version is None:
            version = await database_sync_to_async(services.current_version_number)(self.graph_id)
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
        if self.group is not None and message["event"] != "leave":
            # a client of another process: track it here too (best effort, see the module doc)
            PRESENT.setdefault(str(self.graph_id), {}).setdefault(message["client"], {}).update(
                {k: v for k, v in message.items() if k not in ("type", "event")}
            )
        elif message["event"] == "leave":
            PRESENT.get(str(self.graph_id), {}).pop(message["client"], None)
        await self.send_json(message)

    async def graph_applied(self, event: dict[str, Any]) -> None:
        """A batch of edits was stored: every client gets each ``applied``, in version order
        (encoded once by :func:`services.publish_applied`, not once per client)."""
        for frame in event["frames"]:
            await self.send(text_data=frame)

    async def graph_plans(self, event: dict[str, Any]) -> None:
        """The graph's shard plans changed: every client reloads its list."""
        await self.send_json(event["message"])

    async def graph_replaced(self, event: dict[str, Any]) -> None:
        """The document was replaced through the REST API: a fresh snapshot."""
        await self.send_snapshot(event["message"])

    async def send_snapshot(self, message: dict[str, Any]) -> None:
        """Send a ``snapshot`` (:func:`services.snapshot`) with this client's own parts: who is
        connected and this user's role."""
        present = list(PRESENT.get(str(self.graph_id), {}).values())
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

    async def run_event(self, message: dict[str, Any]) -> None:
        """A ``run.event`` from the channel layer (published by :func:`runs.services.publish`)."""
        await self.send_run(message["run"])

    async def send_run(self, run: dict[str, Any]) -> None:
        """Send a run event unless this client already has this state or a later one.

        Events can reach a consumer twice (published and polled) or late; runs only move
        forward, so anything not past the last state sent is dropped.
        """
        status = Run.Status(run["status"])
        state = (STATUS_ORDER[status], run["progress"])
        if run["id"] in self.sent and state <= self.sent[run["id"]]:
            return
        self.sent[run["id"]] = state
        event = EVENT_OF_STATUS[status]
        await self.send_json({"type": "run", "event": event, "run": run})


class NoGraph(AsyncWebsocketConsumer):
    """Any other websocket path (say ``/ws/graphs/not-a-uuid/``): accepted, then closed with
    4404, as for a graph that does not exist."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND, reason="no such graph")


class EditQueue:
    """The edits waiting for one graph in this process, applied together (a group commit).

    The first edit of a graph starts a task that writes it; edits arriving meanwhile wait
    and are written next, in one transaction (:func:`services.do_apply_edits`), each still
    its own version with its own ``applied`` or refusal, in arrival order. Writes to one graph
    go one at a time anyway (its row lock); this way a burst of edits costs one transaction,
    not one each. The next transaction follows in the same call to the database thread, on
    the same connection (opening one costs 10-20 ms with PostgreSQL).

    The whole document that every ``GEON_SNAPSHOT_EVERY`` versions store is written when the
    graph is quiet, after the ``applied`` messages went out: serialising a large document
    holds the interpreter long enough to stall every client's fan-out.
    """

    running: dict[Any, EditQueue] = {}

    def __init__(self, graph_id: Any) -> None:
        self.graph_id = graph_id
        # appended to on the event loop, taken from on the database thread
        self.waiting: collections.deque[tuple[services.EditRequest, asyncio.Future[Any]]] = (
            collections.deque()
        )
        self.task: asyncio.Task[None] | None = None
        self.arrived = asyncio.Event()

    @classmethod
    async def submit(
        cls, graph_id: Any, request: services.EditRequest
    ) -> services.Applied | GeonError:
        """Queue ``request`` and wait for its outcome (an unexpected error is raised)."""
        loop = asyncio.get_running_loop()
        queue = cls.running.get(graph_id)
        if queue is None or (queue.task is not None and queue.task.get_loop() is not loop):
            queue = cls.running[graph_id] = cls(graph_id)
        future: asyncio.Future[Any] = loop.create_future()
        queue.waiting.append((request, future))
        queue.arrived.set()
        if queue.task is None or queue.task.done():
            queue.task = asyncio.create_task(queue.drain())
        result: services.Applied | GeonError = await future
        return result

    async def drain(self) -> None:
        while True:
            await self.write_waiting()
            due = services.snapshot_due(self.graph_id)
            if due is None:
                break
            if due < settings.GEON_SNAPSHOT_EVERY:
                self.arrived.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.arrived.wait(), SNAPSHOT_QUIET_SECONDS)
                if self.waiting:
                    continue
            try:
                await database_sync_to_async(services.do_store_snapshot)(self.graph_id)
            except Exception:  # reads replay from an earlier snapshot: slower, still right
                log.exception("storing a snapshot of graph %s failed", self.graph_id)
        if EditQueue.running.get(self.graph_id) is self:  # nothing waits: forget the graph
            del EditQueue.running[self.graph_id]

    async def write_waiting(self) -> None:
        """Write the waiting edits, at most ``EDITS_PER_COMMIT`` per transaction. When the hop
        to the database thread itself fails (closing a connection to a database that went
        away), the edits still waiting get that error rather than waiting forever."""
        loop = asyncio.get_running_loop()
        while self.waiting:
            try:
                await database_sync_to_async(self.write_batches)(loop)
            except UNAVAILABLE as error:
                stranded = [future for _, future in self.waiting]
                self.waiting.clear()
                _settle(stranded, None, error)

    def write_batches(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the database thread: write batches of waiting edits one after another until none
        waits (or ``COMMITS_PER_CALL`` were written); each outcome goes back to the loop."""
        for _ in range(COMMITS_PER_CALL):
            batch: list[tuple[services.EditRequest, asyncio.Future[Any]]] = []
            while self.waiting and len(batch) < EDITS_PER_COMMIT:
                batch.append(self.waiting.popleft())
            if not batch:
                return
            try:
                results = services.do_apply_edits(
                    self.graph_id, [request for request, _ in batch], defer_snapshot=True
                )
            except Exception as error:  # the batch was rolled back: each sender gets the error
                loop.call_soon_threadsafe(_settle, [f for _, f in batch], None, error)
                continue
            loop.call_soon_threadsafe(_settle, [f for _, f in batch], results, None)


def _settle(
    futures: list[asyncio.Future[Any]], results: list[Any] | None, error: Exception | None
) -> None:
    """Hand each waiting sender its result, or the error that rolled its batch back."""
    for n, future in enumerate(futures):
        if future.done():
            continue
        if results is None:
            future.set_exception(error or RuntimeError("no result"))
        else:
            future.set_result(results[n])


class RunPoller:
    """With the in-memory channel layer: one task per graph and process reads the graph's
    changed runs every ``GEON_RUN_POLL_SECONDS`` and hands them to the graph's consumers here
    (one query for all of them, not one per client)."""

    running: dict[str, RunPoller] = {}

    def __init__(self, graph_id: str, since: Any) -> None:
        self.graph_id = graph_id
        self.since = since
        self.consumers: set[GraphConsumer] = set()
        self.task = asyncio.create_task(self.poll())

    @classmethod
    def join(cls, graph_id: str, consumer: GraphConsumer, since: Any) -> None:
        poller = cls.running.get(graph_id)
        if (
            poller is None
            or poller.task.done()
            or poller.task.get_loop() is not asyncio.get_running_loop()
        ):
            poller = cls.running[graph_id] = cls(graph_id, since)
        poller.since = min(poller.since, since)
        poller.consumers.add(consumer)

    @classmethod
    async def leave(cls, graph_id: str, consumer: GraphConsumer) -> None:
        poller = cls.running.get(graph_id)
        if poller is None:
            return
        poller.consumers.discard(consumer)
        if not poller.consumers:
            del cls.running[graph_id]
            poller.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller.task

    async def poll(self) -> None:
        while True:
            await asyncio.sleep(settings.GEON_RUN_POLL_SECONDS)
            try:
                changed = await database_sync_to_async(runs_changed_since)(
                    self.graph_id, self.since
                )
            except Exception:  # a database hiccup must not end the clients' live updates
                log.exception("polling the runs of graph %s failed; trying again", self.graph_id)
                continue
            for updated, run in changed:
                self.since = max(self.since, updated)
                for consumer in list(self.consumers):
                    await consumer.send_run(run)
