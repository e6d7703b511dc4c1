"""The runs' live feed on a graph's websockets (DESIGN.md §6 ``run`` events: ``queued``,
``progress``, ``done``, ``failed``), registered with :mod:`geon.graphs.services.feeds` by
:class:`geon.runs.apps.RunsConfig`.

A run only moves forward — queued, running (its progress growing), then done or failed — so a
client that has a state of a run drops any state not past it (a run event can arrive twice,
published and polled, or late).

>>> run_position({"id": 7, "status": "running", "progress": 0.5})
(7, (1, 0.5))
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable
from datetime import datetime
from typing import Any

from django.conf import settings

from geon.graphs.services.feeds import Feed
from geon.runs.models import Run
from geon.runs.services import run_json

#: The ``event`` of a run message for each run status.
EVENT_OF_STATUS = {
    Run.Status.QUEUED: "queued",
    Run.Status.RUNNING: "progress",
    Run.Status.DONE: "done",
    Run.Status.FAILED: "failed",
}

#: How far each status is along a run (done and failed both end it).
STATUS_ORDER = {
    Run.Status.QUEUED: 0,
    Run.Status.RUNNING: 1,
    Run.Status.DONE: 2,
    Run.Status.FAILED: 2,
}


def runs_changed_since(
    graph_id: uuid.UUID | str, since: datetime
) -> list[tuple[datetime, dict[str, Any]]]:
    """The graph's runs updated at or after ``since``, oldest change first: (updated, JSON)."""
    runs = (
        Run.objects.filter(graph_version__graph_id=graph_id, updated__gte=since)
        .select_related("graph_version", "plan")
        .order_by("updated", "id")
    )
    return [(run.updated, run_json(run)) for run in runs]


def run_position(run: dict[str, Any]) -> tuple[Hashable, tuple[int, float]]:
    """A run's id, and how far it is: its status, then its progress."""
    return run["id"], (STATUS_ORDER[Run.Status(run["status"])], run["progress"])


def run_message(run: dict[str, Any]) -> dict[str, Any]:
    """The ``run`` websocket message of a run's JSON (:func:`run_json`)."""
    return {"type": "run", "event": EVENT_OF_STATUS[Run.Status(run["status"])], "run": run}


#: Published as ``{"type": "run.event", "run": run_json(run)}`` by
#: the runs services (``publish``); polled where the worker's channel layer does not
#: reach the web process (``GEON_RUN_EVENTS_BY_POLLING``: the in-memory layer).
RUN_FEED = Feed(
    name="runs",
    event="run.event",
    item="run",
    changed_since=runs_changed_since,
    position=run_position,
    message=run_message,
    polled=lambda: bool(settings.GEON_RUN_EVENTS_BY_POLLING),
    poll_seconds=lambda: float(settings.GEON_RUN_POLL_SECONDS),
)
