"""A throw-away database for a benchmark: SQLite in its data folder, or a new database on the
PostgreSQL server that ``DATABASE_URL`` names (dropped afterwards). Call
:func:`throwaway_database` before Django is set up, :func:`drop_database` at the end."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit


def throwaway_database(prefix: str) -> tuple[str, str] | None:
    """With a PostgreSQL ``DATABASE_URL``: create a new database on that server and point
    ``DATABASE_URL`` at it; the server's URL and the new name are returned (to drop it)."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        os.environ.pop("DATABASE_URL", None)  # SQLite in the data folder
        return None
    import psycopg

    name = f"{prefix}_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    return url, name


def drop_database(server: tuple[str, str] | None) -> None:
    if server is not None:
        import psycopg
        from django.db import connections

        connections.close_all()
        with psycopg.connect(server[0], autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{server[1]}" WITH (FORCE)')
