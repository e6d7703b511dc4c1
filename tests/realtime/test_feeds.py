"""Live feeds' pollers end with their last follower, and never swallow a consumer's cancellation."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from geon.graphs.services.feeds import Feed, FeedPoller


class Follower:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    async def deliver(self, feed: Feed, item: dict[str, Any]) -> None:
        self.items.append(item)


FEED = Feed(
    name="things",
    event="thing.event",
    item="thing",
    position=lambda item: (item["id"], (item["n"],)),
    message=lambda item: {"type": "thing", **item},
    changed_since=lambda graph_id, since: [],
    polled=lambda: True,
    poll_seconds=lambda: 3600.0,
)


@pytest.mark.asyncio
async def test_the_last_follower_leaving_ends_the_poller() -> None:
    # given one follower of a graph's polled feed
    follower = Follower()
    FeedPoller.join(FEED, "g1", follower, datetime.now(UTC))
    poller = FeedPoller.running[(FEED.event, "g1")]
    # when it leaves
    await FeedPoller.leave(FEED, "g1", follower)
    # then the poller's task is over and forgotten
    assert poller.task.cancelled()
    assert (FEED.event, "g1") not in FeedPoller.running


@pytest.mark.asyncio
async def test_a_leave_cancelled_with_its_consumer_stays_cancelled() -> None:
    # given a consumer leaving a graph (its poller's end is being awaited)
    follower = Follower()
    FeedPoller.join(FEED, "g2", follower, datetime.now(UTC))
    leaving = asyncio.create_task(FeedPoller.leave(FEED, "g2", follower))
    await asyncio.sleep(0)  # leave() now awaits the cancelled poller
    # when the consumer itself is torn down at that moment
    leaving.cancel()
    # then the cancellation reaches it: a swallowed one would leave the consumer's task
    # running after its teardown (an event loop that closes would wait on it for ever)
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert leaving.cancelled()
