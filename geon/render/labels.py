"""Text for diagrams: escaping user strings for DOT and Graphviz HTML labels, and short
formats for ranges, shapes and axes.

>>> html_text('a < b & "c"\\nd')
'a &lt; b &amp; &quot;c&quot;<br/>d'
>>> print(tooltip_string('say "hi"'))
"say \\"hi\\""
>>> named_shape(["H", "W-1"], (2, 3))
'H=2, W-1=3'

Every string in a document is user input. Two escapers cover every place one can land:

- :func:`html_text` for HTML-like labels (``label=<...>``): XML entities for ``& < > " '``,
  newlines as ``<br/>``, characters XML cannot carry (controls, lone surrogates) replaced by
  U+FFFD so that Graphviz's XML parser never rejects a label, and backslashes doubled: Graphviz
  expands ``\\N``, ``\\G``... even inside HTML labels, and reads ``\\\\`` as one backslash.
- :func:`tooltip_string` for the quoted ``tooltip`` attribute: Graphviz unescapes a tooltip twice
  (escape-string expansion, then its SVG writer), so each backslash is written four times; quotes
  are escaped for the DOT lexer and line breaks become ``\\n``.

Both were checked against the bundled Graphviz by rendering hostile strings to SVG and reading
them back (``tests/render/test_escaping.py``). Attributes that are not user text (names, ids,
colours) use :func:`dot_id`, which accepts only a safe alphabet.

Long strings are cut (:func:`clip`) so that one pasted paragraph cannot blow a node up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "TIMES",
    "clip",
    "dot_id",
    "html_text",
    "is_safe_id",
    "named_shape",
    "plain_shape",
    "range_text",
    "short",
    "tooltip_string",
    "xml_safe",
]

TIMES = "\N{MULTIPLICATION SIGN}"
"""Joins the lengths of a positional shape and the sizes of a mesh."""

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in an ellipsis when cut.

    >>> clip("abcdef", 4)
    'abc…'
    """
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def html_text(text: str) -> str:
    """Escape ``text`` for the inside of a Graphviz HTML-like label (newlines become breaks)."""
    text = xml_safe(text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
        .replace("\\", "\\\\")
    )
    return text.replace("\n", "<br/>")


def tooltip_string(text: str) -> str:
    """``text`` as a quoted DOT string that Graphviz shows literally as a tooltip."""
    text = xml_safe(text).replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\\", "\\\\\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


_SAFE_ID = re.compile(r"^[A-Za-z0-9_#][A-Za-z0-9_.:#,-]*$")


def dot_id(text: str) -> str:
    """``text`` quoted for DOT; only for geon's own names and values (a safe alphabet).

    >>> dot_id("cluster_op0")
    '"cluster_op0"'
    """
    if not _SAFE_ID.match(text):
        raise ValueError(f"{text!r} is not a safe DOT identifier")
    return f'"{text}"'


def is_safe_id(text: str) -> bool:
    """Whether ``text`` may be used by :func:`dot_id` (document ids usually can: UUIDs)."""
    return len(text) <= 200 and bool(_SAFE_ID.match(text))


def short(value: Any) -> str:
    """A short display form of any JSON value (strings as they are)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return repr(value)


def range_text(start: Sequence[int], end: Sequence[int]) -> str:
    """``[a:b, c:d]`` (inclusive start, exclusive end).

    >>> range_text((0, 5), (10, 10))
    '[0:10, 5:10]'
    """
    return "[" + ", ".join(f"{a}:{b}" for a, b in zip(start, end, strict=True)) + "]"


def plain_shape(shape: Sequence[int]) -> str:
    """A positional shape, lengths joined by :data:`TIMES`; a scalar is ``scalar``.

    >>> plain_shape((10, 5)) == f"10{TIMES}5", plain_shape(())
    (True, 'scalar')
    """
    if not shape:
        return "scalar"
    return TIMES.join(str(n) for n in shape)


def named_shape(axes: Sequence[Any], shape: Sequence[int] | None) -> str:
    """Named axes with their lengths: ``H=2, W-1=3``; without a matching shape just the names."""
    names = [short(a) for a in axes]
    if not names:
        return "scalar"
    if shape is None or len(shape) != len(names):
        return ", ".join(names)
    return ", ".join(f"{n}={s}" for n, s in zip(names, shape, strict=True))
