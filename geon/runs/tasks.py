"""Celery tasks: ids in, a service call, the result stored and published by the service.

A worker, once ready, also reconciles the runs and renders that workers which are gone left
behind, then keeps doing so every ``GEON_RUN_SWEEP_SECONDS`` (:func:`geon.runs.services.sweep`).
"""

from __future__ import annotations

from typing import Any

from celery.signals import worker_ready
from django.conf import settings

from geon.celery import app
from geon.runs import services
from geon.runs.services.imports import do_import
from geon.runs.services.verifying import VERIFY_TASK, do_verify
from geon.runs.services.worker import EXECUTE_RUN, IMPORT_MODEL, RENDER_DIAGRAM


@app.task(name=EXECUTE_RUN)
def execute_run(run_id: int) -> None:
    """Execute run ``run_id`` (idempotent: a finished run is left alone)."""
    services.do_execute_run(run_id)


@app.task(name=RENDER_DIAGRAM)
def render_diagram(render_id: int) -> None:
    """Draw render ``render_id`` (idempotent: a finished render is left alone)."""
    services.do_render(render_id)


@app.task(
    name=IMPORT_MODEL,
    soft_time_limit=settings.GEON_IMPORT_SECONDS + 30,
    time_limit=settings.GEON_IMPORT_SECONDS + 60,
)
def import_model(import_id: int) -> None:
    """Convert model import ``import_id`` to a graph (idempotent: a finished one is left alone).
    The conversion's child process is killed after ``GEON_IMPORT_SECONDS``; the task's own
    limits (a prefork pool enforces them) are a second bound past it."""
    do_import(import_id)


@app.task(name=VERIFY_TASK)
def verify_plan(graph_id: str, version: int) -> None:
    """Compile a version's placed plan with XLA and cache ``geon verify``'s report."""
    do_verify(graph_id, version)


@app.task(name="geon.runs.ping")
def ping(n: int) -> int:
    """Do nothing with ``n``: the broker's stress test and benchmark count these through."""
    return n


@worker_ready.connect
def _start_sweeping(sender: Any = None, **kwargs: Any) -> None:
    """Reconcile stranded runs now and then periodically, in the worker's main process."""
    services.start_sweeper()
