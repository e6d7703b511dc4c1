"""Edits of a graph's document (DESIGN.md §6): each accepted edit becomes a new version, a
refused one changes nothing, and an edit on an older version is rebased or refused.

:func:`do_apply_edits` writes a batch of edits to one graph in one transaction (a group
commit, fed by :mod:`geon.graphs.services.queue`); it reads as its steps: lock the graph,
decide each request in order (:class:`_Batch`; the ops themselves, their limits and the
rebase rule are :mod:`geon.graphs.services.rebasing`), store the versions, then publish
``applied`` and schedule a snapshot once committed.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User as Account
from django.db import transaction

from geon.accounts.models import Role
from geon.core.errors import GeonError
from geon.core.graph import Change
from geon.core.history import summarize
from geon.graphs.edits import EditRefused, touched_by_changes
from geon.graphs.models import Graph, GraphVersion
from geon.graphs.services.access import User, not_found, role_refusal, roles_on
from geon.graphs.services.documents import LiveDocument, forget_live, live_document
from geon.graphs.services.plan_trials import live_plan_cost
from geon.graphs.services.publishing import publish_applied
from geon.graphs.services.rebasing import Touched, apply_ops, is_version
from geon.graphs.services.snapshots import schedule_snapshot

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Applied:
    """An edit stored as ``version``: its node ops, the document's issues (at most
    ``GEON_WS_MAX_ISSUES``, with the counts of all) and its author.

    ``repeated`` marks the answer to an edit whose id its sender had already used on the graph:
    ``version`` and ``ops`` are those stored then, nothing new was stored, and only the sender
    is answered (nobody else is told again)."""

    graph_id: uuid.UUID
    version: int
    ops: list[dict[str, Any]]
    issues: list[dict[str, Any]]
    issue_counts: dict[str, int]
    author: str
    repeated: bool = False

    def message(self, edit_id: str | None) -> dict[str, Any]:
        """The ``applied`` websocket message; ``undoable: false`` when its inverse would be more
        node ops than one edit may carry (a large generated plan)."""
        message = {
            "type": "applied",
            "id": edit_id,
            "version": self.version,
            "ops": self.ops,
            "issues": self.issues,
            "issueCounts": self.issue_counts,
            "author": self.author,
        }
        if len(self.ops) > settings.GEON_MAX_OPS_PER_EDIT:
            message["undoable"] = False
        return message


@dataclass(frozen=True)
class EditRequest:
    """One ``edit``: who sends it, the version it is based on, its ops, id and message."""

    user: User
    base_version: Any
    ops: Any
    edit_id: str | None = None
    message: str = ""
    max_ops: int | None = None
    """The bound of its ops and the node ops they expand to (``GEON_MAX_OPS_PER_EDIT`` when
    None; a generated plan has its own, ``GEON_MAX_PLAN_OPS``)."""


def do_apply_edit(
    user: User,
    graph_id: uuid.UUID | str,
    base_version: int,
    ops: Any,
    *,
    edit_id: str | None = None,
    message: str = "",
    max_ops: int | None = None,
) -> Applied:
    """Apply one edit as a new version, or refuse it and change nothing (see
    :func:`do_apply_edits`; the refusal is raised). ``max_ops``: see :class:`EditRequest`."""
    request = EditRequest(user, base_version, ops, edit_id, message, max_ops)
    [result] = do_apply_edits(graph_id, [request])
    if isinstance(result, GeonError):
        raise result
    return result


def do_apply_edits(
    graph_id: uuid.UUID | str, requests: list[EditRequest], *, defer_snapshot: bool = False
) -> list[Applied | GeonError]:
    """Apply queued edits to one graph in order, in one transaction (a group commit): each
    accepted edit is its own new version, each refused one changes nothing.

    The answer has one entry per request: its :class:`Applied`, or the refusal —
    :class:`GraphNotFound` or :class:`AccessDenied` when its sender may not edit, otherwise an
    :class:`EditRefused` carrying the current ``version``. Under the graph's row lock, an edit
    on an older version (including one written earlier in the same batch) is rebased when the
    versions since its base changed other node fields than it writes, and refused with
    ``conflict`` otherwise; a malformed op, an unknown node or a refused removal is
    ``invalid_edit``. Once committed, ``applied`` goes to every websocket client of the graph,
    in version order (the edits of one process are written and published on one thread). An
    unexpected error rolls back the whole batch and is raised.

    Edit ids make a resent edit harmless: an edit whose sender already used its id on the graph
    (stored, or earlier in the same batch) is not applied again; its answer is the
    :class:`Applied` of that version, marked ``repeated`` (for the sender only, published to
    nobody). A sender with no role on the graph any more gets :class:`GraphNotFound` instead.

    A batch that passes a multiple of ``GEON_SNAPSHOT_EVERY`` also stores the whole document
    (:func:`~geon.graphs.services.snapshots.schedule_snapshot`): after the commit, or with
    ``defer_snapshot`` when the caller stores it later.
    """
    batch: _Batch | None = None
    try:
        with transaction.atomic():
            graph = _locked_graph(graph_id)
            if graph is None:
                return [not_found(graph_id) for _ in requests]
            batch = _Batch(graph, requests)
            results = [batch.decide(request) for request in requests]
            batch.store(results, defer_snapshot=defer_snapshot)
    except BaseException:
        if batch is not None and batch.mutated:  # the live document is ahead of the database
            forget_live(batch.graph.pk)
        raise
    return results


def _locked_graph(graph_id: uuid.UUID | str) -> Graph | None:
    """The graph with its current version (not its document), under its row lock."""
    try:
        key = uuid.UUID(str(graph_id))
    except ValueError:
        return None
    rows = Graph.objects.select_related("current_version").defer(
        "current_version__snapshot", "current_version__ops"
    )
    graph = rows.select_for_update(of=("self",)).filter(pk=key).first()
    return graph if graph is not None and graph.current_version is not None else None


class _Batch:
    """One group commit under way: the graph under its row lock, its live document moving
    forward a version per accepted edit, and the versions to store."""

    def __init__(self, graph: Graph, requests: list[EditRequest]) -> None:
        current = graph.current_version
        assert current is not None
        self.graph = graph
        self.requests = requests
        self.first = self.number = current.number
        self.live = live_document(graph)
        self.roles = roles_on([r.user for r in requests], graph)
        #: edits whose id their sender used before: (user pk, edit id) -> the answer
        self.done = _stored_edits(graph, requests, self.live)
        #: the fields each version after the oldest base touched: the stored ones read once
        #: (when an edit is based on one before this batch), this batch's added as written
        self.touched: Touched = {}
        self.stored_read = False
        self.mutated = False
        self.versions: list[GraphVersion] = []

    def decide(self, request: EditRequest) -> Applied | GeonError:
        """Apply ``request`` to the live document, or the refusal that leaves it unchanged."""
        user = request.user
        role = self.roles.get(user.pk) if user.is_authenticated else None
        key = _edit_key(request)
        if role is not None and key in self.done:  # sent again: answered, not applied
            return self.done[key]
        refused_role = role_refusal(self.graph, role, Role.EDITOR)
        if refused_role is not None:
            return refused_role
        self._read_stored_touched(request.base_version)
        try:
            node_ops, changes = apply_ops(
                self.live,
                self.number,
                request.ops,
                request.base_version,
                self.touched,
                request.max_ops,
            )
        except EditRefused as refused:
            return refused
        self.mutated = True
        return self._new_version(request, key, node_ops, changes)

    def _read_stored_touched(self, base: Any) -> None:
        """Read the fields the stored versions changed since the oldest base any request of
        the batch names, once, when ``base`` is older than the batch (a rebase needs them)."""
        if self.stored_read or not is_version(base) or base >= self.first:
            return
        bases = (r.base_version for r in self.requests if is_version(r.base_version))
        oldest = min(bases, default=base)
        self.stored_read = True
        stored = GraphVersion.objects.filter(graph=self.graph, number__gt=oldest)
        self.touched |= dict(stored.values_list("number", "touched"))

    def _new_version(
        self,
        request: EditRequest,
        key: tuple[Any, str] | None,
        node_ops: list[dict[str, Any]],
        changes: list[Change],
    ) -> Applied:
        """Move the live document to the next version with ``changes``; its answer."""
        self.live.checker.update(changes)
        self.number += 1
        self.live.version = self.number
        user = request.user
        summary, layout_only = summarize(changes, self.live.document.get)
        version = GraphVersion(
            graph=self.graph,
            number=self.number,
            ops=node_ops,
            author=user if isinstance(user, Account) else None,
            message=request.message,
            summary=summary,
            layout_only=layout_only,
            touched=touched_by_changes(changes),
            edit_id=key[1] if key is not None else None,
        )
        self.versions.append(version)
        self.touched[self.number] = version.touched
        shown, counts = self.live.issue_report()
        applied = Applied(self.graph.pk, self.number, node_ops, shown, counts, user.get_username())
        if key is not None:
            self.done[key] = replace(applied, repeated=True)
        return applied

    def store(self, results: list[Applied | GeonError], *, defer_snapshot: bool) -> None:
        """Store the new versions and make the last one current; once committed, publish the
        ``applied`` of each (the repeated ones to nobody) and store a snapshot when due."""
        if not self.versions:
            return
        GraphVersion.objects.bulk_create(self.versions[:-1])
        self.versions[-1].save(force_insert=True)
        graph = self.graph
        graph.current_version = self.versions[-1]
        graph.save(update_fields=["current_version", "updated"])
        messages = [
            result.message(request.edit_id)
            for result, request in zip(results, self.requests, strict=True)
            if isinstance(result, Applied) and not result.repeated
        ]
        pk, live = graph.pk, self.live
        moved = self.first if all(version.layout_only for version in self.versions) else None
        transaction.on_commit(
            lambda: publish_applied(pk, _with_plan_cost(pk, live, messages, moved_since=moved))
        )
        schedule_snapshot(pk, self.first, self.number, deferred=defer_snapshot)


def _with_plan_cost(
    graph_id: uuid.UUID,
    live: LiveDocument,
    messages: list[dict[str, Any]],
    *,
    moved_since: int | None,
) -> list[dict[str, Any]]:
    """``messages`` with the last one carrying ``planCost``, the collectives of the document's
    current plan (:func:`~geon.graphs.services.plan_trials.live_plan_cost`; ``moved_since``:
    the batch only moved nodes since that version), when there is one and the live document is
    at that message's version before and after it is costed (another writer may have moved it
    on meanwhile: its own ``applied`` then carries the cost). A failure to cost it is logged and
    costs the message nothing: the editor then asks the plan's REST cost."""
    version = messages[-1]["version"] if messages else None
    if version is None or live.version != version:
        return messages
    try:
        cost = live_plan_cost(graph_id, live, moved_since=moved_since)
    except Exception:
        log.exception("the plan cost of graph %s at version %s failed", graph_id, version)
        return messages
    if cost is None or live.version != version:
        return messages
    return [*messages[:-1], {**messages[-1], "planCost": cost}]


def _edit_key(request: EditRequest) -> tuple[Any, str] | None:
    """What makes an edit the same edit: its sender and its id (None: an anonymous sender or
    no id, never the same as another)."""
    if request.edit_id is None or not isinstance(request.user, Account):
        return None
    return request.user.pk, request.edit_id


def _stored_edits(
    graph: Graph, requests: list[EditRequest], live: LiveDocument
) -> dict[tuple[Any, str], Applied]:
    """The answers to the requests whose sender already used their edit id on ``graph`` (one
    query for the batch): the version that edit made with its stored ops, and the document's
    issues now (a version's own issues are not stored)."""
    keys = {key for key in map(_edit_key, requests) if key is not None}
    if not keys:
        return {}
    rows = GraphVersion.objects.filter(
        graph=graph,
        author_id__in={pk for pk, _ in keys},
        edit_id__in={edit_id for _, edit_id in keys},
    ).values_list("author_id", "edit_id", "number", "ops", "author__username")
    shown, counts = live.issue_report()
    found: dict[tuple[Any, str], Applied] = {}
    for pk, edit_id, number, ops, name in rows:
        if edit_id is not None and (pk, edit_id) in keys:
            found[pk, edit_id] = Applied(
                graph.pk, number, ops or [], shown, counts, name, repeated=True
            )
    return found
