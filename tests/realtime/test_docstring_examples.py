"""The docstring examples of the graphs services and the runs' feed run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "geon.graphs.services.publishing",
        "geon.graphs.services.documents",
        "geon.graphs.services.snapshots",
        "geon.graphs.services.presence",
        "geon.graphs.services.rebasing",
        "geon.runs.feed",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert (result.failed, result.attempted >= 1) == (0, True)
