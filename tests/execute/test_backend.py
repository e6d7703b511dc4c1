"""Backend selection: NumPy by default, GEON_BACKEND, array_api_strict, and CuPy refused with a
clear error when it is missing or no GPU answers (the GPU driver is faked: the machine's edge)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from geon.core.errors import ExecutionError
from geon.execute import available_backends, select_backend


@pytest.mark.parametrize(
    ("name", "env", "expected"),
    [
        (None, None, "numpy"),
        (None, "array_api_strict", "array_api_strict"),
        ("numpy", "array_api_strict", "numpy"),
        ("array_api_strict", None, "array_api_strict"),
    ],
    ids=["default", "from-env", "argument-wins", "strict"],
)
def test_backend_selection(
    name: str | None, env: str | None, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if env is None:
        monkeypatch.delenv("GEON_BACKEND", raising=False)
    else:
        monkeypatch.setenv("GEON_BACKEND", env)
    assert select_backend(name).name == expected


def test_unknown_backend_from_env_says_where_it_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEON_BACKEND", "jax")
    with pytest.raises(ExecutionError) as exc:
        select_backend()
    assert str(exc.value) == (
        'backend "jax" (from GEON_BACKEND) is not known; expected one of ("numpy", "cupy", '
        '"array_api_strict")'
    )


def test_cupy_not_installed_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # given no CuPy on the machine
    monkeypatch.setitem(sys.modules, "cupy", None)
    # when it is asked for / then the error names it and what is available
    with pytest.raises(ExecutionError) as exc:
        select_backend("cupy")
    assert str(exc.value) == (
        'backend "cupy" is not available: CuPy is not installed (pip install geon[gpu]); '
        'available backends: ("numpy", "array_api_strict")'
    )
    assert available_backends() == ("numpy", "array_api_strict")


def _fake_cupy(count: Any) -> types.ModuleType:
    def get_device_count() -> int:
        if isinstance(count, Exception):
            raise count
        return int(count)

    module = types.ModuleType("cupy")
    module.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        runtime=types.SimpleNamespace(getDeviceCount=get_device_count)
    )
    return module


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (
            0,
            'backend "cupy" is not available: no GPU answers (0 CUDA devices); available '
            'backends: ("numpy", "array_api_strict")',
        ),
        (
            RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected"),
            'backend "cupy" is not available: no GPU answers (RuntimeError: cudaErrorNoDevice: '
            'no CUDA-capable device is detected); available backends: ("numpy", '
            '"array_api_strict")',
        ),
    ],
    ids=["no-devices", "driver-error"],
)
def test_cupy_without_gpu_is_refused(
    count: Any, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given CuPy installed but no GPU answering
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(count))
    # when it is asked for / then the error says so
    with pytest.raises(ExecutionError) as exc:
        select_backend("cupy")
    assert str(exc.value) == message
