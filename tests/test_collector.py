"""The processes that load documents run with the collector tuned for them
(:func:`geon.core.collector.tune_for_documents`): Django's (web, realtime, worker: the graphs
app does it when ready) and the CLI's."""

from __future__ import annotations

import gc
import subprocess
import sys

from geon.core.collector import THRESHOLDS

#: Runs ``python -m geon --help`` in this interpreter, then prints the collector's thresholds.
CLI = """import gc, runpy, sys
sys.argv = ["geon", "--help"]
try:
    runpy.run_module("geon", run_name="__main__")
except SystemExit:
    pass
print(tuple(gc.get_threshold()))"""


def test_a_django_process_is_tuned() -> None:
    # pytest-django has set Django up, which readies the graphs app
    assert gc.get_threshold() == THRESHOLDS
    assert gc.get_freeze_count() > 0


def test_the_cli_is_tuned() -> None:
    plain = "import gc; print(tuple(gc.get_threshold()))"
    before = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True)
    assert before.stdout.strip() == "(700, 10, 10)"  # CPython's default, for comparison
    after = subprocess.run([sys.executable, "-c", CLI], capture_output=True, text=True)
    assert after.stdout.strip().splitlines()[-1] == str(THRESHOLDS)
