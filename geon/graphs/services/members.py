"""A graph's members and their roles (DESIGN.md §6, Access): given, changed and removed by a
user whose role is ``owner``; the graph's owner needs no membership. Every change reaches the
graph's open websockets (:func:`~geon.graphs.services.access.announce_access_changed`)."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User as Account
from django.db import transaction

from geon.accounts.models import Role
from geon.core.errors import DocumentError, quote
from geon.graphs.models import Graph, Membership
from geon.graphs.services.access import (
    GraphNotFound,
    User,
    announce_access_changed,
    check_can_manage,
)

USERNAME_MAX = 150


class MemberNotFound(GraphNotFound):
    """The user is not a member of the graph."""


def check_member(
    user: User, graph_id: uuid.UUID | str, username: Any, role: Any
) -> tuple[Graph, Account | None, str]:
    """The graph, the account named ``username`` (None when there is none) and the role, if
    ``user`` may manage the graph's members (role ``owner``), the role is known and
    ``username`` is not the graph's owner (who needs no membership and cannot be demoted).

    Whether ``username`` exists is not told: the caller answers both cases alike.
    """
    graph = check_can_manage(user, graph_id)
    if role not in Role.values:
        expected = ", ".join(f'"{r}"' for r in Role.values)
        raise DocumentError(f'role "{role}" is not known; expected one of {expected}')
    if not isinstance(username, str) or not 1 <= len(username) <= USERNAME_MAX:
        raise DocumentError(
            f'username "{username}" is not valid; expected 1 to {USERNAME_MAX} characters'
        )
    if username == graph.owner.get_username():
        raise DocumentError(
            f'user "{username}" owns the graph; the owner needs no membership (the owner can '
            "hand the graph over with POST /api/v1/graphs/<id>/owner)"
        )
    return graph, Account.objects.filter(username=username).first(), str(role)


@transaction.atomic
def do_set_member(graph: Graph, member: Account | None, role: str) -> None:
    """Give ``member`` ``role`` on ``graph`` (inputs already checked; None: nobody has the
    name, and nothing is stored). Its open websockets hear of the change."""
    if member is None:
        return
    Membership.objects.update_or_create(graph=graph, user=member, defaults={"role": role})
    announce_access_changed(graph.pk)


@transaction.atomic
def do_remove_member(user: User, graph_id: uuid.UUID | str, username: str) -> None:
    """Remove a member (role ``owner`` needed); a name that is not a member's (known or not)
    is a 404. The member's open websockets are closed."""
    graph = check_can_manage(user, graph_id)
    deleted, _ = Membership.objects.filter(graph=graph, user__username=username).delete()
    if not deleted:
        raise MemberNotFound(f'user "{username}" is not a member of graph {quote(graph.title)}')
    announce_access_changed(graph.pk)
