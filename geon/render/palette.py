"""Colours: one per operation, stable across renders and edits, never the error red.

>>> colours = assign(["op-a", "op-b"])
>>> colours["op-a"] != colours["op-b"]
True
>>> assign(["op-b"])["op-b"] == colours["op-b"]
True

An operation's colour is chosen by a hash of its id, so it keeps its colour when other
operations are added or removed; two operations whose hashes collide take the next free colour
in document order (distinct colours for up to :data:`len(PALETTE) <PALETTE>` operations).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ERROR", "ERROR_FILL", "PALETTE", "WARNING", "OpColour", "assign", "mix", "shade"]

ERROR = "#D62728"
"""Outline and text colour of nodes named by an error issue."""
ERROR_FILL = "#FDECEA"
"""Background of nodes (and legend rows) named by an error issue."""
WARNING = "#E08E0B"
"""Outline colour of nodes named by a warning."""

PALETTE = (
    "#4E79A7",  # blue
    "#F28E2B",  # orange
    "#59A14F",  # green
    "#B07AA1",  # purple
    "#76B7B2",  # teal
    "#EDC948",  # yellow
    "#9C755F",  # brown
    "#5F6CAF",  # indigo
    "#499894",  # dark teal
    "#79706E",  # warm grey
    "#8A9A3B",  # olive
    "#B6549A",  # magenta
)
"""Strong colours for operations, mid-tones that carry white text; no red, which
:data:`ERROR` keeps for issues."""


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def mix(colour: str, white: float) -> str:
    """``colour`` mixed with a fraction ``white`` of white.

    >>> mix("#000000", 0.5)
    '#808080'
    """
    r, g, b = _rgb(colour)
    return "#" + "".join(f"{round(c + (255 - c) * white):02X}" for c in (r, g, b))


def shade(colour: str, black: float) -> str:
    """``colour`` mixed with a fraction ``black`` of black.

    >>> shade("#FFFFFF", 0.5)
    '#808080'
    """
    r, g, b = _rgb(colour)
    return "#" + "".join(f"{round(c * (1 - black)):02X}" for c in (r, g, b))


def _luminance(colour: str) -> float:
    r, g, b = _rgb(colour)
    return (0.299 * r + 0.587 * g + 0.114 * b) / 255


@dataclass(frozen=True, slots=True)
class OpColour:
    """The colours of one operation: outline/edges and tab fill (``strong``), text on the tab,
    text on light backgrounds (``ink``), cluster and shard fills."""

    strong: str
    text: str
    ink: str
    cluster: str
    shard: str

    @classmethod
    def of(cls, strong: str) -> OpColour:
        text = "#FFFFFF" if _luminance(strong) < 0.6 else "#1F2328"
        return cls(strong, text, shade(strong, 0.45), mix(strong, 0.9), mix(strong, 0.72))


def _slot(op_id: str) -> int:
    digest = hashlib.sha256(op_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big") % len(PALETTE)


def assign(op_ids: Iterable[str]) -> dict[str, OpColour]:
    """A colour for each operation id (in document order)."""
    taken: set[int] = set()
    out: dict[str, OpColour] = {}
    for op_id in op_ids:
        slot = _slot(op_id)
        if len(taken) < len(PALETTE):
            while slot in taken:
                slot = (slot + 1) % len(PALETTE)
            taken.add(slot)
        out[op_id] = OpColour.of(PALETTE[slot])
    return out
