"""A websocket client of the tests: signed in, and checking every message it receives against
the protocol's schemas."""

from __future__ import annotations

from typing import Any

from channels.testing import WebsocketCommunicator

from geon.graphs.protocol import SERVER_MESSAGES, message_errors

ORIGIN = (b"origin", b"http://localhost")


class Peer:
    """A signed-in websocket client that checks every message against the schemas."""

    def __init__(self, ws: WebsocketCommunicator) -> None:
        self.ws = ws
        self.snapshot: dict[str, Any] = {}

    async def receive(self, timeout: float = 10) -> dict[str, Any]:
        message: dict[str, Any] = await self.ws.receive_json_from(timeout=timeout)
        assert message_errors(message, SERVER_MESSAGES) == []
        return message

    async def send(self, message: Any) -> None:
        await self.ws.send_json_to(message)

    async def edit(self, edit_id: str, base: int, ops: list[dict[str, Any]]) -> dict[str, Any]:
        await self.send({"type": "edit", "id": edit_id, "baseVersion": base, "ops": ops})
        return await self.receive()

    async def nothing(self) -> bool:
        return bool(await self.ws.receive_nothing(timeout=0.3))
