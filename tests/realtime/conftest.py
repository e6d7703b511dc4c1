"""Fixtures of the websocket tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator

from geon.asgi import application
from tests.realtime.peers import ORIGIN, Peer


@pytest.fixture(autouse=True)
def fresh_channel_layer() -> Iterator[None]:
    """A channel layer of each test's own.

    pytest-asyncio runs every test in an event loop of its own, and the Redis layer keeps its
    receive lock bound to the loop that first used it: a receive a finished test left behind
    would make the next test's consumers fail on a lock "bound to a different event loop".
    """
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest_asyncio.fixture
async def connect(
    session_cookie: Callable[[Any], bytes],
) -> AsyncIterator[Callable[..., Any]]:
    peers: list[Peer] = []

    async def open_peer(user: Any, graph: Any, presence: bool = False) -> Peer:
        cookie = await database_sync_to_async(session_cookie)(user)
        ws = WebsocketCommunicator(
            application, f"/ws/graphs/{graph.pk}/", headers=[ORIGIN, (b"cookie", cookie)]
        )
        connected, code = await ws.connect()
        assert (connected, code) == (True, None)
        peer = Peer(ws)
        peer.snapshot = await peer.receive()
        assert peer.snapshot["type"] == "snapshot"
        peers.append(peer)
        if not presence:
            for other in peers[:-1]:  # the others' join events
                assert (await other.receive())["event"] == "join"
        return peer

    yield open_peer
    for peer in peers:
        await peer.ws.disconnect()
