"""Reads and writes of graphs: ``check_*`` validates untrusted input and access, ``do_*`` writes.

>>> graph_group("0b7e...")
'graph.0b7e...'
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as Account
from django.db import transaction
from django.db.models import Q, QuerySet

from geon.accounts.models import Role, TeamMembership
from geon.core.errors import DocumentError, GeonError
from geon.core.graph import Graph as Document
from geon.graphs.models import Graph, GraphVersion, Membership

User = Account | AnonymousUser

TITLE_MAX = 200


class GraphNotFound(GeonError):
    """The graph does not exist, or the user may not see it (the two look the same)."""


class AccessDenied(GeonError):
    """The user may see the graph but their role does not allow this (403)."""


def graph_group(graph_id: uuid.UUID | str) -> str:
    """The channel-layer group of a graph's websocket clients."""
    return f"graph.{graph_id}"


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
    if not user.is_authenticated:
        return None
    if graph.owner_id == user.pk:
        return Role.OWNER.value
    roles = list(
        Membership.objects.filter(graph=graph, user_id=user.pk).values_list("role", flat=True)
    )
    if graph.team_id is not None:
        roles += TeamMembership.objects.filter(team_id=graph.team_id, user_id=user.pk).values_list(
            "role", flat=True
        )
    return max(roles, key=Role.rank) if roles else None


def _not_found(graph_id: Any) -> GraphNotFound:
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
        raise _not_found(graph_id) from None
    rows = Graph.objects.select_related("current_version")
    if lock:
        rows = rows.select_for_update(of=("self",))
    graph = rows.filter(pk=key).first()
    if graph is None or graph.current_version is None:
        raise _not_found(graph_id)
    role = role_on(user, graph)
    if role is None:
        raise _not_found(graph_id)
    if Role.rank(role) < Role.rank(needed):
        allowed = [r for r in Role.values if Role.rank(r) >= Role.rank(needed)]
        raise AccessDenied(
            f'your role on graph "{graph.pk}" is "{role}"; this needs '
            + " or ".join(f'"{r}"' for r in allowed)
        )
    return graph


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
    """The graph, if ``user`` owns it (members, deletion)."""
    return check_can(user, graph_id, Role.OWNER)


def check_title(title: Any) -> str:
    """A title is a non-empty string of at most 200 characters (blanks around it dropped)."""
    if not isinstance(title, str) or not title.strip() or len(title.strip()) > TITLE_MAX:
        raise DocumentError(
            f'title "{title}" is not valid; expected a non-empty string of at most '
            f"{TITLE_MAX} characters"
        )
    return title.strip()


def check_document(document: Any) -> Document:
    """Load an untrusted LoomGraph document; raises :class:`DocumentError` naming the problem."""
    return Document.from_json(document)


def document_issues(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every issue the checker finds in a stored document, as JSON (DESIGN.md §5)."""
    return [issue.to_json() for issue in check_document(document).check()]


@transaction.atomic
def do_create_graph(
    *,
    owner: Account,
    title: str,
    document: dict[str, Any],
    message: str = "",
    example: str = "",
) -> Graph:
    """Store a new graph with ``document`` as its version 1 (inputs already checked)."""
    graph = Graph.objects.create(owner=owner, title=title, example=example)
    version = GraphVersion.objects.create(
        graph=graph, number=1, document=document, author=owner, message=message
    )
    graph.current_version = version
    graph.save(update_fields=["current_version", "updated"])
    return graph


def snapshot(graph: Graph, user: User) -> dict[str, Any]:
    """The ``snapshot`` websocket message: the current document, its version and issues.

    ``present`` lists the users connected to the graph. Until the collaboration issue adds
    presence tracking it holds the connecting user only.
    """
    version = graph.current_version
    assert version is not None  # check_can_view refuses graphs without a version
    return {
        "type": "snapshot",
        "document": version.document,
        "version": version.number,
        "issues": document_issues(version.document),
        "present": [{"user": user.get_username()}],
    }


@transaction.atomic
def do_load_gallery(owner: Account) -> list[tuple[Graph, bool]]:
    """Give ``owner`` a graph per gallery example they do not have yet: (graph, created) pairs.

    Idempotent: an example already loaded for this owner is left as it is (with its edits).
    """
    from geon.graphs.gallery import examples

    loaded = []
    for example in examples():
        graph = Graph.objects.filter(owner=owner, example=example.key).first()
        if graph is not None:
            loaded.append((graph, False))
            continue
        check_document(example.document)
        graph = do_create_graph(
            owner=owner,
            title=example.title,
            document=example.document,
            message=example.description or "loaded from the gallery",
            example=example.key,
        )
        loaded.append((graph, True))
    return loaded
