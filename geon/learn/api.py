"""REST endpoints of lessons under ``/api/v1/`` (issue 19):

- ``GET /lessons``: every lesson (key, title, summary, steps) — for anyone, signed in or not;
- ``GET /lessons/<key>``: one lesson;
- ``POST /lessons/<key>/steps/<n>/check`` ``{"graph": id}``: whether the graph (one you may
  view, at its current version) does what step ``n`` asks: ``{"passed", "message"}``;
- ``GET /puzzles``, ``GET /puzzles/<key>`` (for anyone; never the reference);
- ``POST /puzzles/<key>/attempts`` ``{"graph": id}``: a worker checks the graph's current
  version as a solution (202, the attempt ``queued``); ``GET /puzzles/attempts/<id>``: yours,
  ``done`` with ``{"solved", "draws", "counterexample"?}`` or ``failed`` with ``error``.

A graph's owner publishes a lesson on it (``geon.learn.writing``): the graph's current
version with the steps, read and opened like a shipped one by its key (128 random bits):

- ``GET /graphs/<id>/lesson`` (viewer and up: ``{"lesson"}``, null when none);
- ``PUT`` ``{"title", "summary", "steps"}`` (the owner only: published, or published again
  on the graph as it is now), ``DELETE`` (the owner only: withdrawn).

Every endpoint that reads a lesson by key counts the wrong keys of the client's address; too
many in ten minutes answer 429 with ``Retry-After`` (``services.lesson_for``).

Visitors without an account try lessons and puzzles on a document their browser keeps:

- ``POST /lessons/<key>/steps/<n>/try`` ``{"document"}``: the step's check on it (nothing stored);
- ``POST /puzzles/<key>/tries`` ``{"document"}``: a worker of the tries queue checks it (202
  with the check's unguessable ``key``; 429, naming the limit, while the visitor's, their
  address's or all visitors' checks wait or are used up: ``puzzles.Visitor``);
  ``GET /puzzles/tries/<key>``;
- once signed in, ``POST /lessons/<key>/keep`` and ``POST /puzzles/<key>/keep``
  ``{"document"}``: the person's own copy, made now holding that document (``kept``), or the
  copy they already had, left as it is.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router, Schema, Status

from geon.envelope import ERROR_STATUSES, answers, error_response
from geon.graphs.api import PATH_NUMBER
from geon.learn import puzzles, services, writing
from geon.learn.content.lessons import LESSONS

router = Router(tags=["lessons"])


class CheckIn(Schema):
    graph: uuid.UUID


class CheckOut(Schema):
    passed: bool
    message: str


class DocumentIn(Schema):
    document: dict[str, Any]


class WrittenIn(Schema):
    title: Any
    summary: Any = ""
    steps: Any


class KeptOut(Schema):
    graph: uuid.UUID
    kept: bool
    url: str


@router.get("/lessons", response=answers({200: dict[str, Any]}), auth=None)
def list_lessons(request: HttpRequest) -> dict[str, Any]:
    """Every lesson, in teaching order."""
    return {"lessons": [lesson.to_json() for lesson in LESSONS.values()]}


#: The statuses of endpoints that read a lesson by key: a wrong key counts against the
#: client's address, and too many of them answer 429 (services.lesson_for).
KEYED = (*ERROR_STATUSES, 429)


def _keys_throttled(throttled: services.KeysThrottled) -> HttpResponse:
    response = error_response(429, "too_many_requests", str(throttled))
    response["Retry-After"] = str(throttled.retry_after)
    return response


@router.get("/lessons/{key}", response=answers({200: dict[str, Any]}, KEYED), auth=None)
def get_lesson(request: HttpRequest, key: str) -> Any:
    """One lesson with its steps."""
    try:
        return services.lesson_for(request, key).to_json()
    except services.KeysThrottled as throttled:
        return _keys_throttled(throttled)


@router.post("/lessons/{key}/steps/{step}/check", response=answers({200: CheckOut}, KEYED))
def check_step(request: HttpRequest, key: str, payload: CheckIn, step: int = PATH_NUMBER) -> Any:
    """Check step ``step``'s task on a graph you may view."""
    try:
        services.lesson_for(request, key)
    except services.KeysThrottled as throttled:
        return _keys_throttled(throttled)
    result = services.check_step(request.user, key, step, payload.graph)
    return {"passed": result.passed, "message": result.message}


@router.post("/lessons/{key}/steps/{step}/try", response=answers({200: CheckOut}, KEYED), auth=None)
def try_step(request: HttpRequest, key: str, payload: DocumentIn, step: int = PATH_NUMBER) -> Any:
    """Check step ``step``'s task on a posted document (for anyone; nothing is stored)."""
    try:
        services.lesson_for(request, key)
    except services.KeysThrottled as throttled:
        return _keys_throttled(throttled)
    result = services.check_tried_step(key, step, payload.document)
    return {"passed": result.passed, "message": result.message}


@router.post("/lessons/{key}/keep", response=answers({200: KeptOut}, KEYED))
def keep_lesson(request: HttpRequest, key: str, payload: DocumentIn) -> Any:
    """Your copy of the lesson, holding what you did in it before signing in."""
    try:
        services.lesson_for(request, key)
    except services.KeysThrottled as throttled:
        return _keys_throttled(throttled)
    graph, kept = services.do_keep_lesson(request.user, key, payload.document)  # type: ignore[arg-type]
    return {"graph": graph.pk, "kept": kept, "url": f"/graphs/{graph.pk}/?lesson={key}"}


@router.get("/puzzles", response=answers({200: dict[str, Any]}), auth=None)
def list_puzzles(request: HttpRequest) -> dict[str, Any]:
    """Every shipped puzzle (what a student sees; the reference stays on the server)."""
    return {"puzzles": [puzzles.puzzle_json(key) for key in puzzles.puzzles()]}


@router.get("/puzzles/{key}", response=answers({200: dict[str, Any]}), auth=None)
def get_puzzle(request: HttpRequest, key: str) -> dict[str, Any]:
    """One puzzle."""
    return puzzles.puzzle_json(key)


@router.post("/puzzles/{key}/attempts", response=answers({202: dict[str, Any]}))
def queue_attempt(request: HttpRequest, key: str, payload: CheckIn) -> Status[dict[str, Any]]:
    """Have a worker check the graph's current version as a solution of puzzle ``key``."""
    attempt = puzzles.do_queue_attempt(request.user, key, payload.graph)
    return Status(202, puzzles.attempt_json(attempt))


@router.post(
    "/puzzles/{key}/tries",
    response=answers({202: dict[str, Any]}, (*ERROR_STATUSES, 429)),
    auth=None,
)
def queue_try(request: HttpRequest, key: str, payload: DocumentIn) -> Any:
    """Have a worker check a posted document as a solution of puzzle ``key`` (for anyone),
    counted against the visitor's session and address."""
    session = request.session
    visitor = puzzles.Visitor.of(session.session_key, request.META.get("REMOTE_ADDR"))
    try:
        attempt = puzzles.do_queue_try(key, payload.document, visitor)
    except puzzles.TriesBusy as busy:
        response = error_response(429, "too_many_requests", str(busy))
        response["Retry-After"] = "60"
        return response
    if not visitor.session:  # their first try: a session (made only now) counts the next
        session["geon.visitor"] = True
        session.save()
        assert session.session_key is not None
        puzzles.own_try(attempt, session.session_key)
    return Status(202, puzzles.attempt_json(attempt))


@router.get("/puzzles/tries/{try_key}", response=answers({200: dict[str, Any]}), auth=None)
def get_try(request: HttpRequest, try_key: str) -> dict[str, Any]:
    """A visitor's check, by the key its queueing answered."""
    return puzzles.attempt_json(puzzles.get_try(try_key))


@router.post("/puzzles/{key}/keep", response=answers({200: KeptOut}))
def keep_puzzle(request: HttpRequest, key: str, payload: DocumentIn) -> dict[str, Any]:
    """Your graph for the puzzle, holding what you built before signing in."""
    graph, kept = puzzles.do_keep_puzzle(request.user, key, payload.document)  # type: ignore[arg-type]
    return {"graph": graph.pk, "kept": kept, "url": f"/graphs/{graph.pk}/?puzzle={key}"}


@router.get("/puzzles/attempts/{attempt_id}", response=answers({200: dict[str, Any]}))
def get_attempt(request: HttpRequest, attempt_id: int = PATH_NUMBER) -> dict[str, Any]:
    """One of your checks, as the worker left it."""
    return puzzles.attempt_json(puzzles.get_attempt(request.user, attempt_id))


@router.get("/graphs/{graph_id}/lesson", response=answers({200: dict[str, Any]}))
def get_written(request: HttpRequest, graph_id: uuid.UUID) -> dict[str, Any]:
    """``{"lesson"}``: the lesson written on a graph, with the links its students open, or
    null when none is."""
    written = writing.written_lesson_of(request.user, graph_id)
    return {"lesson": None if written is None else writing.written_json(written)}


@router.put("/graphs/{graph_id}/lesson", response=answers({200: dict[str, Any]}))
def write_lesson(request: HttpRequest, graph_id: uuid.UUID, payload: WrittenIn) -> dict[str, Any]:
    """Publish (or publish again) the lesson on a graph: its title, summary and steps, on the
    graph's current version (the owner only)."""
    written = writing.do_write_lesson(
        request.user, graph_id, payload.title, payload.summary, payload.steps
    )
    return writing.written_json(written)


@router.delete("/graphs/{graph_id}/lesson", response=answers({204: None}))
def drop_lesson(request: HttpRequest, graph_id: uuid.UUID) -> Status[None]:
    """Withdraw the lesson published on a graph (the owner only; students keep their
    copies)."""
    writing.do_drop_lesson(request.user, graph_id)
    return Status(204, None)
