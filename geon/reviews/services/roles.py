"""Who may do what in one review, beyond the graph's roles (docs/reviews.md, Who judges): the
review's author gives it no verdict, "approved" needs an approval from a requested reviewer, and
a thread is resolved or reopened by its author, the review's reviewers or the graph's owner.

Each rule answers the sentence that refuses a person (None: the rule lets them), so the API's
refusal and the editor's disabled control say the same thing.
"""

from __future__ import annotations

from typing import Any

from geon.core.errors import quote
from geon.reviews.models import Review, Thread


def _named(names: list[str]) -> str:
    return ", ".join(quote(n) for n in names) if names else "nobody yet"


def reviewer_names(review: Review) -> list[str]:
    """The usernames the review asks, sorted (prefetched with the review)."""
    return sorted(u.get_username() for u in review.reviewers.all())


def verdict_refusal(review: Review, user_pk: Any) -> str | None:
    """Why the user with ``user_pk`` may not give ``review`` a verdict (None: they may, their
    role on the graph permitting): its author may not judge their own review."""
    if review.author_id is None or review.author_id != user_pk:
        return None
    return (
        f"you opened review {quote(review.title)}, so you cannot give it a verdict; the "
        f"reviewers it asks ({_named(reviewer_names(review))}) give verdicts, and it is "
        "approved only by one of them; answer them in a thread instead"
    )


def resolve_refusal(review: Review, thread: Thread, user_pk: Any, owner: bool) -> str | None:
    """Why the user with ``user_pk`` may not resolve or reopen ``thread`` (None: they may):
    that is for the thread's author, the review's reviewers and the graph's owner (``owner``:
    whether the user's role on the graph is owner)."""
    if owner or (thread.author_id is not None and thread.author_id == user_pk):
        return None
    if any(u.pk == user_pk for u in review.reviewers.all()):
        return None
    author = thread.author.get_username() if thread.author is not None else None
    by = f"its author ({quote(author)}), " if author else ""
    return (
        f"you may not resolve or reopen the thread on {quote(thread.anchor_name)}: that is for "
        f"{by}the reviewers the review asks ({_named(reviewer_names(review))}) or the graph's "
        "owner; reply in the thread instead"
    )
