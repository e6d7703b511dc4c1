"""Graphviz diagrams of geon / LoomGraph documents (DESIGN.md §7): DOT text, SVG and PNG.

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> from geon import render as gr
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> graph = Graph.from_json(json.loads(text))
>>> gr.to_dot(graph).splitlines()[0]
'digraph geon {'
>>> gr.render(graph, "svg", graph.check())[:5]
b'<?xml'

:func:`to_dot` builds the DOT text (pure, no Graphviz needed); :func:`render` lays it out in
process with the Graphviz bundled in pygraphviz's wheel. Both take the issues to highlight,
usually ``geon.core.checks.check(graph)``.
"""

from geon.render.dot import Diagram, build, to_dot
from geon.render.engine import (
    DEFAULT_MAX_EDGES,
    DEFAULT_MAX_NODES,
    FORMATS,
    Format,
    RenderError,
    RenderFormatError,
    check_format,
    render,
)

__all__ = [
    "DEFAULT_MAX_EDGES",
    "DEFAULT_MAX_NODES",
    "FORMATS",
    "Diagram",
    "Format",
    "RenderError",
    "RenderFormatError",
    "build",
    "check_format",
    "render",
    "to_dot",
]
