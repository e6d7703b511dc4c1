"""Celery tasks: ids in, a service call, the result stored and published by the service."""

from __future__ import annotations

from geon.celery import app
from geon.runs import services


@app.task(name="geon.runs.execute_run")
def execute_run(run_id: int) -> None:
    """Execute run ``run_id`` (idempotent: a finished run is left alone)."""
    services.do_execute_run(run_id)


@app.task(name="geon.runs.render_diagram")
def render_diagram(render_id: int) -> None:
    """Draw render ``render_id`` (idempotent: a finished render is left alone)."""
    services.do_render(render_id)


@app.task(name="geon.runs.ping")
def ping(n: int) -> int:
    """Do nothing with ``n``: the broker's stress test and benchmark count these through."""
    return n
