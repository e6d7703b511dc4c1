"""The suite's own rule: ``tests/conftest.py`` is never imported by name.

pytest loads it as a conftest; ``from tests.conftest import ...`` would run it a second time as
another module, with another data folder and environment, so the child processes started after
that point read one broker and database folder and the test process another (what made the
worker look dead to every later test in CI). Shared helpers live in ``tests/processes.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

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
