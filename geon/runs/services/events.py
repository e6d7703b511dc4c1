"""A run as JSON and its publication: every status change of a run is sent to its graph's
channel-layer group as a ``run.event`` (DESIGN.md §6 ``run`` events), which the websocket
consumers forward; with the in-memory channel layer, where the worker is another process, the
consumers read the changed rows instead (:mod:`geon.runs.feed`)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from geon.graphs.services import graph_group
from geon.runs.models import Run


def results_url(run: Run) -> str:
    """Where a done run's ``results.npz`` is downloaded."""
    return f"/api/v1/runs/{run.pk}/results.npz"


def run_json(run: Run) -> dict[str, Any]:
    """A run as JSON, as in the ``run`` websocket events and the HTTP answers.

    ``max_abs_diff`` (named as in the CLI's output) is the sharded run's max abs difference from
    the logical run per output key, ``null`` until a sharded run is done and for logical runs.
    """
    version = run.graph_version

    def iso(value: Any) -> str | None:
        return value.isoformat() if value else None

    done = run.status == Run.Status.DONE
    return {
        "id": run.pk,
        "graphId": str(version.graph_id),
        "version": version.number,
        "backend": run.backend,
        "engine": run.engine,
        "sharded": run.sharded,
        "plan": run.plan_id,
        # the name people read (the plan may have been renamed or deleted since: then its id)
        "planName": run.plan.name if run.plan_id is not None and run.plan else None,
        "intermediates": run.intermediates,
        "seed": run.seed,
        "uploadedInputs": bool(run.inputs),
        "status": run.status,
        "progress": run.progress,
        "step": run.step,
        "created": iso(run.created),
        "started": iso(run.started),
        "finished": iso(run.finished),
        "timings": run.timings,
        "result": run.result,
        "max_abs_diff": run.result.get("max_abs_diff") if done else None,
        "results": results_url(run) if done and run.results else None,
        "error": run.error,
        "workerPid": run.worker_pid,
        "attempts": run.attempts,
    }


def publish(run: Run) -> None:
    """Send the run's current state to its graph's group on the channel layer."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "run.event", "run": run_json(run)}
    async_to_sync(layer.group_send)(graph_group(run.graph_version.graph_id), message)
