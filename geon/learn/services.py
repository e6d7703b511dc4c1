"""Lessons for a person: their own copy of a lesson's graph (made once, kept with its edits),
and a step's task checked on the current version of a graph they may view."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User as Account
from django.db import transaction

from geon.core.errors import GeonError, quote
from geon.graphs import services as graphs
from geon.graphs.gallery import Example
from geon.graphs.models import Graph
from geon.graphs.services.access import User
from geon.graphs.services.documents import parse_document
from geon.graphs.services.gallery import do_load_copy
from geon.learn.models import LessonCheck, WrittenLesson
from geon.learn.writing import as_lesson
from geon.teaching.lessons import LESSONS, Lesson, TaskResult, check_task

#: A lesson's copy remembers its lesson under this prefix (``Graph.example``).
PREFIX = "lesson:"


class LessonNotFound(graphs.GraphNotFound):
    """No such lesson, or no such step of it (404)."""


def lesson_of(key: str) -> Lesson:
    """A shipped lesson, or one a teacher wrote (:mod:`geon.learn.writing`), by its key."""
    if key in LESSONS:
        return LESSONS[key]
    written = WrittenLesson.objects.filter(key=key).select_related("graph").first()
    if written is None:
        valid = ", ".join(f'"{k}"' for k in LESSONS)
        raise LessonNotFound(
            f"lesson {quote(key)} does not exist; the shipped ones are ({valid}), and a "
            "teacher's lesson opens from the link they shared"
        )
    return as_lesson(written)


@transaction.atomic
def do_open_lesson(person: Account, key: str) -> tuple[Graph, bool]:
    """``person``'s own copy of the lesson's graph, with its plans: (graph, created)."""
    lesson = lesson_of(key)
    example = Example(
        PREFIX + lesson.key,
        lesson.title,
        f"**Lesson: {lesson.title}.** {lesson.summary}",
        lesson.build().to_json(),
        lesson.plans,
    )
    return do_load_copy(person, example, origin="lesson")


def _task(key: str, step: int) -> dict[str, Any]:
    """The task of step ``step`` (1-based) of lesson ``key``, refused when there is none."""
    lesson = lesson_of(key)
    if not 1 <= step <= len(lesson.steps):
        raise LessonNotFound(
            f"lesson {quote(lesson.title)} has steps 1 to {len(lesson.steps)}, not {step}"
        )
    task = lesson.steps[step - 1].task
    if task is None:
        raise GeonError(f"step {step} of lesson {quote(lesson.title)} has no task to check")
    return task


def check_step(user: User, key: str, step: int, graph_id: uuid.UUID | str) -> TaskResult:
    """Whether the current version of ``graph_id`` (one ``user`` may view) does what step
    ``step`` (1-based) of the lesson asks."""
    task = _task(key, step)
    graph = graphs.check_can_view(user, graph_id)
    result = check_task(task, graphs.live_document(graph).document)
    assert user.pk is not None  # check_can_view refuses anonymous users
    LessonCheck.objects.create(user_id=user.pk, lesson=key, step=step, passed=result.passed)
    return result


def check_tried_step(key: str, step: int, document: Any) -> TaskResult:
    """Whether a visitor's ``document`` (no account: their browser keeps it) does what step
    ``step`` of the lesson asks; nothing is stored."""
    task = _task(key, step)
    return check_task(task, parse_document(document))


def keep_tried(person: Account, opened: tuple[Graph, bool], document: Any) -> tuple[Graph, bool]:
    """What ``person`` did before signing in (their browser's ``document``) as the next version
    of the copy just ``opened``: (graph, kept). A copy they already had keeps its own work."""
    graph, created = opened
    if created:
        graphs.do_update_graph(
            person,
            graph.pk,
            base_version=1,
            document=document,
            message="what you did before signing in, kept from your browser",
        )
    return graph, created


@transaction.atomic
def do_keep_lesson(person: Account, key: str, document: Any) -> tuple[Graph, bool]:
    """``person``'s copy of the lesson, holding what they did in it before signing in."""
    return keep_tried(person, do_open_lesson(person, key), document)
