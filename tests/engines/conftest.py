"""The engine tests run XLA on 8 forced CPU host devices (issue 31). XLA reads
``XLA_FLAGS`` when jax first makes its CPU client, so this conftest sets the flag, makes the
client (``jax.devices()``) and puts ``XLA_FLAGS`` back as it was: no other test sees it, and
the subprocesses other tests start inherit nothing of it."""

from __future__ import annotations

import os

import pytest

_FLAG = "--xla_force_host_platform_device_count=8"
_before = os.environ.get("XLA_FLAGS")
os.environ["XLA_FLAGS"] = f"{_before or ''} {_FLAG}".strip()
try:
    import jax

    jax.config.update("jax_enable_x64", True)
    DEVICES = len(jax.devices())
finally:
    if _before is None:
        del os.environ["XLA_FLAGS"]
    else:
        os.environ["XLA_FLAGS"] = _before


@pytest.fixture(scope="session")
def host_devices() -> int:
    """The CPU host devices XLA made (8, unless jax was loaded before this conftest)."""
    assert DEVICES >= 8, f"jax was loaded with {DEVICES} devices before tests/engines/conftest"
    return DEVICES
