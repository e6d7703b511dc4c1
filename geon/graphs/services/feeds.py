"""Live feeds: changes another app shows on a graph's open websockets (the ``run`` events of
DESIGN.md §6), without this app importing that one — ``runs`` depends on ``graphs``, never the
reverse. An app registers a :class:`Feed` in its ``AppConfig.ready`` (:mod:`geon.runs.feed`).

A feed's changes reach a graph's clients two ways. The app publishes each on the graph's
channel-layer group as an event of the feed's type, ``{"type": feed.event, feed.item: item}``,
which the consumer hands to the feed. Where that cannot reach (the in-memory channel layer,
with the worker in another process: only the database carries the change), one
:class:`FeedPoller` per graph and process reads the changes every ``poll_seconds`` for all the
graph's clients of that process. So an item may arrive twice, or late; each client's
:class:`Delivered` sends it only when it is past the last state sent of the same thing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from channels.db import database_sync_to_async

log = logging.getLogger(__name__)

Item = dict[str, Any]


@dataclass(frozen=True)
class Feed:
    """What graphs needs to know of a kind of change to show it live."""

    #: A name for logs ("runs").
    name: str
    #: The type of the channel-layer events that carry an item, e.g. ``"run.event"``.
    event: str
    #: The key of the item in such an event, e.g. ``"run"``.
    item: str
    #: An item's identity and how far it is (positions of one identity only grow).
    position: Callable[[Item], tuple[Hashable, tuple[Any, ...]]]
    #: The websocket message that shows an item.
    message: Callable[[Item], dict[str, Any]]
    #: The graph's items changed at or after a time, oldest change first: (changed, item);
    #: None for a feed whose changes are all made in the web process, so always published.
    changed_since: Callable[[str, datetime], list[tuple[datetime, Item]]] | None = None
    #: Whether the changes must be polled (read at each connect, so settings may change).
    polled: Callable[[], bool] = lambda: False
    #: How often a poller reads the changes.
    poll_seconds: Callable[[], float] = lambda: 60.0


_FEEDS: dict[str, Feed] = {}


def register_feed(feed: Feed) -> None:
    """Show ``feed`` on every graph's websockets (again with the same event type: replaced)."""
    _FEEDS[feed.event] = feed


def feed_of_event(event_type: str) -> Feed | None:
    """The feed whose channel-layer events have this type (None: no feed's)."""
    return _FEEDS.get(event_type)


class Delivered:
    """What one client was sent of every feed: an item goes out only when it is past the last
    position sent of the same thing (items arrive twice, published and polled, or late)."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, Hashable], tuple[Any, ...]] = {}

    def message(self, feed: Feed, item: Item) -> dict[str, Any] | None:
        """The message that shows ``item``, or None when the client has it or a later one."""
        identity, position = feed.position(item)
        key = (feed.event, identity)
        last = self._last.get(key)
        if last is not None and position <= last:
            return None
        self._last[key] = position
        return feed.message(item)


class Follower(Protocol):
    """A client that polled items are handed to (the graph's websocket consumer)."""

    async def deliver(self, feed: Feed, item: Item) -> None: ...


def follow(graph_id: str, follower: Follower, since: datetime) -> None:
    """Hand ``follower`` the changes of every polled feed of the graph made from ``since``."""
    for feed in _FEEDS.values():
        if feed.changed_since is not None and feed.polled():
            FeedPoller.join(feed, graph_id, follower, since)


async def unfollow(graph_id: str, follower: Follower) -> None:
    """Stop handing ``follower`` the graph's polled changes."""
    for feed in list(_FEEDS.values()):
        await FeedPoller.leave(feed, graph_id, follower)


class FeedPoller:
    """One task per feed, graph and process that reads the graph's changes every
    ``poll_seconds`` and hands them to the graph's followers here (one query for all of
    them, not one per client)."""

    running: dict[tuple[str, str], FeedPoller] = {}

    def __init__(self, feed: Feed, graph_id: str, since: datetime) -> None:
        self.feed = feed
        self.graph_id = graph_id
        self.since = since
        self.followers: set[Follower] = set()
        self.task = asyncio.create_task(self.poll())

    @classmethod
    def join(cls, feed: Feed, graph_id: str, follower: Follower, since: datetime) -> None:
        key = (feed.event, graph_id)
        poller = cls.running.get(key)
        if (
            poller is None
            or poller.task.done()
            or poller.task.get_loop() is not asyncio.get_running_loop()
        ):
            poller = cls.running[key] = cls(feed, graph_id, since)
        poller.since = min(poller.since, since)
        poller.followers.add(follower)

    @classmethod
    async def leave(cls, feed: Feed, graph_id: str, follower: Follower) -> None:
        key = (feed.event, graph_id)
        poller = cls.running.get(key)
        if poller is None:
            return
        poller.followers.discard(follower)
        if not poller.followers:
            del cls.running[key]
            poller.task.cancel()
            try:
                await poller.task
            except asyncio.CancelledError:
                # the poller's own end; but when this leave is itself being cancelled (its
                # consumer torn down), that cancellation goes on, never swallowed here
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise

    async def poll(self) -> None:
        feed = self.feed
        changed_since = feed.changed_since
        assert changed_since is not None, f"the {feed.name} feed is never polled"
        while True:
            await asyncio.sleep(feed.poll_seconds())
            try:
                changed = await database_sync_to_async(changed_since)(self.graph_id, self.since)
            except Exception:  # a database hiccup must not end the clients' live updates
                log.exception(
                    "polling the %s of graph %s failed; trying again", feed.name, self.graph_id
                )
                continue
            for updated, item in changed:
                self.since = max(self.since, updated)
                for follower in list(self.followers):
                    await follower.deliver(feed, item)
