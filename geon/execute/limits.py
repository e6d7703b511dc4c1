"""Run limits: elements per tensor, total planned bytes and wall time.

>>> Limits(max_elements=10).max_elements
10

Defaults are sized for a 2-core machine with 24 GiB of memory: one tensor may hold 2**28
elements (1 GiB of float32), a run may plan 6 GiB in all (arena, inputs and, for a sharded run,
the logical run it is checked against) and may take 300 s. :meth:`Limits.from_env` reads
``GEON_MAX_ELEMENTS``, ``GEON_MAX_BYTES`` and ``GEON_MAX_SECONDS`` and names the variable when one
is not a positive number. Sizes are checked when a plan is compiled, before anything is allocated;
time is checked after every operation and application.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from geon.core.errors import LimitError

__all__ = ["Limits", "format_bytes"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The largest run the executor accepts."""

    max_elements: int = 2**28
    max_bytes: int = 6 * 2**30
    max_seconds: float = 300.0

    def replace(self, **changes: Any) -> Limits:
        """A copy with the given fields changed."""
        return replace(self, **changes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Defaults overridden by ``GEON_MAX_ELEMENTS``, ``GEON_MAX_BYTES`` and
        ``GEON_MAX_SECONDS``."""
        env = os.environ if environ is None else environ
        base = cls()
        return cls(
            max_elements=int(_number(env, "GEON_MAX_ELEMENTS", base.max_elements, integer=True)),
            max_bytes=int(_number(env, "GEON_MAX_BYTES", base.max_bytes, integer=True)),
            max_seconds=_number(env, "GEON_MAX_SECONDS", base.max_seconds, integer=False),
        )

    def to_json(self) -> dict[str, float]:
        return {
            "max_elements": self.max_elements,
            "max_bytes": self.max_bytes,
            "max_seconds": self.max_seconds,
        }


def _number(env: Mapping[str, str], name: str, default: float, *, integer: bool) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        value = -1
    if value <= 0:
        kind = "a positive integer" if integer else "a positive number of seconds"
        raise LimitError(f'{name} is "{raw}"; expected {kind}')
    return value


def format_bytes(n: int) -> str:
    """Bytes for people: ``format_bytes(3 * 2**30)`` -> ``"3.0 GiB"``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{n} B"
        size /= 1024
    return f"{size:.1f} GiB"  # pragma: no cover
