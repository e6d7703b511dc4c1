"""Bounds on what a document or a request may ask for, checked before any work starts.

>>> INT64_MAX == 2**63 - 1, in_int64(-(2**63)), in_int64(2**63)
(True, True, False)
>>> show_int(10**40)
'1000000000000... (41 digits)'

Every integer a user sends (a range coordinate, an axis length, a dual level, a mesh size, a
split count) must fit a signed 64-bit integer, as NumPy and the stored JSON do: the schemas
(``geon/core/schemas``) carry the same numbers, and a test keeps them equal. The other bounds
keep the work of one request proportional to its size:

- :data:`MAX_AXIS_NAME_LENGTH`, :data:`MAX_AXIS_REF_LENGTH`: an axis name, and a whole axis
  reference such as ``"H*W-1"`` (a composite of several names, each with a dual level);
- :data:`MAX_MESH_AXES`, :data:`MAX_MESH_DEVICES`: a device mesh's axes and its device count
  (the product of its axis sizes, so also each size);
- :data:`MAX_PIECES`: the pieces of one split, so the shards (Applications) of one operation;
- :data:`MAX_REPLICATED_SHARDS`: the shards the cost model reads for the operations a plan
  leaves whole, each replicated on every device of the mesh.
"""

from __future__ import annotations

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "MAX_AXIS_NAME_LENGTH",
    "MAX_AXIS_REF_LENGTH",
    "MAX_MESH_AXES",
    "MAX_MESH_DEVICES",
    "MAX_PIECES",
    "MAX_REPLICATED_SHARDS",
    "in_int64",
    "show_int",
    "show_text",
]

INT64_MIN = -(2**63)
"""The smallest integer a document or a request may hold."""

INT64_MAX = 2**63 - 1
"""The largest integer a document or a request may hold."""

MAX_AXIS_NAME_LENGTH = 128
"""Characters in an axis name (``^[A-Za-z_][A-Za-z0-9_]*$``)."""

MAX_AXIS_REF_LENGTH = 1024
"""Characters in one axis reference as written (``"W-1"``, ``"H*W"``): room for a composite of
seven names of the longest kind, each with a dual level."""

MAX_MESH_AXES = 16
"""Axes of one device mesh."""

MAX_MESH_DEVICES = 65536
"""Devices of one mesh (the product of its axis sizes)."""

MAX_PIECES = 4096
"""Pieces of one split of a range, and so shards (Applications) of one operation."""

MAX_REPLICATED_SHARDS = 65536
"""Operations a placed document leaves whole times the devices of its mesh: each runs on every
device (:func:`geon.core.plans.shards.replica_devices`), a shard each for the cost model, so a large
mesh cannot multiply a document's work beyond what its own Applications cost."""


def in_int64(value: int) -> bool:
    """Whether ``value`` fits a signed 64-bit integer."""
    return INT64_MIN <= value <= INT64_MAX


_SHOWN_DIGITS = 13


def show_int(value: int) -> str:
    """``value`` for a message: as written when it is short, else its leading digits and its
    length (never the whole number: Python refuses to print integers of over 4300 digits).

    >>> show_int(-5), show_int(-(10**5000))
    ('-5', '-1000000000000... (5001 digits)')
    """
    magnitude = -value if value < 0 else value
    if magnitude < 10**20:
        return str(value)
    digits = max(1, int(magnitude.bit_length() * 0.30102999566398))  # log10(2)
    while 10**digits <= magnitude:
        digits += 1
    while digits > 1 and 10 ** (digits - 1) > magnitude:
        digits -= 1
    lead = magnitude // 10 ** (digits - _SHOWN_DIGITS)
    return f"{'-' if value < 0 else ''}{lead}... ({digits} digits)"


_SHOWN_CHARACTERS = 40


def show_text(text: str) -> str:
    """``text`` for a message: as written when it is short, else its start and its length.

    >>> show_text("H"), show_text("A" * 100)
    ('H', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA... (100 characters)')
    """
    if len(text) <= _SHOWN_CHARACTERS:
        return text
    return f"{text[:_SHOWN_CHARACTERS]}... ({len(text)} characters)"
