"""Writes of reviews (docs/reviews.md): open, change and close a review, threads, comments,
resolving, verdicts behind the graph's guardrails, and applying suggestions as edits.

Each write counts one more ``activity`` of its review, marks it read for its author and, once
committed, tells the graph's websockets (:func:`geon.reviews.feed.publish_review`) and mails
the people it concerns (:mod:`.mail`).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User as Account
from django.db import transaction
from django.db.models import F

from geon.core.approval import fingerprint
from geon.core.errors import GeonError, quote
from geon.graphs import services as graphs
from geon.graphs.models import Graph
from geon.graphs.services.access import User
from geon.graphs.services.graphs import check_title
from geon.graphs.services.plans import plan_of
from geon.reviews.feed import publish_review
from geon.reviews.models import Comment, Notification, ReadMark, Review, Thread, Verdict
from geon.reviews.services.checks import (
    check_anchor,
    check_body,
    check_reviewers,
    check_room,
    check_suggestion,
)
from geon.reviews.services.guardrails import check_guardrails
from geon.reviews.services.mail import mention_notifications, verdict_notifications
from geon.reviews.services.notifications import notify
from geon.reviews.services.reading import (
    Context,
    ReviewNotFound,
    anchor_subject,
    plan_fields,
    review_json,
    review_of,
)
from geon.reviews.services.roles import resolve_refusal, verdict_refusal


def account(user: User) -> Account:
    """The signed-in account of a user the access checks let through (they refuse anonymous
    users: no role)."""
    if not isinstance(user, Account):
        raise graphs.AccessDenied("sign in first")
    return user


def _touched(review: Review, user: Account, event: str) -> None:
    """Count one more change of ``review``, mark it read for ``user``, and tell the graph."""
    Review.objects.filter(pk=review.pk).update(activity=F("activity") + 1)
    review.refresh_from_db(fields=["activity", "updated"])
    ReadMark.objects.update_or_create(
        review=review, user_id=user.pk, defaults={"activity": review.activity}
    )
    summary = review_json(
        review_of(review.graph, review.pk), Context(review.graph, user), threads=False
    )
    summary.pop("unread")
    publish_review(review.graph_id, event, summary)


@transaction.atomic
def do_open_review(
    user: User,
    graph_id: uuid.UUID | str,
    title: Any,
    reviewers: Any,
    plan_id: int | None = None,
    description: Any = "",
) -> Review:
    """A new review of a plan of the graph (or the whole graph) at its current version
    (editor and up); each reviewer must be a reviewer, editor or owner of the graph, and not
    its author (who gives it no verdict)."""
    graph = graphs.check_can_edit(user, graph_id)
    user = account(user)
    plan = plan_of(graph, plan_id) if plan_id is not None else None
    accounts = check_reviewers(graph, reviewers, author=user)
    check_room("reviews", Review.objects.filter(graph=graph).count(), f"graph {quote(graph.title)}")
    review = Review.objects.create(
        graph=graph,
        plan=plan,
        plan_name=plan.name if plan is not None else "",
        title=check_title(title),
        description=check_body(description, "description", empty=True),
        author=user,
        version=Context(graph, user).version,
    )
    review.reviewers.set(accounts)
    _touched(review, user, "opened")
    notify(
        accounts,
        Notification.Kind.REVIEW_REQUESTED,
        review,
        user,
        f'{user.get_username()} asked you to review "{review.title}" of graph "{graph.title}"',
    )
    return review


@transaction.atomic
def do_change_review(
    user: User, graph_id: uuid.UUID | str, review_id: int, changes: dict[str, Any]
) -> Review:
    """Close or reopen a review, or change its title or description (editor and up)."""
    graph = graphs.check_can_edit(user, graph_id)
    user = account(user)
    review = review_of(graph, review_id)
    if "state" in changes:
        state = changes["state"]
        if state not in ("open", "closed"):
            raise GeonError(f'state {quote(state)} is not valid; expected "open" or "closed"')
        review.closed = state == "closed"
    if changes.get("title") is not None:
        review.title = check_title(changes["title"])
    if changes.get("description") is not None:
        review.description = check_body(changes["description"], "description", empty=True)
    review.save()
    _touched(review, user, "state")
    return review


@transaction.atomic
def do_add_thread(
    user: User,
    graph_id: uuid.UUID | str,
    review_id: int,
    anchor: Any,
    body: Any,
    suggestion: Any = None,
) -> Thread:
    """A thread pinned to ``anchor`` with its first comment (reviewer and up); a suggestion
    must be an edit the current document accepts (:func:`check_suggestion`)."""
    graph = graphs.check_can_review(user, graph_id)
    user = account(user)
    review = review_of(graph, review_id)
    check_room("threads", review.threads.count(), f"review {quote(review.title)}")
    context = Context(graph, user)
    checked, name, position = check_anchor(anchor, context)
    text = check_body(body)
    suggested = check_suggestion(suggestion, context)
    thread = Thread.objects.create(
        review=review,
        anchor=checked,
        anchor_name=name[:300],
        anchor_fields=anchor_subject(checked, context),
        last_position=position,
        suggestion=suggested,
        author=user,
        version=context.version,
    )
    Comment.objects.create(thread=thread, author=user, body=text, version=context.version)
    _touched(review, user, "thread")
    thread.notices = mention_notifications(graph, review, user, text, thread)
    return thread


def thread_of(review: Review, thread_id: int) -> Thread:
    found = Thread.objects.filter(review=review, pk=thread_id).first()
    if found is None:
        raise ReviewNotFound(f'thread "{thread_id}" of review {quote(review.title)} does not exist')
    return found


def _reviewing(
    user: User, graph_id: uuid.UUID | str, review_id: int, thread_id: int
) -> tuple[Graph, Account, Review, Thread]:
    """The graph, account, review and thread of a reviewer's write to a thread."""
    graph = graphs.check_can_review(user, graph_id)
    review = review_of(graph, review_id)
    return graph, account(user), review, thread_of(review, thread_id)


@transaction.atomic
def do_add_comment(
    user: User, graph_id: uuid.UUID | str, review_id: int, thread_id: int, body: Any
) -> Comment:
    """A reply in a thread (reviewer and up)."""
    graph, person, review, thread = _reviewing(user, graph_id, review_id, thread_id)
    check_room("comments", thread.comments.count(), f"this thread of review {quote(review.title)}")
    text = check_body(body)
    comment = Comment.objects.create(
        thread=thread, author=person, body=text, version=Context(graph, person).version
    )
    _touched(review, person, "comment")
    comment.notices = mention_notifications(graph, review, person, text, thread, reply=True)
    return comment


@transaction.atomic
def do_resolve_thread(
    user: User, graph_id: uuid.UUID | str, review_id: int, thread_id: int, resolved: Any
) -> Thread:
    """Resolve or reopen a thread (reviewer and up): its author, the review's reviewers or the
    graph's owner (:func:`~.roles.resolve_refusal`)."""
    graph, person, review, thread = _reviewing(user, graph_id, review_id, thread_id)
    refused = resolve_refusal(review, thread, person.pk, Context(graph, person).owner)
    if refused is not None:
        raise graphs.AccessDenied(refused)
    if not isinstance(resolved, bool):
        raise GeonError(f"resolved {quote(resolved)} is not valid; expected true or false")
    thread.resolved = resolved
    thread.save(update_fields=["resolved"])
    _touched(review, person, "resolved")
    return thread


@transaction.atomic
def do_give_verdict(
    user: User, graph_id: uuid.UUID | str, review_id: int, verdict: Any, body: Any = ""
) -> Verdict:
    """A verdict of the review at the current version (reviewer and up, never its author:
    :func:`~.roles.verdict_refusal`). An approval is refused (:class:`GuardrailRefused`) while a
    guardrail of the graph holds."""
    graph = graphs.check_can_review(user, graph_id)
    user = account(user)
    review = review_of(graph, review_id)
    refused = verdict_refusal(review, user.pk)
    if refused is not None:
        raise graphs.AccessDenied(refused)
    if verdict not in Verdict.Kind.values:
        raise GeonError(
            f"verdict {quote(verdict)} is not valid; expected one of "
            + ", ".join(f'"{v}"' for v in Verdict.Kind.values)
        )
    if review.closed:
        raise GeonError(f"review {quote(review.title)} is closed; reopen it first")
    check_room("verdicts", review.verdicts.count(), f"review {quote(review.title)}")
    text = check_body(body, "summary", empty=True)
    context = Context(graph, user)
    if verdict == Verdict.Kind.APPROVE:
        check_guardrails(graph, review, context)
    fields = plan_fields(review.plan)
    given = Verdict.objects.create(
        review=review,
        user=user,
        verdict=verdict,
        body=text,
        version=context.version,
        fingerprint=fingerprint(context.subject(fields)),
        plan_fields=fields,
    )
    _touched(review, user, "verdict")
    verdict_notifications(graph, review, user, given)
    return given


@transaction.atomic
def do_request_again(
    user: User, graph_id: uuid.UUID | str, review_id: int, reviewers: Any
) -> tuple[Review, list[Account]]:
    """Ask ``reviewers`` (again, or for the first time: they join the review's reviewers) to
    review (editor and up; never the review's author). Each is notified; one who judged it
    before sees "changes since your last verdict" on the review."""
    graph = graphs.check_can_edit(user, graph_id)
    user = account(user)
    review = review_of(graph, review_id)
    if review.closed:
        raise GeonError(f"review {quote(review.title)} is closed; reopen it first")
    if not isinstance(reviewers, list) or not reviewers:
        raise GeonError(
            f"reviewers {quote(reviewers)} is not valid; expected a non-empty list of "
            "usernames of the graph's members"
        )
    accounts = check_reviewers(graph, reviewers, author=review.author)
    review.reviewers.add(*accounts)
    _touched(review, user, "requested")
    last = {
        v.user_id: v.version for v in review.verdicts.all() if v.verdict != Verdict.Kind.COMMENT
    }
    for person in accounts:
        since = last.get(person.pk)
        what = f" (changes since your verdict at version {since})" if since is not None else ""
        notify(
            [person],
            Notification.Kind.REVIEW_REQUESTED,
            review,
            user,
            f'{user.get_username()} asked you again to review "{review.title}" of graph '
            f'"{graph.title}"{what}',
        )
    return review, accounts


def do_apply_suggestions(
    user: User,
    graph_id: uuid.UUID | str,
    review_id: int | None,
    thread_ids: list[int],
    base_version: int,
    edit_id: str | None = None,
) -> tuple[list[Thread], Any]:
    """Apply the suggestions of threads (of one review, or of any review of the graph when
    ``review_id`` is None) as one edit based on ``base_version`` (editor and up): one new
    version, checked like any edit, whose message names the threads. Refused (changing
    nothing) when a thread has no suggestion or the edit is refused."""
    graph = graphs.check_can_edit(user, graph_id)
    user = account(user)
    if not thread_ids:
        raise GeonError("threads [] is not valid; expected the ids of threads with suggestions")
    rows = Thread.objects.filter(review__graph=graph, pk__in=thread_ids).select_related("review")
    if review_id is not None:
        rows = rows.filter(review_id=review_id)
    found = {t.pk: t for t in rows}
    threads = []
    for tid in dict.fromkeys(thread_ids):
        thread = found.get(tid)
        if thread is None:
            raise ReviewNotFound(f'thread "{tid}" of graph {quote(graph.title)} does not exist')
        if not thread.suggestion:
            raise GeonError(f'thread "{tid}" ({thread.anchor_name}) carries no suggestion')
        threads.append(thread)
    ops = [op for t in threads for op in (t.suggestion or {}).get("ops", [])]
    named = ", ".join(f'"{t.anchor_name}"' for t in threads)
    message = f"applied the suggestions of review threads on {named}"[:500]
    applied = graphs.do_apply_edit(
        user, graph.pk, base_version, ops, edit_id=edit_id, message=message
    )
    with transaction.atomic():
        for thread in threads:
            thread.applied_version = applied.version
            thread.save(update_fields=["applied_version"])
        for review in {t.review_id: t.review for t in threads}.values():
            _touched(review, user, "applied")
    return threads, applied


def do_mark_read(user: User, graph_id: uuid.UUID | str, review_id: int) -> Review:
    """Everything of the review so far is read by ``user`` (viewer and up)."""
    graph = graphs.check_can_view(user, graph_id)
    user = account(user)
    review = review_of(graph, review_id)
    ReadMark.objects.update_or_create(
        review=review, user_id=user.pk, defaults={"activity": review.activity}
    )
    return review
