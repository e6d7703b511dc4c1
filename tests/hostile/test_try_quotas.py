"""Hostile review, issue 30, finding 8: visitors' puzzle checks (no login) shared one quota.

One client used the day's 2,000 checks in under a minute, after which every visitor got 429, and
50 simultaneous tries passed a queue cap of 20. Now each visitor is counted by their session and
by their address (an IPv6 address by its /64), the counting and the storing of a try happen one
try at a time (nothing concurrent passes a cap), and tries go to a queue of their own that a
worker of its own consumes, so signed-in users' checks never wait behind them. Everything goes
through ``POST /api/v1/puzzles/<key>/tries`` with Django's test client, and the checks through
real Celery workers where they are queued."""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from geon.learn import puzzles
from geon.learn.models import Attempt
from geon.learn.puzzles import do_check_attempt, do_open_puzzle, puzzle_of, starting_graph
from tests.processes import start_child, stop_process

API = "/api/v1"
PUZZLE = "row_sums"
TRIES = f"{API}/puzzles/{PUZZLE}/tries"


def check(client: Client) -> Any:
    """A visitor's Check of the puzzle's starting graph."""
    body = json.dumps({"document": starting_graph(puzzle_of(PUZZLE))})
    return client.post(TRIES, body, content_type="application/json")


def refused(answer: Any, message: str) -> None:
    assert answer.status_code == 429, answer.content
    assert answer["Retry-After"] == "60"
    assert answer.json()["error"] == {"code": "too_many_requests", "message": message}


@pytest.mark.django_db
def test_one_visitor_using_up_their_day_does_not_stop_another(monkeypatch: Any) -> None:
    monkeypatch.setattr(puzzles, "TRIES_PER_VISITOR_DAY", 3)
    monkeypatch.setattr(puzzles, "TRIES_QUEUED_PER_VISITOR", 10)
    greedy = Client(REMOTE_ADDR="203.0.113.1")
    for _ in range(3):
        assert check(greedy).status_code == 202
    assert "sessionid" in greedy.cookies  # the session their tries are counted by
    # when they check once more: refused, naming their limit and what to do; nothing stored
    refused(
        check(greedy),
        "you have made 3 checks today, the most one visitor may make in a day; sign in to "
        "check yours",
    )
    assert Attempt.objects.count() == 3
    # another visitor is still answered
    assert check(Client(REMOTE_ADDR="198.51.100.2")).status_code == 202
    assert Attempt.objects.count() == 4


@pytest.mark.django_db
def test_a_visitor_dropping_their_session_is_still_counted_by_address(
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(puzzles, "TRIES_PER_ADDRESS_DAY", 4)
    # a fresh session (no cookie) each time, from one address, or from one IPv6 /64
    for n in range(4):
        assert check(Client(REMOTE_ADDR=f"2001:db8::{n + 1}")).status_code == 202
    refused(
        check(Client(REMOTE_ADDR="2001:db8::ff")),
        "4 checks were made from your address today, the most one address may make in a "
        "day; sign in to check yours",
    )
    assert Attempt.objects.count() == 4
    # another network is still answered
    assert check(Client(REMOTE_ADDR="2001:db8:0:1::1")).status_code == 202


@pytest.mark.django_db
def test_a_visitor_has_only_a_few_checks_waiting_at_once(monkeypatch: Any) -> None:
    monkeypatch.setattr(puzzles, "TRIES_QUEUED_PER_VISITOR", 2)
    visitor = Client(REMOTE_ADDR="203.0.113.5")
    first = check(visitor).json()
    assert check(visitor).status_code == 202
    refused(
        check(visitor),
        "2 of your checks are still waiting for the worker, the most one visitor may have; "
        "wait for their answers",
    )
    assert Attempt.objects.filter(status=Attempt.Status.QUEUED).count() == 2
    # once the worker answered one (what its task does), they may check again
    do_check_attempt(first["id"])
    assert check(visitor).status_code == 202
    # and another visitor was answered all along
    assert check(Client(REMOTE_ADDR="203.0.113.6")).status_code == 202


def slow_counting(monkeypatch: Any) -> None:
    """Widen the race: each try waits 20 ms between being counted and being stored, so tries
    counted concurrently (rather than one at a time) would all find room under a cap."""
    counted = puzzles._refusal

    def slowly(visitor: puzzles.Visitor) -> str | None:
        why = counted(visitor)
        time.sleep(0.02)
        return why

    monkeypatch.setattr(puzzles, "_refusal", slowly)


def at_once(count: int, attempt: Any) -> list[int]:
    """``attempt(i)`` in ``count`` threads started together: the statuses they answered."""
    barrier = threading.Barrier(count)
    statuses: list[int] = [0] * count

    def one(i: int) -> None:
        try:
            barrier.wait()
            statuses[i] = attempt(i).status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return statuses


@pytest.fixture
def unconsumed_tries(settings: Any) -> str:
    """Visitors' checks sent to a tries queue of this test's that no worker reads (a tries
    worker another test started still runs for the session): they wait, as under load."""
    settings.GEON_TRIES_QUEUE = f"geon-tests-tries-{uuid.uuid4().hex[:8]}"
    queue: str = settings.GEON_TRIES_QUEUE
    return queue


@pytest.mark.django_db(transaction=True)
def test_fifty_simultaneous_tries_do_not_pass_the_queue_cap_of_twenty(
    client: Client, user: Any, monkeypatch: Any, unconsumed_tries: str
) -> None:
    assert puzzles.TRIES_QUEUED_MAX == 20
    slow_counting(monkeypatch)
    # fifty visitors, each their own session and address, check at the same moment
    statuses = at_once(50, lambda i: check(Client(REMOTE_ADDR=f"10.1.{i}.1")))
    assert sorted(statuses) == [202] * 20 + [429] * 30
    assert Attempt.objects.filter(user=None, status=Attempt.Status.QUEUED).count() == 20
    refused(
        check(Client(REMOTE_ADDR="10.2.0.1")),
        "20 checks of visitors are waiting for the worker; try again in a minute, or sign in",
    )
    # a signed-in person is still answered: their check is not a visitor's
    graph, _ = do_open_puzzle(user, PUZZLE)
    client.force_login(user)
    mine = client.post(
        f"{API}/puzzles/{PUZZLE}/attempts",
        json.dumps({"graph": str(graph.pk)}),
        content_type="application/json",
    )
    assert mine.status_code == 202


@pytest.mark.django_db(transaction=True)
def test_one_visitors_simultaneous_tries_do_not_pass_their_quota(monkeypatch: Any) -> None:
    monkeypatch.setattr(puzzles, "TRIES_PER_VISITOR_DAY", 5)
    monkeypatch.setattr(puzzles, "TRIES_QUEUED_PER_VISITOR", 50)
    monkeypatch.setattr(puzzles, "TRIES_QUEUED_PER_ADDRESS", 50)
    slow_counting(monkeypatch)
    first = Client(REMOTE_ADDR="192.0.2.1")
    assert check(first).status_code == 202
    session = first.cookies["sessionid"].value

    def same_visitor(i: int) -> Any:
        twin = Client(REMOTE_ADDR="192.0.2.1")
        twin.cookies["sessionid"] = session
        return check(twin)

    # when twenty tries of that one session arrive at once, four more fit their day
    statuses = at_once(20, same_visitor)
    assert sorted(statuses) == [202] * 4 + [429] * 16
    assert Attempt.objects.filter(user=None).count() == 5
    # another visitor is still answered
    assert check(Client(REMOTE_ADDR="192.0.2.2")).status_code == 202


def wait_until(done: Any, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the worker did not answer in time"
        time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
def test_tries_have_their_own_queue_and_worker_and_never_delay_signed_in_checks(
    celery_worker: Any,
    subprocess_env: dict[str, str],
    unconsumed_tries: str,
    client: Client,
    user: Any,
) -> None:
    # given visitors' checks queued while only the default queue's worker runs
    keys = [
        check(Client(REMOTE_ADDR=f"10.3.{n}.1")).json()["key"]
        for n in range(puzzles.TRIES_QUEUED_MAX)
    ]
    # when a signed-in person checks their graph
    graph, _ = do_open_puzzle(user, PUZZLE)
    client.force_login(user)
    mine = client.post(
        f"{API}/puzzles/{PUZZLE}/attempts",
        json.dumps({"graph": str(graph.pk)}),
        content_type="application/json",
    ).json()
    # then the default queue's worker answers it at once, with every visitor's still waiting
    wait_until(
        lambda: client.get(f"{API}/puzzles/attempts/{mine['id']}").json()["status"] != "queued"
    )
    answered = client.get(f"{API}/puzzles/attempts/{mine['id']}").json()
    assert (answered["status"], answered["solved"]) == ("done", False)
    assert Attempt.objects.filter(user=None, status=Attempt.Status.QUEUED).count() == len(keys)
    # and a worker of the tries queue, as `geon serve` starts one, answers the visitors'
    # checks, keeping no document
    command = [
        sys.executable, "-m", "celery", "-A", "geon", "worker", "--pool=solo", "--loglevel=INFO",
        "-Q", unconsumed_tries, f"--hostname={unconsumed_tries}@localhost",
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    tries = start_child("tries-own", command, subprocess_env, lambda c: " ready." in c.output())
    try:
        visitor = Client()
        wait_until(
            lambda: all(
                visitor.get(f"{API}/puzzles/tries/{key}").json()["status"] == "done" for key in keys
            ),
            seconds=180,
        )
    finally:
        stop_process(tries.process)
    assert not Attempt.objects.filter(user=None, document__isnull=False).exists()
