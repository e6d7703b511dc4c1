"""Who hears of a review's mentions and verdicts (docs/reviews.md, Notifications): each gets a
notification (:mod:`.notifications`), which mails them at the address allauth verified unless they
muted mail. A mention of someone mail cannot reach is told to its writer (``notices``)."""

from __future__ import annotations

from typing import Any

from geon.graphs.models import Graph
from geon.reviews.models import Notification, Review, Thread, Verdict
from geon.reviews.services.checks import MENTION, members_of
from geon.reviews.services.notifications import notify, unmailed_mentions

#: What a verdict says in a notification.
SAYS = {"approve": "approved", "request_changes": "requested changes on", "comment": "commented on"}


def mentioned(graph: Graph, text: str) -> list[Any]:
    """The graph's members that ``text`` mentions (``@username``)."""
    members = members_of(graph)
    return [members[name] for name in dict.fromkeys(MENTION.findall(text)) if name in members]


def mention_notifications(
    graph: Graph, review: Review, author: Any, text: str, thread: Thread, *, reply: bool = False
) -> list[str]:
    """Notify each member ``text`` mentions (but its author) and, for a reply, the thread's
    earlier writers it does not mention; what the author is told of mentions mail cannot
    reach."""
    who = author.get_username()
    people = [u for u in mentioned(graph, text) if u.pk != author.pk]
    place = f'in review "{review.title}" on {thread.anchor_name}'
    notify(
        people,
        Notification.Kind.MENTIONED,
        review,
        author,
        f"{who} mentioned you {place}",
        thread=thread,
        mail=f"{who} mentioned you {place}:\n\n{text}",
    )
    if reply:
        named = {u.pk for u in people}
        writers = [c.author for c in thread.comments.select_related("author")]
        notify(
            [u for u in writers if u is not None and u.pk not in named],
            Notification.Kind.REPLIED,
            review,
            author,
            f"{who} replied {place}",
            thread=thread,
        )
    return unmailed_mentions(people)


def verdict_notifications(graph: Graph, review: Review, author: Any, verdict: Verdict) -> None:
    """Notify the review's author and reviewers (but the verdict's author) of a verdict."""
    who = author.get_username()
    subject = f'{who} {SAYS[verdict.verdict]} review "{review.title}"'
    notify(
        [review.author, *review.reviewers.all()],
        Notification.Kind.VERDICT,
        review,
        author,
        subject,
        mail=f"{subject}\n\n{verdict.body}" if verdict.body else subject,
    )
