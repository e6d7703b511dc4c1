"""Which attempt holds a run: the worker that runs it (host and process id), its heartbeat, and
the fence on its writes. A running run whose worker process is gone from this host, or whose
heartbeat is older than three heartbeats, was stranded; a sweep hands it to a new attempt
(:mod:`geon.runs.services.sweep`), and from then on the old attempt's writes match no row
(:func:`claimed`), so its outcome cannot overwrite the new one's."""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from geon.runs.models import Run
from geon.runs.services.events import publish


def worker_identity() -> tuple[str, int]:
    """The host name and process id recorded on the runs this process executes."""
    return socket.gethostname(), os.getpid()


def worker_gone(run: Run, now: datetime) -> bool:
    """Whether the worker recorded on a running run has stopped: its process is gone from this
    host, or its heartbeat is stale."""
    host, _pid = worker_identity()
    if run.worker_host == host and run.worker_pid and not _process_alive(run.worker_pid):
        return True
    return run.heartbeat is None or run.heartbeat < _stale_before(now)


def claimed(run: Run) -> QuerySet[Run]:
    """The run's row while the attempt ``run`` holds it: running, on this worker process, at
    this attempt (a hand-over changes the status and the attempt)."""
    return Run.objects.filter(
        pk=run.pk,
        status=Run.Status.RUNNING,
        worker_host=run.worker_host,
        worker_pid=run.worker_pid,
        attempts=run.attempts,
    )


def stranded_reason(attempts: int) -> str:
    """What a run that no worker finished says, after ``attempts`` hand-overs."""
    retries = attempts - 1
    return (
        f"the worker stopped while running this; retried {retries} "
        f"time{'' if retries == 1 else 's'}"
    )


def fail_stranded(run: Run, now: datetime) -> None:
    """Fail a running run that had all its attempts (inside the caller's transaction)."""
    run.status = Run.Status.FAILED
    run.error = stranded_reason(run.attempts)
    run.finished = now
    run.save()
    transaction.on_commit(lambda: publish(run))


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def _stale_before(now: datetime) -> datetime:
    """A running run whose heartbeat is older than this was stranded by its worker."""
    return now - timedelta(seconds=3 * settings.GEON_RUN_HEARTBEAT_SECONDS)
