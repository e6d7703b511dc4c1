"""Lessons for a person: their own copy of a lesson's graph (made once, kept with its edits),
and a step's task checked on the current version of a graph they may view."""

from __future__ import annotations

import hashlib
import math
import time
import uuid
from typing import Any

from django.contrib.auth.models import User as Account
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest

from geon.core.errors import GeonError, quote
from geon.graphs import services as graphs
from geon.graphs.gallery import Example
from geon.graphs.models import Graph
from geon.graphs.services.access import User
from geon.graphs.services.documents import parse_document
from geon.graphs.services.gallery import do_load_copy
from geon.learn.content.lessons import LESSONS, Lesson, TaskResult, check_task
from geon.learn.models import LessonCheck
from geon.learn.writing import as_lesson, published

#: A lesson's copy remembers its lesson under this prefix (``Graph.example``).
PREFIX = "lesson:"
#: Wrong lesson keys (ones no lesson is served under) one address may ask for within
#: :data:`MISSES_WINDOW_SECONDS` of its first; past that its lookups of keys other than the
#: shipped lessons' answer 429 until the window ends (issue 30, finding 5).
MISSES_MAX = 30
MISSES_WINDOW_SECONDS = 600


class LessonNotFound(graphs.GraphNotFound):
    """No such lesson, or no such step of it (404)."""


class KeysThrottled(GeonError):
    """Too many wrong lesson keys from one address (429, with ``retry_after`` seconds)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _misses_key(request: HttpRequest) -> str:
    address = request.META.get("REMOTE_ADDR") or "unknown"
    return "learn:key-misses:" + hashlib.sha256(address.encode()).hexdigest()


def lesson_for(request: HttpRequest, key: str) -> Lesson:
    """:func:`lesson_of` for a client: its address's wrong keys are counted, and once it asked
    for :data:`MISSES_MAX` of them within the window, keys other than the shipped lessons' are
    refused (:class:`KeysThrottled`) before any lookup, so that keys cannot be guessed by the
    million. The counts live in Django's cache (Redis when ``REDIS_URL`` is set)."""
    if key in LESSONS:
        return LESSONS[key]
    counter = _misses_key(request)
    found = cache.get_many([f"{counter}:n", f"{counter}:t"])
    if int(found.get(f"{counter}:n", 0)) >= MISSES_MAX:
        started = float(found.get(f"{counter}:t", time.time()))
        wait = max(1, math.ceil(started + MISSES_WINDOW_SECONDS - time.time()))
        minutes = math.ceil(wait / 60)
        raise KeysThrottled(
            f"{MISSES_MAX} lesson links that open no lesson were asked for from your address "
            f"within {MISSES_WINDOW_SECONDS // 60} minutes; try again in {minutes} minute"
            f"{'s' if minutes != 1 else ''}, with the link exactly as it was shared (the "
            "shipped lessons open meanwhile)",
            wait,
        )
    try:
        return lesson_of(key)
    except LessonNotFound:
        now = time.time()
        cache.add(f"{counter}:t", now, MISSES_WINDOW_SECONDS)
        cache.add(f"{counter}:n", 0, MISSES_WINDOW_SECONDS)
        try:
            cache.incr(f"{counter}:n")
        except ValueError:  # the window ended between add and incr
            cache.set_many({f"{counter}:t": now, f"{counter}:n": 1}, MISSES_WINDOW_SECONDS)
        raise


def lesson_of(key: str) -> Lesson:
    """A shipped lesson, or one a graph's owner published (:mod:`geon.learn.writing`) and
    that is still served, by its key."""
    if key in LESSONS:
        return LESSONS[key]
    written = published(key)
    if written is None:
        valid = ", ".join(f'"{k}"' for k in LESSONS)
        raise LessonNotFound(
            f"lesson {quote(key)} does not exist; the shipped ones are ({valid}), and a "
            "teacher's lesson opens from the link they shared, while they own its graph"
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
