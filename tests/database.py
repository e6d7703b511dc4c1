"""The test database made briefly unavailable, as another process's write transaction makes it.

A module of its own (see :mod:`tests.processes`). SQLite only: tests using it are marked
``sqlite`` (``tests/conftest.py`` runs them in ``make test``'s first pass, on SQLite; the
PostgreSQL counterpart, dropped connections, is ``tests/faults/test_database.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connections


@contextmanager
def short_busy_timeout(seconds: float = 0.2) -> Iterator[float]:
    """Connections opened meanwhile (this thread's and any other's) wait ``seconds`` for a lock,
    not the configured 20 s."""
    options = connections.settings["default"].setdefault("OPTIONS", {})
    before = options.get("timeout")
    options["timeout"] = seconds
    connections.close_all()
    try:
        yield seconds
    finally:
        if before is None:
            options.pop("timeout")
        else:
            options["timeout"] = before
        connections.close_all()


@contextmanager
def write_locked() -> Iterator[None]:
    """The SQLite test database's write lock held by another connection meanwhile."""
    holder = sqlite3.connect(connections["default"].settings_dict["NAME"], timeout=1)
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield
    finally:
        holder.rollback()
        holder.close()
