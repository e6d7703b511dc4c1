"""Lessons that teachers write in the editor (issue 19, item 3): a graph's owner writes its
steps (Markdown text, the nodes to highlight, a task) and publishes them, and the lesson is then
read, opened, tried, checked and assigned like a shipped one, by its key.

Publishing is the owner's act (issue 30, finding 5): an editor may read the lesson but neither
publish, rewrite nor withdraw it. What is published is the graph as it is when the owner
publishes (its version then, a snapshot): later edits, private ones included, reach students
only when the owner publishes again. The key is the title's slug and 128 random bits, and the
lesson is served only while its author still owns the graph with an active account (handing
the graph over, or the account closed, withdraws it)."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils.text import slugify

from geon.core.errors import GeonError
from geon.core.graph import Graph as Document
from geon.graphs import services as graphs
from geon.graphs.services.access import User, check_owner
from geon.learn.content.lessons import LESSONS, TEXT_MAX, TITLE_MAX, Lesson, read_steps, read_text
from geon.learn.models import WrittenLesson

#: The most lessons one person writes.
WRITTEN_MAX = 200
#: Random bytes in a lesson's key (128 bits), after the title's slug.
KEY_RANDOM_BYTES = 16
#: The most characters of the title's slug at the start of a key.
KEY_SLUG_MAX = 40


def new_key(title: str) -> str:
    """A fresh key for a lesson titled ``title``: its slug, then 128 random bits (22 URL-safe
    characters), never a shipped lesson's key."""
    slug = slugify(title)[:KEY_SLUG_MAX].strip("-") or "lesson"
    key = f"{slug}-{secrets.token_urlsafe(KEY_RANDOM_BYTES)}"
    while key in LESSONS:  # pragma: no cover - 128 random bits never meet a shipped key
        key = f"{slug}-{secrets.token_urlsafe(KEY_RANDOM_BYTES)}"
    return key


def as_lesson(written: WrittenLesson) -> Lesson:
    """A written lesson as the shipped ones are read: its graph is the version the owner
    published, not the graph as it is now."""
    return Lesson(
        written.key,
        written.title,
        written.summary,
        lambda: Document.from_json(graphs.version_of(written.graph, written.version).document),
        read_steps(written.steps),
    )


def published(key: str) -> WrittenLesson | None:
    """The lesson published under ``key``, if it is still served: its author owns the graph
    and their account is active (else it was withdrawn with their access)."""
    return (
        WrittenLesson.objects.filter(
            key=key, author_id=F("graph__owner_id"), author__is_active=True
        )
        .select_related("graph")
        .first()
    )


def written_json(written: WrittenLesson) -> dict[str, Any]:
    """What the editor's lesson writer reads back: the lesson and where students open it."""
    return {
        **as_lesson(written).to_json(),
        "graph": str(written.graph_id),
        "version": written.version,
        "author": written.author.get_username(),
        # its author no longer owns the graph (or their account is closed): not served
        "withdrawn": written.author_id != written.graph.owner_id or not written.author.is_active,
        "links": {"open": f"/learn/{written.key}/", "try": f"/learn/try/{written.key}/"},
    }


def written_lesson_of(user: User, graph_id: uuid.UUID | str) -> WrittenLesson | None:
    """The lesson written on a graph ``user`` may view (None when it has none)."""
    graph = graphs.check_can_view(user, graph_id)
    return WrittenLesson.objects.filter(graph=graph).select_related("author").first()


@transaction.atomic
def do_write_lesson(
    user: User, graph_id: uuid.UUID | str, title: Any, summary: Any, steps: Any
) -> WrittenLesson:
    """Publish (or publish again) the lesson on a graph: its owner only (an editor is refused
    with 403, saying who may). The graph's current version is what students get. Every value
    is checked before anything is stored, and the first bad one is named."""
    graph = graphs.check_can_view(user, graph_id)
    check_owner(user, graph, "publish a lesson on it")
    assert user.pk is not None and graph.current_version is not None
    title = read_text(title, "the lesson's title", TITLE_MAX)
    summary = read_text(summary, "the lesson's summary", TEXT_MAX, empty=True)
    # stored as read: what a step holds beyond its fields is not kept
    stored = [step.to_json() for step in read_steps(steps)]
    found = WrittenLesson.objects.select_for_update().filter(graph=graph).first()
    if found is None:
        if WrittenLesson.objects.filter(author_id=user.pk).count() >= WRITTEN_MAX:
            raise GeonError(f"you have written {WRITTEN_MAX} lessons, the most one may")
        found = WrittenLesson(graph=graph, author_id=user.pk, key=new_key(title))
    elif found.author_id != user.pk:  # written by an earlier owner: withdrawn, now re-issued
        found.author_id, found.key = user.pk, new_key(title)
    found.title, found.summary, found.steps = title, summary, stored
    found.version = graph.current_version.number
    found.save()
    return found


@transaction.atomic
def do_drop_lesson(user: User, graph_id: uuid.UUID | str) -> None:
    """Withdraw the lesson published on a graph (its owner only); students keep their
    copies."""
    graph = graphs.check_can_view(user, graph_id)
    check_owner(user, graph, "withdraw the lesson on it")
    WrittenLesson.objects.filter(graph=graph).delete()
