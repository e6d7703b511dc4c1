"""Fixtures of the websocket tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from channels.layers import channel_layers


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
