"""Which of the services a test touches, read from the fixtures it uses and the names its module
imports; ``tests/conftest.py`` marks every collected test with them.

``make test`` runs the suite twice when CI's PostgreSQL and Redis answer: first everything on
SQLite, the in-memory channel layer and the embedded ``geonfs://`` broker, then again only what
differs there, the tests marked ``database``, ``channel_layer`` or ``broker`` (the browser
stories excepted but for those marked ``story_on_services``). A pure test runs once.

The marks are read here, not written in each file, so a new test file is marked as the others
are. A test that reaches a service only through a child process it starts itself (``geon
serve``) says so with the marker by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from hypothesis import settings as hypothesis_settings

#: The services of the second pass, in the order the marks are listed.
SERVICES = ("database", "channel_layer", "broker")

#: Fixtures (anywhere in a test's closure) that reach each service.
FIXTURES: dict[str, frozenset[str]] = {
    "database": frozenset(
        {
            "db",
            "transactional_db",
            "django_db_reset_sequences",
            "django_db_serialized_rollback",
            "django_db_setup",  # the child processes' (subprocess_env) too
            "live_server",
        }
    ),
    # Daphne serves the websockets through the channel layer; tests/realtime's autouse fixture
    # gives each websocket test a layer of its own.
    "channel_layer": frozenset({"daphne_server"}),
    "broker": frozenset({"celery_worker"}),
}

#: Packages whose names, imported into a test module, mean the module talks to the service.
PACKAGES: dict[str, tuple[str, ...]] = {
    "database": ("django.db",),
    "channel_layer": ("channels", "channels_redis"),
    "broker": ("celery", "kombu", "geon.celery", "geon.runs.broker"),
}

#: The browser fixtures: a test using one drives Chromium.
BROWSER_FIXTURES = frozenset({"browsers", "page"})

#: The second pass's selection (``pytest -m``): what differs on PostgreSQL + Redis, and of the
#: browser stories only the handful kept for it.
SECOND_PASS = "(database or channel_layer or broker) and not browser or story_on_services"

_module_packages: dict[str, frozenset[str]] = {}


def _defined_in(value: object) -> str:
    if isinstance(value, ModuleType):
        return value.__name__
    name = getattr(value, "__module__", None)
    if not isinstance(name, str):
        name = type(value).__module__
    return name


def imported_packages(module: ModuleType) -> frozenset[str]:
    """The dotted names of the modules that ``module``'s global names come from (memoised)."""
    key = module.__name__
    if key not in _module_packages:
        _module_packages[key] = frozenset(_defined_in(v) for v in list(vars(module).values()))
    return _module_packages[key]


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def services_of(
    fixturenames: Iterable[str], uses_django_db: bool, module: ModuleType | None
) -> list[str]:
    """The services a test touches: through its fixtures (closure), a ``django_db`` mark, or
    what its module imports; in ``SERVICES`` order."""
    fixtures = set(fixturenames)
    names = imported_packages(module) if module is not None else frozenset()
    touched = []
    for service in SERVICES:
        if (
            (service == "database" and uses_django_db)
            or fixtures & FIXTURES[service]
            or any(_under(n, p) for n in names for p in PACKAGES[service])
        ):
            touched.append(service)
    return touched


def drives_a_browser(fixturenames: Iterable[str]) -> bool:
    return bool(BROWSER_FIXTURES.intersection(fixturenames))


def bound_examples(item: object, bound: int) -> None:
    """Bound a property test's examples to ``bound`` (CI's profile cannot: a test's own
    ``@settings(max_examples=...)`` wins over the profile's). Other tests are left as they are."""
    test = getattr(item, "obj", None)
    test = getattr(test, "__func__", test)  # a method's function
    current = getattr(test, "_hypothesis_internal_use_settings", None)
    if isinstance(current, hypothesis_settings) and current.max_examples > bound:
        test._hypothesis_internal_use_settings = hypothesis_settings(  # type: ignore[union-attr]
            current, max_examples=bound
        )
