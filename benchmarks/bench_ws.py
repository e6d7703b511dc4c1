"""Live editing round trips (issue 7: ``edit`` -> ``applied`` p95 under 50 ms with one client and
under 150 ms with 20 clients editing different nodes at once, on a 1,000-operation graph).

Run: ``.venv/bin/python benchmarks/bench_ws.py [--ops 1000] [--edits 100] [--clients 20]
[--per-client 15] [--rate 10] [--crowd-rate 1] [--deadline 300] [--in-step]``

It makes a throw-away data folder and database: SQLite, or with ``DATABASE_URL`` set a new
database on that PostgreSQL server (dropped afterwards); the in-memory channel layer, or Redis
with ``REDIS_URL`` set. It stores the document of ``bench_check.generate(ops, 1)`` as a graph
owned by one user with ``--clients - 1`` editors, starts a real Daphne on loopback and connects
real websocket clients.

- one client: ``--edits`` edits one after another, each relabelling another operation, at most
  ``--rate`` per second (the server's per-connection limit is 20 per second);
- ``--clients`` clients at once, each relabelling its own operations ``--per-client`` times at
  ``--crowd-rate`` per second, each edit based on the latest version that client has seen (so
  most are rebased on the server). Clients start staggered over one period; ``--in-step`` makes
  them edit at the same instants (a burst of ``--clients`` edits every period: the worst case).

Baseline: the ``ping`` -> ``pong`` round trip of the same connections, measured in the same run.
Afterwards it checks that no edit was lost (every acknowledged edit is a stored version, and the
final document has every node's last label) and that every client, folding the ``applied`` ops
it received into its snapshot, ends with the stored document. Exit status 1 when a check fails;
the targets are printed, not enforced (timings depend on the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

DATA = tempfile.mkdtemp(prefix="geon-bench-ws-")
os.environ["GEON_DATA_DIR"] = DATA
os.environ.setdefault("SECRET_KEY", "geon-bench-only")
os.environ["DJANGO_SETTINGS_MODULE"] = "geon.settings"


from throwaway import drop_database, throwaway_database  # noqa: E402

SERVER = throwaway_database("geon_bench_ws")

import django  # noqa: E402

django.setup()

import websockets  # noqa: E402
from bench_check import generate  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from geon.cli.serve import daphne_command  # noqa: E402
from geon.core.graph import OPERATION  # noqa: E402
from geon.core.graph import Graph as Document  # noqa: E402
from geon.graphs.models import GraphVersion, Membership  # noqa: E402
from geon.graphs.services import do_create_graph  # noqa: E402

TARGET_ONE_MS = 50.0
TARGET_CROWD_MS = 150.0


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


class Peer:
    """One websocket client: sends edits and pings, records round trips and applied ops."""

    def __init__(self, ws: Any, snapshot: dict[str, Any]) -> None:
        self.ws = ws
        self.snapshot = snapshot
        self.version: int = snapshot["version"]
        self.applied: dict[int, list[dict[str, Any]]] = {}
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.refused: list[dict[str, Any]] = []
        self.reader = asyncio.create_task(self.read())

    async def read(self) -> None:
        async for frame in self.ws:
            message = json.loads(frame)
            kind = message["type"]
            if kind == "applied":
                self.applied[message["version"]] = message["ops"]
                self.version = max(self.version, message["version"])
            if kind == "rejected":
                self.refused.append(message)
            key = message.get("id")
            if kind in ("applied", "rejected", "pong", "error") and key in self.waiting:
                self.waiting.pop(key).set_result(message)

    async def request(self, message: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[message["id"]] = future
        began = time.perf_counter()
        await self.ws.send(json.dumps(message))
        answer = await asyncio.wait_for(future, 30)
        return (time.perf_counter() - began) * 1000, answer

    async def ping(self, key: str) -> float:
        ms, _ = await self.request({"type": "ping", "id": key})
        return ms

    async def relabel(self, key: str, node: str, label: str) -> tuple[float, dict[str, Any]]:
        op = {"op": "update_node", "id": node, "label": label}
        return await self.request(
            {"type": "edit", "id": key, "baseVersion": self.version, "ops": [op]}
        )

    def final_document(self) -> dict[str, Any]:
        doc = Document.from_json(self.snapshot["document"])
        expected = self.snapshot["version"] + 1
        for version in sorted(self.applied):
            if version < expected:
                continue
            assert version == expected, f"client missed version {expected}"
            doc.apply(self.applied[version])
            expected += 1
        return doc.to_json()


async def connect(url: str, cookie: str) -> Peer:
    ws = await websockets.connect(
        url,
        additional_headers={"Cookie": cookie},
        origin=websockets.Origin("http://127.0.0.1"),
        max_size=None,
    )
    snapshot = json.loads(await ws.recv())
    peer = Peer(ws, snapshot)
    return peer


async def paced(rate: float, count: int, step: Any) -> None:
    """Run ``step(i)`` ``count`` times, starting at most ``rate`` per second."""
    began = time.perf_counter()
    for i in range(count):
        await step(i)
        wait = began + (i + 1) / rate - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)


async def measure(args: argparse.Namespace, url: str, cookies: list[str], ops: list[str]) -> Any:
    # one client
    solo = await connect(url, cookies[0])
    for i in range(5):  # warm-up: the first edit builds the server's live document
        await solo.ping(f"w{i}")
        await solo.relabel(f"w{i}", ops[-1 - i], f"warm-{i}")
    solo_ping: list[float] = []
    solo_edit: list[float] = []

    async def solo_step(i: int) -> None:
        solo_ping.append(await solo.ping(f"p{i}"))
        ms, answer = await solo.relabel(f"s{i}", ops[i], f"solo-{i}")
        assert answer["type"] == "applied", answer
        solo_edit.append(ms)

    await paced(args.rate, args.edits, solo_step)

    # a crowd: everybody else joins, each edits its own operations
    crowd = [solo] + [await connect(url, c) for c in cookies[1:]]
    crowd_ping: list[float] = []
    crowd_edit: list[float] = []
    last_label: dict[str, str] = {}

    async def member(n: int, peer: Peer) -> None:
        mine = ops[args.edits + n * 3 : args.edits + n * 3 + 3]

        async def step(i: int) -> None:
            crowd_ping.append(await peer.ping(f"c{n}-p{i}"))
            node, label = mine[i % len(mine)], f"crowd-{n}-{i}"
            ms, answer = await peer.relabel(f"c{n}-e{i}", node, label)
            if answer["type"] == "applied":
                crowd_edit.append(ms)
                last_label[node] = label

        # clients start staggered over one period, as people do; --in-step starts them at once
        if not args.in_step:
            await asyncio.sleep(n / (len(crowd) * args.crowd_rate))
        await paced(args.crowd_rate, args.per_client, step)

    await asyncio.gather(*(member(n, p) for n, p in enumerate(crowd)))
    await asyncio.sleep(0.5)  # the last applied messages reach everybody
    for peer in crowd:
        peer.reader.cancel()
        await peer.ws.close()
    return solo_ping, solo_edit, crowd_ping, crowd_edit, crowd, last_label


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    finally:
        drop_database(SERVER)


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--per-client", type=int, default=15)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--crowd-rate", type=float, default=1.0)
    parser.add_argument("--deadline", type=float, default=300.0)
    parser.add_argument(
        "--in-step", action="store_true", help="all clients edit at the same instants (worst case)"
    )
    args = parser.parse_args(argv)

    call_command("migrate", verbosity=0)
    users = [User.objects.create_user(f"bench{n}") for n in range(args.clients)]
    document = generate(args.ops, 1)
    graph = do_create_graph(owner=users[0], title="bench", document=document)
    for u in users[1:]:
        Membership.objects.create(graph=graph, user=u, role="editor")
    cookies = []
    for u in users:
        client = Client()
        client.force_login(u)
        cookies.append(f"sessionid={client.cookies['sessionid'].value}")
    ops = [n["id"] for n in document["nodes"] if n["type"] == OPERATION]
    needed = args.edits + 3 * args.clients + 5
    if len(ops) < needed:
        print(f"--ops {args.ops} is too few; this run needs {needed} operations", file=sys.stderr)
        return 2

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(Path(DATA) / "daphne.log", "wb")  # noqa: SIM115 - closed below
    daphne = subprocess.Popen(
        daphne_command("127.0.0.1", port),
        cwd=ROOT,
        env=dict(os.environ),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            if daphne.poll() is not None or time.monotonic() > deadline:
                print("daphne did not start", file=sys.stderr)
                return 2
            time.sleep(0.1)
        url = f"ws://127.0.0.1:{port}/ws/graphs/{graph.pk}/"
        result = asyncio.run(
            asyncio.wait_for(measure(args, url, cookies, ops), timeout=args.deadline)
        )
    finally:
        daphne.terminate()
        daphne.wait(timeout=15)
        log.close()
    solo_ping, solo_edit, crowd_ping, crowd_edit, crowd, last_label = result

    graph.refresh_from_db()
    assert graph.current_version is not None
    stored = graph.current_version.document
    acked = len(solo_edit) + len(crowd_edit) + 5
    versions = GraphVersion.objects.filter(graph=graph).count()
    whole = GraphVersion.objects.filter(graph=graph, snapshot__isnull=False).count()
    labels = {n["id"]: n.get("label") for n in stored["nodes"]}
    lost = [node for node, label in last_label.items() if labels.get(node) != label]
    lost += [f"solo-{i}" for i in range(args.edits) if labels.get(ops[i]) != f"solo-{i}"]
    differ = [n for n, peer in enumerate(crowd) if peer.final_document() != stored]
    refused = sum(len(p.refused) for p in crowd)

    nodes = len(document["nodes"])
    size = len(json.dumps(document)) / 1e6
    channel = "Redis" if os.environ.get("REDIS_URL") else "in-memory"
    database = "PostgreSQL" if SERVER else "SQLite"
    print(
        f"graph: {args.ops} operations, {nodes} nodes, {size:.1f} MB of JSON; {channel} layer, "
        f"{database}"
    )
    print(f"{'round trip (ms)':38} {'n':>5} {'median':>8} {'p95':>8} {'target':>8} {'x ping':>7}")
    rows = [
        ("1 client: ping -> pong (baseline)", solo_ping, None, None),
        ("1 client: edit -> applied", solo_edit, TARGET_ONE_MS, solo_ping),
        (f"{args.clients} clients: ping -> pong (baseline)", crowd_ping, None, None),
        (f"{args.clients} clients: edit -> applied", crowd_edit, TARGET_CROWD_MS, crowd_ping),
    ]
    for name, values, target, base in rows:
        ratio = f"{p95(values) / p95(base):7.1f}" if base else ""
        goal = f"{target:8.0f}" if target else ""
        print(
            f"{name:38} {len(values):5d} {statistics.median(values):8.1f} {p95(values):8.1f} "
            f"{goal:>8} {ratio:>7}"
        )
    print(
        f"checks: {acked} edits acknowledged, {versions - 1} versions stored, {refused} refused, "
        f"{len(lost)} lost, {len(differ)} of {len(crowd)} clients differ from the stored "
        f"document; {whole} versions hold the whole document"
    )
    ok = versions - 1 == acked and not lost and not differ
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
