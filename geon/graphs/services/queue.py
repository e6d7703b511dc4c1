"""The edit queue: the websocket edits of one graph in this process, written together (a group
commit, DESIGN.md §6), and the timing of deferred snapshots.

The first edit of a graph starts a task that writes it; edits arriving meanwhile wait and are
written next, in one transaction (:func:`~geon.graphs.services.editing.do_apply_edits`), each
still its own version with its own ``applied`` or refusal, in arrival order. Writes to one graph
go one at a time anyway (its row lock); this way a burst of edits costs one transaction, not
one each. The next transaction follows in the same call to the database thread, on the same
connection (opening one costs 10-20 ms with PostgreSQL).

The whole document that every ``GEON_SNAPSHOT_EVERY`` versions store is written when the graph
is quiet (:data:`SNAPSHOT_QUIET_SECONDS`), after the ``applied`` messages went out: serialising
a large document holds the interpreter long enough to stall every client's fan-out.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import InterfaceError, OperationalError

from geon.core.errors import GeonError
from geon.graphs.services.editing import Applied, EditRequest, do_apply_edits
from geon.graphs.services.snapshots import do_store_snapshot, snapshot_due

log = logging.getLogger(__name__)

#: The database errors that mean "not now" (unreachable, locked past the busy timeout, a
#: connection lost), not "never": the sender may try again.
UNAVAILABLE = (OperationalError, InterfaceError)
#: At most this many queued edits of one graph are written in one transaction.
EDITS_PER_COMMIT = 50
#: At most this many transactions follow one another in one call to the database thread
#: before other database work of the process (connects, run polls) gets a turn.
COMMITS_PER_CALL = 4
#: A due snapshot of a graph is stored once no edit of it came for this long (or once it is
#: ``GEON_SNAPSHOT_EVERY`` versions overdue).
SNAPSHOT_QUIET_SECONDS = 0.05

#: A queued edit and where its outcome goes.
_Waiting = tuple[EditRequest, asyncio.Future[Applied | GeonError]]


class EditQueue:
    """The edits waiting for one graph in this process (see the module's docstring)."""

    running: dict[Any, EditQueue] = {}

    def __init__(self, graph_id: Any) -> None:
        self.graph_id = graph_id
        # appended to on the event loop, taken from on the database thread
        self.waiting: collections.deque[_Waiting] = collections.deque()
        self.task: asyncio.Task[None] | None = None
        self.arrived = asyncio.Event()

    @classmethod
    async def submit(cls, graph_id: Any, request: EditRequest) -> Applied | GeonError:
        """Queue ``request`` and wait for its outcome (an unexpected error is raised; one of
        :data:`UNAVAILABLE` when the database could not be reached)."""
        loop = asyncio.get_running_loop()
        queue = cls.running.get(graph_id)
        if queue is None or (queue.task is not None and queue.task.get_loop() is not loop):
            queue = cls.running[graph_id] = cls(graph_id)
        future: asyncio.Future[Applied | GeonError] = loop.create_future()
        queue.waiting.append((request, future))
        queue.arrived.set()
        if queue.task is None or queue.task.done():
            queue.task = asyncio.create_task(queue.drain())
        return await future

    async def drain(self) -> None:
        """Write what waits, then a due snapshot once the graph is quiet; forget the graph
        when nothing waits any more."""
        while True:
            await self.write_waiting()
            due = snapshot_due(self.graph_id)
            if due is None:
                break
            if due < settings.GEON_SNAPSHOT_EVERY:
                self.arrived.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.arrived.wait(), SNAPSHOT_QUIET_SECONDS)
                if self.waiting:
                    continue
            try:
                await database_sync_to_async(do_store_snapshot)(self.graph_id)
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
            batch: list[_Waiting] = []
            while self.waiting and len(batch) < EDITS_PER_COMMIT:
                batch.append(self.waiting.popleft())
            if not batch:
                return
            futures = [future for _, future in batch]
            try:
                results = do_apply_edits(
                    self.graph_id, [request for request, _ in batch], defer_snapshot=True
                )
            except Exception as error:  # the batch was rolled back: each sender gets the error
                loop.call_soon_threadsafe(_settle, futures, None, error)
                continue
            loop.call_soon_threadsafe(_settle, futures, results, None)


def _settle(
    futures: list[asyncio.Future[Applied | GeonError]],
    results: list[Applied | GeonError] | None,
    error: Exception | None,
) -> None:
    """Hand each waiting sender its result, or the error that rolled its batch back."""
    for n, future in enumerate(futures):
        if future.done():
            continue
        if results is None:
            future.set_exception(error or RuntimeError("no result"))
        else:
            future.set_result(results[n])
