"""The one error root of geon and its few meaningful subclasses.

>>> from geon.core.errors import AxisError, GeonError
>>> issubclass(AxisError, GeonError)
True
"""

from __future__ import annotations

import json
from typing import Any


class GeonError(Exception):
    """Root of every error geon raises on purpose."""


class AxisError(GeonError):
    """An axis, axis reference or axis list is invalid for the requested operation."""


class ShapeError(GeonError):
    """Lengths, ranks or ranges do not agree."""


class DocumentError(GeonError):
    """A document, node or edit is malformed or refers to something that does not exist."""


class SplitError(GeonError):
    """A range cannot be split as requested."""


class KernelError(GeonError):
    """A kernel is unknown or its parameters are invalid."""


class LimitError(GeonError):
    """A request exceeds a configured size or time limit; checked before work starts."""


class ExecutionError(GeonError):
    """A graph cannot be executed (unbound axes, missing inputs, backend unavailable)."""


def quote(value: Any, limit: int = 80) -> str:
    """``value`` in double quotes for a message: a string as written, anything else as JSON (as
    Python writes it where it is not JSON), cut to ``limit`` characters with "..." (a hostile
    name never makes a message long).

    >>> print(quote("W-1"), quote(["H", 2]), quote("x" * 100, limit=10))
    "W-1" "["H", 2]" "xxxxxxx..."
    """
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, default=repr)
        except (TypeError, ValueError):  # not JSON: a tuple key, a circular list
            text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f'"{text}"'
