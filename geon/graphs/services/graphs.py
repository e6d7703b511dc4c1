"""Graphs as a whole (DESIGN.md §6, REST): create, rename or replace the document as a new
version (optimistic concurrency: a stale base version is a 409), read one version, delete, and
hand over to another owner.

Other apps keep things of a graph outside the database (runs: their files); they register a
:func:`on_drop` hook that removes them once a deletion commits, so that this app never imports
theirs.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User as Account
from django.db import transaction

from geon.accounts.models import Role
from geon.core.errors import DocumentError, quote
from geon.core.graph import Change
from geon.core.graph import Graph as Document
from geon.core.history import summarize
from geon.graphs.edits import EditRefused, diff
from geon.graphs.models import Graph, GraphVersion, Membership
from geon.graphs.services.access import (
    GraphNotFound,
    User,
    announce_access_changed,
    check_can,
    check_owner,
)
from geon.graphs.services.documents import forget_live, live_document, parse_document, snapshot
from geon.graphs.services.members import MemberNotFound
from geon.graphs.services.publishing import publish

TITLE_MAX = 200
#: The longest description a graph may have, in characters.
DESCRIPTION_MAX = 20_000

#: A hook called with a graph's id inside the transaction that deletes it, while its rows are
#: still there: it reads what it must remove and removes it with ``transaction.on_commit``.
DropHook = Callable[[uuid.UUID], None]

_DROP_HOOKS: list[DropHook] = []


class VersionNotFound(GraphNotFound):
    """The graph has no such version."""


def on_drop(hook: DropHook) -> DropHook:
    """Call ``hook`` whenever a graph is deleted (:func:`do_drop_graph`); registering the same
    hook again changes nothing (an app's ``ready`` may run more than once)."""
    if hook not in _DROP_HOOKS:
        _DROP_HOOKS.append(hook)
    return hook


def check_title(title: Any) -> str:
    """A title is a non-empty string of at most 200 characters (blanks around it dropped)."""
    if not isinstance(title, str) or not title.strip() or len(title.strip()) > TITLE_MAX:
        raise DocumentError(
            f'title "{title}" is not valid; expected a non-empty string of at most '
            f"{TITLE_MAX} characters"
        )
    return title.strip()


def check_description(description: Any) -> str:
    """A description is a string of at most :data:`DESCRIPTION_MAX` characters (Markdown)."""
    if not isinstance(description, str) or len(description) > DESCRIPTION_MAX:
        shown = description[:40] + "…" if isinstance(description, str) else description
        raise DocumentError(
            f'description "{shown}" is not valid; expected a string of at most '
            f"{DESCRIPTION_MAX} characters"
        )
    return description.strip()


@transaction.atomic
def do_create_graph(
    *,
    owner: Account,
    title: str,
    document: dict[str, Any],
    message: str = "",
    example: str = "",
    description: str = "",
) -> Graph:
    """Store a new graph with ``document`` as its version 1 (inputs already checked)."""
    graph = Graph.objects.create(
        owner=owner, title=title, description=check_description(description), example=example
    )
    version = GraphVersion.objects.create(
        graph=graph, number=1, snapshot=document, author=owner, message=message
    )
    graph.current_version = version
    graph.save(update_fields=["current_version", "updated"])
    return graph


def version_of(graph: Graph, number: int) -> GraphVersion:
    """One version of a graph that the caller may see; :class:`GraphNotFound` when missing."""
    found = GraphVersion.objects.filter(graph=graph, number=number).first()
    if found is None:
        current = graph.current_version.number if graph.current_version else 0
        raise VersionNotFound(
            f'version "{number}" of graph {quote(graph.title)} does not exist; '
            f"expected 1 to {current}"
        )
    return found


def check_base_version(graph: Graph, base_version: int) -> GraphVersion:
    """The current version, if the write is based on it; :class:`EditRefused` (409) if not."""
    current = graph.current_version
    assert current is not None
    if base_version != current.number:
        raise EditRefused(
            "stale_version",
            f'base version "{base_version}" is not the current version {current.number}; '
            "reload it and apply your change again",
            version=current.number,
        )
    return current


def do_update_graph(
    user: User,
    graph_id: uuid.UUID | str,
    *,
    base_version: int,
    title: str | None = None,
    document: dict[str, Any] | None = None,
    message: str = "",
    description: str | None = None,
    strict_broadcasting: bool | None = None,
) -> Graph:
    """Change the title, the description, the "strict broadcasting" setting and/or replace the
    whole document (as a new version), if ``user`` may edit and ``base_version`` is current.
    Live clients get a fresh ``snapshot`` when the document or its issues change."""
    with transaction.atomic():
        graph = check_can(user, graph_id, Role.EDITOR, lock=True)
        current = check_base_version(graph, base_version)
        if title is not None:
            graph.title = check_title(title)
        if description is not None:
            graph.description = check_description(description)
        restrict = strict_broadcasting is not None and (
            strict_broadcasting != graph.strict_broadcasting
        )
        if restrict:
            if not isinstance(strict_broadcasting, bool):
                raise DocumentError(
                    f'strictBroadcasting "{strict_broadcasting}" is not valid; expected true or '
                    "false"
                )
            graph.strict_broadcasting = strict_broadcasting
            forget_live(graph.pk)  # its issues are rebuilt with the setting
        if document is not None:
            new = parse_document(document)
            old = live_document(graph).document
            ids = [n.id for n in old.nodes] + [n.id for n in new.nodes if n.id not in old]
            changes = [Change(i, old.get(i), new.get(i)) for i in ids if old.get(i) != new.get(i)]
            summary, layout_only = summarize(changes, new.get)
            version = GraphVersion.objects.create(
                graph=graph,
                number=current.number + 1,
                snapshot=document,
                author=user if isinstance(user, Account) else None,
                message=message,
                summary=summary,
                layout_only=layout_only,
                touched=touched_of_diff(old, new),
            )
            graph.current_version = version
            forget_live(graph.pk)
        graph.save()
        if document is not None or restrict:
            pk = graph.pk
            transaction.on_commit(lambda: _publish_snapshot(pk))
    return graph


def touched_of_diff(old: Document, new: Document) -> dict[str, list[str]]:
    """The node fields a replacement of ``old`` by ``new`` changed ("*": added or removed),
    as a version records them for rebasing edits."""
    found = diff(old, new)
    touched = {nid: ["*"] for nid in found["added"] + found["removed"]}
    touched.update({c["id"]: c["fields"] for c in found["changed"]})
    return touched


def _publish_snapshot(graph_id: uuid.UUID) -> None:
    graph = Graph.objects.select_related("current_version").get(pk=graph_id)
    publish(graph_id, "graph.replaced", snapshot(graph))


def do_delete_graph(user: User, graph_id: uuid.UUID | str) -> None:
    """Delete a graph with its versions, plans, runs and their stored files (its owner only:
    an owner *member* gets :class:`AccessDenied`). Its open websockets are closed."""
    with transaction.atomic():
        graph = check_can(user, graph_id, Role.VIEWER, lock=True)
        check_owner(user, graph, "delete it")
        do_drop_graph(graph)


def do_drop_graph(graph: Graph) -> None:
    """Delete a graph with its versions, plans, runs and their stored files, whoever asks (the
    caller checked: :func:`do_delete_graph`, or the Django admin). The :func:`on_drop` hooks
    remove what other apps stored of it, and its open websockets are closed, once the deletion
    commits."""
    pk = graph.pk
    with transaction.atomic():
        for hook in _DROP_HOOKS:
            hook(pk)
        Graph.objects.filter(pk=pk).update(current_version=None)
        graph.delete()
        announce_access_changed(pk)
    forget_live(pk)


def do_transfer_graph(user: User, graph_id: uuid.UUID | str, username: Any) -> Graph:
    """Hand the graph over to one of its members (its owner only): the member becomes the
    owner (their membership is dropped: the owner needs none) and the old owner an ``editor``
    member. Anyone else gets :class:`AccessDenied`; a username that is not a member, known or
    not, the same :class:`MemberNotFound`. ``example`` is cleared: the graph is no longer the
    old owner's copy of a gallery example. Open websockets hear of both roles."""
    with transaction.atomic():
        graph = check_can(user, graph_id, Role.VIEWER, lock=True)
        check_owner(user, graph, "hand it over")
        found = (
            Membership.objects.filter(graph=graph, user__username=username)
            .select_related("user")
            .first()
            if isinstance(username, str)
            else None
        )
        if found is None:
            raise MemberNotFound(
                f'user "{username}" is not a member of graph {quote(graph.title)}; the graph '
                "can be handed over to a member only (give them a role first)"
            )
        old_owner = graph.owner
        found.delete()
        Membership.objects.create(graph=graph, user=old_owner, role=Role.EDITOR)
        graph.owner = found.user
        graph.example = ""
        graph.save(update_fields=["owner", "example", "updated"])
        announce_access_changed(graph.pk)
    return graph
