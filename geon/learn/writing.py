"""Lessons that teachers write in the editor (issue 19, item 3): a graph's editor writes its
steps (Markdown text, the nodes to highlight, a task), and the lesson is then read, opened,
tried, checked and assigned like a shipped one, by its key. A student's copy starts from the
graph's document as it is when they open it."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from django.db import transaction
from django.utils.text import slugify

from geon.core.errors import GeonError
from geon.graphs import services as graphs
from geon.graphs.services.access import User
from geon.learn.models import WrittenLesson
from geon.teaching.lessons import LESSONS, TEXT_MAX, TITLE_MAX, Lesson, read_steps, read_text

#: The most lessons one person writes.
WRITTEN_MAX = 200


def as_lesson(written: WrittenLesson) -> Lesson:
    """A written lesson as the shipped ones are read: its graph is built from the document the
    graph has now."""
    return Lesson(
        written.key,
        written.title,
        written.summary,
        lambda: graphs.live_document(written.graph).document,
        read_steps(written.steps),
    )


def written_json(written: WrittenLesson) -> dict[str, Any]:
    """What the editor's lesson writer reads back: the lesson and where students open it."""
    return {
        **as_lesson(written).to_json(),
        "graph": str(written.graph_id),
        "author": written.author.get_username(),
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
    """Write (or rewrite) the lesson on a graph (editor and up); every value is checked
    before anything is stored, and the first bad one is named."""
    graph = graphs.check_can_edit(user, graph_id)
    assert user.pk is not None  # check_can_edit refuses anonymous users
    title = read_text(title, "the lesson's title", TITLE_MAX)
    summary = read_text(summary, "the lesson's summary", TEXT_MAX, empty=True)
    # stored as read: what a step holds beyond its fields is not kept
    stored = [step.to_json() for step in read_steps(steps)]
    found = WrittenLesson.objects.select_for_update().filter(graph=graph).first()
    if found is None:
        if WrittenLesson.objects.filter(author_id=user.pk).count() >= WRITTEN_MAX:
            raise GeonError(f"you have written {WRITTEN_MAX} lessons, the most one may")
        key = f"{slugify(title)[:40].strip('-') or 'lesson'}-{secrets.token_hex(3)}"
        while key in LESSONS:  # a shipped lesson's key is never taken
            key = f"{key}-{secrets.token_hex(2)}"
        found = WrittenLesson(graph=graph, author_id=user.pk, key=key)
    found.title, found.summary, found.steps = title, summary, stored
    found.save()
    return found


@transaction.atomic
def do_drop_lesson(user: User, graph_id: uuid.UUID | str) -> None:
    """Remove the lesson written on a graph (editor and up); students keep their copies."""
    graph = graphs.check_can_edit(user, graph_id)
    WrittenLesson.objects.filter(graph=graph).delete()
