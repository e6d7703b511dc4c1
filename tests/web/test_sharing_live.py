"""Sharing on open websockets (issue 17): roles changed through the sharing endpoints reach
the editor at once; a share link's visitor is read-only, sees no names, and is closed when the
link is revoked."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.test import Client

from geon.asgi import application
from geon.graphs.models import Membership, ShareLink
from geon.graphs.protocol import SERVER_MESSAGES, message_errors

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ORIGIN = (b"origin", b"http://localhost")


@pytest.fixture(autouse=True)
def fresh_channel_layer() -> Any:
    """A channel layer of each test's own (the Redis layer's lock is bound to one loop)."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


class Socket:
    def __init__(self, ws: WebsocketCommunicator) -> None:
        self.ws = ws

    async def receive(self) -> dict[str, Any]:
        output = await self.ws.receive_output(timeout=10)
        assert output["type"] == "websocket.send", output
        message: dict[str, Any] = json.loads(output["text"])
        assert message_errors(message, SERVER_MESSAGES) == []
        return message

    async def told(self) -> dict[str, Any]:
        while (message := await self.receive())["type"] == "presence":
            pass
        return message


@pytest_asyncio.fixture
async def sockets() -> AsyncIterator[list[Socket]]:
    opened: list[Socket] = []
    yield opened
    for socket in opened:
        await socket.ws.disconnect()


async def open_socket(
    opened: list[Socket], path: str, cookie: bytes | None = None
) -> tuple[Socket, dict[str, Any]]:
    headers = [ORIGIN] + ([(b"cookie", cookie)] if cookie else [])
    ws = WebsocketCommunicator(application, path, headers=headers)
    assert await ws.connect() == (True, None)
    socket = Socket(ws)
    opened.append(socket)
    return socket, await socket.receive()


def cookie_of(client: Client, user: Any) -> bytes:
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def test_a_role_changed_by_invitation_reaches_the_open_editor(
    sockets: list[Socket], graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="reviewer"
    )
    owner, bob = Client(), Client()
    bob_cookie = await database_sync_to_async(cookie_of)(bob, other_user)
    await database_sync_to_async(owner.force_login)(user)
    socket, first = await open_socket(sockets, f"/ws/graphs/{graph.pk}/", bob_cookie)
    assert (first["type"], first["role"]) == ("snapshot", "reviewer")

    def invite(role: str) -> int:
        body = json.dumps({"who": "bob", "role": role})
        url = f"/api/v1/graphs/{graph.pk}/invitations"
        return owner.post(url, body, content_type="application/json").status_code

    assert await database_sync_to_async(invite)("viewer") == 202
    assert await socket.told() == {"type": "access", "role": "viewer"}
    assert await database_sync_to_async(invite)("editor") == 202
    assert await socket.told() == {"type": "access", "role": "editor"}


async def test_a_link_visitor_is_read_only_sees_no_names_and_is_closed_on_revoke(
    sockets: list[Socket], graph: Any, user: Any
) -> None:
    link = await database_sync_to_async(ShareLink.objects.create)(graph=graph, created_by=user)
    owner = Client()
    ann_cookie = await database_sync_to_async(cookie_of)(owner, user)
    await open_socket(sockets, f"/ws/graphs/{graph.pk}/", ann_cookie)
    # a wrong key is refused like no key at all
    ws = WebsocketCommunicator(application, f"/ws/graphs/{graph.pk}/?link=nope", headers=[ORIGIN])
    assert await ws.connect() == (True, None)
    assert (await ws.receive_output(timeout=10))["code"] == 4404
    await ws.disconnect()

    visitor, first = await open_socket(sockets, f"/ws/graphs/{graph.pk}/?link={link.key}")
    assert (first["type"], first["role"]) == ("snapshot", "viewer")
    assert [p["name"] for p in first["present"]] == ["someone", "someone"]
    assert {p["user"] for p in first["present"]} == {""}
    await visitor.ws.send_json_to(
        {
            "type": "edit",
            "id": "e1",
            "baseVersion": first["version"],
            "ops": [{"op": "remove_node", "id": "x"}],
        }
    )
    refused = await visitor.told()
    assert (refused["type"], refused["reason"], refused["id"]) == ("rejected", "forbidden", "e1")
    assert "view-only link" in refused["message"]

    def revoke() -> int:
        return owner.delete(f"/api/v1/graphs/{graph.pk}/links/{link.pk}").status_code

    assert await database_sync_to_async(revoke)() == 204
    removed = await visitor.told()
    assert (removed["type"], removed["code"]) == ("error", "access_removed")
    closed = await visitor.ws.receive_output(timeout=10)
    assert (closed["type"], closed["code"]) == ("websocket.close", 4404)
