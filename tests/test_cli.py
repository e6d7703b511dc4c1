"""``python -m geon``: the verbs of DESIGN.md §8, and ``serve`` starting and stopping the stack."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.processes import free_port, geon, stop_process

ROOT = Path(__file__).resolve().parent.parent
VERBS = [
    "check", "run", "render", "shard", "plan", "cost", "train", "verify", "puzzle", "import",
    "export",
    "serve",
]  # fmt: skip


def test_help_lists_every_verb() -> None:
    done = geon("--help")
    listed = re.findall(r"^    ([a-z]+) ", done.stdout, flags=re.MULTILINE)
    assert (done.returncode, listed) == (0, VERBS)


@pytest.mark.parametrize(
    ("label", "args", "message"),
    [
        (
            "port out of range",
            ["--port", "70000"],
            'port "70000" is not valid; expected 1 to 65535',
        ),
        ("no worker", ["--concurrency", "0"], 'concurrency "0" is not valid; expected 1 or more'),
    ],
)
def test_serve_refuses_bad_options(label: str, args: list[str], message: str) -> None:
    done = geon("serve", *args)
    assert (done.returncode, done.stderr) == (2, f"geon serve: {message}\n")


def healthz(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Served:
    """A ``geon serve`` started on a fresh data folder; stopped (and its children killed) on
    exit, whatever a test asserted."""

    def __init__(self, tmp_path: Path) -> None:
        self.port = free_port()
        self.data = tmp_path
        self.log = (tmp_path / "serve.log").open("w+")
        env = dict(os.environ, GEON_DATA_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
        env.pop("DATABASE_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "geon", "serve", "--port", str(self.port),
             "--worker-name", "serve@test"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.pids: list[int] = []

    def __enter__(self) -> Served:
        return self

    def wait_healthy(self) -> tuple[int, dict[str, Any]]:
        """Wait for ``/healthz`` to answer 200 with the worker up; its last answer."""
        deadline = time.monotonic() + 60
        status, report = 0, {}
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                status, report = healthz(f"http://127.0.0.1:{self.port}/healthz")
            except (urllib.error.URLError, ConnectionError):
                status = 0
            if status == 200:
                break
            time.sleep(0.5)
        self.pids = [int(p) for p in re.findall(r"(?:web|worker) pid (\d+)", self.output())]
        return status, report

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads((self.data / "serve.json").read_text())
        return state

    def __exit__(self, *exc: object) -> None:
        stop_process(self.process, signal.SIGINT, timeout=30)
        for pid in self.pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.log.close()


# geon serve's children reach REDIS_URL's broker and channel layer, unseen by tests/suite_marks.py
@pytest.mark.broker
@pytest.mark.channel_layer
def test_serve_runs_the_web_server_and_a_worker_and_ctrl_c_stops_both(tmp_path: Path) -> None:
    # when geon serve starts on a fresh data folder
    with Served(tmp_path) as served:
        status, report = served.wait_healthy()
        output = served.output()
        # then the web server answers, its worker with it (/healthz is 200 only then)
        assert (status, report.get("status")) == (200, "ok"), output
        assert len(served.pids) == 2
        assert f"geon serve: open http://localhost:{served.port}/  (Ctrl-C stops)" in output
        # and serve records its supervision of the worker
        state = served.state()
        assert (state["servePid"], state["workerPid"]) == (served.process.pid, served.pids[1])
        assert (state["restarts"], state["lastExit"]) == (0, None)
        # when Ctrl-C reaches it
        served.process.send_signal(signal.SIGINT)
        code = served.process.wait(timeout=30)
        # then it stops both children, forgets its state and exits cleanly
        assert code == 0
        assert [alive(pid) for pid in served.pids] == [False, False]
        assert not (tmp_path / "serve.json").exists()


# geon serve's children reach REDIS_URL's broker and channel layer, unseen by tests/suite_marks.py
@pytest.mark.broker
@pytest.mark.channel_layer
def test_serve_stops_the_worker_when_the_web_server_dies(tmp_path: Path) -> None:
    with Served(tmp_path) as served:
        assert served.wait_healthy()[0] == 200, served.output()
        web, worker = served.pids
        # when the web server dies
        os.kill(web, signal.SIGKILL)
        code = served.process.wait(timeout=30)
        # then serve stops the worker too and says why
        assert code == 1
        assert not alive(worker)
        assert "geon serve: the web process exited with status -9; stopping" in served.output()


def test_serve_without_a_secret_key_says_so(tmp_path: Path) -> None:
    env = dict(os.environ, GEON_DATA_DIR=str(tmp_path))
    env.pop("SECRET_KEY", None)
    env.pop("GEON_DEBUG", None)
    done = geon("serve", env=env)
    assert done.returncode == 2
    assert done.stderr.startswith("geon serve: SECRET_KEY is not set;")
