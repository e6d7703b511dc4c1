"""Each suite's seconds in a pytest run, for the table ``make test`` ends with.

A suite is a test directory (``tests/web``, ``tests/core/plans``; ``tests`` for the files at the
top). A test's seconds are its setup, call and teardown together, so the session fixtures (a
Daphne, a worker) count where they first start. With ``GEON_TEST_TIMINGS`` set to a folder, the
run writes ``pytest-<GEON_TEST_PASS>.json`` there; ``scripts/ci_timings.py`` prints the table.
Without it the plugin records nothing.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


class SuiteTimes:
    def __init__(self, folder: Path, label: str) -> None:
        self.path = folder / f"pytest-{label}.json"
        self.label = label
        self.started = time.monotonic()
        self.suites: dict[str, dict[str, float]] = {}
        self.counted: set[str] = set()

    @staticmethod
    def suite_of(nodeid: str) -> str:
        return Path(nodeid.split("::", 1)[0]).parent.as_posix() or "."

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        suite = self.suites.setdefault(self.suite_of(report.nodeid), {"seconds": 0.0, "tests": 0})
        suite["seconds"] += report.duration
        if report.when == "setup" and report.nodeid not in self.counted:
            self.counted.add(report.nodeid)
            suite["tests"] += 1

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        record: dict[str, Any] = {
            "label": self.label,
            "wall_seconds": round(time.monotonic() - self.started, 2),
            "exit_status": int(exitstatus),
            "suites": {
                name: {"seconds": round(times["seconds"], 2), "tests": int(times["tests"])}
                for name, times in sorted(self.suites.items())
            },
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    folder = os.environ.get("GEON_TEST_TIMINGS")
    if folder:
        label = os.environ.get("GEON_TEST_PASS") or "run"
        config.pluginmanager.register(SuiteTimes(Path(folder), label), "geon-suite-times")
