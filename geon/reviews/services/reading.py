"""Reviews as the API answers them, read against the graph's current document: a verdict is
*stale* when what it covered (:mod:`geon.core.approval`) changed since, a thread *outdated* when
its anchor did (docs/reviews.md)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.contrib.auth.models import User as Account

from geon.accounts.models import Role
from geon.core.approval import approval_subject, fingerprint, stale_because
from geon.graphs import services as graphs
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.access import User, roles_on
from geon.reviews.models import ReadMark, Review, Thread, Verdict
from geon.reviews.services.roles import resolve_refusal, verdict_refusal


class ReviewNotFound(graphs.GraphNotFound):
    """The graph has no such review or thread (404, like a graph the user may not see)."""


@dataclass
class Context:
    """What one answer reads of a graph once: its current document and subjects."""

    graph: Graph
    user: User
    _old: dict[tuple[int, str], dict[str, Any]] = field(default_factory=dict)

    @cached_property
    def live(self) -> Any:
        return graphs.live_document(self.graph)

    @cached_property
    def document(self) -> dict[str, Any]:
        return dict(self.live.document.to_json())

    @cached_property
    def version(self) -> int:
        return int(self.live.version)

    @cached_property
    def nodes(self) -> dict[str, dict[str, Any]]:
        return approval_subject(self.document)["nodes"]

    @cached_property
    def applications(self) -> dict[str, dict[str, Any]]:
        """The subject fields of each operation's applications, by operation id."""
        found: dict[str, dict[str, Any]] = {}
        for key, node in self.nodes.items():
            operation = node["fields"].get("body.operationId")
            if isinstance(operation, str):
                found.setdefault(operation, {})[key] = node["fields"]
        return found

    @cached_property
    def owner(self) -> bool:
        """Whether the user's role on the graph is owner (resolves any thread)."""
        return roles_on([self.user], self.graph).get(self.user.pk) == Role.OWNER

    @cached_property
    def read(self) -> dict[int, int]:
        """How much of each review of the graph the user has read (one query for them all)."""
        marks = ReadMark.objects.filter(review__graph=self.graph, user_id=self.user.pk or 0)
        return dict(marks.values_list("review_id", "activity"))

    def subject(self, plan: dict[str, Any] | None) -> dict[str, Any]:
        return {"nodes": self.nodes, "plan": approval_subject({}, plan)["plan"]}

    def subject_at(self, version: int, plan: dict[str, Any] | None) -> dict[str, Any]:
        key = (version, repr(plan))
        if key not in self._old:
            document = graphs.version_of(self.graph, version).document
            self._old[key] = approval_subject(document, plan)
        return self._old[key]


def plan_fields(plan: ShardPlan | None) -> dict[str, Any] | None:
    """The fields of a plan an approval covers (None: a review of the whole graph)."""
    if plan is None:
        return None
    return {
        "mesh": plan.mesh,
        "axisMapping": plan.axis_mapping,
        "inputs": plan.inputs,
        "spec": plan.spec,
    }


def review_state(review: Review, verdicts: list[dict[str, Any]]) -> str:
    """``closed`` when closed; else, over each person's latest verdict that is not stale (the
    review's author's never count), ``changes_requested`` when one asks for changes,
    ``approved`` when one of a reviewer the review asks approves, else ``open`` (verdicts:
    their JSON, oldest first)."""
    if review.closed:
        return "closed"
    author = review.author.get_username() if review.author is not None else None
    latest: dict[str, dict[str, Any]] = {}
    for verdict in verdicts:
        if verdict["verdict"] != Verdict.Kind.COMMENT and verdict["user"] != author:
            latest[verdict["user"]] = verdict
    standing = [v for v in latest.values() if not v["stale"]]
    if any(v["verdict"] == Verdict.Kind.REQUEST_CHANGES for v in standing):
        return "changes_requested"
    if any(v["verdict"] == Verdict.Kind.APPROVE and v["requested"] for v in standing):
        return "approved"
    return "open"


def _name(user: Account | None) -> str:
    return user.get_username() if user is not None else "(deleted account)"


def verdict_json(verdict: Verdict, review: Review, context: Context) -> dict[str, Any]:
    current = context.subject(plan_fields(review.plan))
    stale = fingerprint(current) != verdict.fingerprint
    because = (
        stale_because(context.subject_at(verdict.version, verdict.plan_fields), current)
        if stale
        else []
    )
    return {
        "id": verdict.pk,
        "user": _name(verdict.user),
        # asked by the review: only such a reviewer's approval makes it approved
        "requested": any(u.pk == verdict.user_id for u in review.reviewers.all()),
        "verdict": verdict.verdict,
        "body": verdict.body,
        "version": verdict.version,
        "stale": stale,
        "staleBecause": because[:50],
        "created": verdict.created.isoformat(),
    }


def anchor_subject(anchor: dict[str, Any], context: Context) -> Any:
    """What a thread's anchor is in the current document's subject (None: it was removed). An
    operation's subject includes its applications (their splits and placements): a suggestion
    that splits it again outdates a thread about it."""
    nodes = context.nodes
    if "edge" in anchor:
        ends = [nodes.get(anchor["edge"]["from"]), nodes.get(anchor["edge"]["to"])]
        return None if None in ends else {"from": ends[0], "to": ends[1]}
    node_id = anchor["region"]["operation"] if "region" in anchor else anchor.get("node")
    if node_id is not None:
        node = nodes.get(node_id)
        applications = context.applications.get(node_id)
        if node is None or not applications:
            return node
        return {"name": node["name"], "fields": {**node["fields"], "applications": applications}}
    for node in nodes.values():
        if node["fields"].get("body.name") == anchor["axis"] and "body.length" in node["fields"]:
            return node
    return None


def _changed_fields(before: Any, after: Any) -> list[str]:
    if "from" in before:
        return [
            f"{end}: {name}"
            for end in ("from", "to")
            for name in _changed_fields(before[end], after[end])
        ]
    old, new = before["fields"], after["fields"]
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def thread_json(thread: Thread, context: Context, review: Review | None = None) -> dict[str, Any]:
    """A thread as the API answers it to ``context.user``; ``resolveRefused`` says why they may
    not resolve or reopen it (None: they may, their role permitting)."""
    now = anchor_subject(thread.anchor, context)
    removed = now is None
    changes = [] if removed else _changed_fields(thread.anchor_fields, now)
    comments = list(thread.comments.all())
    return {
        "id": thread.pk,
        "anchor": thread.anchor,
        "anchorLabel": thread.anchor_name,
        "body": comments[0].body if comments else "",
        "author": _name(thread.author),
        "version": thread.version,
        "resolved": thread.resolved,
        "resolveRefused": resolve_refusal(
            review or thread.review, thread, context.user.pk, context.owner
        ),
        "outdated": removed or bool(changes),
        "removed": removed,
        "changes": changes,
        "lastPosition": thread.last_position,
        "suggestion": thread.suggestion,
        "appliedVersion": thread.applied_version,
        "comments": [
            {
                "id": c.pk,
                "author": _name(c.author),
                "body": c.body,
                "version": c.version,
                "created": c.created.isoformat(),
            }
            for c in comments[1:]
        ],
        "created": thread.created.isoformat(),
    }


def review_json(review: Review, context: Context, *, threads: bool = True) -> dict[str, Any]:
    """A review as the API answers it (``threads`` False: the summary of lists and events)."""
    verdicts = [verdict_json(v, review, context) for v in review.verdicts.all()]
    rows = list(review.threads.all())
    out: dict[str, Any] = {
        "id": review.pk,
        "graph": {"id": str(review.graph_id), "title": context.graph.title},
        "title": review.title,
        "description": review.description,
        "state": review_state(review, verdicts),
        "plan": {"id": review.plan_id, "name": review.plan.name}
        if review.plan is not None
        else None,
        "planName": review.plan_name,
        "version": review.version,
        "currentVersion": context.version,
        "author": _name(review.author),
        "reviewers": sorted(u.get_username() for u in review.reviewers.all()),
        "created": review.created.isoformat(),
        "updated": review.updated.isoformat(),
        "activity": review.activity,
        "unread": max(0, review.activity - context.read.get(review.pk, 0)),
        "openThreads": sum(1 for t in rows if not t.resolved),
        "verdicts": verdicts,
    }
    if threads:
        # for the caller only (never in a published summary): why they may not judge it
        out["verdictRefused"] = verdict_refusal(review, context.user.pk)
        out["sinceYourVerdict"] = since_verdict(review, verdicts, context)
        out["threads"] = [thread_json(t, context, review) for t in rows]
    return out


def since_verdict(
    review: Review, verdicts: list[dict[str, Any]], context: Context
) -> dict[str, Any] | None:
    """What changed since the caller's latest verdict (approve or request changes) of the review:
    None when they gave none or nothing changed; else the version they judged, what the approval
    covers that changed (``changes``, as ``staleBecause``), and where the version diff is read
    (``versionDiff`` over REST, ``page`` in the browser)."""
    me = context.user.get_username() if context.user.is_authenticated else None
    mine = [v for v in verdicts if v["user"] == me and v["verdict"] != Verdict.Kind.COMMENT]
    if not mine:
        return None
    last = mine[-1]
    now = context.version
    if last["version"] == now and not last["stale"]:
        return None
    graph = review.graph_id
    moved = last["version"] != now  # else only the plan changed: no version diff to read
    return {
        "verdict": last["id"],
        "given": last["verdict"],
        "version": last["version"],
        "currentVersion": now,
        "stale": last["stale"],
        "changes": last["staleBecause"],
        "versionDiff": f"/api/v1/graphs/{graph}/versions/{last['version']}/diff/{now}"
        if moved
        else None,
        "page": f"/graphs/{graph}/diff/{last['version']}/{now}/" if moved else None,
    }


def _related(rows: Any) -> Any:
    """Reviews with what their JSON reads, in a fixed number of queries."""
    return rows.select_related("plan", "author").prefetch_related(
        "reviewers", "verdicts__user", "threads__author", "threads__comments__author"
    )


def _reviews(graph: Graph) -> Any:
    return _related(Review.objects.filter(graph=graph))


def list_reviews(user: User, graph_id: uuid.UUID | str) -> list[dict[str, Any]]:
    """The graph's reviews, newest first (viewer and up)."""
    graph = graphs.check_can_view(user, graph_id)
    context = Context(graph, user)
    return [review_json(r, context, threads=False) for r in _reviews(graph)]


def review_of(graph: Graph, review_id: int) -> Review:
    found = _reviews(graph).filter(pk=review_id).first()
    if found is None:
        raise ReviewNotFound(f'review "{review_id}" of graph "{graph.title}" does not exist')
    return found


def get_review(user: User, graph_id: uuid.UUID | str, review_id: int) -> dict[str, Any]:
    graph = graphs.check_can_view(user, graph_id)
    return review_json(review_of(graph, review_id), Context(graph, user))


def reviews_for(user: User) -> list[dict[str, Any]]:
    """Open reviews that ask ``user``, on graphs they may still see, newest activity first."""
    if not user.is_authenticated:
        return []
    return _summaries(user, Review.objects.filter(reviewers=user.pk, closed=False))


def reviews_by(user: User) -> list[dict[str, Any]]:
    """Open reviews ``user`` opened, on graphs they may still see, newest activity first."""
    if not user.is_authenticated:
        return []
    return _summaries(user, Review.objects.filter(author=user.pk, closed=False))


#: The most reviews a "for me" list shows.
LISTED_MAX = 200


def _summaries(user: User, rows: Any) -> list[dict[str, Any]]:
    found, contexts = [], {}
    for review in _related(rows.select_related("graph")).order_by("-updated")[:LISTED_MAX]:
        graph = review.graph
        if graph.pk not in contexts:
            seen = roles_on([user], graph).get(user.pk) is not None
            contexts[graph.pk] = Context(graph, user) if seen else None
        context = contexts[graph.pk]
        if context is not None:
            found.append(review_json(review, context, threads=False))
    return found
