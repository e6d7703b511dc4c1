"""The look of a diagram and the HTML-label pieces it is built from (DESIGN.md §7): fonts,
colours of the fixed parts, length limits, and small helpers that wrap already-clipped user text
in Graphviz HTML-like markup (escaped by :func:`geon.render.labels.html_text`).

>>> lines([bold("x < y"), small(""), mono("H=2")])
'<<b>x &lt; y</b><br/><font face="Courier">H=2</font>>'
>>> attrs([("shape", "box"), ("label", '"a"')])
'[shape=box, label="a"]'

Graphviz rejects an empty element (``<b></b>``), so empty text gives no element at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from geon.core.graph import Node
from geon.render.labels import clip, html_text

__all__ = [
    "AXES_PER_ROW",
    "EDGE",
    "FONT",
    "INK",
    "LEGEND_FILL",
    "LINE_CHARS",
    "MONO",
    "MUTED",
    "NOTE_CHARS",
    "NOTE_FILL",
    "NOTE_LINE",
    "NOTE_WIDTH",
    "PARAM_LINES",
    "PARAM_WIDTH",
    "TENSOR_FILL",
    "TENSOR_LINE",
    "TITLE_CHARS",
    "TOOLTIP_CHARS",
    "attrs",
    "bold",
    "font",
    "lines",
    "mono",
    "short_id",
    "small",
    "title",
]

FONT = "Helvetica"
MONO = "Courier"
INK = "#1F2328"
MUTED = "#57606A"
TENSOR_FILL = "#EEF2F7"
TENSOR_LINE = "#4A5568"
NOTE_FILL = "#FFF8C5"
NOTE_LINE = "#C9A227"
LEGEND_FILL = "#F6F8FA"
EDGE = "#4A5568"

TITLE_CHARS = 48
"""Longest title (label, kernel) shown in a node; longer ones end in an ellipsis."""
LINE_CHARS = 64
"""Longest detail line (axes, ranges, params)."""
NOTE_CHARS = 600
"""Longest note message shown; notes wrap at :data:`NOTE_WIDTH` characters."""
NOTE_WIDTH = 40
AXES_PER_ROW = 10
"""Axes per row of the legend table."""
PARAM_WIDTH = 44
"""Width at which an operation's parameters wrap."""
PARAM_LINES = 3
"""Most lines of parameters shown in an operation's tab (the rest is cut)."""
TOOLTIP_CHARS = 1200


def bold(text: str, limit: int = TITLE_CHARS) -> str:
    return f"<b>{html_text(clip(text, limit))}</b>" if text else ""


def small(text: str, colour: str = MUTED, limit: int = LINE_CHARS, size: int = 9) -> str:
    if not text:
        return ""
    return f'<font point-size="{size}" color="{colour}">{html_text(clip(text, limit))}</font>'


def mono(text: str, limit: int = LINE_CHARS) -> str:
    return f'<font face="{MONO}">{html_text(clip(text, limit))}</font>' if text else ""


def font(text: str, attributes: str) -> str:
    return f"<font {attributes}>{html_text(text)}</font>" if text else ""


def lines(parts: Iterable[str]) -> str:
    """An HTML label of the non-empty ``parts``, one per line."""
    return "<" + "<br/>".join(p for p in parts if p) + ">"


def attrs(pairs: Sequence[tuple[str, str]]) -> str:
    """``[k=v, ...]``; values are already DOT-quoted or HTML labels."""
    return "[" + ", ".join(f"{k}={v}" for k, v in pairs) + "]"


def short_id(node_id: str) -> str:
    """A long id cut to its first 8 characters (a node's title when it has no label)."""
    return node_id[:8] if len(node_id) > 12 else node_id


def title(node: Node, fallback: str) -> str:
    return node.label if node.label else fallback
