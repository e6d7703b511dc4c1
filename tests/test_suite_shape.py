"""The suite's own rules: ``tests/conftest.py`` is never imported by name, and the second pass
(PostgreSQL + Redis) selects by the services a test touches, read as ``tests/suite_marks.py``
says.

pytest loads it as a conftest; ``from tests.conftest import ...`` would run it a second time as
another module, with another data folder and environment, so the child processes started after
that point read one broker and database folder and the test process another (what made the
worker look dead to every later test in CI). Shared helpers live in ``tests/processes.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType, SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.suite_marks import SECOND_PASS, bound_examples, drives_a_browser, services_of

TESTS = Path(__file__).resolve().parent


def test_no_test_module_imports_the_root_conftest_by_name() -> None:
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if "tests.conftest" in names:
                offenders.append(f"{path.relative_to(TESTS.parent)}:{node.lineno}")
    assert offenders == []


# --- the second pass's selection (tests/suite_marks.py, Makefile) ------------------------------


def _module(**names: object) -> ModuleType:
    module = ModuleType(f"suite_shape_probe_{len(names)}_{'_'.join(names)}")
    vars(module).update(names)
    return module


def test_a_pure_test_touches_no_service() -> None:
    from geon.core.graph import Graph

    assert services_of({"loom_document", "tmp_path"}, False, _module(Graph=Graph)) == []


def test_the_services_are_read_from_the_fixtures_a_test_uses() -> None:
    # a websocket story through Daphne and a worker, on a transactional database
    closure = {"daphne_server", "celery_worker", "subprocess_env", "django_db_setup", "user"}
    assert services_of(closure, True, None) == ["database", "channel_layer", "broker"]
    # a test of the REST API (django_db marked) reaches only the database
    assert services_of({"client", "user", "graph"}, True, None) == ["database"]
    # a child process on the test database (the broker stress test's own worker)
    assert services_of({"subprocess_env", "django_db_setup"}, False, None) == ["database"]


def test_the_services_are_read_from_what_a_module_imports() -> None:
    from channels.layers import get_channel_layer
    from channels.testing import WebsocketCommunicator

    from geon.celery import app

    assert services_of(set(), False, _module(get_channel_layer=get_channel_layer)) == [
        "channel_layer"
    ]
    assert services_of(set(), False, _module(WebsocketCommunicator=WebsocketCommunicator)) == [
        "channel_layer"
    ]
    assert services_of(set(), False, _module(app=app)) == ["broker"]


def test_a_browser_test_is_known_by_its_fixtures() -> None:
    assert drives_a_browser({"daphne_server", "page"})
    assert drives_a_browser({"browsers", "user"})
    assert not drives_a_browser({"daphne_server", "client"})


def test_a_handful_of_browser_stories_run_again_on_the_services() -> None:
    kept = []
    for path in sorted((TESTS / "browser").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                ast.unparse(d) == "pytest.mark.story_on_services" for d in node.decorator_list
            ):
                kept.append(f"{path.name}::{node.name}")
    assert 3 <= len(kept) <= 8, kept
    assert all(name.split("::")[1].startswith("test_") for name in kept), kept


def test_the_makefile_selects_the_second_pass_as_suite_marks_says() -> None:
    makefile = (TESTS.parent / "Makefile").read_text(encoding="utf-8")
    lines = [line for line in makefile.splitlines() if line.startswith("SECOND_PASS := ")]
    assert lines == [f"SECOND_PASS := {SECOND_PASS}"]


def test_ci_bounds_a_property_test_that_asks_for_more_examples() -> None:
    seen: list[int] = []

    @settings(max_examples=400, database=None)
    @given(st.integers())
    def many(n: int) -> None:
        seen.append(n)

    @settings(max_examples=20, database=None)
    @given(st.integers())
    def few(n: int) -> None:
        seen.append(n)

    # when both are bounded to 100, as CI's collection hook does
    for test in (many, few):
        bound_examples(SimpleNamespace(obj=test), 100)
    many()
    ran_many, seen[:] = len(seen), []
    few()
    # then the one that asked for 400 runs at most 100, the one that asked for 20 its own 20
    assert 50 < ran_many <= 100 and len(seen) <= 20, (ran_many, len(seen))
    # and a test that is no property test is left alone
    plain = SimpleNamespace(obj=test_a_pure_test_touches_no_service)
    bound_examples(plain, 100)
    assert not hasattr(test_a_pure_test_touches_no_service, "_hypothesis_internal_use_settings")
