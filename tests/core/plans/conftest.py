"""The executor's backends for the sharded runs of these plans (as tests/execute/conftest.py)."""

from __future__ import annotations

import pytest

from geon.execute import available_backends

BACKENDS = ["numpy", "array_api_strict"] + (["cupy"] if "cupy" in available_backends() else [])


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name
