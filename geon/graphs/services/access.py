"""Who may do what on a graph (DESIGN.md §6, Access): the roles ``viewer`` < ``reviewer`` <
``editor`` < ``owner``, the ``check_can_*`` gates of REST and websocket alike, and the
announcement that makes open websockets check their role again.

A user with no role on a graph gets :class:`GraphNotFound`, as for a graph that does not exist
(anonymous users see nothing private); a role too small for the action, :class:`AccessDenied`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as Account
from django.db import transaction
from django.db.models import Q, QuerySet

from geon.accounts.models import Role, TeamMembership
from geon.core.errors import GeonError, quote
from geon.graphs.models import Graph, Membership
from geon.graphs.services.publishing import publish

User = Account | AnonymousUser


class GraphNotFound(GeonError):
    """The graph does not exist, or the user may not see it (the two look the same)."""


class AccessDenied(GeonError):
    """The user may see the graph but their role does not allow this (403)."""


def visible_graphs(user: User) -> QuerySet[Graph]:
    """The graphs a user has a role on: owned, shared with them, or of a team of theirs."""
    if not user.is_authenticated:
        return Graph.objects.none()
    access = (
        Q(owner_id=user.pk)
        | Q(memberships__user_id=user.pk)
        | Q(team__memberships__user_id=user.pk)
    )
    ids = Graph.objects.filter(access).values("pk")
    return Graph.objects.filter(pk__in=ids).select_related("current_version")


def role_on(user: User, graph: Graph) -> str | None:
    """The user's role on ``graph`` (the highest that applies), or None when they have none."""
    return roles_on([user], graph).get(user.pk)


def roles_on(users: Iterable[User], graph: Graph) -> dict[Any, str | None]:
    """The role of each signed-in user on ``graph`` by primary key (None: no role), read in
    at most two queries for all of them (a batch of edits has many senders)."""
    found: dict[Any, list[str]] = {u.pk: [] for u in users if u.is_authenticated}
    if graph.owner_id in found:
        found[graph.owner_id].append(Role.OWNER.value)
    others = [pk for pk in found if pk != graph.owner_id]
    if others:
        rows = Membership.objects.filter(graph=graph, user_id__in=others)
        for pk, role in rows.values_list("user_id", "role"):
            found[pk].append(role)
        if graph.team_id is not None:
            team = TeamMembership.objects.filter(team_id=graph.team_id, user_id__in=others)
            for pk, role in team.values_list("user_id", "role"):
                found[pk].append(role)
    return {pk: max(roles, key=Role.rank) if roles else None for pk, roles in found.items()}


def not_found(graph_id: Any) -> GraphNotFound:
    """The refusal of a graph that does not exist or that the user has no role on."""
    return GraphNotFound(f'graph "{graph_id}" does not exist or you do not have access to it')


def check_can(user: User, graph_id: uuid.UUID | str, needed: str, *, lock: bool = False) -> Graph:
    """The graph, if ``user``'s role on it is at least ``needed``.

    Raises :class:`GraphNotFound` when the user has no role at all (or the graph does not
    exist), :class:`AccessDenied` when their role is too small. ``lock`` takes the graph's row
    lock (inside a transaction) so that writes to one graph go one at a time.
    """
    try:
        key = uuid.UUID(str(graph_id))
    except ValueError:
        raise not_found(graph_id) from None
    # the document is read on demand: a live document usually has it already
    rows = Graph.objects.select_related("current_version").defer(
        "current_version__snapshot", "current_version__ops"
    )
    if lock:
        rows = rows.select_for_update(of=("self",))
    graph = rows.filter(pk=key).first()
    if graph is None or graph.current_version is None:
        raise not_found(graph_id)
    check_role(user, graph, needed)
    return graph


def check_role(user: User, graph: Graph, needed: str) -> None:
    """Refuse ``user`` unless their role on ``graph`` is at least ``needed``
    (:class:`GraphNotFound` with no role at all, :class:`AccessDenied` with too small a one)."""
    refused = role_refusal(graph, role_on(user, graph), needed)
    if refused is not None:
        raise refused


def role_refusal(graph: Graph, role: str | None, needed: str) -> GeonError | None:
    """The error :func:`check_role` raises for ``role`` (None: it is enough)."""
    if role is None:
        return not_found(graph.pk)
    if Role.rank(role) < Role.rank(needed):
        allowed = [r for r in Role.values if Role.rank(r) >= Role.rank(needed)]
        return AccessDenied(
            f'your role on graph "{graph.title}" is "{role}"; this needs '
            + " or ".join(f'"{r}"' for r in allowed)
        )
    return None


def check_can_view(user: User, graph_id: uuid.UUID | str) -> Graph:
    """The graph, if ``user`` may see it (any role); raises :class:`GraphNotFound` otherwise."""
    return check_can(user, graph_id, Role.VIEWER)


def check_can_review(user: User, graph_id: uuid.UUID | str) -> Graph:
    """The graph, if ``user`` is at least a reviewer of it (comments, approvals)."""
    return check_can(user, graph_id, Role.REVIEWER)


def check_can_edit(user: User, graph_id: uuid.UUID | str) -> Graph:
    """The graph, if ``user`` is at least an editor of it (edits, runs, plans)."""
    return check_can(user, graph_id, Role.EDITOR)


def check_can_manage(user: User, graph_id: uuid.UUID | str) -> Graph:
    """The graph, if ``user``'s role on it is ``owner`` (its owner, or a member with that role:
    they manage the members other than the owner)."""
    return check_can(user, graph_id, Role.OWNER)


def check_access(user: User, graph_id: uuid.UUID | str) -> tuple[Graph, str]:
    """The graph and ``user``'s role on it; :class:`GraphNotFound` when they have none (what
    a websocket checks on connect and again when the graph's access changes)."""
    graph = check_can_view(user, graph_id)
    role = role_on(user, graph)
    if role is None:  # taken away between the two reads
        raise not_found(graph_id)
    return graph, role


def check_owner(user: User, graph: Graph, action: str) -> None:
    """Refuse (:class:`AccessDenied`) anyone but the graph's owner (``Graph.owner``): owner
    *members* manage members, but only the owner deletes the graph or hands it over."""
    if graph.owner_id != user.pk:
        raise AccessDenied(
            f'only the owner of graph {quote(graph.title)} ("{graph.owner.get_username()}") may '
            f'{action}; your role is "{role_on(user, graph)}"'
        )


def announce_access_changed(graph_id: uuid.UUID) -> None:
    """Once the current transaction commits, have every open websocket of the graph (on every
    process: through the channel layer group) check its user's role again: a client whose
    role is gone is closed (4404), one whose role changed is told (``access``)."""
    transaction.on_commit(lambda: publish(graph_id, "graph.access", {"type": "access"}))
