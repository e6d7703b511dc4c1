"""Rendering in process: DOT text laid out and drawn by the Graphviz that pygraphviz's wheel
bundles (no ``dot`` program, no system package).

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> render(Graph.from_json(json.loads(text)), "png")[:8]
b'\\x89PNG\\r\\n\\x1a\\n'

``render(graph, "dot")`` is the DOT source of :func:`geon.render.dot.to_dot` (no layout: it is
what a user edits or lays out elsewhere). ``"svg"`` and ``"png"`` are laid out with Graphviz's
``dot`` engine. Before any layout the size of the diagram is checked against ``max_nodes`` and
``max_edges`` (:class:`~geon.core.errors.LimitError`), so an oversized document is refused at
once instead of occupying a worker. Graphviz is not thread-safe, so layouts in one process run
one at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Literal, get_args

from geon.core.errors import GeonError, LimitError
from geon.core.graph import Graph
from geon.core.issues import Issue
from geon.render.dot import Diagram, build

__all__ = [
    "DEFAULT_MAX_EDGES",
    "DEFAULT_MAX_NODES",
    "FORMATS",
    "Format",
    "RenderError",
    "RenderFormatError",
    "check_format",
    "check_size",
    "layout",
    "render",
]

Format = Literal["svg", "png", "dot"]
FORMATS: tuple[str, ...] = get_args(Format)
"""The formats :func:`render` writes."""

DEFAULT_MAX_NODES = 1000
"""Most drawn nodes a diagram may have before layout is refused: ``dot`` grows faster than
linearly, and a 1,000-node sharded chain already takes seconds (``benchmarks/bench_render.py
--nodes 1000``)."""
DEFAULT_MAX_EDGES = 4000
"""Most drawn edges a diagram may have before layout is refused."""

PNG_DPI = 110
"""Resolution of PNG output (Graphviz's default, 96, makes small text blurry)."""

_BY_NAME: dict[str, Format] = {"svg": "svg", "png": "png", "dot": "dot"}
_LOCK = threading.Lock()


class RenderError(GeonError):
    """A diagram cannot be rendered (Graphviz refused the layout or the output format)."""


class RenderFormatError(RenderError):
    """The requested output format is not one geon renders."""


def check_format(format: str) -> Format:
    """``format`` when it is one of :data:`FORMATS`; raises :class:`RenderFormatError`.

    >>> check_format("png")
    'png'
    >>> check_format("pdf")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geon.render.engine.RenderFormatError: render format "pdf" is not supported; expected one of ...
    """
    found = _BY_NAME.get(format) if isinstance(format, str) else None
    if found is not None:
        return found
    valid = ", ".join(f'"{f}"' for f in FORMATS)
    raise RenderFormatError(f'render format "{format}" is not supported; expected one of ({valid})')


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def check_size(
    nodes: int,
    edges: int,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
) -> None:
    """Raise :class:`LimitError` when a diagram is too large to lay out."""
    if nodes > max_nodes:
        raise LimitError(
            f"the diagram has {_plural(nodes, 'node')}; the limit is {max_nodes:,} "
            "(render a smaller graph, or its DOT text and lay it out yourself)"
        )
    if edges > max_edges:
        raise LimitError(
            f"the diagram has {_plural(edges, 'edge')}; the limit is {max_edges:,} "
            "(render a smaller graph, or its DOT text and lay it out yourself)"
        )


def layout(dot_text: str, format: Literal["svg", "png"], *, dpi: int = PNG_DPI) -> bytes:
    """Lay ``dot_text`` out with Graphviz's ``dot`` engine and draw it as ``format``."""
    import pygraphviz

    with _LOCK:
        try:
            agraph = pygraphviz.AGraph(string=dot_text)
            if format == "png":
                agraph.graph_attr["dpi"] = str(dpi)
            data = agraph.draw(format=format, prog="dot")
        except (ValueError, OSError, pygraphviz.DotError) as exc:
            raise RenderError(f"Graphviz could not draw the diagram as {format}: {exc}") from None
    if not isinstance(data, bytes) or not data:
        raise RenderError(f"Graphviz produced no {format} output")
    return data


def render(
    graph: Graph,
    format: Format,
    issues: Sequence[Issue] | None = None,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
) -> bytes:
    """``graph``'s diagram as ``format`` (``"svg"``, ``"png"`` or ``"dot"``), with the nodes
    ``issues`` name highlighted.

    Raises :class:`RenderFormatError` for another format, :class:`LimitError` when the diagram
    has more than ``max_nodes`` nodes or ``max_edges`` edges (checked before layout; the DOT
    source is not limited) and :class:`RenderError` when Graphviz fails.
    """
    fmt = check_format(format)
    if fmt != "dot" and len(graph) > max_nodes:
        check_size(len(graph), 0, max_nodes=max_nodes, max_edges=max_edges)
    diagram: Diagram = build(graph, issues)
    if fmt == "dot":
        return diagram.text.encode("utf-8")
    check_size(diagram.nodes, diagram.edges, max_nodes=max_nodes, max_edges=max_edges)
    return layout(diagram.text, fmt)
