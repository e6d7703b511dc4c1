"""Shared fixtures: an isolated data folder, users and graphs, and the real processes.

The suite runs with its own ``GEON_DATA_DIR`` (a temporary folder: SQLite test database,
``filesystem://`` broker) and its own Celery queue, so a ``make run`` on the same machine never
sees its tasks. ``celery_worker`` and ``daphne_server`` start real child processes that share the
test database; tests using them need ``@pytest.mark.django_db(transaction=True)``. The settings
are ``tests/settings.py``'s (geon's, with a fast password hasher and Redis cache keys of the
session's own), in the children too. The collection hook marks each test with the services it
touches (``tests/suite_marks.py``), which the second pass of ``make test`` selects by.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import settings as hypothesis_settings

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(tempfile.mkdtemp(prefix="geon-tests-"))

# Read by geon.settings, which pytest-django imports after this module (see pytest_configure).
os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"  # geon.settings, a fast password hasher
# The children import tests.settings too, whatever folder they start in.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
os.environ["GEON_DATA_DIR"] = str(DATA_DIR)
os.environ["GEON_DEBUG"] = "0"
os.environ["SECRET_KEY"] = "geon-tests-only-not-a-secret"
os.environ["GEON_CELERY_QUEUE"] = f"geon-tests-{os.getpid()}"
os.environ.pop("GEON_HTTPS", None)

import django  # noqa: E402 - only after the environment above is in place

django.setup()  # pytest-django then finds the apps ready in its pytest_configure

from geon.cli.serve import daphne_command  # noqa: E402
from tests.processes import Child, free_port, start_child, stop_process  # noqa: E402
from tests.suite_marks import bound_examples, drives_a_browser, services_of  # noqa: E402

PASSWORD = "correct horse battery staple"

#: Each suite's seconds, for the table ``make test`` ends with (``GEON_TEST_TIMINGS``).
pytest_plugins = ["tests.timing_plugin"]


#: CI's bound on a property test's examples (the ``ci`` profile, loaded when ``CI=true``, as
#: ``.ci/run`` sets it): Hypothesis's own default, so a test declaring more (150 to 600) runs
#: 100 there and its own count elsewhere, and none runs fewer than it asked for. Derandomized,
#: so a CI run is repeatable; no deadline, the machine is shared.
CI_MAX_EXAMPLES = 100
hypothesis_settings.register_profile(
    "ci", max_examples=CI_MAX_EXAMPLES, derandomize=True, deadline=None, database=None
)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
if IN_CI:
    hypothesis_settings.load_profile("ci")


#: The tests a database marker keeps to that database (``make test`` runs the suite on SQLite,
#: then again on PostgreSQL when ``DATABASE_URL`` is set, so each runs in one of the passes).
DATABASE_MARKERS = {"sqlite": "sqlite", "postgres": "postgresql"}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the services it touches and ``browser`` when it drives Chromium
    (:mod:`tests.suite_marks`); deselect (never skip) the tests marked for a database other than
    this run's, saying so."""
    from django.conf import settings as django_settings
    from django.db import connection

    for item in items:
        fixturenames = getattr(item, "fixturenames", ())
        module = getattr(item, "module", None)
        for service in services_of(
            fixturenames, bool(item.get_closest_marker("django_db")), module
        ):
            if not item.get_closest_marker(service):
                item.add_marker(service)
        if drives_a_browser(fixturenames) and not item.get_closest_marker("browser"):
            item.add_marker("browser")
        if IN_CI:
            bound_examples(item, CI_MAX_EXAMPLES)

    elsewhere = [
        item
        for item in items
        if any(
            item.get_closest_marker(marker) and vendor != connection.vendor
            for marker, vendor in DATABASE_MARKERS.items()
        )
    ]
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        gone = set(map(id, elsewhere))
        items[:] = [item for item in items if id(item) not in gone]
        print(f"\n{len(elsewhere)} deselected: they need another database than {connection.vendor}")
    if django_settings.REDIS_URL is None:  # the second pass, on Redis, runs them
        need_redis = [item for item in items if item.get_closest_marker("redis")]
        if need_redis:
            config.hook.pytest_deselected(items=need_redis)
            items[:] = [item for item in items if not item.get_closest_marker("redis")]
            print(f"\n{len(need_redis)} deselected: they need Redis (REDIS_URL)")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(DATA_DIR, ignore_errors=True)


# Fixtures only: importing this module by name (``tests.conftest``) would run it a second time
# with another data folder.

# --- data ------------------------------------------------------------------------------------


@pytest.fixture
def loom_document() -> dict[str, Any]:
    """The loom example: z = t0 + t1 over int32 10x5 tensors, sharded in two applications."""
    path = ROOT / "geon" / "examples" / "loom_sharded_add.json"
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


@pytest.fixture
def password() -> str:
    """The password of ``user`` and ``other_user``."""
    return PASSWORD


@pytest.fixture
def user(django_user_model: Any) -> Any:
    """A user ``ann`` whose password is ``PASSWORD``."""
    return django_user_model.objects.create_user("ann", password=PASSWORD)


@pytest.fixture
def other_user(django_user_model: Any) -> Any:
    """A second user, ``bob``, who owns nothing of ann's."""
    return django_user_model.objects.create_user("bob", password=PASSWORD)


@pytest.fixture
def graph(user: Any, loom_document: dict[str, Any]) -> Any:
    """ann's graph holding the loom example as version 1."""
    from geon.graphs.services import do_create_graph

    return do_create_graph(owner=user, title="Loom add", document=loom_document)


@pytest.fixture
def session_cookie(client: Any) -> Callable[[Any], bytes]:
    """``cookie`` header value of a signed-in session for a user (for websocket clients)."""

    def cookie(for_user: Any) -> bytes:
        client.force_login(for_user)
        return f"sessionid={client.cookies['sessionid'].value}".encode()

    return cookie


# --- real processes --------------------------------------------------------------------------


def _database_url(settings_dict: dict[str, Any]) -> str:
    """A DATABASE_URL naming the database the test run actually uses."""
    if settings_dict["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{settings_dict['NAME']}"
    user = quote(settings_dict.get("USER") or "")
    password = quote(settings_dict.get("PASSWORD") or "")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "localhost"
    port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{settings_dict['NAME']}"


@pytest.fixture(scope="session")
def subprocess_env(django_db_setup: None, django_db_blocker: Any) -> dict[str, str]:
    """Environment for child processes: the same settings, pointed at the test database."""
    from django.db import connection

    env = dict(os.environ)
    env["DATABASE_URL"] = _database_url(connection.settings_dict)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="session")
def celery_worker(subprocess_env: dict[str, str]) -> Iterator[Child]:
    """A real ``celery -A geon worker`` process on the test broker and database."""
    hostname = f"geon-tests-{os.getpid()}@localhost"
    command = [
        sys.executable, "-m", "celery", "-A", "geon", "worker", "--pool=solo", "--loglevel=INFO",
        "-Q", os.environ["GEON_CELERY_QUEUE"], f"--hostname={hostname}",
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    child = start_child("worker", command, subprocess_env, lambda c: " ready." in c.output())
    child.name = hostname
    yield child
    stop_process(child.process)


@pytest.fixture(scope="session")
def tries_worker(subprocess_env: dict[str, str]) -> Iterator[Child]:
    """A real worker of the tries queue (visitors' puzzle checks), as ``geon serve`` runs it
    beside the default queue's worker."""
    from django.conf import settings

    hostname = f"geon-tests-tries-{os.getpid()}@localhost"
    command = [
        sys.executable, "-m", "celery", "-A", "geon", "worker", "--pool=solo", "--loglevel=INFO",
        "-Q", settings.GEON_TRIES_QUEUE, f"--hostname={hostname}",
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    child = start_child("tries", command, subprocess_env, lambda c: " ready." in c.output())
    child.name = hostname
    yield child
    stop_process(child.process)


@pytest.fixture(scope="session")
def daphne_server(subprocess_env: dict[str, str]) -> Iterator[str]:
    """A real Daphne serving ``geon.asgi:application``; yields its base URL."""
    port = free_port()
    command = daphne_command("127.0.0.1", port)

    def listening(child: Child) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    child = start_child("daphne", command, subprocess_env, listening)
    yield f"http://127.0.0.1:{port}"
    stop_process(child.process)
