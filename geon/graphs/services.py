"""Reads and writes of graphs: ``check_*`` validates untrusted input and access, ``do_*`` writes.

>>> graph_group("0b7e...")
'graph.0b7e...'
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as Account
from django.db import transaction
from django.db.models import Expression, JSONField, Q, QuerySet

from geon.accounts.models import Role, TeamMembership
from geon.core.constraints import IncrementalChecker
from geon.core.errors import DocumentError, GeonError
from geon.core.graph import APPLICATION, MESH, OPERATION, Change
from geon.core.graph import Graph as Document
from geon.core.issues import Issue
from geon.core.limits import MAX_MESH_AXES, MAX_MESH_DEVICES, show_int
from geon.core.sharding import device_memory, transfer_bytes
from geon.graphs.edits import (
    EditRefused,
    conflicts,
    diff,
    expand,
    touched_by_changes,
    touched_by_ops,
)
from geon.graphs.models import Graph, GraphVersion, Membership, ShardPlan

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
    # the document is read on demand: a live document usually has it already
    rows = Graph.objects.select_related("current_version").defer(
        "current_version__snapshot", "current_version__ops"
    )
    if lock:
        rows = rows.select_for_update(of=("self",))
    graph = rows.filter(pk=key).first()
    if graph is None or graph.current_version is None:
        raise _not_found(graph_id)
    check_role(user, graph, needed)
    return graph


def check_role(user: User, graph: Graph, needed: str) -> None:
    """Refuse ``user`` unless their role on ``graph`` is at least ``needed``
    (:class:`GraphNotFound` with no role at all, :class:`AccessDenied` with too small a one)."""
    refused = _role_refusal(graph, role_on(user, graph), needed)
    if refused is not None:
        raise refused


def _role_refusal(graph: Graph, role: str | None, needed: str) -> GeonError | None:
    """The error :func:`check_role` raises for ``role`` (None: it is enough)."""
    if role is None:
        return _not_found(graph.pk)
    if Role.rank(role) < Role.rank(needed):
        allowed = [r for r in Role.values if Role.rank(r) >= Role.rank(needed)]
        return AccessDenied(
            f'your role on graph "{graph.pk}" is "{role}"; this needs '
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
        raise _not_found(graph_id)
    return graph, role


def _check_owner(user: User, graph: Graph, action: str) -> None:
    """Refuse (:class:`AccessDenied`) anyone but the graph's owner (``Graph.owner``): owner
    *members* manage members, but only the owner deletes the graph or hands it over."""
    if graph.owner_id != user.pk:
        raise AccessDenied(
            f'only the owner of graph "{graph.pk}" ("{graph.owner.get_username()}") may '
            f'{action}; your role is "{role_on(user, graph)}"'
        )


def announce_access_changed(graph_id: uuid.UUID) -> None:
    """Once the current transaction commits, have every open websocket of the graph (on every
    process: through the channel layer group) check its user's role again: a client whose
    role is gone is closed (4404), one whose role changed is told (``access``)."""
    transaction.on_commit(lambda: publish(graph_id, "graph.access", {"type": "access"}))


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
        graph=graph, number=1, snapshot=document, author=owner, message=message
    )
    graph.current_version = version
    graph.save(update_fields=["current_version", "updated"])
    return graph


# --- live documents and edits ----------------------------------------------------------------


@dataclass
class LiveDocument:
    """A graph's current document with its incremental checker, at one stored version."""

    version: int
    checker: IncrementalChecker

    @property
    def document(self) -> Document:
        return self.checker.graph

    def issues(self) -> list[dict[str, Any]]:
        """Every issue of the document (the REST API's full list)."""
        return [issue.to_json() for issue in self.checker.issues]

    def issue_report(self) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """The issues a websocket message carries, and the counts of all of them
        (:func:`bounded_issues` with ``GEON_WS_MAX_ISSUES``)."""
        return bounded_issues(self.checker.issues, settings.GEON_WS_MAX_ISSUES)


def bounded_issues(
    issues: Sequence[Issue], limit: int
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """At most ``limit`` of ``issues`` as JSON, errors first and each severity in the given
    order, with the count of every issue per severity: what ``applied`` and ``snapshot``
    carry, so that a graph with very many issues does not send them all with every edit.

    >>> def issue(severity): return Issue("C", "T", "s", "m", severity=severity)
    >>> shown, counts = bounded_issues([issue("warning"), issue("error"), issue("error")], 2)
    >>> [i["severity"] for i in shown], counts
    (['error', 'error'], {'error': 2, 'warning': 1})
    """
    errors = [issue for issue in issues if issue.severity == "error"]
    counts = {"error": len(errors), "warning": len(issues) - len(errors)}
    chosen = errors[:limit]
    if len(chosen) < limit:
        warnings = (issue for issue in issues if issue.severity != "error")
        chosen.extend(itertools.islice(warnings, limit - len(chosen)))
    return [issue.to_json() for issue in chosen], counts


#: One live document per graph in this process, most recently used last. A writer holds the
#: graph's row lock while it reads or moves an entry, so the entry is the stored version or
#: gets rebuilt from it (another process may have written).
_LIVE: OrderedDict[uuid.UUID, LiveDocument] = OrderedDict()
_LIVE_LOCK = threading.RLock()
LIVE_MAX = 32


def live_document(graph: Graph) -> LiveDocument:
    """The live document of ``graph`` at its current version (a full check when rebuilt)."""
    version = graph.current_version
    assert version is not None  # check_can refuses graphs without a version
    with _LIVE_LOCK:
        live = _LIVE.get(graph.pk)
        if live is not None and live.version == version.number:
            _LIVE.move_to_end(graph.pk)
            return live
    document = GraphVersion.objects.get(pk=version.pk).document
    live = LiveDocument(version.number, IncrementalChecker(Document.from_json(document)))
    with _LIVE_LOCK:
        _LIVE[graph.pk] = live
        while len(_LIVE) > LIVE_MAX:
            _LIVE.popitem(last=False)
    return live


def forget_live(graph_id: uuid.UUID) -> None:
    """Drop a live document (after a failed write, or when the graph is replaced)."""
    with _LIVE_LOCK:
        _LIVE.pop(graph_id, None)


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
        """The ``applied`` websocket message."""
        return {
            "type": "applied",
            "id": edit_id,
            "version": self.version,
            "ops": self.ops,
            "issues": self.issues,
            "issueCounts": self.issue_counts,
            "author": self.author,
        }


def _merge_touched(touched: dict[int, dict[str, list[str]]], base: int) -> dict[str, list[str]]:
    """Every node field changed by the versions after ``base`` (``touched`` maps a version
    number to the fields it changed), merged."""
    merged: dict[str, dict[str, None]] = {}
    for number in sorted(touched):
        if number > base:
            for nid, fields in touched[number].items():
                merged.setdefault(nid, {}).update(dict.fromkeys(fields))
    return {nid: list(fields) for nid, fields in merged.items()}


@dataclass(frozen=True)
class EditRequest:
    """One ``edit``: who sends it, the version it is based on, its ops, id and message."""

    user: User
    base_version: Any
    ops: Any
    edit_id: str | None = None
    message: str = ""


def do_apply_edit(
    user: User,
    graph_id: uuid.UUID | str,
    base_version: int,
    ops: Any,
    *,
    edit_id: str | None = None,
    message: str = "",
) -> Applied:
    """Apply one edit as a new version, or refuse it and change nothing (see
    :func:`do_apply_edits`; the refusal is raised)."""
    [result] = do_apply_edits(graph_id, [EditRequest(user, base_version, ops, edit_id, message)])
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
    (:func:`do_store_snapshot`): after the commit, or with ``defer_snapshot`` when the caller
    calls it later (:func:`snapshot_due` says when one is due).
    """
    mutated: list[uuid.UUID] = []
    results: list[Applied | GeonError] = []
    try:
        with transaction.atomic():
            graph = _locked_graph(graph_id)
            if graph is None:
                return [_not_found(graph_id) for _ in requests]
            current = graph.current_version
            assert current is not None
            live = live_document(graph)
            number = current.number
            roles = roles_on([r.user for r in requests], graph)
            # edits whose id their sender used before: (user pk, edit id) -> the answer
            done = _stored_edits(graph, requests, live)
            # the fields each version after the oldest base touched: the stored ones read once
            # (when an edit is based on one before this batch), this batch's added as written
            touched: dict[int, dict[str, list[str]]] = {}
            stored_read = False
            versions: list[GraphVersion] = []
            for request in requests:
                role = roles.get(request.user.pk) if request.user.is_authenticated else None
                key = _edit_key(request)
                if role is not None and key in done:  # sent again: answered, not applied
                    results.append(done[key])
                    continue
                refused_role = _role_refusal(graph, role, Role.EDITOR)
                if refused_role is not None:
                    results.append(refused_role)
                    continue
                base = request.base_version
                if (
                    not isinstance(base, bool)
                    and isinstance(base, int)
                    and 1 <= base < current.number
                    and not stored_read
                ):
                    # one read for the whole batch: the oldest base any request here names
                    oldest = min(
                        (
                            r.base_version
                            for r in requests
                            if isinstance(r.base_version, int)
                            and not isinstance(r.base_version, bool)
                            and r.base_version >= 1
                        ),
                        default=base,
                    )
                    stored_read = True
                    touched |= dict(
                        GraphVersion.objects.filter(graph=graph, number__gt=oldest).values_list(
                            "number", "touched"
                        )
                    )
                try:
                    node_ops, changes = _apply_one(live, number, request, touched)
                except EditRefused as refused:
                    results.append(refused)
                    continue
                mutated.append(graph.pk)
                live.checker.update(changes)
                number += 1
                live.version = number
                user = request.user
                version = GraphVersion(
                    graph=graph,
                    number=number,
                    ops=node_ops,
                    author=user if isinstance(user, Account) else None,
                    message=request.message,
                    touched=touched_by_changes(changes),
                    edit_id=key[1] if key is not None else None,
                )
                versions.append(version)
                touched[number] = version.touched
                shown, counts = live.issue_report()
                applied = Applied(graph.pk, number, node_ops, shown, counts, user.get_username())
                results.append(applied)
                if key is not None:
                    done[key] = replace(applied, repeated=True)
            if versions:
                GraphVersion.objects.bulk_create(versions[:-1])
                versions[-1].save(force_insert=True)
                graph.current_version = versions[-1]
                graph.save(update_fields=["current_version", "updated"])
                messages = [
                    r.message(q.edit_id)
                    for r, q in zip(results, requests, strict=True)
                    if isinstance(r, Applied) and not r.repeated
                ]
                transaction.on_commit(lambda: publish_applied(graph.pk, messages))
                every = settings.GEON_SNAPSHOT_EVERY
                if number // every > current.number // every:
                    pk, last = graph.pk, number
                    if defer_snapshot:
                        transaction.on_commit(lambda: _SNAPSHOTS_DUE.setdefault(pk, last))
                    else:
                        transaction.on_commit(lambda: do_store_snapshot(pk), robust=True)
    except BaseException:
        if mutated:
            forget_live(mutated[0])
        raise
    return results


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


#: Graphs whose edits passed a multiple of ``GEON_SNAPSHOT_EVERY`` with the snapshot deferred
#: (:func:`do_apply_edits`): graph id -> the version that passed it.
_SNAPSHOTS_DUE: dict[uuid.UUID, int] = {}


def snapshot_due(graph_id: uuid.UUID) -> int | None:
    """How many versions ago a deferred snapshot of the graph fell due (None: none is due)."""
    since = _SNAPSHOTS_DUE.get(graph_id)
    if since is None:
        return None
    with _LIVE_LOCK:
        live = _LIVE.get(graph_id)
    return live.version - since if live is not None else 0


def do_store_snapshot(graph_id: uuid.UUID) -> None:
    """Store the whole current document on the graph's current version, beside its ops, so
    that reading a later version replays from here (:attr:`GraphVersion.document`).

    Serialising and storing a large document takes long (3.7 MB: 150 ms and more on a busy
    machine, holding the interpreter most of it), so it is not part of the edit's
    transaction. The version's document does not change, only how it is kept; a snapshot
    that is never stored (the process ended, or another one wrote since) makes reads replay
    from an earlier one, which is slower and still right.
    """
    _SNAPSHOTS_DUE.pop(graph_id, None)
    with _LIVE_LOCK:
        live = _LIVE.get(graph_id)
    if live is None or current_version_number(graph_id) != live.version:
        return
    GraphVersion.objects.filter(
        graph_id=graph_id, number=live.version, snapshot__isnull=True
    ).update(snapshot=EncodedJSON(encode_document(live.document)))


def encode_document(document: Document) -> str:
    """The document as JSON text, encoded a node at a time.

    One ``json.dumps`` of a 3.7 MB document holds the interpreter for 100 ms and more on a
    busy machine, and meanwhile the event loop sends nothing to anyone; between nodes it can.

    >>> json.loads(encode_document(Document.from_json({"nodes": []})))["nodes"]
    []
    """
    data = document.to_json()
    parts = []
    for key, value in data.items():
        if key == "nodes":
            text = "[" + ", ".join(json.dumps(node) for node in value) + "]"
        else:
            text = json.dumps(value)
        parts.append(f"{json.dumps(key)}: {text}")
    return "{" + ", ".join(parts) + "}"


class EncodedJSON(Expression):
    """JSON text stored as it is in a JSON column (a ``JSONField`` would encode it again)."""

    def __init__(self, text: str) -> None:
        super().__init__(output_field=JSONField())
        self.text = text

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[str]]:
        return "%s", (self.text,)

    def as_postgresql(self, compiler: Any, connection: Any) -> tuple[str, tuple[str]]:
        return "%s::json", (self.text,)


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


def _apply_one(
    live: LiveDocument,
    number: int,
    request: EditRequest,
    touched: dict[int, dict[str, list[str]]],
) -> tuple[list[dict[str, Any]], list[Change]]:
    """Apply one request to the live document at version ``number``: its node ops and the
    changes made, or :class:`EditRefused` with the document unchanged. ``touched`` has the
    fields touched by every version after the request's base (when it is older)."""
    max_ops = settings.GEON_MAX_OPS_PER_EDIT
    ops, base_version = request.ops, request.base_version
    if isinstance(ops, list) and len(ops) > max_ops:
        raise EditRefused(
            "too_many_ops",
            f"the edit has {len(ops)} ops; at most {max_ops} are allowed in one edit",
            version=number,
        )
    if (
        isinstance(base_version, bool)
        or not isinstance(base_version, int)
        or not 1 <= base_version <= number
    ):
        raise EditRefused(
            "unknown_version",
            f'base version "{base_version}" does not exist; expected a version from 1 to {number}',
            version=number,
        )
    try:
        node_ops = expand(live.document, ops)
    except DocumentError as error:
        raise EditRefused("invalid_edit", str(error), version=number) from None
    except EditRefused as error:  # too_many_ops: the refusal names the version, as every one does
        error.details.setdefault("version", number)
        raise
    if base_version < number:
        found = conflicts(touched_by_ops(node_ops), _merge_touched(touched, base_version))
        if found:
            first = found[0]
            what = (
                "was added or removed"
                if first["field"] == "*"
                else f'field "{first["field"]}" changed'
            )
            raise EditRefused(
                "conflict",
                f'node "{first["id"]}" {what} after version {base_version}; reload '
                f"version {number} and edit again",
                version=number,
                conflicts=found,
            )
    try:
        changes = live.document.apply(node_ops)
    except DocumentError as error:
        raise EditRefused("invalid_edit", str(error), version=number) from None
    return node_ops, changes


def current_version_number(graph_id: uuid.UUID) -> int:
    """The number of the graph's current version."""
    number = Graph.objects.filter(pk=graph_id).values_list("current_version__number", flat=True)
    return int(number.first() or 1)


def publish_applied(graph_id: uuid.UUID, messages: list[dict[str, Any]]) -> None:
    """Send the ``applied`` messages of one commit to every websocket client of the graph, in
    order: one channel-layer event for all of them, each message JSON-encoded once."""
    layer = get_channel_layer()
    if layer is not None and messages:
        frames = [json.dumps(message) for message in messages]
        async_to_sync(layer.group_send)(
            graph_group(graph_id), {"type": "graph.applied", "frames": frames}
        )


def publish(graph_id: uuid.UUID, kind: str, message: dict[str, Any]) -> None:
    """Send ``message`` to every websocket client of the graph (handler ``kind``)."""
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(graph_group(graph_id), {"type": kind, "message": message})


def snapshot(graph: Graph) -> dict[str, Any]:
    """The ``snapshot`` websocket message but what each client gets of its own (``present``,
    ``role``): the current document, its version and issues (at most ``GEON_WS_MAX_ISSUES``,
    with the counts of all)."""
    live = live_document(graph)
    shown, counts = live.issue_report()
    return {
        "type": "snapshot",
        "document": live.document.to_json(),
        "version": live.version,
        "issues": shown,
        "issueCounts": counts,
    }


# --- REST writes -------------------------------------------------------------------------------


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
) -> Graph:
    """Change the title and/or replace the whole document (as a new version), if ``user`` may
    edit and ``base_version`` is current. Live clients get a fresh ``snapshot``."""
    with transaction.atomic():
        graph = check_can(user, graph_id, Role.EDITOR, lock=True)
        current = check_base_version(graph, base_version)
        if title is not None:
            graph.title = check_title(title)
        if document is not None:
            new = check_document(document)
            old = live_document(graph).document
            version = GraphVersion.objects.create(
                graph=graph,
                number=current.number + 1,
                snapshot=document,
                author=user if isinstance(user, Account) else None,
                message=message,
                touched=touched_of_diff(old, new),
            )
            graph.current_version = version
            forget_live(graph.pk)
        graph.save()
        if document is not None:
            pk = graph.pk
            transaction.on_commit(lambda: _publish_snapshot(pk))
    return graph


def touched_of_diff(old: Document, new: Document) -> dict[str, list[str]]:
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
        _check_owner(user, graph, "delete it")
        do_drop_graph(graph)


def do_drop_graph(graph: Graph) -> None:
    """Delete a graph with its versions, plans, runs and their stored files, whoever asks (the
    caller checked: :func:`do_delete_graph`, or the Django admin). Its open websockets are
    closed once the deletion commits."""
    from geon.runs.services import do_delete_files, files_of_graph

    pk = graph.pk
    with transaction.atomic():
        names = files_of_graph(pk)
        Graph.objects.filter(pk=pk).update(current_version=None)
        graph.delete()
        transaction.on_commit(lambda: do_delete_files(names))
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
        _check_owner(user, graph, "hand it over")
        found = (
            Membership.objects.filter(graph=graph, user__username=username)
            .select_related("user")
            .first()
            if isinstance(username, str)
            else None
        )
        if found is None:
            raise MemberNotFound(
                f'user "{username}" is not a member of graph "{graph.pk}"; the graph can be '
                "handed over to a member only (give them a role first)"
            )
        old_owner = graph.owner
        found.delete()
        Membership.objects.create(graph=graph, user=old_owner, role=Role.EDITOR)
        graph.owner = found.user
        graph.example = ""
        graph.save(update_fields=["owner", "example", "updated"])
        announce_access_changed(graph.pk)
    return graph


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


USERNAME_MAX = 150


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
        raise MemberNotFound(f'user "{username}" is not a member of graph "{graph.pk}"')
    announce_access_changed(graph.pk)


class MemberNotFound(GraphNotFound):
    """The user is not a member of the graph."""


def version_of(graph: Graph, number: int) -> GraphVersion:
    """One version of a graph that the caller may see; :class:`GraphNotFound` when missing."""
    found = GraphVersion.objects.filter(graph=graph, number=number).first()
    if found is None:
        current = graph.current_version.number if graph.current_version else 0
        raise VersionNotFound(
            f'version "{number}" of graph "{graph.pk}" does not exist; expected 1 to {current}'
        )
    return found


class VersionNotFound(GraphNotFound):
    """The graph has no such version."""


# --- shard plans --------------------------------------------------------------------------------

_SPEC_KEYS = ("dim", "parts", "chunk", "sizes", "grid", "over")


def check_plan(name: Any, mesh: Any, spec: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A plan's name, mesh ``{"name", "axes": {axis: size}}`` (at most ``MAX_MESH_AXES`` axes
    and ``MAX_MESH_DEVICES`` devices, :mod:`geon.core.limits`) and spec ``{opId: {...}}`` (its
    numbers are checked when the plan is tried on the document, by the ``shard`` op)."""
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
        raise DocumentError(
            f'plan name "{name}" is not valid; expected a non-empty string of at most 100 '
            "characters"
        )
    axes = mesh.get("axes") if isinstance(mesh, dict) else None
    if not isinstance(axes, dict) or not axes or not isinstance(mesh.get("name", ""), str):
        raise DocumentError(
            f'mesh "{mesh}" is not valid; expected {{"name": "...", "axes": {{"x": 2}}}} with at '
            "least one axis"
        )
    if len(axes) > MAX_MESH_AXES:
        raise DocumentError(
            f'mesh "{mesh.get("name", "")}" has {len(axes)} axes; expected at most {MAX_MESH_AXES}'
        )
    devices = 1
    for axis, size in axes.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise DocumentError(f'mesh axis "{axis}" has size "{size}"; expected an integer >= 1')
        devices *= min(size, MAX_MESH_DEVICES + 1)
        if devices > MAX_MESH_DEVICES:
            raise DocumentError(
                f'mesh "{mesh.get("name", "")}" has more than {MAX_MESH_DEVICES} devices (axis '
                f'"{axis}" of size {show_int(size)}); expected at most {MAX_MESH_DEVICES} in all'
            )
    if not isinstance(spec, dict):
        raise DocumentError(f'spec "{spec}" is not valid; expected {{operationId: {{...}}}}')
    for op_id, entry in spec.items():
        bad = [k for k in entry if k not in _SPEC_KEYS] if isinstance(entry, dict) else None
        if bad is None or bad:
            expected = ", ".join(f'"{k}"' for k in _SPEC_KEYS)
            raise DocumentError(
                f'spec of operation "{op_id}" is not valid; expected an object with some of '
                f"{expected}"
            )
    return name.strip(), {"name": mesh.get("name", ""), "axes": axes}, spec


def plan_of(graph: Graph, plan_id: int) -> ShardPlan:
    """A plan of the graph; :class:`GraphNotFound` (404) when it has no such plan."""
    plan = ShardPlan.objects.filter(graph=graph, pk=plan_id).first()
    if plan is None:
        raise PlanNotFound(f'plan "{plan_id}" of graph "{graph.pk}" does not exist')
    return plan


class PlanNotFound(GraphNotFound):
    """The graph has no such shard plan."""


def _unique_plan_name(graph: Graph, name: str, plan: ShardPlan | None = None) -> None:
    taken = ShardPlan.objects.filter(graph=graph, name=name)
    if plan is not None:
        taken = taken.exclude(pk=plan.pk)
    if taken.exists():
        raise EditRefused(
            "conflict", f'plan name "{name}" is taken on this graph; pick another name'
        )


@transaction.atomic
def do_save_plan(
    user: User,
    graph: Graph,
    name: str,
    mesh: dict[str, Any],
    spec: dict[str, Any],
    plan: ShardPlan | None,
) -> ShardPlan:
    """Create (``plan`` None) or change a plan (inputs already checked): refused with
    ``conflict`` when another plan of the graph has the name, and with ``invalid_edit`` when the
    plan does not fit the graph's current document (an unknown operation, a split the
    operation's index space does not allow), changing nothing. Once committed, the graph's
    websocket clients hear that its plans changed."""
    _unique_plan_name(graph, name, plan)
    if plan is None:
        plan = ShardPlan(graph=graph)
    plan.name, plan.mesh, plan.spec = name, mesh, spec
    plan.save()
    plan_trial(live_document(graph).document, plan)
    _plans_changed(user, graph)
    return plan


@transaction.atomic
def do_delete_plan(user: User, graph: Graph, plan_id: int) -> None:
    """Delete a plan; the Applications it generated stay in the document."""
    plan_of(graph, plan_id).delete()
    _plans_changed(user, graph)


def _plans_changed(user: User, graph: Graph) -> None:
    """Tell the graph's websocket clients, once committed, that its plans changed."""
    pk, author = graph.pk, user.get_username()
    transaction.on_commit(lambda: publish(pk, "graph.plans", {"type": "plans", "author": author}))


def plan_ops(document: Document, plan: ShardPlan) -> list[dict[str, Any]]:
    """The edit ops that write a plan: its Mesh node (added or updated), a ``shard`` op per
    operation of its spec, placed on the mesh, and the removal of the applications of every
    other operation: a plan says how the whole graph is split, and what it does not name runs
    whole (so its cost does not depend on how the document happens to be sharded)."""
    mesh_id = str(uuid.uuid5(uuid.UUID(str(plan.graph_id)), f"geon-plan-{plan.pk}-mesh"))
    body = {"name": plan.mesh.get("name") or plan.name, "axes": plan.mesh["axes"]}
    ops: list[dict[str, Any]] = []
    if document.get(mesh_id) is None:
        ops.append({"op": "add_node", "node": {"id": mesh_id, "type": MESH, "body": body}})
    else:
        ops.append({"op": "update_node", "id": mesh_id, "body": body})
    for op_id, entry in plan.spec.items():
        ops.append({"op": "shard", "operation": op_id, "mesh": mesh_id, **entry})
    for operation in document.of_type(OPERATION):
        if operation.id not in plan.spec:
            apps = document.index.applications_of(operation.id)
            ops.extend({"op": "remove_node", "id": app.id} for app in apps)
    return ops


def plan_trial(document: Document, plan: ShardPlan) -> Document:
    """A copy of ``document`` with the plan written into it; :class:`EditRefused`
    (``invalid_edit``, naming the operation) when the plan does not fit the document."""
    trial = document.copy()
    try:
        trial.apply(expand(trial, plan_ops(document, plan)))
    except DocumentError as error:
        raise EditRefused("invalid_edit", f'plan "{plan.name}": {error}') from None
    return trial


@transaction.atomic
def do_generate_plan(
    user: User,
    graph_id: uuid.UUID | str,
    plan_id: int,
    base_version: int,
    *,
    edit_id: str | None = None,
) -> tuple[Applied, ShardPlan]:
    """Write a plan's Applications into a new version (through :func:`do_apply_edit`; its
    ``applied`` message carries ``edit_id``), and record them on the plan, in one
    transaction."""
    graph = check_can(user, graph_id, Role.EDITOR)
    plan = plan_of(graph, plan_id)
    ops = plan_ops(live_document(graph).document, plan)
    applied = do_apply_edit(
        user,
        graph.pk,
        base_version,
        ops,
        edit_id=edit_id,
        message=f'generated shard plan "{plan.name}"',
    )
    made: dict[str, list[str]] = {}
    for op in applied.ops:
        node = op.get("node") if op["op"] == "add_node" else None
        if node is not None and node["type"] == APPLICATION:
            made.setdefault(node["body"]["operationId"], []).append(node["id"])
    plan.applications = {
        "version": applied.version,
        "mesh": ops[0]["node"]["id"] if ops[0]["op"] == "add_node" else ops[0]["id"],
        "operations": made,
    }
    plan.save(update_fields=["applications", "updated"])
    _plans_changed(user, graph)
    return applied, plan


def plan_cost(graph: Graph, plan: ShardPlan) -> dict[str, Any]:
    """The cost model of a plan as generated on the current document (nothing is stored):
    bytes per device and the bytes that move between devices."""
    trial = plan_trial(live_document(graph).document, plan)
    devices = [
        {
            "mesh": mesh,
            "coords": list(coords),
            "inputs": memory.inputs,
            "outputs": memory.outputs,
            "temporaries": memory.temporaries,
            "total": memory.total,
        }
        for (mesh, coords), memory in device_memory(trial).items()
    ]
    moves = [
        {"source": list(source[1]), "target": list(target[1]), "bytes": size}
        for (source, target), size in sorted(transfer_bytes(trial).items())
    ]
    return {
        "version": live_document(graph).version,
        "devices": devices,
        "transfers": moves,
        "transferBytes": sum(m["bytes"] for m in moves),
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
