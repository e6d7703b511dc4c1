"""The DOT builder: a document (and optionally its issues) in, Graphviz DOT text out
(DESIGN.md §7).

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> d = build(Graph.from_json(json.loads(text)))
>>> d.nodes, d.edges, d.clusters
(6, 9, 1)

What is drawn, in data-flow order (:mod:`geon.render.layout`): every node by its kind
(:mod:`geon.render.shapes`); each operation inside a cluster of its own with its Applications;
Axis declarations and Meshes in a legend cluster; issues outlined on the nodes they name and the
rest in the caption (:mod:`geon.render.highlights`).

- **Edges** follow the selections: tensor -> operation for inputs, operation -> tensor for outputs,
  labelled with the IO key (``tensors[1]`` when a key selects several tensors). Applications'
  edges are thinner, dashed, in the operation's colour, and also name the selected range.

Node names in the DOT text are geon's own (``tensor0``, ``op0``, ``app0``...); a document id that
is safe to carry becomes the node's ``id`` (the SVG element id ``node-<id>``). Every user string
is escaped (:mod:`geon.render.labels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from geon.core.graph import (
    APPLICATION,
    AXIS,
    MESH,
    NOTE,
    OPERATION,
    TENSOR,
    Graph,
    Node,
    iter_selections,
)
from geon.core.issues import Issue
from geon.core.zspace import parse_range
from geon.render import shapes
from geon.render.highlights import assign_issues, issue_tooltip
from geon.render.labels import clip, dot_id, html_text, is_safe_id, range_text, tooltip_string
from geon.render.layout import applications_by_operation, rank_direction
from geon.render.markup import (
    EDGE,
    FONT,
    INK,
    LEGEND_FILL,
    LINE_CHARS,
    MUTED,
    TITLE_CHARS,
    TOOLTIP_CHARS,
    attrs,
    lines,
    small,
)
from geon.render.palette import ERROR, WARNING, OpColour, assign

__all__ = ["Diagram", "build", "to_dot"]

_PREFIXES = {
    TENSOR: "tensor",
    OPERATION: "op",
    APPLICATION: "app",
    NOTE: "note",
    AXIS: "axis",
    MESH: "mesh",
}


@dataclass(frozen=True, slots=True)
class Diagram:
    """DOT text and what it draws (counted as the text was built)."""

    text: str
    nodes: int
    edges: int
    clusters: int


class _Builder:
    def __init__(self, graph: Graph, issues: Sequence[Issue]) -> None:
        self.graph = graph
        self.names: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self.nodes = 0
        self.edges = 0
        self.clusters = 0
        self.missing: dict[str, str] = {}
        self.out: list[str] = []
        for node in graph.nodes:
            self.names[node.id] = self._fresh(_PREFIXES.get(node.type, "node"))
        self.axis_ids = {node.id for node in graph.nodes if node.type == AXIS}
        self.flags, self.loose = assign_issues(issues, self.names)
        self.colours: dict[str, OpColour] = assign(n.id for n in graph.of_type(OPERATION))

    def _fresh(self, prefix: str) -> str:
        n = self.counts.get(prefix, 0)
        self.counts[prefix] = n + 1
        return f"{prefix}{n}"

    # -- emitting ----------------------------------------------------------------------------

    def emit(self, line: str, indent: int = 1) -> None:
        self.out.append("  " * indent + line)

    def node(
        self,
        name: str,
        pairs: list[tuple[str, str]],
        indent: int,
        doc: Node | None = None,
        tooltip: str = "",
    ) -> None:
        """Emit a node with attributes ``pairs``; ``doc`` (the document node it draws) adds
        its id and its issues' outline and tooltip."""
        flags = self.flags.get(doc.id) if doc is not None else None
        if doc is not None and is_safe_id(doc.id):
            pairs.append(("id", dot_id("node-" + doc.id)))
        if flags is not None and flags.any:
            colour = ERROR if flags.errors else WARNING
            pairs.append(("color", dot_id(colour)))
            pairs.append(("penwidth", "2.5"))
            if flags.errors:
                pairs.append(("class", '"issue-error"'))
            tooltip = issue_tooltip(flags) + ("\n\n" + tooltip if tooltip else "")
        if tooltip:
            pairs.append(("tooltip", tooltip_string(clip(tooltip, TOOLTIP_CHARS))))
        self.emit(f"{dot_id(name)} {attrs(pairs)};", indent)
        self.nodes += 1

    def edge(self, tail: str, head: str, pairs: list[tuple[str, str]]) -> None:
        self.emit(f"{dot_id(tail)} -> {dot_id(head)} {attrs(pairs)};")
        self.edges += 1

    def draw(self, node: Node, indent: int) -> None:
        """A Tensor, Note or node of another type (operations go in clusters, Applications
        with their operation, Axis and Mesh nodes in the legend)."""
        flags = self.flags.get(node.id)
        if node.type == TENSOR:
            pairs, kind = shapes.tensor(node, flags), "Tensor"
        elif node.type == NOTE:
            pairs, kind = shapes.note(node, flags), "Note"
        else:
            pairs, kind = shapes.other(node, flags), node.type
        self.node(self.names[node.id], pairs, indent, node, f"{kind} {node.id}")

    def application(self, node: Node, indent: int, op: Node | None, number: int) -> None:
        colour = self.colours.get(op.id) if op is not None else None
        flags = self.flags.get(node.id)
        pairs = shapes.application(node, flags, op, number, colour, self.graph)
        self.node(self.names[node.id], pairs, indent, node, f"Application {node.id}")

    def drawn_as(self, node_id: str) -> str:
        """The DOT node standing for a referenced node: its own, the axes table for an Axis
        (which has no node of its own), or a "missing node" box when it does not exist."""
        if node_id in self.axis_ids:
            return "axes"
        name = self.names.get(node_id) or self.missing.get(node_id)
        if name is None:
            name = self.missing[node_id] = self._fresh("missing")
            self.node(name, shapes.missing(node_id), 1, None, f'node "{node_id}" does not exist')
        return name

    # -- edges -------------------------------------------------------------------------------

    def selections(self, node: Node, colour: OpColour | None, shard: bool) -> None:
        sizes: dict[tuple[str, str], int] = {}
        sels = list(iter_selections(node.body))
        for sel in sels:
            sizes[(sel.side, sel.key)] = sizes.get((sel.side, sel.key), 0) + 1
        me = self.names[node.id]
        for sel in sels:
            if not isinstance(sel.tensor_id, str):
                continue
            other = self.drawn_as(sel.tensor_id)
            key = sel.key if sizes[(sel.side, sel.key)] == 1 else f"{sel.key}[{sel.position}]"
            parts = [html_text(clip(key, 32))]
            if shard:
                rng = parse_range(sel.range)
                if rng is not None:
                    parts.append(small(range_text(rng.start, rng.end), MUTED, LINE_CHARS, 8))
            pairs = [("label", lines(parts))]
            if shard:
                pairs += [
                    ("color", dot_id(colour.strong if colour else MUTED)),
                    ("fontcolor", dot_id(colour.ink if colour else MUTED)),
                    ("style", "dashed"),
                    ("penwidth", "1.0"),
                ]
            else:
                pairs += [("penwidth", "1.6")]
            tail, head = (other, me) if sel.side == "inputs" else (me, other)
            self.edge(tail, head, pairs)

    # -- the whole graph ---------------------------------------------------------------------

    def build(self) -> Diagram:
        graph = self.graph
        self.emit("digraph geon {", 0)
        self._defaults()
        apps_of, loose_apps = applications_by_operation(graph)
        loose_ids = {n.id for n in loose_apps}
        axes: list[Node] = []
        meshes: list[Node] = []
        for node in graph.nodes:
            if node.type == OPERATION:
                self.cluster(node, apps_of.get(node.id, []))
            elif node.type == APPLICATION:
                if node.id in loose_ids:
                    self.application(node, 1, None, 0)
            elif node.type == AXIS:
                axes.append(node)
            elif node.type == MESH:
                meshes.append(node)
            else:
                self.draw(node, 1)
        if axes or meshes:
            self.legend(axes, meshes)
        for node in graph.of_type(OPERATION):
            self.selections(node, self.colours[node.id], shard=False)
        for node in graph.of_type(APPLICATION):
            op_id = node.body.get("operationId")
            colour = self.colours.get(op_id) if isinstance(op_id, str) else None
            self.selections(node, colour, shard=True)
        self.caption()
        self.emit("}", 0)
        return Diagram("\n".join(self.out) + "\n", self.nodes, self.edges, self.clusters)

    def _defaults(self) -> None:
        """The graph's, nodes' and edges' default attributes."""
        graph_attrs = [
            ("rankdir", rank_direction(self.graph)),
            ("fontname", dot_id(FONT)),
            ("fontsize", "11"),
            ("nodesep", "0.3"),
            ("ranksep", "0.55"),
            ("pad", "0.3"),
            ("bgcolor", dot_id("#FFFFFF")),
        ]
        node_attrs = [
            ("fontname", dot_id(FONT)),
            ("fontsize", "11"),
            ("fontcolor", dot_id(INK)),
            ("style", "filled"),
            ("penwidth", "1.2"),
            ("margin", '"0.14,0.07"'),
        ]
        edge_attrs = [
            ("fontname", dot_id(FONT)),
            ("fontsize", "9"),
            ("fontcolor", dot_id(MUTED)),
            ("color", dot_id(EDGE)),
            ("arrowsize", "0.7"),
        ]
        self.emit(attrs(graph_attrs).join(("graph ", ";")))
        self.emit(attrs(node_attrs).join(("node ", ";")))
        self.emit(attrs(edge_attrs).join(("edge ", ";")))

    def cluster(self, op: Node, apps: list[Node]) -> None:
        colour = self.colours[op.id]
        name = "cluster_" + self.names[op.id]
        # The title says what the tab does not: the operation's label and its applications.
        kernel = op.body.get("kernel")
        parts = []
        if op.label and op.label != kernel:
            parts.append(html_text(clip(op.label, TITLE_CHARS)))
        if apps:
            parts.append(f"{len(apps)} application{'s' if len(apps) != 1 else ''}")
        title = f'<<font color="{colour.ink}"><b>{" · ".join(parts)}</b></font>>' if parts else '""'
        self.emit(f"subgraph {dot_id(name)} {{")
        for key, value in (
            ("label", title),
            ("style", '"rounded,filled"'),
            ("fillcolor", dot_id(colour.cluster)),
            ("color", dot_id(colour.strong)),
            ("penwidth", "1.4"),
            ("labeljust", "l"),
            ("margin", "12"),
        ):
            self.emit(f"{key}={value};", 2)
        pairs = shapes.operation(op, self.flags.get(op.id), colour, self.graph)
        self.node(self.names[op.id], pairs, 2, op, f"Operation {op.id}")
        for number, app in enumerate(apps, start=1):
            self.application(app, 2, op, number)
        self.emit("}")
        self.clusters += 1

    def legend(self, axes: list[Node], meshes: list[Node]) -> None:
        what = " and ".join(w for w, xs in (("axes", axes), ("meshes", meshes)) if xs)
        self.emit(f"subgraph {dot_id('cluster_legend')} {{")
        for key, value in (
            ("label", f'<<font color="{MUTED}"><b>{what}</b></font>>'),
            ("style", '"rounded,filled"'),
            ("fillcolor", dot_id(LEGEND_FILL)),
            ("color", dot_id("#D0D7DE")),
            ("labeljust", "l"),
            ("margin", "10"),
        ):
            self.emit(f"{key}={value};", 2)
        if axes:
            pairs, tooltip = shapes.axes_table(axes, self.flags)
            self.node("axes", pairs, 2, None, tooltip)
        for mesh in meshes:
            pairs = shapes.mesh(mesh, self.flags.get(mesh.id))
            self.node(self.names[mesh.id], pairs, 2, mesh, f"Mesh {mesh.id}")
        self.emit("}")
        self.clusters += 1

    def caption(self) -> None:
        """The count of errors and warnings and the issues that name no drawn node."""
        errors = sum(len(f.errors) for f in self.flags.values())
        errors += sum(1 for i in self.loose if i.severity == "error")
        warnings = sum(len(f.warnings) for f in self.flags.values())
        warnings += sum(1 for i in self.loose if i.severity == "warning")
        if not errors and not warnings:
            return
        counts = []
        if errors:
            counts.append(f"{errors} error{'s' if errors != 1 else ''}")
        if warnings:
            counts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
        colour = ERROR if errors else WARNING
        parts = [f'<font color="{colour}"><b>{html_text(" · ".join(counts))}</b></font>']
        for issue in self.loose[:5]:
            parts.append(small(f"{issue.severity}: {issue.summary}", colour, LINE_CHARS + 16, 10))
        if len(self.loose) > 5:
            parts.append(small(f"and {len(self.loose) - 5} more", colour, LINE_CHARS, 10))
        self.emit(f"label={lines(parts)};")
        self.emit("labelloc=b;")
        self.emit("labeljust=l;")


def build(graph: Graph, issues: Sequence[Issue] | None = None) -> Diagram:
    """The diagram of ``graph`` with ``issues`` highlighted (none when None)."""
    return _Builder(graph, issues or ()).build()


def to_dot(graph: Graph, issues: Sequence[Issue] | None = None) -> str:
    """DOT text of ``graph``'s diagram, with the nodes that ``issues`` name highlighted.

    ``issues`` are usually ``geon.core.checks.check(graph)``; None draws no highlights.
    """
    return build(graph, issues).text
