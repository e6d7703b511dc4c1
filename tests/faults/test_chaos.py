"""Chaos: ``kill -9`` the worker of a real ``geon serve`` in the middle of a run. ``serve``
restarts it, the web server answers throughout, the run is handed to the new worker and ends
``done``, and a websocket client sees it end. Then the whole stack is stopped and started again
on the same data folder: the graph, its plan and its runs are all there.

The run is held in ``running`` by ``GEON_TEST_RUN_DELAY_SECONDS`` (a sleep before the executor
that only tests set), so the kill lands mid-run whatever the machine's speed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from geon.accounts.models import ApiToken
from geon.graphs.models import ShardPlan
from tests.processes import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 90.0
RUN_SECONDS = 120.0


class Serve:
    """One ``geon serve`` process on a port and data folder, with its log."""

    def __init__(self, env: dict[str, str], port: int, log: Path) -> None:
        self.env, self.port, self.log = env, port, log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "geon", "serve", "--port", str(self.port),
                 "--worker-name", f"chaos-{self.port}@localhost"],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while healthz(self.url) != 200:
            assert self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, self.output()
            time.sleep(0.5)

    def stop(self) -> int:
        assert self.process is not None
        return stop_process(self.process, signal.SIGINT, timeout=30)

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(
            (Path(self.env["GEON_DATA_DIR"]) / "serve.json").read_text()
        )
        return state

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]


def healthz(url: str) -> int:
    """The status of ``/healthz`` (0 when nothing answers)."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def call(url: str, token: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
def stack(subprocess_env: dict[str, str], tmp_path: Path) -> Iterator[Serve]:
    """A ``geon serve`` on its own data folder and queue, pointed at the test database."""
    env = dict(
        subprocess_env,
        GEON_DATA_DIR=str(tmp_path / "data"),
        GEON_CELERY_QUEUE=f"chaos-{uuid.uuid4().hex[:8]}",
        GEON_TEST_RUN_DELAY_SECONDS="4",
        GEON_RUN_HEARTBEAT_SECONDS="1",
    )
    serve = Serve(env, free_port(), tmp_path / "serve.log")
    try:
        yield serve
    finally:
        if serve.process is not None:
            serve.stop()


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_run_is_restarted_and_the_run_ends_done(
    stack: Serve, user: Any, graph: Any, session_cookie: Callable[[Any], bytes]
) -> None:
    plan = ShardPlan.objects.create(
        graph=graph, name="halves", mesh={"name": "m", "axes": {"x": 2}}
    )
    _, token = ApiToken.issue(user, "chaos")
    cookie = session_cookie(user).decode()
    stack.start()
    api = f"{stack.url}/api/v1"

    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]], list[int]]:
        events: list[dict[str, Any]] = []
        answers: list[int] = []
        ws = await websockets.connect(
            f"ws://127.0.0.1:{stack.port}/ws/graphs/{graph.pk}/",
            additional_headers={"Cookie": cookie},
            origin=websockets.Origin("http://127.0.0.1"),
        )

        async def listen() -> None:
            async for frame in ws:
                message = json.loads(frame)
                if message["type"] == "run":
                    events.append(message)

        async def probe(stop: asyncio.Event) -> None:  # the web server must answer throughout
            while not stop.is_set():
                answers.append(await asyncio.to_thread(healthz, stack.url))
                await asyncio.sleep(0.2)

        listener = asyncio.create_task(listen())
        stop = asyncio.Event()
        prober = asyncio.create_task(probe(stop))
        status, queued = await asyncio.to_thread(
            call, f"{api}/graphs/{graph.pk}/runs", token, "POST", {"backend": "numpy"}
        )
        assert status == 202, queued
        run_url = f"{api}/runs/{queued['id']}"
        deadline = time.monotonic() + RUN_SECONDS
        run: dict[str, Any] = queued
        while run["status"] != "running":
            assert time.monotonic() < deadline, (run, stack.output())
            await asyncio.sleep(0.2)
            run = (await asyncio.to_thread(call, run_url, token))[1]
        # when the worker is killed mid-run
        os.kill(stack.state()["workerPid"], signal.SIGKILL)
        while run["status"] not in ("done", "failed") or not any(
            e["run"]["id"] == run["id"] and e["event"] == run["status"] for e in events
        ):
            assert time.monotonic() < deadline, (run, stack.output())
            await asyncio.sleep(0.3)
            run = (await asyncio.to_thread(call, run_url, token))[1]
        stop.set()
        await prober
        listener.cancel()
        await ws.close()
        return run, events, answers

    run, events, answers = asyncio.run(scenario())
    # then serve restarted the worker and says so
    state = stack.state()
    assert (state["restarts"], state["lastExit"]["status"]) == (1, -signal.SIGKILL)
    assert "the worker process exited with status -9; restarting it" in stack.output()
    # the web server answered every probe (200, or 503 while no worker was up)
    assert answers and set(answers) <= {200, 503}, answers
    # the run was handed to the new worker and finished there; the websocket saw it end
    assert (run["status"], run["error"], run["attempts"]) == ("done", "", 2), run
    assert [e["event"] for e in events if e["run"]["id"] == run["id"]][-1] == "done"

    # when the whole stack is stopped and started again on the same data folder
    assert stack.stop() == 0
    stack.start()
    # then the graph, its plan and its runs are all there
    status, stored = call(f"{api}/graphs/{graph.pk}", token)
    assert (status, stored["version"]) == (200, 1)
    status, plans = call(f"{api}/graphs/{graph.pk}/plans", token)
    assert (status, [p["id"] for p in plans["plans"]]) == (200, [plan.pk])
    status, again = call(f"{api}/runs/{run['id']}", token)
    assert (status, again["status"], again["results"]) == (200, "done", run["results"])


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_pool_process_dies_on_every_attempt_fails_with_the_reason(
    stack: Serve, user: Any, graph: Any
) -> None:
    # given serve's worker (prefork) and a run on it
    _, token = ApiToken.issue(user, "chaos")
    stack.start()
    api = f"{stack.url}/api/v1"
    status, run = call(f"{api}/graphs/{graph.pk}/runs", token, "POST", {"backend": "numpy"})
    assert status == 202, run
    run_url = f"{api}/runs/{run['id']}"
    deadline = time.monotonic() + RUN_SECONDS
    killed: list[int] = []
    # when the pool process executing it is killed on every attempt (as the OOM killer would)
    while run["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, (run, stack.output())
        if run["status"] == "running" and run["workerPid"] not in killed:
            os.kill(run["workerPid"], signal.SIGKILL)
            killed.append(run["workerPid"])
        time.sleep(0.2)
        run = call(run_url, token)[1]
    # then the task came back after each loss, each time as a new attempt, and the third loss
    # failed the run with the reason the editor shows; serve's worker itself never stopped
    assert (run["status"], run["error"], run["attempts"]) == (
        "failed",
        "the worker stopped while running this; retried 2 times",
        3,
    ), stack.output()
    assert len(killed) == 3
    assert stack.state()["restarts"] == 0
