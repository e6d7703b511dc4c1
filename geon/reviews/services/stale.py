"""Approvals going stale, told at once (docs/reviews.md, Live state): when a graph gets a new
version or one of its plans is saved, each approval of its open reviews that was not told stale
yet is checked against the current subject; one that went stale is told to the verdict's author
and the review's author (a ``stale`` notification), and every open editor of the graph gets the
review's ``state`` event, so the approval shows stale without a reload.

The check runs once the write commits, only while some approval is untold (one query otherwise),
and a failure of it is logged: it never undoes the edit that caused it.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.db.models import F
from django.db.models.signals import post_save

from geon.core.approval import fingerprint
from geon.graphs.models import Graph, GraphVersion, ShardPlan
from geon.reviews.feed import publish_review
from geon.reviews.models import Notification, Review, Verdict
from geon.reviews.services.notifications import notify
from geon.reviews.services.reading import Context, plan_fields, review_json, review_of

log = logging.getLogger(__name__)


def check_stale(graph_id: Any) -> list[Verdict]:
    """Tell each approval of the graph's open reviews that went stale since it was given (and
    was not told yet); the approvals told."""
    untold = list(
        Verdict.objects.filter(
            review__graph_id=graph_id,
            review__closed=False,
            verdict=Verdict.Kind.APPROVE,
            stale_told=False,
        ).select_related("review", "review__plan", "review__author", "user")
    )
    if not untold:
        return []
    graph = Graph.objects.select_related("owner").get(pk=graph_id)
    context = Context(graph, graph.owner)
    current: dict[int, str] = {}
    told, reviews = [], {}
    for verdict in untold:
        review = verdict.review
        if review.pk not in current:
            current[review.pk] = fingerprint(context.subject(plan_fields(review.plan)))
        if current[review.pk] == verdict.fingerprint:
            continue
        Verdict.objects.filter(pk=verdict.pk).update(stale_told=True)
        who = verdict.user.get_username()
        notify(
            [verdict.user, review.author],
            Notification.Kind.STALE,
            review,
            None,
            f'the approval by {who} of review "{review.title}" went stale: the '
            f"{'plan or the ' if review.plan_id else ''}graph changed since version "
            f"{verdict.version}",
        )
        told.append(verdict)
        reviews[review.pk] = review
    for review in reviews.values():
        Review.objects.filter(pk=review.pk).update(activity=F("activity") + 1)
        summary = review_json(
            review_of(graph, review.pk), Context(graph, graph.owner), threads=False
        )
        summary.pop("unread")
        publish_review(graph.pk, "state", summary)
    return told


def _after_commit(graph_id: Any) -> None:
    def run() -> None:
        try:
            with transaction.atomic():
                check_stale(graph_id)
        except Exception:  # never the edit's failure: the next version checks again
            log.exception("checking the approvals of graph %s for staleness failed", graph_id)

    transaction.on_commit(run)


def _version_saved(sender: Any, instance: GraphVersion, created: bool, **kwargs: Any) -> None:
    if created and not kwargs.get("raw") and not instance.layout_only:  # a layout stales none
        _after_commit(instance.graph_id)


def _plan_saved(sender: Any, instance: ShardPlan, **kwargs: Any) -> None:
    if not kwargs.get("raw"):
        _after_commit(instance.graph_id)


def watch_for_stale_approvals() -> None:
    """Check the approvals after every new version and every plan saved (the app's ready)."""
    post_save.connect(_version_saved, sender=GraphVersion, dispatch_uid="reviews.stale.version")
    post_save.connect(_plan_saved, sender=ShardPlan, dispatch_uid="reviews.stale.plan")
