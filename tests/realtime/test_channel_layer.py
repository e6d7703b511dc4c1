"""A websocket consumer left idle keeps waiting on the channel layer: its wait outlasts the
layer's blocking pop. channels_redis waits with a BZPOPMIN of 5 s and redis-py 8 reads every
reply with a 5 s socket timeout by default, so without ``CHANNEL_LAYER_SOCKET_TIMEOUT`` the read
could give up first and tear the consumer's websocket down (django/channels_redis#422; seen in
CI as a run whose ``done`` event never reached the test's websocket). Runs on whichever layer
the settings give: in memory by default, Redis with ``REDIS_URL``."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.conf import settings

IDLE_SECONDS = 7.0
"""Longer than channels_redis's blocking pop and redis-py 8's default read timeout (5 s)."""


def test_the_redis_layer_reads_for_longer_than_its_pop_blocks() -> None:
    assert RedisChannelLayer.brpop_timeout < settings.CHANNEL_LAYER_SOCKET_TIMEOUT


@pytest.mark.asyncio
async def test_a_receive_left_idle_past_the_blocking_pop_still_gets_its_message() -> None:
    # given a channel nobody sends to for longer than the layer's pop blocks
    layer = get_channel_layer()
    assert layer is not None
    channel = await layer.new_channel()

    async def send_later() -> None:
        await asyncio.sleep(IDLE_SECONDS)
        await layer.send(channel, {"type": "late.hello"})

    sender = asyncio.create_task(send_later())
    # when the consumer waits on it, then the wait ends with the message, not an error
    message = await asyncio.wait_for(layer.receive(channel), timeout=IDLE_SECONDS + 20)
    await sender
    assert message == {"type": "late.hello"}


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_receive_cancelled_at_any_moment_ends() -> None:
    """On Python 3.11 ``asyncio.wait_for`` loses a cancellation that arrives as its result is
    ready (CPython gh-86296), and redis-py writes each command through it: channels_redis's
    receive then popped for ever after its consumer was torn down (seen in CI as a 300 s hang
    closing a test's event loop). Cancelled at many moments of its first pops, every receive
    of geon's layer ends: a lost cancel is seen at the end of the pop it fell in, so the pops
    here block 0.5 s, not channels_redis's 5 s (without the layer's check a receive that lost
    its cancel pops for ever, past the wait below)."""
    from geon.channel_layer import CancellableRedisChannelLayer

    assert settings.REDIS_URL is not None
    layer = CancellableRedisChannelLayer(
        hosts=[{"address": settings.REDIS_URL, "socket_timeout": 15}], prefix="cancel-probe"
    )
    layer.brpop_timeout = 0.5
    still_running = []
    for attempt in range(40):
        channel = await layer.new_channel()
        receive = asyncio.create_task(layer.receive(channel))
        await asyncio.sleep((attempt % 20) * 0.0007)  # across connecting, writing, reading
        receive.cancel()
        done, _ = await asyncio.wait([receive], timeout=4)
        if not done:
            still_running.append(attempt)
    await layer.flush()
    assert still_running == []
