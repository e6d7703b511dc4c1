"""``python -m geon``: the verbs of DESIGN.md §8, and ``serve`` starting and stopping the stack."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
VERBS = ["check", "run", "render", "shard", "serve"]


def geon(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "geon", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


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


def test_serve_runs_the_web_server_and_a_worker_and_ctrl_c_stops_both(tmp_path: Path) -> None:
    # given a fresh data folder and a free port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, GEON_DATA_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
    env.pop("DATABASE_URL", None)
    log = (tmp_path / "serve.log").open("w+")
    pids: list[int] = []
    # when geon serve starts
    serve = subprocess.Popen(
        [sys.executable, "-m", "geon", "serve", "--port", str(port), "--worker-name", "serve@test"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        status, report = 0, {}
        while time.monotonic() < deadline:
            try:
                status, report = healthz(f"http://127.0.0.1:{port}/healthz")
            except (urllib.error.URLError, ConnectionError):
                status = 0
            # with Redis, other workers (the suite's own) may answer the ping too
            if status == 200 and "serve@test" in report["worker"]["workers"]:
                break
            time.sleep(0.5)
        log.seek(0)
        output = log.read()
        # then the web server answers and its worker answers the ping
        assert (status, report.get("worker", {}).get("ok")) == (200, True), output
        assert "serve@test" in report["worker"]["workers"]
        pids.extend(int(p) for p in re.findall(r"(?:web|worker) pid (\d+)", output))
        assert len(pids) == 2
        assert f"geon serve: open http://localhost:{port}/  (Ctrl-C stops)" in output
        # when Ctrl-C reaches it
        serve.send_signal(signal.SIGINT)
        code = serve.wait(timeout=30)
        # then it stops both children and exits cleanly
        assert code == 0
        assert [alive(pid) for pid in pids] == [False, False]
    finally:
        # a failed assertion must not leave the server or its children running
        if serve.poll() is None:
            serve.send_signal(signal.SIGINT)
            try:
                serve.wait(timeout=30)
            except subprocess.TimeoutExpired:
                serve.kill()
                serve.wait()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        log.close()
