"""Backends for the executor tests: every kernel runs on NumPy and on ``array_api_strict``."""

from __future__ import annotations

import pytest

BACKENDS = ["numpy", "array_api_strict"]


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name
