"""Celery tasks of the lessons app: ids in, a service call, the answer stored by the service.

A signed-in person's check runs on the default queue; a visitor's (no account) runs as
``check_try``, which ``do_queue_try`` sends to the tries queue (``GEON_TRIES_QUEUE``),
consumed by a worker of its own."""

from __future__ import annotations

from geon.celery import app
from geon.learn.puzzles import CHECK_ATTEMPT, CHECK_TRY, do_check_attempt


@app.task(name=CHECK_ATTEMPT)
def check_attempt(attempt_id: int) -> None:
    """Check a puzzle attempt (idempotent: a finished attempt is left alone)."""
    do_check_attempt(attempt_id)


@app.task(name=CHECK_TRY)
def check_try(attempt_id: int) -> None:
    """Check a visitor's try, on the tries queue (idempotent, as :func:`check_attempt`)."""
    do_check_attempt(attempt_id)
