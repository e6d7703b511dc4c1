"""The embedded Celery broker: kombu's ``filesystem://`` transport, made safe to share.

kombu's own filesystem transport (5.x) can hand a consumer a message file that a producer is
still writing (``open`` creates it empty, the bytes follow; the consumer lists the folder, moves
the file away and reads it, possibly empty: celery/kombu#1551), and an exchange table (the
``control`` folder's ``*.exchange`` files, which every worker's broadcast "pidbox" binding and
every ``celery inspect``/``ping`` reads) is truncated by ``open("wb")`` before its lock is
taken, so a concurrent reader sees an empty file. Either way ``json.loads`` raises and the
worker dies with ``Unrecoverable error: JSONDecodeError``.

This transport, registered as ``geonfs://``, changes four things and nothing else:

- a message is written under a temporary name in the ``tmp`` folder beside the queue and then
  renamed into the queue folder (``os.replace`` within one file system is atomic), so a consumer
  sees a whole message or none;
- an exchange table is changed under a separate lock file and replaced the same way, so readers
  need no lock and always read a whole table;
- a consumer claims a message by renaming it into the ``processing`` folder on the same file
  system (exactly one consumer's rename succeeds) instead of moving it to the system's temporary
  folder, which may be another file system where ``shutil.move`` copies;
- a message that cannot be decoded (torn, or JSON without kombu's envelope) or an exchange
  table that cannot be decoded is logged and moved aside into the ``bad`` folder (a table is
  then read as empty: bindings are declared again when workers start), never raised into the
  worker.
"""

from __future__ import annotations

import fcntl
import logging
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from queue import Empty
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)

#: The URL scheme of this transport: ``CELERY_BROKER_URL = "geonfs://"``.
SCHEME = "geonfs"

#: Folders the transport creates beside each folder that its options name (so on the same file
#: system, where a rename is atomic).
WORK_FOLDERS = ("tmp", "processing", "bad")


def _write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` as ``target`` so that a reader sees the old file or the whole new one."""
    temporary = target.parent.parent / "tmp" / f"{uuid.uuid4().hex}.{target.name}.tmp"
    try:
        with open(temporary, "wb") as f:
            f.write(data)
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ChannelError(f"Cannot write {str(target)!r}") from exc


def set_aside(path: Path, what: str, error: Exception) -> None:
    """Move an undecodable file into the ``bad`` folder beside its folder and log it."""
    bad = path.parent.parent / "bad" / f"{int(monotonic() * 1000)}_{path.name}"
    try:
        os.replace(path, bad)
    except OSError:
        log.exception("could not move the undecodable %s %s aside", what, path)
        return
    log.error("set aside an undecodable %s as %s: %s", what, bad, error)


def _put_order(name: str) -> tuple[int, str]:
    """A message file's place in its queue: the millisecond it was put at (its name's prefix)
    compared as a number, so that ``9999_...`` comes before ``10000_...``, which a comparison of
    the names puts first (as kombu's own transport does)."""
    stamp = name.partition("_")[0]
    return (int(stamp) if stamp.isdecimal() else 0), name


class Channel(filesystem.Channel):
    """A filesystem channel whose writes are atomic and whose reads survive a bad file."""

    @contextmanager
    def _table_lock(self, exchange: str) -> Iterator[None]:
        """Hold the exchange's lock file (not the table itself, which is replaced whole)."""
        path = self._exchange_file(exchange).with_suffix(".lock")
        with open(path, "a+b") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def _read_table(self, exchange: str) -> list[filesystem.exchange_queue_t]:
        file = self._exchange_file(exchange)
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ChannelError(f"Cannot open {file}") from exc
        try:
            return [filesystem.exchange_queue_t(*q) for q in loads(data.decode())]
        except (ValueError, TypeError) as error:
            set_aside(file, "exchange table", error)
            return []

    def get_table(self, exchange: str) -> list[filesystem.exchange_queue_t]:
        return self._read_table(exchange)

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str, queue: str) -> None:
        binding = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with self._table_lock(exchange):
            queues = self._read_table(exchange)
            if binding not in queues:
                queues.insert(0, binding)
                _write_atomically(self._exchange_file(exchange), dumps(queues).encode())

    def _delete(
        self, queue: str, exchange: str, routing_key: str, pattern: str, *args: Any, **kwargs: Any
    ) -> None:
        # virtual.Channel's own bookkeeping, skipping filesystem.Channel's in-place rewrite
        super(filesystem.Channel, self)._delete(
            queue, exchange, routing_key, pattern, *args, **kwargs
        )
        binding = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        if not self._exchange_file(exchange).exists():
            return
        with self._table_lock(exchange):
            queues = self._read_table(exchange)
            if binding in queues:
                queues.remove(binding)
                _write_atomically(self._exchange_file(exchange), dumps(queues).encode())

    # kombu's two bases name the second parameter differently (message, payload); it is
    # passed by position.
    def _put(self, queue: str, message: Any, **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        _write_atomically(Path(self.data_folder_out) / name, dumps(message).encode())

    def _get(self, queue: str, timeout: Any = None) -> Any:
        wanted = f"{queue}.msg"
        folder = Path(self.data_folder_in)
        processing = folder.parent / "processing"
        for name in sorted(os.listdir(folder), key=_put_order):
            if name.partition(".")[2] != wanted:
                continue
            claimed = processing / name
            try:
                os.replace(folder / name, claimed)
            except OSError:  # another consumer claimed it first
                continue
            try:
                data = claimed.read_bytes()
            except OSError as exc:
                raise ChannelError(f"Cannot read file {str(claimed)!r} from queue.") from exc
            try:
                message = loads(data.decode())
                # what the consumer builds from it: JSON without kombu's envelope raises there
                self.Message(message, channel=self)
            except Exception as error:  # whatever a torn or foreign file makes kombu raise
                set_aside(claimed, "message", error)
                continue
            claimed.unlink(missing_ok=True)
            return message
        raise Empty()


class Transport(filesystem.Transport):
    """The ``geonfs://`` transport: kombu's filesystem transport with :class:`Channel`."""

    Channel = Channel
    driver_type = SCHEME
    driver_name = SCHEME

    def __init__(self, client: Any, **kwargs: Any) -> None:
        super().__init__(client, **kwargs)
        options = client.transport_options
        defaults = {"data_folder_in": "data_in", "data_folder_out": "data_out"}
        for option, default in {**defaults, "control_folder": "control"}.items():
            folder = Path(options.get(option, default))
            folder.mkdir(parents=True, exist_ok=True)
            for sub in WORK_FOLDERS:
                (folder.parent / sub).mkdir(exist_ok=True)


def register() -> None:
    """Make ``geonfs://`` a kombu transport (before any connection is made)."""
    TRANSPORT_ALIASES.setdefault(SCHEME, f"{__name__}:Transport")
