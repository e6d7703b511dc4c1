"""Mail of reviews through the configured mail backend (settings ``EMAIL_*``): to the members
an ``@mention`` names, and to a review's author and reviewers when a verdict is given. Mail is
sent once the write commits; a mail server that fails is logged and loses nothing else."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction

from geon.graphs.models import Graph
from geon.graphs.services.access import User
from geon.reviews.models import Review, Verdict
from geon.reviews.services.checks import MENTION, members_of

log = logging.getLogger(__name__)

#: What a verdict says in a mail's subject.
SAYS = {"approve": "approved", "request_changes": "requested changes on", "comment": "commented on"}


def _send(subject: str, text: str, to: list[str]) -> None:
    def send() -> None:
        try:
            send_mail(subject, text, settings.DEFAULT_FROM_EMAIL, to)
        except Exception:  # a mail server's failure must not undo the review's write
            log.exception("sending review mail %r to %s failed", subject, to)

    if to:
        transaction.on_commit(send)


def _footer(graph: Graph, review: Review) -> str:
    return f'\n\n— review "{review.title}" of graph "{graph.title}" on geon'


def mentioned(graph: Graph, text: str) -> list[Any]:
    """The graph's members that ``text`` mentions (``@username``)."""
    members = members_of(graph)
    return [members[name] for name in dict.fromkeys(MENTION.findall(text)) if name in members]


def mail_mentions(graph: Graph, review: Review, author: User, text: str) -> None:
    """Mail each member ``text`` mentions (but its author)."""
    to = [u.email for u in mentioned(graph, text) if u.pk != author.pk and u.email]
    who = author.get_username()
    _send(f'{who} mentioned you in review "{review.title}"', text + _footer(graph, review), to)


def mail_verdict(graph: Graph, review: Review, author: User, verdict: Verdict) -> None:
    """Mail the review's author and reviewers (but the verdict's author) of a verdict."""
    people = [review.author, *review.reviewers.all()]
    to = sorted({u.email for u in people if u is not None and u.pk != author.pk and u.email})
    who = author.get_username()
    subject = f'{who} {SAYS[verdict.verdict]} review "{review.title}"'
    _send(subject, (verdict.body or subject) + _footer(graph, review), to)
