"""Handing work to the Celery worker, by task name.

The tasks (:mod:`geon.runs.tasks`) call the services, so the services name the tasks instead of
importing them: one direction of import, and these names are the tasks' registered names.
"""

from __future__ import annotations

from geon.celery import app

EXECUTE_RUN = "geon.runs.execute_run"
RENDER_DIAGRAM = "geon.runs.render_diagram"
IMPORT_MODEL = "geon.runs.import_model"


def queue_run(run_id: int, queue: str = "") -> None:
    """Ask a worker of ``queue`` (by default the configured one) to execute run ``run_id``."""
    app.send_task(EXECUTE_RUN, args=(run_id,), queue=queue or None)


def queue_render(render_id: int) -> None:
    """Ask a worker to draw render ``render_id``."""
    app.send_task(RENDER_DIAGRAM, args=(render_id,))


def queue_import(import_id: int) -> None:
    """Ask a worker to convert model import ``import_id``."""
    app.send_task(IMPORT_MODEL, args=(import_id,))
