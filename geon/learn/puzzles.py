"""Puzzles for a person (issue 19, item 4): the shipped puzzles of :mod:`geon.teaching`, each
opened as the person's own graph (the axes declared and the inputs placed, nothing else), and
checked by a worker on the graph's current version (:class:`~geon.learn.models.Attempt`).

A check is the property check of :func:`geon.teaching.puzzles.check_puzzle`: at least 50 draws
of axis lengths (1 included) and values, the first difference explained in axis names."""

from __future__ import annotations

import json
import secrets
import uuid
from datetime import timedelta
from functools import cache
from importlib import resources
from typing import Any

from django.contrib.auth.models import User as Account
from django.db import transaction
from django.utils import timezone

from geon import core as gc
from geon.celery import app
from geon.core.errors import GeonError, quote
from geon.core.nodes import split_level
from geon.graphs import services as graphs
from geon.graphs.gallery import Example
from geon.graphs.models import Graph
from geon.graphs.services.access import User
from geon.graphs.services.documents import parse_document
from geon.graphs.services.gallery import do_load_copy
from geon.learn.models import Attempt
from geon.learn.services import keep_tried
from geon.teaching.puzzles import PuzzleError, check_puzzle

#: A puzzle's copy remembers its puzzle under this prefix (``Graph.example``).
PREFIX = "puzzle:"
#: The registered name of the worker's task (:mod:`geon.learn.tasks`).
CHECK_ATTEMPT = "geon.learn.check_attempt"
#: Draws per check (the issue asks for at least 50).
DRAWS = 50
#: The most checks of one puzzle by one person still queued at once.
QUEUED_MAX = 3
#: Visitors without an account: the most of their checks queued at once (all visitors
#: together), the most kept in a day, the largest document (JSON bytes) and node count.
TRIES_QUEUED_MAX = 20
TRIES_PER_DAY_MAX = 2000
TRY_BYTES_MAX = 64 * 1024
TRY_NODES_MAX = 100


class PuzzleNotFound(graphs.GraphNotFound):
    """No such puzzle, or no such attempt of yours (404)."""


@cache
def puzzles() -> dict[str, dict[str, Any]]:
    """The shipped puzzles by key, in the order of their titles."""
    folder = resources.files("geon.teaching") / "puzzles"
    found = {
        path.name.removesuffix(".json"): json.loads(path.read_text(encoding="utf-8"))
        for path in folder.iterdir()
        if path.name.endswith(".json")
    }
    return dict(sorted(found.items(), key=lambda item: item[1]["title"]))


def puzzle_of(key: str) -> dict[str, Any]:
    if key not in puzzles():
        valid = ", ".join(f'"{k}"' for k in puzzles())
        raise PuzzleNotFound(f"puzzle {quote(key)} does not exist; expected one of ({valid})")
    return puzzles()[key]


def puzzle_json(key: str) -> dict[str, Any]:
    """What a student sees of a puzzle (not its reference)."""
    p = puzzle_of(key)
    return {
        "key": key,
        "title": p["title"],
        "description": p["description"],
        "axes": p["axes"],
        "inputs": p["inputs"],
        "allowedKernels": p["allowedKernels"],
    }


def starting_graph(puzzle: dict[str, Any]) -> dict[str, Any]:
    """The student's start: every axis declared (at a small length in its range) and every
    input placed with its label and axes."""
    axes = {
        name: gc.Axis(name, min(span["max"], max(span["min"], 3)))
        for name, span in puzzle["axes"].items()
    }
    tensors = []
    for label, spec in puzzle["inputs"].items():
        refs = []
        for ref in spec["axes"]:
            name, level = split_level(ref)
            refs.append(axes[name] + int(level) if level else axes[name])
        tensors.append(gc.placeholder(axes=refs, name=label, dtype=spec["dtype"]))
    return dict(gc.graph(tensors).to_json())


@transaction.atomic
def do_open_puzzle(person: Account, key: str) -> tuple[Graph, bool]:
    """``person``'s own graph for the puzzle (made once): (graph, created)."""
    p = puzzle_of(key)
    example = Example(
        PREFIX + key, p["title"], f"**Puzzle.** {p['description']}", starting_graph(p)
    )
    return do_load_copy(person, example, origin="puzzle")


@transaction.atomic
def do_keep_puzzle(person: Account, key: str, document: Any) -> tuple[Graph, bool]:
    """``person``'s graph for the puzzle, holding what they built before signing in."""
    return keep_tried(person, do_open_puzzle(person, key), document)


def attempt_json(attempt: Attempt) -> dict[str, Any]:
    return {
        "id": attempt.pk,
        "key": attempt.key,
        "puzzle": attempt.puzzle,
        "version": attempt.version,
        "status": attempt.status,
        "solved": attempt.solved,
        "result": attempt.result,
        "error": attempt.error,
        "created": attempt.created.isoformat(),
    }


def do_queue_attempt(user: User, key: str, graph_id: uuid.UUID | str) -> Attempt:
    """Queue a check of the current version of ``graph_id`` (one ``user`` may view) as a
    solution of puzzle ``key``; refused while :data:`QUEUED_MAX` of theirs wait."""
    puzzle_of(key)
    graph = graphs.check_can_view(user, graph_id)
    assert user.pk is not None  # check_can_view refuses anonymous users
    waiting = Attempt.objects.filter(user_id=user.pk, puzzle=key, status=Attempt.Status.QUEUED)
    if waiting.count() >= QUEUED_MAX:
        raise graphs.AccessDenied(
            f"{QUEUED_MAX} checks of this puzzle are still waiting for the worker; wait for them"
        )
    assert graph.current_version is not None
    attempt = Attempt.objects.create(
        user_id=user.pk, puzzle=key, graph=graph, version=graph.current_version.number
    )
    transaction.on_commit(lambda: app.send_task(CHECK_ATTEMPT, args=(attempt.pk,)))
    return attempt


class TriesBusy(GeonError):
    """Too many checks of visitors without an account are waiting (429)."""


def tried_document(document: Any) -> dict[str, Any]:
    """A visitor's document, refused with the reason when it is too big or not a graph."""
    size = len(json.dumps(document, separators=(",", ":")))
    if size > TRY_BYTES_MAX:
        raise GeonError(
            f"the graph is {size:,} bytes of JSON; a puzzle's solution may be at most "
            f"{TRY_BYTES_MAX:,} (sign in to work on bigger graphs)"
        )
    graph = parse_document(document)
    if len(graph.nodes) > TRY_NODES_MAX:
        raise GeonError(
            f"the graph has {len(graph.nodes)} nodes; a puzzle's solution may have at most "
            f"{TRY_NODES_MAX}"
        )
    return dict(document)


@transaction.atomic
def do_queue_try(key: str, document: Any) -> Attempt:
    """Queue a check of a visitor's ``document`` (no account: their browser keeps the work)
    as a solution of puzzle ``key``. All visitors together have at most
    :data:`TRIES_QUEUED_MAX` checks waiting and :data:`TRIES_PER_DAY_MAX` a day; checks
    older than a day are forgotten."""
    puzzle_of(key)
    document = tried_document(document)
    day_ago = timezone.now() - timedelta(days=1)
    tries = Attempt.objects.filter(user=None)
    tries.filter(created__lt=day_ago).delete()
    if tries.filter(status=Attempt.Status.QUEUED).count() >= TRIES_QUEUED_MAX:
        raise TriesBusy(
            f"{TRIES_QUEUED_MAX} checks of visitors are waiting for the worker; try again in "
            "a minute, or sign in"
        )
    if tries.count() >= TRIES_PER_DAY_MAX:
        raise TriesBusy(
            f"visitors have made {TRIES_PER_DAY_MAX:,} checks today; sign in to check yours"
        )
    attempt = Attempt.objects.create(puzzle=key, document=document, key=secrets.token_urlsafe(24))
    transaction.on_commit(lambda: app.send_task(CHECK_ATTEMPT, args=(attempt.pk,)))
    return attempt


def get_try(key: str) -> Attempt:
    found = Attempt.objects.filter(user=None, key=key).first() if key else None
    if found is None:
        raise PuzzleNotFound("this check does not exist (checks are kept for a day)")
    return found


def get_attempt(user: User, attempt_id: int) -> Attempt:
    found = Attempt.objects.filter(pk=attempt_id, user_id=user.pk or 0).first()
    if found is None:
        raise PuzzleNotFound(f'check "{attempt_id}" does not exist or is not yours')
    return found


def do_check_attempt(attempt_id: int) -> None:
    """The worker's side: check a queued attempt and store the answer (idempotent)."""
    attempt = Attempt.objects.select_related("graph").filter(pk=attempt_id).first()
    if attempt is None or attempt.status != Attempt.Status.QUEUED:
        return
    if attempt.graph is None:
        document = attempt.document
    else:
        document = graphs.version_of(attempt.graph, attempt.version).document
    try:
        result = check_puzzle(puzzle_of(attempt.puzzle), document, draws=DRAWS)
    except PuzzleError as error:
        attempt.status, attempt.error = Attempt.Status.FAILED, str(error)
    else:
        attempt.status, attempt.solved = Attempt.Status.DONE, result.solved
        attempt.result = result.to_json()
    attempt.finished = timezone.now()
    attempt.save()
