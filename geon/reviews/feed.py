"""The reviews' live feed on a graph's websockets (docs/reviews.md, Live events), registered
with :mod:`geon.graphs.services.feeds` by :class:`geon.reviews.apps.ReviewsConfig`.

Every change of a review is written by the web process, which publishes it on the graph's
channel-layer group; nothing needs polling. A review's ``activity`` counts its changes, so a
client drops an event it has already seen a later state of.

>>> review_message({"event": "verdict", "review": {"id": 3, "activity": 7}})["type"]
'review'
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from geon.graphs.services.feeds import Feed
from geon.graphs.services.publishing import graph_group

#: What happened to a review, as its websocket message names it.
EVENTS = ("opened", "thread", "comment", "resolved", "verdict", "state", "applied", "requested")


def review_position(item: dict[str, Any]) -> tuple[Hashable, tuple[int]]:
    """A review's id, and how many changes it has had."""
    return item["review"]["id"], (item["review"]["activity"],)


def review_message(item: dict[str, Any]) -> dict[str, Any]:
    """The ``review`` websocket message of an event."""
    return {"type": "review", "event": item["event"], "review": item["review"]}


def publish_review(graph_id: Any, event: str, summary: dict[str, Any]) -> None:
    """Once the current transaction commits, tell the graph's websockets of ``event``."""
    assert event in EVENTS, event
    change = {"type": REVIEW_FEED.event, REVIEW_FEED.item: {"event": event, "review": summary}}

    def send() -> None:
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(graph_group(graph_id), change)

    transaction.on_commit(send)


REVIEW_FEED = Feed(
    name="reviews",
    event="review.event",
    item="change",
    position=review_position,
    message=review_message,
)
