"""Checks of untrusted review input: bodies, reviewers, anchors and suggestions, each refusal
naming the bad value and what is valid."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User as Account

from geon.accounts.models import Role
from geon.core.errors import DocumentError, GeonError, quote
from geon.core.nodes import GROUP, LAYOUT, OPERATION, selected_tensor_ids
from geon.graphs.edits import EditRefused, expand
from geon.graphs.models import Graph
from geon.graphs.protocol import CLIENT_MESSAGES, message_errors
from geon.graphs.services.access import roles_on
from geon.reviews.services.reading import Context, anchor_subject

#: The longest comment, thread body or review description (characters of Markdown).
BODY_MAX = 20_000
#: The most reviewers one review asks, and ops one suggestion carries.
REVIEWERS_MAX = 50
SUGGESTION_OPS_MAX = 200
#: The most of each kind a graph, a review or a thread holds (a long discussion is closed and
#: a new one opened): every answer that lists them stays bounded.
COUNTS_MAX = {"reviews": 500, "threads": 500, "comments": 500, "verdicts": 500}
#: ``@name`` in a body: a mention when ``name`` is a graph member's username.
MENTION = re.compile(r"(?<![\w.])@([\w.@+-]{1,150})")


def check_room(kind: str, existing: int, where: str) -> None:
    """Refuse one more ``kind`` (``"threads"`` ...) where ``existing`` are already held."""
    most = COUNTS_MAX[kind]
    if existing >= most:
        raise GeonError(
            f"{where} already holds {existing} {kind}, the most it may; close it and open another"
        )


def check_body(body: Any, what: str = "body", *, empty: bool = False) -> str:
    """A Markdown body: a string of at most :data:`BODY_MAX` characters, not blank unless
    ``empty``."""
    if not isinstance(body, str) or len(body) > BODY_MAX or not (empty or body.strip()):
        shown = body[:40] + "…" if isinstance(body, str) else body
        blank = "" if empty else "non-blank "
        raise GeonError(
            f"{what} {quote(shown)} is not valid; expected a {blank}string of at most "
            f"{BODY_MAX} characters (Markdown)"
        )
    return body


def members_of(graph: Graph) -> dict[str, Account]:
    """Everyone with a role on the graph, by username."""
    people = {graph.owner.get_username(): graph.owner}
    for m in graph.memberships.select_related("user"):
        people[m.user.get_username()] = m.user
    if graph.team is not None:
        for t in graph.team.memberships.select_related("user"):
            people.setdefault(t.user.get_username(), t.user)
    return people


def check_reviewers(graph: Graph, names: Any, author: Account | None = None) -> list[Account]:
    """The accounts of ``names``, each a reviewer (or more) of the graph, none the review's
    ``author`` (who gives their own review no verdict)."""
    if not isinstance(names, list) or len(names) > REVIEWERS_MAX:
        raise GeonError(
            f"reviewers {quote(names)} is not valid; expected a list of at most "
            f"{REVIEWERS_MAX} usernames of the graph's members"
        )
    members = members_of(graph)
    roles = roles_on(list(members.values()), graph)
    found = []
    for name in dict.fromkeys(names):
        account = members.get(name) if isinstance(name, str) else None
        if account is None:
            raise GeonError(
                f"reviewer {quote(name)} has no role on graph {quote(graph.title)}; invite them "
                f"first (Share), then ask them. Members: {', '.join(sorted(members))}"
            )
        if Role.rank(roles[account.pk] or Role.VIEWER) < Role.rank(Role.REVIEWER):
            raise GeonError(
                f"{quote(name)} is a viewer of graph {quote(graph.title)} and cannot review; "
                "give them the role reviewer (or editor) first"
            )
        if author is not None and account.pk == author.pk:
            others = sorted(n for n in members if n != name)
            raise GeonError(
                f"reviewer {quote(name)} is opening this review and cannot review it (its author "
                "gives it no verdict); ask other members of graph "
                f"{quote(graph.title)}: {', '.join(others) if others else 'invite one first'}"
            )
        found.append(account)
    return found


#: The tag that keeps a node's scope (an import's name scope: ``{"scope": "/layers.0/attn"}``).


def readable_name(context: Context, node_id: str) -> str:
    """A node as people read it in an anchor (issue 35): an operation by its name and what it
    writes (``op:dot → up``), never just its kernel; any node with its scope when it has one
    (``op:dot → q in layers.0/attn``)."""
    nodes = context.nodes
    name = nodes[node_id]["name"]
    node = next((n for n in context.document.get("nodes", []) if n.get("id") == node_id), None)
    if node is None:
        return name
    if node.get("type") == OPERATION:
        outs = [
            nodes[t]["name"] for t in selected_tensor_ids(node.get("body"), "outputs") if t in nodes
        ]
        if outs:
            name = f"{name} → {', '.join(outs)}"
    group = (node.get("tags") or {}).get(GROUP)
    scope = group.get("scope") if isinstance(group, dict) else None
    if isinstance(scope, str) and scope.strip("/"):
        name = f"{name} in {scope.strip('/')}"
    return name


def check_anchor(anchor: Any, context: Context) -> tuple[dict[str, Any], str, Any]:
    """A thread's anchor, checked against the current document: ``(anchor, its name for
    people, its position on the canvas or None)``."""
    kinds = ("node", "axis", "edge", "region")
    if not isinstance(anchor, dict) or not anchor or set(anchor) - set(kinds):
        raise GeonError(
            f"anchor {quote(anchor)} is not valid; expected an object with one of "
            + ", ".join(f'"{k}"' for k in kinds)
        )
    nodes = context.nodes
    region = anchor.get("region")
    if region is not None:
        op = region.get("operation") if isinstance(region, dict) else None
        start, end = (
            (region.get("start"), region.get("end")) if isinstance(region, dict) else (0, 0)
        )
        node = nodes.get(op) if isinstance(op, str) else None
        if node is None or not isinstance(op, str) or node["fields"]["type"] != OPERATION:
            raise GeonError(f"anchor region {quote(region)} does not name an operation")
        if not (isinstance(start, list) and isinstance(end, list) and _is_box(start, end)):
            raise GeonError(
                f"anchor region {quote(region)} is not valid; expected start and end lists of "
                "the same length (at most 32) of integers with 0 <= start <= end"
            )
        return (
            {"region": {"operation": op, "start": start, "end": end}},
            f"{readable_name(context, op)} · window {_box(start, end)}",
            _position(context, op),
        )
    if "edge" in anchor:
        edge = anchor["edge"]
        ends = [edge.get(k) for k in ("from", "to")] if isinstance(edge, dict) else []
        ids = [e for e in ends if isinstance(e, str) and e in nodes]
        if len(ids) != 2:
            raise GeonError(f"anchor edge {quote(edge)} does not join two nodes of the graph")
        return (
            {"edge": {"from": ids[0], "to": ids[1]}},
            " → ".join(nodes[e]["name"] for e in ids),  # an edge reads as its two ends
            _position(context, ids[1]),
        )
    if "node" in anchor:
        node_id = anchor["node"]
        if not isinstance(node_id, str) or node_id not in nodes:
            raise GeonError(f"anchor node {quote(node_id)} is not a node of the graph")
        return {"node": node_id}, readable_name(context, node_id), _position(context, node_id)
    axis = anchor.get("axis")
    found = anchor_subject({"axis": axis}, context) if isinstance(axis, str) else None
    if found is None:
        raise GeonError(f"anchor axis {quote(axis)} is not an axis of the graph")
    return {"axis": axis}, f"axis {axis}", None


def _is_box(start: Any, end: Any) -> bool:
    return (
        isinstance(start, list)
        and isinstance(end, list)
        and len(start) == len(end) <= 32
        and all(type(v) is int for v in [*start, *end])
        and all(0 <= a <= b for a, b in zip(start, end, strict=True))
    )


def _box(start: list[int], end: list[int]) -> str:
    return "[" + ", ".join(f"{a}:{b}" for a, b in zip(start, end, strict=True)) + "]"


def _position(context: Context, node_id: str) -> Any:
    node = context.live.document.get(node_id)
    return node.tag(LAYOUT) if node is not None else None


def check_suggestion(suggestion: Any, context: Context) -> dict[str, Any] | None:
    """A suggestion ``{"ops": [...]}`` in the websocket's edit form (None: none), which the
    current document accepts as an edit: tried on a copy (nothing changes), so that a
    suggestion naming a node that does not exist, or a removal the document refuses, is refused
    when the thread is written, not first when someone applies it. (Applying checks it again:
    the document may have moved on.)"""
    if suggestion is None:
        return None
    ops = suggestion.get("ops") if isinstance(suggestion, dict) else None
    if not isinstance(ops, list) or not 1 <= len(ops) <= SUGGESTION_OPS_MAX:
        raise GeonError(
            f'suggestion {quote(suggestion)} is not valid; expected {{"ops": [...]}} with 1 '
            f"to {SUGGESTION_OPS_MAX} edit ops"
        )
    edit = {"type": "edit", "id": "suggestion", "baseVersion": 1, "ops": ops}
    problems = message_errors(edit, CLIENT_MESSAGES)
    if problems:
        raise GeonError("suggestion is not a valid edit: " + "; ".join(problems))
    trial = context.live.document.copy()
    try:
        trial.apply(expand(trial, ops, max_ops=settings.GEON_MAX_OPS_PER_EDIT))
    except (DocumentError, EditRefused) as refused:
        raise GeonError(
            f"suggestion is not an edit version {context.version} of the graph accepts: "
            f"{refused}; suggest ops on the nodes as they are now"
        ) from None
    return {"ops": ops}
