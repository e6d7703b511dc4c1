"""Helpers of the tests that start real processes (Daphne, workers, ``geon serve``).

A module of its own rather than fixtures in ``tests/conftest.py``, which must not be imported by
name (it would run a second time, with another data folder).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 60.0


def geon(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m geon ARGS`` in this interpreter from the repository root, as a user runs it:
    its exit status and output (never raises on a failing status)."""
    return subprocess.run(
        [sys.executable, "-m", "geon", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def free_port() -> int:
    """A TCP port on the loopback address that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_process(
    process: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 15.0
) -> int:
    """Send ``sig`` to a process still running, wait up to ``timeout`` seconds, then kill it;
    its exit status."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


@dataclass
class Child:
    """A child process started by the suite, with its log file."""

    process: subprocess.Popen[bytes]
    log: Path
    name: str = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def start_child(
    name: str, command: list[str], env: dict[str, str], ready: Callable[[Child], bool]
) -> Child:
    """Start ``command`` from the repository root, its output in ``<name>.log`` in the suite's
    data folder (``GEON_DATA_DIR``), and wait until ``ready``; a RuntimeError with its log when
    it exits or is not ready within a minute."""
    log = Path(os.environ["GEON_DATA_DIR"]) / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    child = Child(process, log)
    deadline = time.monotonic() + START_TIMEOUT
    while not ready(child):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_process(process)
            raise RuntimeError(f"{name} did not start; its log:\n{child.output()}")
        time.sleep(0.1)
    return child
