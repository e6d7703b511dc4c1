"""``geon serve``: run the web server (Daphne) and a Celery worker until Ctrl-C.

Both run as child processes in sessions of their own, so the terminal's Ctrl-C reaches only this
process, which then stops both (SIGTERM, then SIGKILL after a grace period). If either child
exits on its own, the other is stopped too and the exit status says so.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from types import FrameType

HELP = "run the web server (Daphne) and a Celery worker; Ctrl-C stops both"
GRACE_SECONDS = 10.0


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
# frame's header, before buffering the payload, and drops the connection (its failByDrop); the
# limit is on what clients send only (a 3.7 MB snapshot goes out whole). Below it the consumer
# answers messages over GEON_WS_MAX_MESSAGE_BYTES (1 MiB) with `error message_too_large` and
# keeps the connection, so this is 4x that default: raise both together.
WEBSOCKET_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


def daphne_command(host: str, port: int) -> list[str]:
    """The command that serves ``geon.asgi:application``: ``serve``, the tests and benchmarks."""
    return [
        sys.executable,
        "-m",
        "daphne",
        "-b",
        host,
        "-p",
        str(port),
        "--websocket-max-message-size",
        str(WEBSOCKET_MAX_MESSAGE_BYTES),
        "--websocket-max-frame-size",
        str(WEBSOCKET_MAX_MESSAGE_BYTES),
        "geon.asgi:application",
    ]


def _commands(args: argparse.Namespace) -> dict[str, list[str]]:
    python = sys.executable
    return {
        "web": daphne_command(args.host, args.port),
        "worker": [
            python,
            "-m",
            "celery",
            "-A",
            "geon",
            "worker",
            "--loglevel=INFO",
            f"--concurrency={args.concurrency}",
            f"--hostname={args.worker_name}",
        ],
    }


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

    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    children: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, command in _commands(args).items():
            children[name] = subprocess.Popen(command, start_new_session=True)
        pids = ", ".join(f"{name} pid {child.pid}" for name, child in children.items())
        host = "localhost" if args.host in ("127.0.0.1", "0.0.0.0") else args.host
        print(f"geon serve: {pids}", flush=True)
        print(f"geon serve: open http://{host}:{args.port}/  (Ctrl-C stops)", flush=True)
        while not stopping:
            exited = [name for name, child in children.items() if child.poll() is not None]
            if exited:
                print(
                    f"geon serve: the {exited[0]} process exited with status "
                    f"{children[exited[0]].returncode}; stopping",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
            time.sleep(0.2)
        print("geon serve: stopping", flush=True)
        return 0
    finally:
        _stop(children)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
