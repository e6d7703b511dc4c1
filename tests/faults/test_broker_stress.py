"""The broker under load: 1,000 tasks from 4 producer processes through one real worker while
broadcast pings (what ``/healthz`` sends) run beside them. None is lost, the worker survives.

Runs on whichever broker the settings give: ``geonfs://`` by default, Redis with ``REDIS_URL``.
kombu's stock ``filesystem://`` transport fails this test (the worker dies with
``JSONDecodeError`` or a ping reads a torn exchange table); see ``geon/runs/broker.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from geon.celery import app

ROOT = Path(__file__).resolve().parents[2]
PRODUCERS = 4
TASKS_PER_PRODUCER = 250
DEADLINE_SECONDS = 240.0

PRODUCER = """
import sys
from geon.celery import app
queue, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for n in range(first, first + count):
    app.send_task("geon.runs.ping", args=[n], queue=queue)
"""


@pytest.fixture
def stress_worker(subprocess_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    """A real worker on its own queue of the configured broker; yields (process, log)."""
    queue = f"stress-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "worker.log"
    command = [
        sys.executable, "-m", "celery", "-A", "geon", "worker", "--pool=solo",
        "--loglevel=INFO", "-Q", queue, f"--hostname={queue}@localhost",
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    with log.open("wb") as out:
        worker = subprocess.Popen(
            command, env=subprocess_env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log.read_text(errors="replace"):
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        worker.queue = queue  # type: ignore[attr-defined]
        yield worker, log
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def done_tasks(log: Path) -> set[int]:
    """The ping arguments the worker's log says succeeded."""
    text = log.read_text(errors="replace")
    return {
        int(n) for n in re.findall(r"Task geon\.runs\.ping\[[^\]]+\] succeeded in \S+ (\d+)", text)
    }


@pytest.mark.django_db(transaction=True)
def test_a_thousand_tasks_from_four_producers_with_pings_beside_them(
    stress_worker: tuple[Any, Path], subprocess_env: dict[str, str]
) -> None:
    worker, log = stress_worker
    name = f"{worker.queue}@localhost"
    replies: list[int] = []
    stop = threading.Event()

    def pinging() -> None:  # what /healthz does, over and over
        while not stop.is_set():
            answered = app.control.ping(destination=[name], timeout=0.5)
            replies.append(len(answered))

    pinger = threading.Thread(target=pinging, daemon=True)
    pinger.start()
    # when four processes publish 250 tasks each at once
    producers = [
        subprocess.Popen(
            [sys.executable, "-c", PRODUCER, worker.queue, str(p * TASKS_PER_PRODUCER),
             str(TASKS_PER_PRODUCER)],
            env=subprocess_env, cwd=ROOT,
        )
        for p in range(PRODUCERS)
    ]  # fmt: skip
    try:
        assert [p.wait(timeout=120) for p in producers] == [0] * PRODUCERS
        deadline = time.monotonic() + DEADLINE_SECONDS
        expected = set(range(PRODUCERS * TASKS_PER_PRODUCER))
        while done_tasks(log) != expected and worker.poll() is None:
            assert time.monotonic() < deadline, f"{len(done_tasks(log))} of 1000 done"
            time.sleep(0.5)
    finally:
        stop.set()
        pinger.join(timeout=10)
    output = log.read_text(errors="replace")
    # then every task ran exactly once, the worker lives, nothing was torn or set aside
    assert worker.poll() is None, output[-4000:]
    assert done_tasks(log) == expected
    assert len(re.findall(r"Task geon\.runs\.ping\[", output)) == 2 * len(expected)
    assert "Unrecoverable error" not in output
    assert "undecodable" not in output
    if not settings.REDIS_URL:
        assert list((settings.BROKER_DIR / "bad").iterdir()) == []
    # and broadcasts went through while the tasks flowed, and still do
    assert len(replies) >= 3 and 1 in replies, replies
    assert app.control.ping(destination=[name], timeout=5) != []
