"""The DOT builder: a document (and optionally its issues) in, Graphviz DOT text out.

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> d = build(Graph.from_json(json.loads(text)))
>>> d.nodes, d.edges, d.clusters
(6, 9, 1)

What is drawn (DESIGN.md §7), in data-flow order: left to right, or top to bottom when the
longest chain has more than :data:`MAX_LR_DEPTH` operations (a wide strip reads badly):

- **Tensors** are 3-D boxes (``box3d``) labelled with their label (or short id), dtype and shape:
  named axes with lengths (``H=2, W-1=3``) when the tensor has ``TensorAxes``, the positional
  shape (``10`` times ``5``) otherwise, plus the absolute range when it does not start at
  the origin.
- **Operations** are ``tab`` shapes inside a cluster of their own, filled with the operation's
  colour (:mod:`geon.render.palette`), labelled with the kernel and the index range.
- **Applications** sit inside their operation's cluster, labelled with their ``IPFIndex`` range
  (per index axis name when the operation has ``IndexAxes``) and their ``Placement``.
- **Edges** follow the selections: tensor -> operation for inputs, operation -> tensor for outputs,
  labelled with the IO key (``tensors[1]`` when a key selects several tensors). Applications'
  edges are thinner, in the operation's colour, and also name the selected range.
- **Notes** are ``note`` shapes; **Axis** declarations form a table (a column per axis: name,
  length, roles) and **Meshes** a box each, in a legend cluster.
- **Issues**: a node named by an error issue is outlined in red and says the issue's summary in
  its label and tooltip; warnings are outlined in amber. Issues that name no drawn node (the
  document envelope) are listed in the caption.

A reference to a node that does not exist is drawn as a dashed red "missing" box, so a broken
document still renders. Node names in the DOT text are geon's own (``tensor0``, ``op0``,
``app0``...); a document id that is safe to carry becomes the node's ``id`` (the SVG element id
``node-<id>``). Every user string is escaped (:mod:`geon.render.labels`).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from geon.core.constraints import index_range, parse_range
from geon.core.graph import (
    APPLICATION,
    AXIS,
    GEON_TAG_PREFIX,
    INDEX_AXES,
    IPF_INDEX,
    MESH,
    NOTE,
    OPERATION,
    PLACEMENT,
    TENSOR,
    TENSOR_AXES,
    Graph,
    Node,
    iter_selections,
)
from geon.core.issues import Issue
from geon.render.labels import (
    TIMES,
    clip,
    dot_id,
    html_text,
    is_safe_id,
    named_shape,
    plain_shape,
    range_text,
    short,
    tooltip_string,
)
from geon.render.palette import ERROR, ERROR_FILL, WARNING, OpColour, assign

__all__ = ["Diagram", "build", "to_dot"]

CONSTANT = GEON_TAG_PREFIX + "Constant"

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
MAX_LR_DEPTH = 4
"""Graphs whose longest chain has more operations than this are laid out top to bottom."""
AXES_PER_ROW = 10
"""Axes per row of the legend table."""
PARAM_WIDTH = 44
"""Width at which an operation's parameters wrap."""
PARAM_LINES = 3
"""Most lines of parameters shown in an operation's tab (the rest is cut)."""
TOOLTIP_CHARS = 1200


@dataclass(frozen=True, slots=True)
class Diagram:
    """DOT text and what it draws (counted as the text was built)."""

    text: str
    nodes: int
    edges: int
    clusters: int


# --------------------------------------------------------------------------------------------
# HTML label pieces


# Graphviz rejects an empty element (``<b></b>``), so empty text gives no element at all.


def _bold(text: str, limit: int = TITLE_CHARS) -> str:
    return f"<b>{html_text(clip(text, limit))}</b>" if text else ""


def _small(text: str, colour: str = MUTED, limit: int = LINE_CHARS, size: int = 9) -> str:
    if not text:
        return ""
    return f'<font point-size="{size}" color="{colour}">{html_text(clip(text, limit))}</font>'


def _mono(text: str, limit: int = LINE_CHARS) -> str:
    return f'<font face="{MONO}">{html_text(clip(text, limit))}</font>' if text else ""


def _font(text: str, attrs: str) -> str:
    return f"<font {attrs}>{html_text(text)}</font>" if text else ""


def _lines(parts: Iterable[str]) -> str:
    """An HTML label of the non-empty ``parts``, one per line."""
    return "<" + "<br/>".join(p for p in parts if p) + ">"


def _attrs(pairs: Sequence[tuple[str, str]]) -> str:
    """``[k=v, ...]``; values are already DOT-quoted or HTML labels."""
    return "[" + ", ".join(f"{k}={v}" for k, v in pairs) + "]"


def _short_id(node_id: str) -> str:
    return node_id[:8] if len(node_id) > 12 else node_id


def _title(node: Node, fallback: str) -> str:
    return node.label if node.label else fallback


def _type_name(url: str) -> str:
    for sep in ("/", "#", ":"):
        url = url.rsplit(sep, 1)[-1]
    return url or "node"


# --------------------------------------------------------------------------------------------
# Reading bodies defensively (any JSON may be there; the checker reports what is wrong)


def _range_of(data: Any) -> str | None:
    r = parse_range(data)
    return None if r is None else range_text(r.start, r.end)


def _axes_tag(node: Node, url: str) -> list[Any] | None:
    tag = node.tags.get(url) if node.tags else None
    if isinstance(tag, dict) and isinstance(tag.get("axes"), list):
        return list(tag["axes"])
    return None


def _named_range(names: list[Any] | None, start: Sequence[int], end: Sequence[int]) -> str:
    """``H 0:5, N 0:4`` when the names fit the rank, else ``[0:5, 0:4]``."""
    if names is None or len(names) != len(start):
        return range_text(start, end)
    return ", ".join(f"{short(n)} {a}:{b}" for n, a, b in zip(names, start, end, strict=True))


def _param_value(value: Any, depth: int = 0) -> str:
    """A parameter value, compactly: lists of names as ``[K, P]``, other JSON as JSON."""
    if isinstance(value, list) and depth < 3:
        return (
            "["
            + ", ".join(_param_value(v, depth + 1) for v in value[:16])
            + (", …]" if len(value) > 16 else "]")
        )
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return "…"


def _param_lines(params: dict[str, Any]) -> list[str]:
    """``key=value`` pairs wrapped to :data:`PARAM_WIDTH`, at most :data:`PARAM_LINES` lines."""
    pairs = [f"{short(k)}={clip(_param_value(v), LINE_CHARS)}" for k, v in params.items()]
    lines = textwrap.wrap(", ".join(pairs), PARAM_WIDTH, break_long_words=True) or [""]
    if len(lines) > PARAM_LINES:
        lines = [*lines[: PARAM_LINES - 1], clip(lines[PARAM_LINES - 1] + " …", PARAM_WIDTH)]
    return lines


def _depth(graph: Graph) -> int:
    """The number of operations on the longest tensor -> operation -> tensor path (cycles are
    cut where they close; the checker reports them)."""
    ops = graph.of_type(OPERATION)
    producers: dict[str, list[str]] = {}
    reads: dict[str, list[str]] = {}
    for op in ops:
        reads[op.id] = []
        for sel in iter_selections(op.body):
            if isinstance(sel.tensor_id, str):
                if sel.side == "outputs":
                    producers.setdefault(sel.tensor_id, []).append(op.id)
                else:
                    reads[op.id].append(sel.tensor_id)
    depth: dict[str, int] = {}
    for root in reads:
        stack = [(root, False)]
        on_path: set[str] = set()
        while stack:
            op_id, done = stack.pop()
            if done:
                on_path.discard(op_id)
                before = [depth.get(p, 0) for t in reads[op_id] for p in producers.get(t, ())]
                depth[op_id] = 1 + max(before, default=0)
                continue
            if op_id in depth or op_id in on_path:
                continue
            on_path.add(op_id)
            stack.append((op_id, True))
            for t in reads[op_id]:
                stack.extend((p, False) for p in producers.get(t, ()) if p not in depth)
    return max(depth.values(), default=0)


def _app_order(app: Node) -> tuple[int, tuple[int, ...]]:
    """Applications in index order (those without a readable IPFIndex last, as they come)."""
    r = parse_range(app.tags.get(IPF_INDEX)) if app.tags else None
    return (0, r.start) if r is not None else (1, ())


# --------------------------------------------------------------------------------------------
# Issues


@dataclass(slots=True)
class _Flags:
    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.errors or self.warnings)


def _issue_lines(flags: _Flags) -> list[str]:
    """Label lines naming the node's first error (or warning) and how many more there are."""
    shown = flags.errors or flags.warnings
    if not shown:
        return []
    colour = ERROR if flags.errors else WARNING
    word = "error" if flags.errors else "warning"
    more = len(flags.errors) + len(flags.warnings) - 1
    tail = f" (+{more} more)" if more else ""
    return [_small(f"{word}: {shown[0].summary}{tail}", colour, LINE_CHARS + 16)]


def _issue_tooltip(flags: _Flags) -> str:
    parts = []
    for issue in flags.errors + flags.warnings:
        parts.append(f"{issue.severity}: {issue.constraint}: {issue.summary}\n{issue.message}")
    return "\n\n".join(parts)


# --------------------------------------------------------------------------------------------
# The builder


class _Builder:
    def __init__(self, graph: Graph, issues: Sequence[Issue]) -> None:
        self.graph = graph
        self.names: dict[str, str] = {}
        self.flags: dict[str, _Flags] = {}
        self.loose: list[Issue] = []
        self.counts: dict[str, int] = {}
        self.nodes = 0
        self.edges = 0
        self.clusters = 0
        self.missing: dict[str, str] = {}
        self.out: list[str] = []
        for node in graph.nodes:
            prefix = {
                TENSOR: "tensor",
                OPERATION: "op",
                APPLICATION: "app",
                NOTE: "note",
                AXIS: "axis",
                MESH: "mesh",
            }.get(node.type, "node")
            self.names[node.id] = self._fresh(prefix)
        self.axis_ids = {node.id for node in graph.nodes if node.type == AXIS}
        for issue in issues:
            if issue.severity not in ("error", "warning"):
                continue
            drawn = [n for n in issue.node_ids if n in self.names]
            if not drawn:
                self.loose.append(issue)
            for node_id in dict.fromkeys(drawn):
                flags = self.flags.setdefault(node_id, _Flags())
                (flags.errors if issue.severity == "error" else flags.warnings).append(issue)
        ops = [n for n in graph.nodes if n.type == OPERATION]
        self.colours: dict[str, OpColour] = assign(n.id for n in ops)

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
        attrs: list[tuple[str, str]],
        indent: int,
        doc: Node | None = None,
        tooltip: str = "",
    ) -> None:
        flags = self.flags.get(doc.id) if doc is not None else None
        if doc is not None and is_safe_id(doc.id):
            attrs.append(("id", dot_id("node-" + doc.id)))
        if flags is not None and flags.any:
            colour = ERROR if flags.errors else WARNING
            attrs.append(("color", dot_id(colour)))
            attrs.append(("penwidth", "2.5"))
            if flags.errors:
                attrs.append(("class", '"issue-error"'))
            tooltip = _issue_tooltip(flags) + ("\n\n" + tooltip if tooltip else "")
        if tooltip:
            attrs.append(("tooltip", tooltip_string(clip(tooltip, TOOLTIP_CHARS))))
        self.emit(f"{dot_id(name)} {_attrs(attrs)};", indent)
        self.nodes += 1

    def edge(self, tail: str, head: str, attrs: list[tuple[str, str]]) -> None:
        self.emit(f"{dot_id(tail)} -> {dot_id(head)} {_attrs(attrs)};")
        self.edges += 1

    def _flag_lines(self, node: Node) -> list[str]:
        flags = self.flags.get(node.id)
        return _issue_lines(flags) if flags is not None else []

    def _fill(self, node: Node, fill: str) -> str:
        flags = self.flags.get(node.id)
        return ERROR_FILL if flags is not None and flags.errors else fill

    # -- node kinds --------------------------------------------------------------------------

    def tensor(self, node: Node, indent: int) -> None:
        body = node.body
        rng = parse_range(body.get("range"))
        dtype = body.get("dtype")
        detail = short(dtype) if isinstance(dtype, str) else "?"
        if node.tags and CONSTANT in node.tags:
            detail += " · constant"
        axes = _axes_tag(node, TENSOR_AXES)
        if axes is not None:
            shape_text = named_shape(axes, rng.shape if rng is not None else None)
        elif rng is not None:
            shape_text = plain_shape(rng.shape)
        else:
            shape_text = "?"
        lines = [_bold(_title(node, _short_id(node.id))), _small(detail), _mono(shape_text)]
        if rng is not None and any(rng.start):
            lines.append(_small("at " + range_text(rng.start, rng.end)))
        lines += self._flag_lines(node)
        attrs = [
            ("shape", "box3d"),
            ("label", _lines(lines)),
            ("fillcolor", dot_id(self._fill(node, TENSOR_FILL))),
            ("color", dot_id(TENSOR_LINE)),
        ]
        self.node(self.names[node.id], attrs, indent, node, f"Tensor {node.id}")

    def operation(self, node: Node, indent: int) -> None:
        colour = self.colours[node.id]
        kernel = node.body.get("kernel")
        kernel_text = short(kernel) if isinstance(kernel, str) else "?"
        lines = [_bold(kernel_text)]
        irange = index_range(self.graph.index, node)
        if irange is not None:
            names = _axes_tag(node, INDEX_AXES)
            index_text = _named_range(names, irange.start, irange.end)
            lines.append(
                f'<font point-size="9">index {html_text(clip(index_text, LINE_CHARS))}</font>'
            )
        params = node.body.get("params")
        if isinstance(params, dict) and params:
            for line in _param_lines(params):
                if line:
                    lines.append(f'<font point-size="9">{html_text(line)}</font>')
        lines += self._flag_lines(node)
        flags = self.flags.get(node.id)
        text = ERROR if flags is not None and flags.errors else colour.text
        label = _lines(f'<font color="{text}">{ln}</font>' for ln in lines if ln)
        fill = ERROR_FILL if flags is not None and flags.errors else colour.strong
        attrs = [
            ("shape", "tab"),
            ("label", label),
            ("fillcolor", dot_id(fill)),
            ("color", dot_id(colour.strong)),
        ]
        self.node(self.names[node.id], attrs, indent, node, f"Operation {node.id}")

    def application(self, node: Node, indent: int, op: Node | None, number: int) -> None:
        colour = self.colours.get(op.id) if op is not None else None
        title = _title(node, f"shard {number}" if op is not None else _short_id(node.id))
        lines = [_bold(title)]
        irange = parse_range(node.tags.get(IPF_INDEX)) if node.tags else None
        if irange is not None:
            names = _axes_tag(op, INDEX_AXES) if op is not None else None
            lines.append(_mono(_named_range(names, irange.start, irange.end)))
        elif op is None:
            lines.append(_small(f'operation "{short(node.body.get("operationId"))}" not found'))
        placement = node.tags.get(PLACEMENT) if node.tags else None
        if isinstance(placement, dict):
            lines.append(_small(self._placement(placement)))
        lines += self._flag_lines(node)
        attrs = [
            ("shape", "box"),
            ("style", '"rounded,filled"'),
            ("label", _lines(lines)),
            ("fillcolor", dot_id(self._fill(node, colour.shard if colour else "#FFFFFF"))),
            ("color", dot_id(colour.strong if colour else TENSOR_LINE)),
        ]
        self.node(self.names[node.id], attrs, indent, node, f"Application {node.id}")

    def _placement(self, placement: dict[str, Any]) -> str:
        mesh_id = placement.get("mesh")
        mesh = self.graph.get(mesh_id) if isinstance(mesh_id, str) else None
        if mesh is not None and mesh.type == MESH and isinstance(mesh.body.get("name"), str):
            mesh_name = mesh.body["name"]
        else:
            mesh_name = _short_id(short(mesh_id))
        coords = placement.get("coords")
        where = (
            "(" + ", ".join(short(c) for c in coords) + ")"
            if isinstance(coords, list)
            else short(coords)
        )
        return f"on {mesh_name} {where}"

    def note(self, node: Node, indent: int) -> None:
        message = node.body.get("message")
        text = clip(short(message) if message is not None else "", NOTE_CHARS)
        wrapped = "\n".join(
            textwrap.fill(para, NOTE_WIDTH) if para else "" for para in text.split("\n")
        )
        lines = [_bold(node.label)] if node.label else []
        lines.append(html_text(wrapped))
        lines += self._flag_lines(node)
        attrs = [
            ("shape", "note"),
            ("label", _lines(lines)),
            ("fillcolor", dot_id(self._fill(node, NOTE_FILL))),
            ("color", dot_id(NOTE_LINE)),
        ]
        self.node(self.names[node.id], attrs, indent, node, f"Note {node.id}")

    def mesh(self, node: Node, indent: int) -> None:
        name = node.body.get("name")
        axes = node.body.get("axes")
        lines = [_bold("mesh " + (short(name) if isinstance(name, str) else _short_id(node.id)))]
        if isinstance(axes, dict):
            sizes = [f"{short(k)}={short(v)}" for k, v in axes.items()]
            devices = 1
            for v in axes.values():
                devices = devices * v if type(v) is int and v >= 1 else 0
            text = f" {TIMES} ".join(sizes) if sizes else "no axes"
            if devices:
                text += f" · {devices} device{'s' if devices != 1 else ''}"
            lines.append(_mono(text))
        lines += self._flag_lines(node)
        attrs = [
            ("shape", "component"),
            ("label", _lines(lines)),
            ("fillcolor", dot_id(self._fill(node, "#FFFFFF"))),
            ("color", dot_id(TENSOR_LINE)),
        ]
        self.node(self.names[node.id], attrs, indent, node, f"Mesh {node.id}")

    def axes_table(self, axes: list[Node], indent: int) -> None:
        """One table node: a column per axis (name, length, roles), wrapped every
        :data:`AXES_PER_ROW` axes so that it stays compact above a left-to-right graph."""
        cells: list[tuple[tuple[str, str, str], bool]] = []  # (name, length, roles), in error
        tips = []
        for node in axes:
            body = node.body
            name = body.get("name")
            length = body.get("length")
            roles = body.get("roles")
            name_text = short(name) if name is not None else "?"
            length_text = "unbound" if length is None else short(length)
            words = [short(r) for r in roles] if isinstance(roles, list) else []
            if body.get("cls") is not None:
                words.append(f"cls {short(body['cls'])}")
            if body.get("batch") is True:
                words.append("batch")
            flags = self.flags.get(node.id)
            bad = flags is not None and bool(flags.errors)
            cells.append(((name_text, length_text, ", ".join(words)), bad))
            if flags is not None and flags.any:
                tips.append(f"axis {name_text}: " + _issue_tooltip(flags))
            elif isinstance(body.get("doc"), str) and body["doc"]:
                tips.append(f"axis {name_text}: {body['doc']}")
        pad = 'cellpadding="4"'
        rows = []
        for first in range(0, len(cells), AXES_PER_ROW):
            chunk = cells[first : first + AXES_PER_ROW]
            if first:
                rows.append(f'<tr><td colspan="{len(chunk) + 1}" height="6"></td></tr>')
            lines = [("axis", 0, 'face="' + MONO + '"'), ("length", 1, ""), ("roles", 2, "")]
            for head, field_no, face in lines:
                if field_no == 2 and not any(texts[2] for texts, _ in chunk):
                    continue
                row = [f'<td {pad} align="left">' + _font(head, f'color="{MUTED}"') + "</td>"]
                for texts, bad in chunk:
                    bg = f' bgcolor="{ERROR_FILL}"' if bad else ""
                    colour = ERROR if bad else INK
                    size = ' point-size="9"' if field_no == 2 else ""
                    text = clip(texts[field_no], 24 if field_no else TITLE_CHARS)
                    row.append(
                        f'<td {pad} width="24" align="center"{bg}>'
                        + _font(text, f'{face} color="{colour}"{size}'.strip())
                        + "</td>"
                    )
                rows.append("<tr>" + "".join(row) + "</tr>")
        table = (
            '<<table border="0" cellborder="0" cellspacing="0" cellpadding="0">'
            f"{''.join(rows)}</table>>"
        )
        bad_any = any(bad for _, bad in cells)
        attrs = [
            ("shape", "box"),
            ("style", '"rounded,filled"'),
            ("label", table),
            ("fillcolor", '"#FFFFFF"'),
            ("color", dot_id(ERROR if bad_any else TENSOR_LINE)),
        ]
        if bad_any:
            attrs.append(("penwidth", "2.5"))
        self.node("axes", attrs, indent, None, "\n".join(tips))

    def other(self, node: Node, indent: int) -> None:
        lines = [_bold(_title(node, _short_id(node.id))), _small(_type_name(node.type))]
        lines += self._flag_lines(node)
        attrs = [
            ("shape", "box"),
            ("style", '"dashed,filled"'),
            ("label", _lines(lines)),
            ("fillcolor", dot_id(self._fill(node, "#FFFFFF"))),
            ("color", dot_id(MUTED)),
        ]
        self.node(self.names[node.id], attrs, indent, node, f"{node.type} {node.id}")

    def missing_node(self, ref: str) -> str:
        name = self.missing.get(ref)
        if name is None:
            name = self.missing[ref] = self._fresh("missing")
            lines = [_bold("missing node"), _small(clip(ref, 40), ERROR)]
            attrs = [
                ("shape", "box"),
                ("style", '"dashed,filled"'),
                ("label", _lines(lines)),
                ("fillcolor", dot_id(ERROR_FILL)),
                ("color", dot_id(ERROR)),
            ]
            self.node(name, attrs, 1, None, f'node "{ref}" does not exist')
        return name

    def drawn_as(self, node_id: str) -> str:
        """The DOT node standing for a referenced node: its own, the axes table for an Axis
        (which has no node of its own), or a "missing node" box when it does not exist."""
        if node_id in self.axis_ids:
            return "axes"
        return self.names.get(node_id) or self.missing_node(node_id)

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
                rng = _range_of(sel.range)
                if rng is not None:
                    parts.append(_small(rng, MUTED, LINE_CHARS, 8))
            attrs = [("label", _lines(parts))]
            if shard:
                attrs += [
                    ("color", dot_id(colour.strong if colour else MUTED)),
                    ("fontcolor", dot_id(colour.ink if colour else MUTED)),
                    ("style", "dashed"),
                    ("penwidth", "1.0"),
                ]
            else:
                attrs += [("penwidth", "1.6")]
            tail, head = (other, me) if sel.side == "inputs" else (me, other)
            self.edge(tail, head, attrs)

    # -- the whole graph ---------------------------------------------------------------------

    def build(self) -> Diagram:
        graph = self.graph
        self.emit("digraph geon {", 0)
        self.emit(
            _attrs(
                [
                    ("rankdir", "TB" if _depth(graph) > MAX_LR_DEPTH else "LR"),
                    ("fontname", dot_id(FONT)),
                    ("fontsize", "11"),
                    ("nodesep", "0.3"),
                    ("ranksep", "0.55"),
                    ("pad", "0.3"),
                    ("bgcolor", dot_id("#FFFFFF")),
                ]
            ).join(("graph ", ";"))
        )
        self.emit(
            _attrs(
                [
                    ("fontname", dot_id(FONT)),
                    ("fontsize", "11"),
                    ("fontcolor", dot_id(INK)),
                    ("style", "filled"),
                    ("penwidth", "1.2"),
                    ("margin", '"0.14,0.07"'),
                ]
            ).join(("node ", ";"))
        )
        self.emit(
            _attrs(
                [
                    ("fontname", dot_id(FONT)),
                    ("fontsize", "9"),
                    ("fontcolor", dot_id(MUTED)),
                    ("color", dot_id(EDGE)),
                    ("arrowsize", "0.7"),
                ]
            ).join(("edge ", ";"))
        )
        apps_of: dict[str, list[Node]] = {}
        loose_apps: list[Node] = []
        for node in graph.of_type(APPLICATION):
            op_id = node.body.get("operationId")
            op = graph.get(op_id) if isinstance(op_id, str) else None
            if op is not None and op.type == OPERATION:
                apps_of.setdefault(op.id, []).append(node)
            else:
                loose_apps.append(node)
        for apps in apps_of.values():
            apps.sort(key=_app_order)
        loose_ids = {n.id for n in loose_apps}
        axes: list[Node] = []
        meshes: list[Node] = []
        for node in graph.nodes:
            if node.type == TENSOR:
                self.tensor(node, 1)
            elif node.type == OPERATION:
                self.cluster(node, apps_of.get(node.id, []))
            elif node.type == APPLICATION:
                if node.id in loose_ids:
                    self.application(node, 1, None, 0)
            elif node.type == NOTE:
                self.note(node, 1)
            elif node.type == AXIS:
                axes.append(node)
            elif node.type == MESH:
                meshes.append(node)
            else:
                self.other(node, 1)
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
        self.operation(op, 2)
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
            self.axes_table(axes, 2)
        for mesh in meshes:
            self.mesh(mesh, 2)
        self.emit("}")
        self.clusters += 1

    def caption(self) -> None:
        errors = sum(1 for f in self.flags.values() for _ in f.errors)
        errors += sum(1 for i in self.loose if i.severity == "error")
        warnings = sum(1 for f in self.flags.values() for _ in f.warnings)
        warnings += sum(1 for i in self.loose if i.severity == "warning")
        if not errors and not warnings:
            return
        counts = []
        if errors:
            counts.append(f"{errors} error{'s' if errors != 1 else ''}")
        if warnings:
            counts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
        colour = ERROR if errors else WARNING
        lines = [f'<font color="{colour}"><b>{html_text(" · ".join(counts))}</b></font>']
        for issue in self.loose[:5]:
            lines.append(_small(f"{issue.severity}: {issue.summary}", colour, LINE_CHARS + 16, 10))
        if len(self.loose) > 5:
            lines.append(_small(f"and {len(self.loose) - 5} more", colour, LINE_CHARS, 10))
        self.emit(f"label={_lines(lines)};")
        self.emit("labelloc=b;")
        self.emit("labeljust=l;")


def build(graph: Graph, issues: Sequence[Issue] | None = None) -> Diagram:
    """The diagram of ``graph`` with ``issues`` highlighted (none when None)."""
    return _Builder(graph, issues or ()).build()


def to_dot(graph: Graph, issues: Sequence[Issue] | None = None) -> str:
    """DOT text of ``graph``'s diagram, with the nodes that ``issues`` name highlighted.

    ``issues`` are usually ``geon.core.constraints.check(graph)``; None draws no highlights.
    """
    return build(graph, issues).text
