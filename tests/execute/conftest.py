"""Backends for the executor tests: every kernel runs on NumPy and on ``array_api_strict``, and on
CuPy too where a CUDA GPU answers (``available_backends()`` lists it only then), so the same cases
check the GPU path on a machine that has one."""

from __future__ import annotations

import pytest

from geon.execute import available_backends

BACKENDS = ["numpy", "array_api_strict"] + (["cupy"] if "cupy" in available_backends() else [])


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name
