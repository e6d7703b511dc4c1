"""``geon serve``: run the web server (Daphne) and two Celery workers until Ctrl-C.

The ``worker`` consumes the default queue (signed-in users' runs and checks); the ``tries``
worker consumes the tries queue (``GEON_TRIES_QUEUE``: visitors' puzzle checks), so that
however many visitors check, signed-in users' runs never wait behind them (issue 30).

All run as child processes in sessions of their own, so the terminal's Ctrl-C reaches only this
process, which then stops them all (SIGTERM, then SIGKILL after a grace period). A worker that
exits on its own is restarted after a backoff (1 s, doubling up to 30 s; back to 1 s once it has
run for a minute), and each exit is logged and recorded in ``GEON_DATA_DIR/serve.json`` (the
tries worker's under ``tries``), which ``/healthz`` shows to staff. Only the web server exiting
stops everything (exit status 1).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

HELP = "run the web server (Daphne) and the Celery workers; Ctrl-C stops them all"
GRACE_SECONDS = 10.0
#: The first wait before a worker is restarted, the longest, and how long a worker must have run
#: for the next restart to wait the first delay again.
BACKOFF_FIRST_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 30.0
STABLE_SECONDS = 60.0
#: The file under GEON_DATA_DIR where serve records the worker's supervision.
STATE_FILE = "serve.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument(
        "--concurrency", type=int, default=1, help="worker processes executing runs"
    )
    parser.add_argument(
        "--worker-name", default="geon@%h", help="Celery node name of the worker (%%h: host)"
    )


# The largest incoming websocket message (and frame) Daphne takes. Autobahn checks it from a
# frame's header, before buffering the payload, and closes the connection with 1009 "message too
# big" (geon.cli.daphne_main; stock Daphne drops it); the limit is on what clients send only (a
# 3.7 MB snapshot goes out whole). Below it the consumer answers messages over
# GEON_WS_MAX_MESSAGE_BYTES (1 MiB) with `error message_too_large` and keeps the connection, so
# this is 4x that default: raise both together.
WEBSOCKET_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


def daphne_command(host: str, port: int) -> list[str]:
    """The command that serves ``geon.asgi:application``: ``serve``, the tests and benchmarks.

    Daphne runs through :mod:`geon.cli.daphne_main`, so a websocket message over
    :data:`WEBSOCKET_MAX_MESSAGE_BYTES` is closed with 1009 rather than dropped. Behind a TLS
    proxy (``GEON_HTTPS``) Daphne takes the client's address from the proxy's
    ``X-Forwarded-For`` (``--proxy-headers``), so that the sign-in throttle counts clients, not
    the proxy; the proxy must then be the only way in and must set that header itself.
    """
    from django.conf import settings

    proxy = ["--proxy-headers"] if settings.HTTPS else []
    return [
        sys.executable,
        "-m",
        "geon.cli.daphne_main",
        "-b",
        host,
        "-p",
        str(port),
        "--websocket-max-message-size",
        str(WEBSOCKET_MAX_MESSAGE_BYTES),
        "--websocket-max-frame-size",
        str(WEBSOCKET_MAX_MESSAGE_BYTES),
        *proxy,
        "geon.asgi:application",
    ]


def _commands(args: argparse.Namespace) -> dict[str, list[str]]:
    """The children: the web server, the default queue's worker and the tries queue's (one
    process: a visitor's check is short, and their number is bounded before they queue)."""
    from django.conf import settings

    celery = [sys.executable, "-m", "celery", "-A", "geon", "worker", "--loglevel=INFO"]
    return {
        "web": daphne_command(args.host, args.port),
        "worker": [
            *celery,
            "-Q",
            settings.CELERY_TASK_DEFAULT_QUEUE,
            f"--concurrency={args.concurrency}",
            f"--hostname={args.worker_name}",
        ],
        "tries": [
            *celery,
            "-Q",
            settings.GEON_TRIES_QUEUE,
            "--concurrency=1",
            f"--hostname=tries-{args.worker_name}",
        ],
    }


def _now(later: float = 0.0) -> str:
    """The time (``later`` seconds from now) as ISO 8601 in UTC."""
    return (datetime.now(UTC) + timedelta(seconds=later)).isoformat(timespec="seconds")


@dataclass
class Supervision:
    """What ``serve`` records about its worker: ``GEON_DATA_DIR/serve.json``."""

    servePid: int
    since: str
    workerPid: int | None = None
    workerSince: str | None = None
    restarts: int = 0
    lastExit: dict[str, Any] | None = None
    # While a restart waits out its backoff: when it is due.
    restartAt: str | None = None
    # The tries worker's supervision, with the same fields (pid, since, restarts, lastExit,
    # restartAt).
    tries: dict[str, Any] = field(default_factory=dict)
    _path: Path | None = field(default=None, repr=False)

    def save(self) -> None:
        """Replace the state file whole (a reader never sees half of it)."""
        assert self._path is not None
        data = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        temporary = self._path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temporary, self._path)


def state_path() -> Path:
    """Where ``serve`` records supervision: ``GEON_DATA_DIR/serve.json``."""
    from django.conf import settings

    path: Path = settings.DATA_DIR / STATE_FILE
    return path


def read_state() -> dict[str, Any]:
    """The supervision ``serve`` recorded, with ``supervised`` (its process is alive);
    ``{"supervised": False}`` when no ``serve`` runs on this data folder."""
    try:
        state = json.loads(state_path().read_text(encoding="utf-8"))
        pid = int(state["servePid"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return {"supervised": False}
    return {"supervised": True, **state}


def _stop(children: dict[str, subprocess.Popen[bytes]]) -> None:
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _kill_group(pgid: int) -> None:
    """Kill what is left of an exited worker's session (pool processes it forked), so that
    none goes on with a task that the next worker will be handed."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _say(message: str, *, error: bool = False) -> None:
    print(f"geon serve: {message}", file=sys.stderr if error else sys.stdout, flush=True)


class _Watched:
    """One supervised worker (``worker`` or ``tries``): restarted after a backoff when it exits
    on its own, each exit recorded in the state."""

    def __init__(self, name: str, state: Supervision) -> None:
        self.name, self.state = name, state
        self.began = time.monotonic()
        self.delay = BACKOFF_FIRST_SECONDS
        self.restart_due: float | None = None

    def started(self, pid: int) -> None:
        self.began, self.restart_due = time.monotonic(), None
        if self.name == "worker":
            self.state.workerPid, self.state.workerSince = pid, _now()
        else:
            self.state.tries.update(pid=pid, since=_now())
            self.state.tries.setdefault("restarts", 0)

    def check(
        self, child: subprocess.Popen[bytes], command: list[str]
    ) -> subprocess.Popen[bytes] | None:
        """Note an exit, or restart once the backoff is over (the new child)."""
        label = "worker" if self.name == "worker" else "tries worker"
        if self.restart_due is None and child.poll() is not None:
            _kill_group(child.pid)
            if time.monotonic() - self.began >= STABLE_SECONDS:
                self.delay = BACKOFF_FIRST_SECONDS
            self.restart_due = time.monotonic() + self.delay
            restarts = self._get("restarts")
            self._set(lastExit={"status": child.returncode, "at": _now()}, pid=None)
            self._set(restartAt=_now(self.delay))
            self.state.save()
            _say(
                f"the {label} process exited with status {child.returncode}; restarting it "
                f"in {self.delay:g} s (restarts so far: {restarts})",
                error=True,
            )
            self.delay = min(self.delay * 2, BACKOFF_MAX_SECONDS)
        elif self.restart_due is not None and time.monotonic() >= self.restart_due:
            fresh = subprocess.Popen(command, start_new_session=True)
            self.started(fresh.pid)
            self._set(restarts=self._get("restarts") + 1, restartAt=None)
            self.state.save()
            _say(f"{self.name} pid {fresh.pid} (restart {self._get('restarts')})")
            return fresh
        return None

    def _get(self, key: str) -> Any:
        if self.name == "worker":
            return getattr(self.state, key)
        return self.state.tries.get(key, 0)

    def _set(self, **fields: Any) -> None:
        for key, value in fields.items():
            if self.name != "worker":
                self.state.tries[key] = value
            elif key == "pid":
                self.state.workerPid = value
            else:
                setattr(self.state, key, value)


def main(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        print(f'geon serve: port "{args.port}" is not valid; expected 1 to 65535', file=sys.stderr)
        return 2
    if args.concurrency < 1:
        print(
            f'geon serve: concurrency "{args.concurrency}" is not valid; expected 1 or more',
            file=sys.stderr,
        )
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "geon.settings")
    stopping = False

    def request_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    from django.core.exceptions import ImproperlyConfigured

    try:
        path = state_path()
    except ImproperlyConfigured as error:  # the settings' own message names the variable
        print(f"geon serve: {error}", file=sys.stderr)
        return 2
    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    commands = _commands(args)
    children: dict[str, subprocess.Popen[bytes]] = {}
    state = Supervision(servePid=os.getpid(), since=_now(), _path=path)
    workers = [_Watched("worker", state), _Watched("tries", state)]
    try:
        for name, command in commands.items():
            children[name] = subprocess.Popen(command, start_new_session=True)
        for watched in workers:
            watched.started(children[watched.name].pid)
        state.save()
        pids = ", ".join(f"{name} pid {child.pid}" for name, child in children.items())
        host = "localhost" if args.host in ("127.0.0.1", "0.0.0.0") else args.host
        _say(pids)
        _say(f"open http://{host}:{args.port}/  (Ctrl-C stops)")
        while not stopping:
            if children["web"].poll() is not None:
                status = children["web"].returncode
                _say(f"the web process exited with status {status}; stopping", error=True)
                return 1
            for watched in workers:
                child = watched.check(children[watched.name], commands[watched.name])
                if child is not None:
                    children[watched.name] = child
            time.sleep(0.2)
        _say("stopping")
        return 0
    finally:
        _stop(children)
        path.unlink(missing_ok=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
