"""The one error root of geon and its few meaningful subclasses.

>>> from geon.core.errors import AxisError, GeonError
>>> issubclass(AxisError, GeonError)
True
"""

from __future__ import annotations


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
