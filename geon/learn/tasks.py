"""Celery tasks of the lessons app: ids in, a service call, the answer stored by the service."""

from __future__ import annotations

from geon.celery import app
from geon.learn.puzzles import CHECK_ATTEMPT, do_check_attempt


@app.task(name=CHECK_ATTEMPT)
def check_attempt(attempt_id: int) -> None:
    """Check a puzzle attempt (idempotent: a finished attempt is left alone)."""
    do_check_attempt(attempt_id)
