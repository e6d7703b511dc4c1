"""Access changes made in the Django admin reach open websockets (issue 14): a graph's owner,
team, members and deletion, and a team's members and deletion. A staff user drives the real
admin with Django's test client; the graph's clients are real websocket consumers on the
channel layer, and every message they get is checked against the protocol schemas."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from html.parser import HTMLParser
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.test import Client

from geon.accounts.models import Team, TeamMembership
from geon.asgi import application
from geon.graphs.models import Graph, Membership
from geon.graphs.protocol import SERVER_MESSAGES, message_errors

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ORIGIN = (b"origin", b"http://localhost")
REMOVED = (
    'you no longer have a role on graph "{}" (removed, or the graph was deleted); ask its '
    "owner for access"
)


@pytest.fixture(autouse=True)
def fresh_channel_layer() -> Any:
    """A channel layer of each test's own (the Redis layer's lock is bound to one loop)."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


class FormValues(HTMLParser):
    """The values an admin form page would post as it stands: inputs (checked boxes only),
    the selected option of each select, and text areas."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self.select: str | None = None
        self.textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button"):
            if a.get("type") != "checkbox" or "checked" in a:
                self.values[name] = a.get("value", "on" if a.get("type") == "checkbox" else "")
        elif tag == "select" and name:
            self.select = name
            self.values.setdefault(name, "")
        elif tag == "option" and self.select is not None and "selected" in a:
            self.values[self.select] = a.get("value", "")
        elif tag == "textarea" and name:
            self.textarea = name
            self.values[name] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self.select = None
        elif tag == "textarea":
            self.textarea = None

    def handle_data(self, data: str) -> None:
        if self.textarea is not None:
            self.values[self.textarea] += data


class Staff:
    """A superuser in the admin (Django's test client, called off the event loop)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def _submit(self, path: str, changes: dict[str, str], drop: tuple[str, ...]) -> int:
        page = self.client.get(path)
        assert page.status_code == 200, path
        form = FormValues()
        form.feed(page.content.decode())
        data = {k: v for k, v in form.values.items() if k not in drop} | changes
        answer = self.client.post(path, data)
        # the admin redirects after a save or delete, and shows the form again when refused
        assert answer.status_code == 302, answer.content.decode()[:3000]
        return answer.status_code

    async def change(self, path: str, drop: tuple[str, ...] = (), **changes: str) -> None:
        """Post the form at ``path`` with ``changes`` (``drop``: fields left out)."""
        await database_sync_to_async(self._submit)(path, changes, drop)

    async def delete(self, path: str) -> None:
        """Confirm the deletion page at ``path`` (``.../<pk>/delete/``)."""
        await database_sync_to_async(self._submit)(path, {"post": "yes"}, ())

    def _delete_selected(self, changelist: str, pks: list[Any]) -> None:
        data = {
            "action": "delete_selected",
            "post": "yes",
            "_selected_action": [str(p) for p in pks],
        }
        answer = self.client.post(changelist, data)
        assert answer.status_code == 302, answer.content.decode()[:3000]

    async def delete_selected(self, changelist: str, pks: list[Any]) -> None:
        """The changelist's "delete selected" action, confirmed."""
        await database_sync_to_async(self._delete_selected)(changelist, pks)


@pytest_asyncio.fixture
async def staff(django_user_model: Any) -> Staff:
    root = await database_sync_to_async(django_user_model.objects.create_superuser)(
        "root", password="x"
    )
    client = Client()
    await database_sync_to_async(client.force_login)(root)
    return Staff(client)


class Socket:
    """A signed-in client of the graph's websocket."""

    def __init__(self, ws: WebsocketCommunicator) -> None:
        self.ws = ws

    async def receive(self) -> dict[str, Any]:
        output = await self.ws.receive_output(timeout=10)
        assert output["type"] == "websocket.send", output
        message: dict[str, Any] = json.loads(output["text"])
        assert message_errors(message, SERVER_MESSAGES) == []
        return message

    async def told(self) -> dict[str, Any]:
        """The next message that is not another client's presence."""
        while (message := await self.receive())["type"] == "presence":
            pass
        return message

    async def removed(self, graph: Any) -> None:
        """Told that access is gone, then closed with 4404."""
        message = await self.told()
        assert (message["type"], message["code"], message["message"]) == (
            "error",
            "access_removed",
            REMOVED.format(graph.title),
        )
        assert await self.ws.receive_output(timeout=10) == {
            "type": "websocket.close",
            "code": 4404,
            "reason": "access removed",
        }

    async def nothing(self) -> bool:
        while not await self.ws.receive_nothing(timeout=0.3):
            if (await self.receive())["type"] != "presence":
                return False
        return True


@pytest_asyncio.fixture
async def connect(session_cookie: Callable[[Any], bytes]) -> AsyncIterator[Callable[..., Any]]:
    sockets: list[Socket] = []

    async def open_socket(user: Any, graph: Any) -> Socket:
        cookie = await database_sync_to_async(session_cookie)(user)
        ws = WebsocketCommunicator(
            application, f"/ws/graphs/{graph.pk}/", headers=[ORIGIN, (b"cookie", cookie)]
        )
        assert await ws.connect() == (True, None)
        socket = Socket(ws)
        assert (await socket.receive())["type"] == "snapshot"
        sockets.append(socket)
        return socket

    yield open_socket
    for socket in sockets:
        await socket.ws.disconnect()


def graph_path(graph: Any, what: str = "change") -> str:
    return f"/admin/graphs/graph/{graph.pk}/{what}/"


# --- a graph's members, owner, team and deletion (geon.graphs.admin) ----------------------------


async def test_a_members_role_changed_in_the_graphs_form_is_told_to_them(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    # when staff make bob a viewer in the graph's inline members
    await staff.change(graph_path(graph), **{"memberships-0-role": "viewer"})
    # then bob is told his new role, and ann (whose role is the same) nothing
    assert await bob.told() == {"type": "access", "role": "viewer"}
    assert await ann.nothing()


async def test_a_member_removed_from_the_graphs_form_is_closed(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    bob = await connect(other_user, graph)
    await staff.change(graph_path(graph), **{"memberships-0-DELETE": "on"})
    await bob.removed(graph)
    assert not await database_sync_to_async(Membership.objects.filter(graph=graph).exists)()


async def test_a_new_owner_set_in_the_admin_is_told_and_the_old_one_closed(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="viewer"
    )
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    await staff.change(graph_path(graph), owner=str(other_user.pk))
    assert await bob.told() == {"type": "access", "role": "owner"}
    await ann.removed(graph)


async def test_a_title_changed_in_the_admin_tells_nobody(
    staff: Staff, connect: Any, graph: Any, user: Any
) -> None:
    ann = await connect(user, graph)
    await staff.change(graph_path(graph), title="renamed")
    assert await ann.nothing()


async def test_the_membership_admin_add_change_and_delete_are_told(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    # given bob, a viewer, on the graph (added through the membership admin)
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="viewer"
    )
    bob = await connect(other_user, graph)
    membership = await database_sync_to_async(Membership.objects.get)(graph=graph)
    path = f"/admin/graphs/membership/{membership.pk}/"
    # when staff make him an editor there, then delete the membership
    await staff.change(path + "change/", role="editor")
    assert await bob.told() == {"type": "access", "role": "editor"}
    await staff.delete(path + "delete/")
    # then he is told, then closed
    await bob.removed(graph)


async def test_deleting_memberships_in_bulk_closes_each_socket(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    membership = await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="viewer"
    )
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    await staff.delete_selected("/admin/graphs/membership/", [membership.pk])
    await bob.removed(graph)
    assert await ann.nothing()


async def test_deleting_a_graph_in_the_admin_closes_its_sockets(
    staff: Staff, connect: Any, graph: Any, user: Any
) -> None:
    ann = await connect(user, graph)
    await staff.delete(graph_path(graph, "delete"))
    await ann.removed(graph)
    assert not await database_sync_to_async(Graph.objects.filter(pk=graph.pk).exists)()


async def test_deleting_graphs_in_bulk_closes_their_sockets(
    staff: Staff, connect: Any, graph: Any, user: Any
) -> None:
    ann = await connect(user, graph)
    await staff.delete_selected("/admin/graphs/graph/", [graph.pk])
    await ann.removed(graph)
    assert not await database_sync_to_async(Graph.objects.filter(pk=graph.pk).exists)()


# --- teams (their admin is registered by geon.graphs.admin) -----------------------------------


def team_graph(graph: Any, member: Any, role: str) -> Team:
    """Put ``graph`` in a new team with ``member`` in it."""
    team = Team.objects.create(name="research")
    TeamMembership.objects.create(team=team, user=member, role=role)
    Graph.objects.filter(pk=graph.pk).update(team=team)
    return team


async def test_a_team_members_new_role_is_told_on_every_graph_of_the_team(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    team = await database_sync_to_async(team_graph)(graph, other_user, "viewer")
    bob = await connect(other_user, graph)
    membership = await database_sync_to_async(TeamMembership.objects.get)(team=team)
    await staff.change(f"/admin/accounts/teammembership/{membership.pk}/change/", role="editor")
    assert await bob.told() == {"type": "access", "role": "editor"}


async def test_a_member_removed_from_the_teams_form_is_closed(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    team = await database_sync_to_async(team_graph)(graph, other_user, "viewer")
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    await staff.change(f"/admin/accounts/team/{team.pk}/change/", **{"memberships-0-DELETE": "on"})
    await bob.removed(graph)
    assert await ann.nothing()


async def test_a_team_members_deletion_and_a_teams_rename_are_told_or_not(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    team = await database_sync_to_async(team_graph)(graph, other_user, "viewer")
    bob = await connect(other_user, graph)
    # a new name decides nothing
    await staff.change(f"/admin/accounts/team/{team.pk}/change/", name="renamed")
    assert await bob.nothing()
    membership = await database_sync_to_async(TeamMembership.objects.get)(team=team)
    await staff.delete(f"/admin/accounts/teammembership/{membership.pk}/delete/")
    await bob.removed(graph)


async def test_deleting_a_team_closes_its_members_sockets_on_its_graphs(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    team = await database_sync_to_async(team_graph)(graph, other_user, "editor")
    ann = await connect(user, graph)
    bob = await connect(other_user, graph)
    await staff.delete(f"/admin/accounts/team/{team.pk}/delete/")
    await bob.removed(graph)
    assert await ann.nothing()
    assert await database_sync_to_async(lambda: Graph.objects.get(pk=graph.pk).team_id)() is None


async def test_taking_a_graph_out_of_its_team_closes_the_team_members_sockets(
    staff: Staff, connect: Any, graph: Any, user: Any, other_user: Any
) -> None:
    await database_sync_to_async(team_graph)(graph, other_user, "editor")
    bob = await connect(other_user, graph)
    await staff.change(graph_path(graph), team="")
    await bob.removed(graph)
