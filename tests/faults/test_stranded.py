"""No stranded runs: what a worker that is gone left ``running`` or ``queued`` is handed to a
worker again, and after ``GEON_RUN_MAX_ATTEMPTS`` failed with the reason (the sweep every worker
runs, and a redelivered task). No worker runs here, and each test's transaction is rolled back,
so the messages a hand-over sends once committed are never sent: a worker of the session cannot
change these rows under the test. ``test_chaos`` does the same with real processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from geon.runs.models import Render, Run
from geon.runs.services import (
    RENDER_RETRY_SECONDS,
    check_can_run,
    do_execute_run,
    do_queue_run,
    do_request_render,
    sweep,
)


def dead_pid() -> int:
    """The id of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def queued_run(user: Any, graph: Any) -> Run:
    return do_queue_run(check_can_run(user, graph.pk), user)


def left_running(run: Run, *, attempts: int, pid: int, beat_ago: float = 0.0) -> Run:
    """``run`` as a worker that was executing it left it."""
    now = timezone.now()
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING, attempts=attempts, worker_pid=pid,
        worker_host=socket.gethostname(), started=now, heartbeat=now - timedelta(seconds=beat_ago),
    )  # fmt: skip
    return Run.objects.get(pk=run.pk)


@pytest.mark.django_db
def test_a_run_whose_worker_process_is_gone_is_queued_again(queued_run: Run) -> None:
    left_running(queued_run, attempts=1, pid=dead_pid())
    assert sweep() == {"running": 1, "queued": 0, "renders": 0}
    run = Run.objects.get(pk=queued_run.pk)
    assert (run.status, run.attempts, run.error) == ("queued", 2, "")


@pytest.mark.django_db
def test_a_run_past_its_attempts_fails_with_the_reason(queued_run: Run) -> None:
    left_running(queued_run, attempts=3, pid=dead_pid())
    assert sweep() == {"running": 1, "queued": 0, "renders": 0}
    run = Run.objects.get(pk=queued_run.pk)
    assert (run.status, run.error) == (
        "failed",
        "the worker stopped while running this; retried 2 times",
    )
    assert run.finished is not None


@pytest.mark.django_db
def test_a_run_with_a_live_worker_is_left_alone_until_its_heartbeat_is_stale(
    queued_run: Run, settings: Any
) -> None:
    left_running(queued_run, attempts=1, pid=os.getpid())
    assert sweep() == {"running": 0, "queued": 0, "renders": 0}
    stale = 3 * settings.GEON_RUN_HEARTBEAT_SECONDS + 1
    left_running(queued_run, attempts=1, pid=os.getpid(), beat_ago=stale)
    assert sweep()["running"] == 1
    assert Run.objects.get(pk=queued_run.pk).status == "queued"


@pytest.mark.django_db
def test_a_run_sent_to_another_queue_is_left_to_that_queues_workers(
    queued_run: Run, settings: Any
) -> None:
    # given a run whose worker is gone, sent to the queue of another kind of worker (GPU, say)
    assert queued_run.queue == settings.CELERY_TASK_DEFAULT_QUEUE
    left_running(queued_run, attempts=1, pid=dead_pid())
    Run.objects.filter(pk=queued_run.pk).update(queue="gpu")
    # then this queue's sweep leaves it alone, and a sweep of that queue hands it back there
    assert sweep() == {"running": 0, "queued": 0, "renders": 0}
    settings.CELERY_TASK_DEFAULT_QUEUE = "gpu"
    assert sweep() == {"running": 1, "queued": 0, "renders": 0}
    run = Run.objects.get(pk=queued_run.pk)
    assert (run.status, run.attempts, run.queue) == ("queued", 2, "gpu")


@pytest.mark.django_db
def test_a_queued_run_is_handed_over_only_when_no_run_started_for_a_while(
    queued_run: Run, settings: Any
) -> None:
    later = timezone.now() + timedelta(seconds=settings.GEON_RUN_REQUEUE_SECONDS + 1)
    # another run started recently: the queue is moving, nothing is handed over
    moving = Run.objects.create(graph_version=queued_run.graph_version, status="done")
    Run.objects.filter(pk=moving.pk).update(started=later)
    assert sweep(later)["queued"] == 0
    Run.objects.filter(pk=moving.pk).delete()
    # nothing started since: its message was lost, so it is handed over, then failed
    for attempts in (2, 3):
        assert sweep(later)["queued"] == 1
        assert Run.objects.get(pk=queued_run.pk).attempts == attempts
        later += timedelta(seconds=settings.GEON_RUN_REQUEUE_SECONDS + 1)
    assert sweep(later)["queued"] == 1
    run = Run.objects.get(pk=queued_run.pk)
    assert run.status == "failed"
    assert run.error.startswith("no worker started this run; it was handed to a worker 3 times")


@pytest.mark.django_db
def test_a_redelivered_task_of_a_run_whose_worker_died_runs_it_as_a_new_attempt(
    queued_run: Run,
) -> None:
    left_running(queued_run, attempts=1, pid=dead_pid())
    do_execute_run(queued_run.pk)
    run = Run.objects.get(pk=queued_run.pk)
    assert (run.status, run.attempts, run.error) == ("done", 2, "")


@pytest.mark.django_db
def test_a_duplicate_task_of_a_run_a_live_worker_runs_changes_nothing(queued_run: Run) -> None:
    before = left_running(queued_run, attempts=1, pid=os.getpid())
    do_execute_run(queued_run.pk)
    after = Run.objects.get(pk=queued_run.pk)
    assert (after.status, after.attempts, after.updated) == ("running", 1, before.updated)


@pytest.mark.django_db
def test_a_render_no_worker_draws_is_handed_over_then_failed(graph: Any) -> None:
    render = do_request_render(graph.current_version, "svg")
    later = timezone.now()
    for attempts in (2, 3):
        later += timedelta(seconds=RENDER_RETRY_SECONDS + 1)
        assert sweep(later)["renders"] == 1
        assert Render.objects.get(pk=render.pk).attempts == attempts
    later += timedelta(seconds=RENDER_RETRY_SECONDS + 1)
    assert sweep(later)["renders"] == 1
    failed = Render.objects.get(pk=render.pk)
    assert (failed.status, failed.error) == (
        "failed",
        "no worker finished drawing this; it was handed to a worker 3 times",
    )


@pytest.fixture
def run_for_this_thread(user: Any, graph: Any, settings: Any) -> Run:
    """A queued run sent to a queue no worker process consumes: the test's own thread is its
    worker (a worker process the suite has running would otherwise take it first)."""
    settings.CELERY_TASK_DEFAULT_QUEUE = f"nobody-{uuid.uuid4().hex[:8]}"
    return do_queue_run(check_can_run(user, graph.pk), user)


@pytest.mark.django_db(transaction=True)
def test_an_attempt_handed_over_while_it_ran_drops_its_outcome(
    run_for_this_thread: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued_run = run_for_this_thread
    # given a run executing in a worker thread, held in "running" for a moment
    monkeypatch.setenv("GEON_TEST_RUN_DELAY_SECONDS", "1.5")
    worker = threading.Thread(target=do_execute_run, args=(queued_run.pk,))
    worker.start()
    deadline = time.monotonic() + 30
    while Run.objects.get(pk=queued_run.pk).status != "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # when a sweep takes its worker for gone (the heartbeat looks stale from 5 minutes on, as a
    # heartbeat late under load would) and hands the run over
    assert sweep(now=timezone.now() + timedelta(minutes=5))["running"] == 1
    worker.join(timeout=60)
    # then the first attempt's outcome is dropped: the run belongs to the attempt it was handed
    # to, which waits for a worker of its queue
    run = Run.objects.get(pk=queued_run.pk)
    assert (run.status, run.attempts, run.finished, run.progress) == ("queued", 2, None, 0.0)
