"""The shape of the code base (issue 15): every module short enough to read in one sitting.

Import cycles are checked by import-linter (`make lint`, the "No import cycles" contract in
pyproject.toml); this file checks sizes, which no linter does. The limits are the issue's:
~700 lines for a Python module of ``geon/``, ~500 for a frontend module (tests and the generated
protocol and REST types excepted: a test file grows with its cases, a generated file with the
schemas).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON_LIMIT = 700
TYPESCRIPT_LIMIT = 500
GENERATED = {"frontend/src/sync/protocol.ts"}


def _lines(path: Path) -> int:
    with path.open(encoding="utf-8") as f:
        return sum(1 for _ in f)


def _oversized(paths: list[Path], limit: int) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}: {_lines(path)} lines"
        for path in sorted(paths)
        if str(path.relative_to(ROOT)) not in GENERATED and _lines(path) > limit
    ]


def test_python_modules_read_in_one_sitting() -> None:
    modules = [p for p in (ROOT / "geon").rglob("*.py") if "migrations" not in p.parts]
    assert len(modules) > 50
    assert _oversized(modules, PYTHON_LIMIT) == [], f"split these below {PYTHON_LIMIT} lines"


def test_frontend_modules_read_in_one_sitting() -> None:
    src = ROOT / "frontend" / "src"
    modules = [p for p in src.rglob("*.ts") if not p.name.endswith(".test.ts")]
    assert len(modules) > 20
    too_long = _oversized(modules, TYPESCRIPT_LIMIT)
    assert too_long == [], f"split these below {TYPESCRIPT_LIMIT} lines"
