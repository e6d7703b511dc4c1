"""Runs: queue a graph version on the worker, execute it there, publish its status events.

The web process calls :func:`check_can_run` then :func:`do_queue_run`; the worker's task calls
:func:`do_execute_run`. Every status change is published to the graph's channel-layer group as a
``run`` event (DESIGN.md §6); with the in-memory channel layer the websocket consumers poll the
rows instead, since the worker is another process.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.models import User as Account
from django.db import transaction
from django.utils import timezone

from geon import execute
from geon.core.errors import GeonError
from geon.core.graph import Graph as Document
from geon.graphs.models import GraphVersion
from geon.graphs.services import User, check_can_view, document_issues, graph_group
from geon.runs.models import Run

log = logging.getLogger(__name__)

#: Inputs a run is not given come from ``numpy.random.default_rng(RUN_SEED)``.
RUN_SEED = 0

#: The ``event`` of a run message for each run status.
EVENT_OF_STATUS = {
    Run.Status.QUEUED: "queued",
    Run.Status.RUNNING: "progress",
    Run.Status.DONE: "done",
    Run.Status.FAILED: "failed",
}


class RunRefused(GeonError):
    """A run cannot be queued: an unknown backend (``invalid_backend``) or a graph with error
    issues (``graph_has_errors``, with the issues)."""

    def __init__(self, code: str, message: str, issues: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.issues = issues


def execute_document(
    document: dict[str, Any], *, backend: str, progress: Callable[[float], None]
) -> dict[str, Any]:
    """The one call into the executor: a logical run with seeded inputs; its JSON summary."""
    result = execute.run(
        Document.from_json(document),
        seed=RUN_SEED,
        backend=backend,
        on_progress=lambda step: progress(step.fraction),
    )
    return result.summary()


def check_can_run(user: User, graph_id: uuid.UUID | str, backend: Any) -> tuple[GraphVersion, str]:
    """The graph's current version and the backend, if ``user`` may run it and it has no errors."""
    graph = check_can_view(user, graph_id)
    if backend not in Run.Backend.values:
        expected = ", ".join(f'"{b}"' for b in Run.Backend.values)
        raise RunRefused(
            "invalid_backend", f'backend "{backend}" is not known; expected one of {expected}'
        )
    version = graph.current_version
    assert version is not None  # check_can_view refuses graphs without a version
    errors = [i for i in document_issues(version.document) if i["severity"] == "error"]
    if errors:
        raise RunRefused(
            "graph_has_errors",
            f'graph "{graph.title}" version {version.number} has {len(errors)} error issue(s); '
            "fix them before running",
            errors,
        )
    return version, str(backend)


def do_queue_run(version: GraphVersion, user: User, backend: str) -> Run:
    """Store a queued run and, once committed, publish ``queued`` and hand it to the worker."""
    from geon.runs.tasks import execute_run

    requester = user if isinstance(user, Account) else None
    run = Run.objects.create(graph_version=version, requested_by=requester, backend=backend)
    transaction.on_commit(lambda: publish(run))
    transaction.on_commit(lambda: execute_run.delay(run.pk))
    return run


def do_execute_run(run_id: int) -> None:
    """Execute a queued run (in the worker). Idempotent: a finished run is left as it is."""
    with transaction.atomic():
        run = (
            Run.objects.select_for_update()
            .select_related("graph_version")
            .filter(pk=run_id)
            .first()
        )
        if run is None or run.finished_running:
            return
        run.status = Run.Status.RUNNING
        run.progress = 0.0
        run.started = timezone.now()
        run.worker_pid = os.getpid()
        run.timings = {"queued": (run.started - run.created).total_seconds()}
        run.save()
        transaction.on_commit(lambda: publish(run))

    def progress(fraction: float) -> None:
        run.progress = round(fraction, 6)
        run.save(update_fields=["progress", "updated"])
        publish(run)

    began = time.perf_counter()
    try:
        run.result = execute_document(
            run.graph_version.document, backend=run.backend, progress=progress
        )
        run.status = Run.Status.DONE
        run.progress = 1.0
    except GeonError as error:
        run.status = Run.Status.FAILED
        run.error = str(error)
    except Exception:
        log.exception("run %s failed unexpectedly", run_id)
        run.status = Run.Status.FAILED
        run.error = "the executor failed unexpectedly; the worker log has the details"
    run.timings = {**run.timings, "execute": round(time.perf_counter() - began, 6)}
    run.finished = timezone.now()
    run.save()
    publish(run)


def run_json(run: Run) -> dict[str, Any]:
    """A run as JSON, as in the ``run`` websocket events and the HTTP answers."""
    version = run.graph_version

    def iso(value: Any) -> str | None:
        return value.isoformat() if value else None

    return {
        "id": run.pk,
        "graphId": str(version.graph_id),
        "version": version.number,
        "backend": run.backend,
        "status": run.status,
        "progress": run.progress,
        "created": iso(run.created),
        "started": iso(run.started),
        "finished": iso(run.finished),
        "timings": run.timings,
        "result": run.result,
        "error": run.error,
        "workerPid": run.worker_pid,
    }


def run_event(run: Run) -> dict[str, Any]:
    """The ``run`` websocket message for the run's current status."""
    return {"type": "run", "event": EVENT_OF_STATUS[Run.Status(run.status)], "run": run_json(run)}


def publish(run: Run) -> None:
    """Send the run's current state to its graph's group on the channel layer."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "run.event", "run": run_json(run)}
    async_to_sync(layer.group_send)(graph_group(run.graph_version.graph_id), message)


def runs_changed_since(
    graph_id: uuid.UUID | str, since: datetime
) -> list[tuple[datetime, dict[str, Any]]]:
    """The graph's runs updated at or after ``since``, oldest change first: (updated, JSON)."""
    runs = (
        Run.objects.filter(graph_version__graph_id=graph_id, updated__gte=since)
        .select_related("graph_version")
        .order_by("updated", "id")
    )
    return [(run.updated, run_json(run)) for run in runs]
