"""The ``geonfs://`` transport sets aside what it cannot decode instead of raising it into the
worker, and a half-written message is never visible in the queue folder."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import kombu
import pytest

from geon.runs import broker


def unique(prefix: str) -> str:
    """A queue or exchange name of its own: kombu keeps bindings per process, not per folder."""
    return f"{prefix}{uuid.uuid4().hex[:8]}"


@pytest.fixture
def connection(tmp_path: Path) -> Iterator[kombu.Connection]:
    broker.register()
    options = {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "control_folder": str(tmp_path / "control"),
    }
    with kombu.Connection("geonfs://", transport_options=options) as conn:
        yield conn


def test_an_undecodable_message_is_set_aside_and_the_next_one_delivered(
    connection: kombu.Connection, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    name = unique("q")
    queue = connection.SimpleQueue(name)
    # given a torn message (what kombu's own transport could read) and JSON that is no kombu
    # message, before a whole one
    (tmp_path / "queue" / f"0_torn.{name}.msg").write_bytes(b'{"body": "ab')
    (tmp_path / "queue" / f"1_foreign.{name}.msg").write_bytes(b'{"body": 1}')
    queue.put({"n": 1})
    # when the consumer reads the queue
    with caplog.at_level(logging.ERROR, logger="geon.runs.broker"):
        message = queue.get(timeout=5)
    # then it gets the whole message, and the others wait in bad/ with a log line each
    assert message.payload == {"n": 1}
    message.ack()
    assert sorted(p.name.split("_", 1)[1] for p in (tmp_path / "bad").iterdir()) == [
        f"0_torn.{name}.msg",
        f"1_foreign.{name}.msg",
    ]
    assert caplog.text.count("set aside an undecodable message") == 2
    assert list((tmp_path / "queue").iterdir()) == []
    queue.close()


def test_a_torn_exchange_table_reads_as_empty_and_is_set_aside(
    connection: kombu.Connection, tmp_path: Path
) -> None:
    channel = connection.default_channel
    exchange = unique("x")
    (tmp_path / "control" / f"{exchange}.exchange").write_bytes(b"")
    assert channel.get_table(exchange) == []
    assert [p.name.split("_", 1)[1] for p in (tmp_path / "bad").iterdir()] == [
        f"{exchange}.exchange"
    ]
    # and binding a queue writes a whole table again
    channel._queue_bind(exchange, "key", "", "q")
    assert channel.get_table(exchange) == [("key", "", "q")]


def test_messages_are_written_elsewhere_and_renamed_into_the_queue(
    connection: kombu.Connection, tmp_path: Path
) -> None:
    name = unique("q")
    queue = connection.SimpleQueue(name)
    queue.put({"n": 2})
    names = [p.name for p in (tmp_path / "queue").iterdir()]
    assert len(names) == 1 and names[0].endswith(f".{name}.msg")
    assert list((tmp_path / "tmp").iterdir()) == []
    assert queue.get(timeout=5).payload == {"n": 2}
    queue.close()


def test_messages_are_read_in_the_order_they_were_put_when_the_clock_gains_a_digit(
    connection: kombu.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = unique("q")
    queue = connection.SimpleQueue(name)
    # given a message put at 9,999 ms and the next at 10,000 ms (names that sort the other way)
    for seconds, n in ((9.999, 1), (10.0, 2)):
        monkeypatch.setattr(broker, "monotonic", lambda seconds=seconds: seconds)
        queue.put({"n": n})
    # when the consumer reads the queue, then it gets them in the order they were put
    assert [queue.get(timeout=5).payload for _ in range(2)] == [{"n": 1}, {"n": 2}]
    queue.close()
