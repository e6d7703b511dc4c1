"""The sweep: reconciles what workers that are gone left behind (DESIGN.md §6; a run survives
its worker's crash). Running runs whose worker stopped
(:func:`~geon.runs.services.attempts.worker_gone`), runs queued while no run started (their
message was lost) and renders waiting too long are each handed to a worker again, or failed with
the reason after ``GEON_RUN_MAX_ATTEMPTS``. Model imports left in review for their axes' names
(issue 35) over ``GEON_IMPORT_REVIEW_HOURS`` are expired, their uploads deleted
(:func:`sweep_reviews`). Each worker sweeps every heartbeat (:func:`start_sweeper`)."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection as db_connection
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from geon.runs.models import ModelImport, Render, Run
from geon.runs.services.attempts import fail_stranded, worker_gone
from geon.runs.services.events import publish
from geon.runs.services.files import do_delete_files
from geon.runs.services.renders import hand_over_render, render_stuck
from geon.runs.services.worker import queue_run

log = logging.getLogger(__name__)


def sweep(now: datetime | None = None) -> dict[str, int]:
    """Reconcile what workers that are gone left behind: running runs whose worker stopped, runs
    queued over ``GEON_RUN_REQUEUE_SECONDS`` while no run started (their message was lost), and
    renders waiting over
    :data:`~geon.runs.services.renders.RENDER_RETRY_SECONDS`. Each is handed to a worker again, or
    failed with the reason after ``GEON_RUN_MAX_ATTEMPTS``. Only runs sent to this process's
    queue (``GEON_CELERY_QUEUE``) are swept: they go back to it. Returns how many of each."""
    now = now or timezone.now()
    requeue_before = now - timedelta(seconds=settings.GEON_RUN_REQUEUE_SECONDS)
    counts = {"running": 0, "queued": 0, "renders": 0}
    mine = Run.objects.filter(
        Q(queue=settings.CELERY_TASK_DEFAULT_QUEUE) | Q(queue="")
    ).select_for_update()
    with transaction.atomic():
        for run in mine.filter(status=Run.Status.RUNNING):
            if worker_gone(run, now):
                _hand_over_run(run, now)
                counts["running"] += 1
        moving = Run.objects.filter(started__gte=requeue_before).exists()
        if not moving:
            lost = mine.filter(status=Run.Status.QUEUED, queued__lt=requeue_before)
            for run in lost:
                _hand_over_run(run, now)
                counts["queued"] += 1
        waiting = Render.objects.select_for_update().filter(
            status__in=(Render.Status.QUEUED, Render.Status.RUNNING)
        )
        for found in waiting:
            if render_stuck(found, now):
                hand_over_render(found, now)
                counts["renders"] += 1
    if any(counts.values()):
        log.warning("sweep: handed over or failed %s", counts)
    return counts


def review_expired(hours: int) -> str:
    """Why an import left in review was expired (``GET /api/v1/imports/<id>``'s ``error``)."""
    return (
        f"nobody named its axes within {hours} h of the import (GEON_IMPORT_REVIEW_HOURS), so "
        "its upload was deleted; import the model again to name them"
    )


def sweep_reviews(now: datetime | None = None) -> int:
    """Expire the model imports left in ``review`` (waiting for their axes' names, issue 35)
    since over ``GEON_IMPORT_REVIEW_HOURS`` before ``now`` (counted from ``review_since``, when
    the worker stopped it there, not from the upload; from ``created`` where that is NULL, so
    no review is kept for ever): each upload is deleted once that commits, its status is
    ``expired`` and its ``error`` says why (:func:`review_expired`).
    Imports of every queue are swept: whichever worker sees one first expires it. How many."""
    now = now or timezone.now()
    hours = settings.GEON_IMPORT_REVIEW_HOURS
    before = now - timedelta(hours=hours)
    uploads: list[str] = []
    count = 0
    with transaction.atomic():
        # a review with no review_since (a row from before the field, or one stopped there
        # without it) counts from its upload: review_since__lt alone would skip it forever
        left = (
            ModelImport.objects.select_for_update()
            .alias(since=Coalesce("review_since", "created"))
            .filter(status=ModelImport.Status.REVIEW, since__lt=before)
        )
        for found in left:
            if found.upload.name:
                uploads.append(found.upload.name)
                found.upload = ""
            found.status, found.step = ModelImport.Status.EXPIRED, ""
            found.error, found.finished = review_expired(hours), now
            found.save(update_fields=["upload", "status", "step", "error", "finished"])
            count += 1
        transaction.on_commit(lambda: do_delete_files(uploads))
    if count:
        log.warning("sweep: expired %d model imports left in review over %d h", count, hours)
    return count


def sweep_once() -> None:
    """One round of the sweeper: :func:`sweep` and :func:`sweep_reviews`, each on its own, so
    one failing (the database away for a moment, an upload that cannot be deleted) neither stops
    the other nor the next round; each failure is logged."""
    for step in (sweep, sweep_reviews):
        try:
            step()
        except Exception:  # try again next time
            log.exception("sweep failed: %s", step.__name__)
        finally:
            db_connection.close()


def start_sweeper() -> threading.Thread:
    """Run :func:`sweep` and :func:`sweep_reviews` now and every ``GEON_RUN_HEARTBEAT_SECONDS``
    in a daemon thread (the worker's main process starts it once ready)."""

    def loop() -> None:
        while True:
            sweep_once()
            time.sleep(settings.GEON_RUN_HEARTBEAT_SECONDS)

    thread = threading.Thread(target=loop, name="geon-sweeper", daemon=True)
    thread.start()
    return thread


def _hand_over_run(run: Run, now: datetime) -> None:
    """Queue a stranded run again (a new attempt), or fail it once it had all its attempts."""
    if run.attempts >= settings.GEON_RUN_MAX_ATTEMPTS:
        if run.status == Run.Status.RUNNING:
            fail_stranded(run, now)
        else:
            _fail_never_started(run, now)
        return
    log.warning("run %s was stranded (%s); handing it over again", run.pk, run.status)
    run.attempts += 1
    run.status = Run.Status.QUEUED
    run.progress = 0.0
    run.queued = now
    run.save()
    pk, queue = run.pk, run.queue
    transaction.on_commit(lambda: publish(run))
    transaction.on_commit(lambda: queue_run(pk, queue))


def _fail_never_started(run: Run, now: datetime) -> None:
    """Fail a queued run that no worker started in all its attempts."""
    run.status = Run.Status.FAILED
    run.error = (
        f"no worker started this run; it was handed to a worker {run.attempts} times, "
        f"{settings.GEON_RUN_REQUEUE_SECONDS} s apart (is a worker running? /healthz)"
    )
    run.finished = now
    run.save()
    transaction.on_commit(lambda: publish(run))
