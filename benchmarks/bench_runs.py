"""Runs through the real stack (issue 14): 200 runs of the gallery MLP queued by 4 clients at
once over REST, executed by one real Celery worker; runs per second and queue-to-done times
beside a direct in-process run of the same document.

Run: ``.venv/bin/python benchmarks/bench_runs.py [--runs 200] [--clients 4] [--concurrency 1]
[--redis [URL]] [--deadline 600]``

It makes a throw-away data folder and database (SQLite, or with ``DATABASE_URL`` a new database
on that PostgreSQL server, dropped afterwards) and its own Celery queue, starts Daphne and a
worker (``--concurrency`` processes, as ``geon serve`` does) on the embedded ``geonfs://``
broker, or on Redis with ``--redis`` (default URL ``redis://localhost:6379/0``) or ``REDIS_URL``.
Each of ``--clients`` threads posts its share of the runs as fast as the server answers.

Measured: runs per second from the first run stored to the last one finished; queue-to-done per
run (``Run.finished - Run.created``: waiting in the queue, executing, storing the results and
publishing every progress event); the direct baseline is ``execute_document`` of the same
document in this process (median of 20), i.e. the executor alone. Exit status 1 when a run is
not ``done`` by the deadline or any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=1, help="worker processes")
    parser.add_argument(
        "--redis", nargs="?", const="redis://localhost:6379/0", default=None, help="Redis URL"
    )
    parser.add_argument("--deadline", type=float, default=600.0)
    return parser.parse_args(argv)


ARGS = parse(None if __name__ == "__main__" else [])
DATA = tempfile.mkdtemp(prefix="geon-bench-runs-")
os.environ["GEON_DATA_DIR"] = DATA
os.environ.setdefault("SECRET_KEY", "geon-bench-only")
os.environ["DJANGO_SETTINGS_MODULE"] = "geon.settings"
os.environ["GEON_CELERY_QUEUE"] = f"bench-runs-{uuid.uuid4().hex[:8]}"
if ARGS.redis:
    os.environ["REDIS_URL"] = ARGS.redis

from throwaway import drop_database, throwaway_database  # noqa: E402

SERVER = throwaway_database("geon_bench_runs")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402

from geon.accounts.models import ApiToken  # noqa: E402
from geon.cli.serve import daphne_command  # noqa: E402
from geon.examples import gallery  # noqa: E402
from geon.graphs.models import Membership  # noqa: E402
from geon.graphs.services import do_create_graph  # noqa: E402
from geon.runs.models import Run  # noqa: E402
from geon.runs.services import execute_document  # noqa: E402


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def direct_seconds(document: dict[str, Any], repeat: int = 20) -> float:
    """Median seconds of one in-process run of ``document`` (the executor alone)."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        execute_document(document, backend="numpy", progress=lambda step: None)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def start(name: str, command: list[str], ready: Any) -> tuple[subprocess.Popen[bytes], Path]:
    log = Path(DATA) / f"{name}.log"
    with log.open("wb") as out:
        child = subprocess.Popen(
            command, cwd=ROOT, env=dict(os.environ), stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while not ready(log):
        if child.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not start:\n{log.read_text(errors='replace')}")
        time.sleep(0.1)
    return child, log


def post_runs(url: str, token: str, count: int, failures: list[str]) -> None:
    """One client: post ``count`` runs one after another."""
    for _ in range(count):
        request = urllib.request.Request(
            url, data=json.dumps({"backend": "numpy"}).encode(), method="POST"
        )
        request.add_header("Authorization", f"Bearer {token}")
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                if response.status != 202:
                    failures.append(f"answered {response.status}")
        except OSError as error:
            failures.append(str(error))


def main() -> int:
    args = ARGS
    call_command("migrate", verbosity=0)
    users = [User.objects.create_user(f"bench{n}") for n in range(args.clients)]
    document = gallery.build("mlp").to_json()
    graph = do_create_graph(owner=users[0], title="MLP", document=document)
    for user in users[1:]:
        Membership.objects.create(graph=graph, user=user, role="editor")
    tokens = [ApiToken.issue(user, "bench")[1] for user in users]
    direct = direct_seconds(document)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def listening(log: Path) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    worker_command = [
        sys.executable, "-m", "celery", "-A", "geon", "worker", "--loglevel=WARNING",
        f"--concurrency={args.concurrency}", "-Q", os.environ["GEON_CELERY_QUEUE"],
        "--hostname=bench@%h", "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    children = []
    try:
        children.append(start("daphne", daphne_command("127.0.0.1", port), listening))
        children.append(
            start(
                "worker",
                [*worker_command, "--loglevel=INFO"],
                lambda log: " ready." in log.read_text(errors="replace"),
            )
        )
        url = f"http://127.0.0.1:{port}/api/v1/graphs/{graph.pk}/runs"
        failures: list[str] = []
        shares = [
            args.runs // args.clients + (n < args.runs % args.clients) for n in range(args.clients)
        ]
        clients = [
            threading.Thread(target=post_runs, args=(url, tokens[n], shares[n], failures))
            for n in range(args.clients)
        ]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        deadline = time.monotonic() + args.deadline
        finished = Run.objects.filter(status__in=(Run.Status.DONE, Run.Status.FAILED))
        while finished.count() < args.runs - len(failures) and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        for child, _log in children:
            child.terminate()
            child.wait(timeout=30)
    runs = list(Run.objects.all())
    done = [r for r in runs if r.status == Run.Status.DONE]
    failed = [r for r in runs if r.status == Run.Status.FAILED]
    waits = [(r.finished - r.created).total_seconds() for r in done if r.finished]
    first = min(r.created for r in runs)
    last = max(r.finished for r in done if r.finished) if done else first
    span = (last - first).total_seconds()
    rate = len(done) / span if span > 0 else 0.0
    broker = "Redis" if settings.REDIS_URL else "geonfs:// (embedded)"
    database = "PostgreSQL" if SERVER else "SQLite"
    operations = sum(1 for n in document["nodes"] if n["type"].endswith("/Operation"))
    print(
        f"gallery MLP ({operations} operations); {args.runs} runs queued by {args.clients} clients "
        f"over REST; broker {broker}, {database}; worker concurrency {args.concurrency}"
    )
    print(f"direct in-process run (executor alone, median of 20): {direct * 1000:.1f} ms")
    if waits:
        print(
            f"throughput: {rate:.1f} runs/s ({rate * direct:.2f}x the direct run's "
            f"{1 / direct:.0f} runs/s)"
        )
        print(
            f"queue-to-done: median {statistics.median(waits) * 1000:.0f} ms, p95 "
            f"{p95(waits) * 1000:.0f} ms ({p95(waits) / direct:.0f}x the direct run), "
            f"over {span:.1f} s"
        )
    print(
        f"checks: {len(runs)} stored, {len(done)} done, {len(failed)} failed, "
        f"{args.runs - len(runs)} not stored ({len(failures)} refused posts)"
    )
    drop_database(SERVER)
    return 0 if len(done) == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
