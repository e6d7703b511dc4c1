"""The Redis channel layer, with a websocket consumer's teardown that always ends.

On Python 3.11, ``asyncio.wait_for`` returns its inner result when a cancellation arrives just
as that result is ready, and the cancellation is lost (CPython gh-86296, fixed in 3.12).
redis-py writes every command through ``wait_for(writer.drain(), ...)``, and channels_redis
receives in a loop of blocking pops: a consumer cancelled at that instant (its websocket closed)
lost the cancel and popped for ever, holding a Redis connection, and an event loop that closes
waited on it for ever. The lost request is still counted by its task (``Task.cancelling()``),
so this layer checks that count around each pop and ends the receive. Nothing is lost: a
message already popped sits in channels_redis's backup queue, which the next receive of the
channel restores.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels_redis.core import RedisChannelLayer


def _raise_if_cancel_was_lost() -> None:
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class CancellableRedisChannelLayer(RedisChannelLayer):
    """channels_redis's layer whose receive ends when its task was cancelled."""

    async def _brpop_with_clean(self, index: int, channel: str, timeout: float) -> Any:
        _raise_if_cancel_was_lost()
        member = await super()._brpop_with_clean(index, channel, timeout)
        _raise_if_cancel_was_lost()
        return member
