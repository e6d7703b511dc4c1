"""Publishing to a graph's websocket clients: one channel-layer group per graph, on every
process (DESIGN.md §6). Services call these once their transaction commits; the consumer's
handler of each event type (``graph.applied`` -> ``graph_applied``) sends the message on.

>>> graph_group("0b7e...")
'graph.0b7e...'
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


def graph_group(graph_id: uuid.UUID | str) -> str:
    """The channel-layer group of a graph's websocket clients."""
    return f"graph.{graph_id}"


def user_group(user_id: int) -> str:
    """The channel-layer group of a signed-in user's websockets, on any graph: what concerns
    the person (a review's notification) rather than the graph."""
    return f"user.{user_id}"


def publish(graph_id: uuid.UUID, kind: str, message: dict[str, Any]) -> None:
    """Send ``message`` to every websocket client of the graph (handler ``kind``)."""
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(graph_group(graph_id), {"type": kind, "message": message})


def publish_applied(graph_id: uuid.UUID, messages: list[dict[str, Any]]) -> None:
    """Send the ``applied`` messages of one commit to every websocket client of the graph, in
    order: one channel-layer event for all of them, each message JSON-encoded once."""
    layer = get_channel_layer()
    if layer is not None and messages:
        frames = [json.dumps(message) for message in messages]
        async_to_sync(layer.group_send)(
            graph_group(graph_id), {"type": "graph.applied", "frames": frames}
        )
