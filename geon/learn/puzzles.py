"""Puzzles for a person (issue 19, item 4): the shipped puzzles of :mod:`geon.learn.content`, each
opened as the person's own graph (the axes declared and the inputs placed, nothing else), and
checked by a worker on the graph's current version (:class:`~geon.learn.models.Attempt`).

A check is the property check of :func:`geon.learn.content.puzzles.check_puzzle`: at least 50 draws
of axis lengths (1 included) and values, the first difference explained in axis names."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from importlib import resources
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User as Account
from django.db import connection, transaction
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
from geon.learn.content.puzzles import PuzzleError, check_puzzle, quiet_constraints
from geon.learn.models import Attempt
from geon.learn.services import keep_tried

#: A puzzle's copy remembers its puzzle under this prefix (``Graph.example``).
PREFIX = "puzzle:"
#: The registered name of the worker's task (:mod:`geon.learn.tasks`).
CHECK_ATTEMPT = "geon.learn.check_attempt"
#: Draws per check (the issue asks for at least 50).
DRAWS = 50
#: The most checks of one puzzle by one person still queued at once.
QUEUED_MAX = 3
#: The registered name of the worker's task for a visitor's check, routed to the tries queue
#: (``GEON_TRIES_QUEUE``, which :func:`do_queue_try` sends them to).
CHECK_TRY = "geon.learn.check_try"
#: Visitors without an account (issue 30, finding 8), each counted by their session and by
#: their address (an IPv6 address by its /64): the checks of one waiting at once, and made in
#: a day; the same for one address (a classroom behind one NAT shares it). Every visitor
#: together has at most TRIES_QUEUED_MAX waiting (the tries queue's bound) and
#: TRIES_PER_DAY_MAX a day (what is kept: a checked try keeps its answer, not its document).
TRIES_QUEUED_PER_VISITOR = 3
TRIES_PER_VISITOR_DAY = 100
TRIES_QUEUED_PER_ADDRESS = 10
TRIES_PER_ADDRESS_DAY = 300
TRIES_QUEUED_MAX = 20
TRIES_PER_DAY_MAX = 20_000
#: The largest document of a try (JSON bytes) and its most nodes.
TRY_BYTES_MAX = 64 * 1024
TRY_NODES_MAX = 100
#: The PostgreSQL advisory lock that queues visitors' tries one at a time (SQLite's
#: IMMEDIATE transactions already do).
TRIES_LOCK = 0x6765_6F6E_7472_79  # "geontry"


class PuzzleNotFound(graphs.GraphNotFound):
    """No such puzzle, or no such attempt of yours (404)."""


@cache
def puzzles() -> dict[str, dict[str, Any]]:
    """The shipped puzzles by key, in the order of their titles."""
    folder = resources.files("geon.learn.content") / "puzzles"
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
        "quietConstraints": quiet_of(key),
    }


@cache
def quiet_of(key: str) -> list[str]:
    """The warnings puzzle ``key`` asks for (its own pattern: the outer product's
    AccidentalBroadcast), which the editor does not show inside it (issue 36)."""
    return sorted(quiet_constraints(puzzle_of(key)))


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
    """A visitor's check refused for now: theirs, their address's or every visitor's are
    waiting or used up (429)."""


@dataclass(frozen=True)
class Visitor:
    """Who a visitor's try is counted against: SHA-256 digests of their session key (empty
    while they have no session: none of their tries is stored yet) and of their address."""

    session: str
    address: str

    @classmethod
    def of(cls, session_key: str | None, address: str | None) -> Visitor:
        return cls(digest(session_key) if session_key else "", digest(network_of(address)))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def network_of(address: str | None) -> str:
    """What one address is counted as: an IPv4 address itself, an IPv6 address its /64 (one
    host gets a whole /64)."""
    try:
        parsed = ipaddress.ip_address(address or "")
    except ValueError:
        return address or "unknown"
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


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


def _one_at_a_time() -> None:
    """Queue visitors' tries one at a time, so that counting them and adding one is atomic:
    concurrent tries never pass a cap. PostgreSQL: a transaction-scoped advisory lock; SQLite:
    the IMMEDIATE transaction (geon/settings.py) already holds the database's write lock."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [TRIES_LOCK])


def _refusal(visitor: Visitor) -> str | None:
    """Why ``visitor``'s try is refused now (None: it may be queued). Yours first, then your
    address's, then every visitor's, each naming the limit and what to do."""
    tries = Attempt.objects.filter(user=None)
    queued = tries.filter(status=Attempt.Status.QUEUED)
    if visitor.session:
        if queued.filter(visitor=visitor.session).count() >= TRIES_QUEUED_PER_VISITOR:
            return (
                f"{TRIES_QUEUED_PER_VISITOR} of your checks are still waiting for the worker, "
                "the most one visitor may have; wait for their answers"
            )
        if tries.filter(visitor=visitor.session).count() >= TRIES_PER_VISITOR_DAY:
            return (
                f"you have made {TRIES_PER_VISITOR_DAY} checks today, the most one visitor "
                "may make in a day; sign in to check yours"
            )
    if queued.filter(address=visitor.address).count() >= TRIES_QUEUED_PER_ADDRESS:
        return (
            f"{TRIES_QUEUED_PER_ADDRESS} checks from your address are still waiting for the "
            "worker, the most one address may have; try again in a minute, or sign in"
        )
    if tries.filter(address=visitor.address).count() >= TRIES_PER_ADDRESS_DAY:
        return (
            f"{TRIES_PER_ADDRESS_DAY} checks were made from your address today, the most one "
            "address may make in a day; sign in to check yours"
        )
    if queued.count() >= TRIES_QUEUED_MAX:
        return (
            f"{TRIES_QUEUED_MAX} checks of visitors are waiting for the worker; try again in "
            "a minute, or sign in"
        )
    if tries.count() >= TRIES_PER_DAY_MAX:
        return f"visitors have made {TRIES_PER_DAY_MAX:,} checks today; sign in to check yours"
    return None


def do_queue_try(key: str, document: Any, visitor: Visitor) -> Attempt:
    """Queue a check of a visitor's ``document`` (no account: their browser keeps the work)
    as a solution of puzzle ``key``, on the tries queue. The puzzle and the document are
    checked first; then, one visitor's try at a time, the quotas of :class:`Visitor` (see
    :data:`TRIES_QUEUED_PER_VISITOR` and below) are counted and the try is stored, or refused
    (:class:`TriesBusy`) with nothing stored. Tries older than a day are forgotten."""
    puzzle_of(key)
    document = tried_document(document)
    with transaction.atomic():
        _one_at_a_time()
        Attempt.objects.filter(user=None, created__lt=timezone.now() - timedelta(days=1)).delete()
        refused = _refusal(visitor)
        if refused is not None:
            raise TriesBusy(refused)
        attempt = Attempt.objects.create(
            puzzle=key,
            document=document,
            key=secrets.token_urlsafe(24),
            visitor=visitor.session,
            address=visitor.address,
        )
        queue = settings.GEON_TRIES_QUEUE  # its own worker's, never the default queue
        transaction.on_commit(lambda: app.send_task(CHECK_TRY, args=(attempt.pk,), queue=queue))
    return attempt


def own_try(attempt: Attempt, session_key: str) -> None:
    """Count ``attempt`` (a visitor's first, queued before they had a session) against the
    session they have now."""
    Attempt.objects.filter(pk=attempt.pk, user=None).update(visitor=digest(session_key))


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
    if attempt.graph is None:  # a visitor's try keeps its answer, not its document
        attempt.document = None
    attempt.save()
