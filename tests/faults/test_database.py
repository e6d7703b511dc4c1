"""A database that drops its connections (issue 14, item 5): PostgreSQL restarted, or an
administrator ending sessions, under a running web process. The pool checks a connection before
lending it, so the next requests get fresh ones: nothing fails and nothing needs a restart.

A real condition: ``pg_terminate_backend`` ends every session of the test database but the one
doing it. PostgreSQL only (marked ``postgres``: ``make test`` runs it in its second pass, on
``DATABASE_URL``); the
SQLite counterpart, a database locked past its busy timeout, is in ``tests/hostile/test_rest.py``
and ``tests/hostile/test_websocket.py``.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.test import Client

from geon.graphs.models import Graph, GraphVersion

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

API = "/api/v1"


def end_other_sessions() -> int:
    """End every session of the test database but this one, as ``pg_terminate_backend`` does
    when an administrator or a restart ends them; how many were ended."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t"
        ).fetchone()
    return int(ended[0]) if ended else 0


def test_requests_after_the_database_dropped_every_connection_succeed(
    user: Any, loom_document: dict[str, Any]
) -> None:
    # given a signed-in client whose requests borrowed pooled connections
    client = Client()
    client.force_login(user)
    created = client.post(
        f"{API}/graphs",
        json.dumps({"title": "kept", "document": loom_document}),
        content_type="application/json",
    )
    assert created.status_code == 201
    graph_id = created.json()["id"]
    connection.close()  # this thread's connection goes back to the pool
    # when the database ends every session the pool holds
    assert end_other_sessions() >= 1
    # then the next read and write succeed on fresh connections, and what was stored is there
    read = client.get(f"{API}/graphs/{graph_id}")
    assert (read.status_code, read.json()["title"]) == (200, "kept")
    renamed = client.patch(
        f"{API}/graphs/{graph_id}",
        json.dumps({"title": "still kept", "baseVersion": 1}),
        content_type="application/json",
    )
    assert renamed.status_code == 200, renamed.json()
    assert Graph.objects.get(pk=graph_id).title == "still kept"
    assert GraphVersion.objects.filter(graph_id=graph_id).count() >= 1
