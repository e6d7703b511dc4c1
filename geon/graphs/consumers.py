"""The websocket of one graph, ``/ws/graphs/<id>/`` (DESIGN.md §6).

On connect the server sends ``snapshot`` ``{type, document, version, issues, present}``; run
status changes arrive as ``run`` ``{type: "run", event, run}`` with ``event`` one of ``queued``,
``progress``, ``done``, ``failed``. Close codes: 4401 not signed in, 4404 no such graph (or no
access to it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.utils import timezone

from geon.graphs import services
from geon.graphs.protocol import CLIENT_MESSAGES
from geon.runs.models import Run
from geon.runs.services import EVENT_OF_STATUS, runs_changed_since

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
STATUS_ORDER = {
    Run.Status.QUEUED: 0,
    Run.Status.RUNNING: 1,
    Run.Status.DONE: 2,
    Run.Status.FAILED: 2,
}


class GraphConsumer(AsyncJsonWebsocketConsumer):
    """Sends a graph's snapshot, then its run events, to one signed-in client."""

    group: str | None = None
    poller: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        user = self.scope["user"]
        if not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        graph_id = self.scope["url_route"]["kwargs"]["graph_id"]
        try:
            graph = await database_sync_to_async(services.check_can_view)(user, graph_id)
        except services.GraphNotFound:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.graph_id = graph.pk
        self.sent: dict[int, tuple[int, float]] = {}
        self.group = services.graph_group(graph.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        since = timezone.now()
        await self.send_json(await database_sync_to_async(services.snapshot)(graph, user))
        if settings.GEON_RUN_EVENTS_BY_POLLING:
            self.poller = asyncio.create_task(self.poll_runs(since))

    async def disconnect(self, code: int) -> None:
        if self.poller is not None:
            self.poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.poller
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Every client frame must be a JSON object; anything else is answered, not fatal."""
        try:
            content = json.loads(text_data if text_data is not None else (bytes_data or b""))
        except ValueError:
            await self.send_error("invalid_message", "the message is not JSON; expected an object")
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        expected = ", ".join(f'"{t}"' for t in CLIENT_MESSAGES) or "none yet"
        await self.send_error(
            "unknown_message_type", f'message type "{kind}" is not supported; expected {expected}'
        )

    async def send_error(self, code: str, message: str) -> None:
        await self.send_json({"type": "error", "error": {"code": code, "message": message}})

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

    async def poll_runs(self, since: Any) -> None:
        """With the in-memory channel layer: read the graph's changed runs every few moments."""
        while True:
            await asyncio.sleep(settings.GEON_RUN_POLL_SECONDS)
            try:
                changed = await database_sync_to_async(runs_changed_since)(self.graph_id, since)
            except Exception:  # a database hiccup must not end the client's live updates
                log.exception("polling the runs of graph %s failed; trying again", self.graph_id)
                continue
            for updated, run in changed:
                since = max(since, updated)
                await self.send_run(run)
