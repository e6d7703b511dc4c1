"""What each kind of node looks like (DESIGN.md §7): its Graphviz shape, label and colours, read
defensively from any JSON body (the checker reports what is wrong; a diagram still draws).

- **Tensors** are 3-D boxes (``box3d``) labelled with their label (or short id), dtype and shape:
  named axes with lengths (``H=2, W-1=3``) when the tensor has ``TensorAxes``, the positional
  shape (``10`` times ``5``) otherwise, plus the absolute range when it does not start at
  the origin.
- **Operations** are ``tab`` shapes filled with the operation's colour
  (:mod:`geon.render.palette`), labelled with the kernel, the index range and the parameters.
- **Applications** are labelled with their ``IPFIndex`` range (per index axis name when the
  operation has ``IndexAxes``) and their ``Placement``.
- **Notes** are ``note`` shapes; **Axis** declarations form one table (a column per axis: name,
  length, roles) and **Meshes** a box each; other node types a dashed box, and a reference to a
  node that does not exist a dashed red "missing node" box.

Each function returns the node's attributes; :mod:`geon.render.dot` adds the id, the issue
outline and the tooltip.

>>> from geon.core.graph import NOTE, Node
>>> dict(note(Node("n1", NOTE, None, {"message": "hi"}), None))["label"]
'<hi>'
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from geon.core.constants import CONSTANT
from geon.core.graph import (
    INDEX_AXES,
    IPF_INDEX,
    MESH,
    PLACEMENT,
    TENSOR_AXES,
    Graph,
    Node,
)
from geon.core.ranges import index_range
from geon.core.zspace import parse_range
from geon.render.highlights import Flags, issue_lines, issue_tooltip
from geon.render.labels import (
    TIMES,
    clip,
    dot_id,
    html_text,
    named_shape,
    plain_shape,
    range_text,
    short,
)
from geon.render.markup import (
    AXES_PER_ROW,
    INK,
    LINE_CHARS,
    MONO,
    MUTED,
    NOTE_CHARS,
    NOTE_FILL,
    NOTE_LINE,
    NOTE_WIDTH,
    PARAM_LINES,
    PARAM_WIDTH,
    TENSOR_FILL,
    TENSOR_LINE,
    TITLE_CHARS,
    bold,
    font,
    lines,
    mono,
    short_id,
    small,
    title,
)
from geon.render.palette import ERROR, ERROR_FILL, OpColour

__all__ = [
    "application",
    "axes_table",
    "mesh",
    "missing",
    "note",
    "operation",
    "other",
    "tensor",
]

Attrs = list[tuple[str, str]]


def _fill(flags: Flags | None, fill: str) -> str:
    return ERROR_FILL if flags is not None and flags.errors else fill


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
    wrapped = textwrap.wrap(", ".join(pairs), PARAM_WIDTH, break_long_words=True) or [""]
    if len(wrapped) > PARAM_LINES:
        last = clip(wrapped[PARAM_LINES - 1] + " …", PARAM_WIDTH)
        wrapped = [*wrapped[: PARAM_LINES - 1], last]
    return wrapped


def tensor(node: Node, flags: Flags | None) -> Attrs:
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
    parts = [bold(title(node, short_id(node.id))), small(detail), mono(shape_text)]
    if rng is not None and any(rng.start):
        parts.append(small("at " + range_text(rng.start, rng.end)))
    parts += issue_lines(flags)
    return [
        ("shape", "box3d"),
        ("label", lines(parts)),
        ("fillcolor", dot_id(_fill(flags, TENSOR_FILL))),
        ("color", dot_id(TENSOR_LINE)),
    ]


def operation(node: Node, flags: Flags | None, colour: OpColour, graph: Graph) -> Attrs:
    kernel = node.body.get("kernel")
    parts = [bold(short(kernel) if isinstance(kernel, str) else "?")]
    irange = index_range(graph.index, node)
    if irange is not None:
        names = _axes_tag(node, INDEX_AXES)
        index_text = _named_range(names, irange.start, irange.end)
        parts.append(f'<font point-size="9">index {html_text(clip(index_text, LINE_CHARS))}</font>')
    params = node.body.get("params")
    if isinstance(params, dict) and params:
        for line in _param_lines(params):
            if line:
                parts.append(f'<font point-size="9">{html_text(line)}</font>')
    parts += issue_lines(flags)
    bad = flags is not None and bool(flags.errors)
    text = ERROR if bad else colour.text
    return [
        ("shape", "tab"),
        ("label", lines(f'<font color="{text}">{ln}</font>' for ln in parts if ln)),
        ("fillcolor", dot_id(ERROR_FILL if bad else colour.strong)),
        ("color", dot_id(colour.strong)),
    ]


def application(
    node: Node,
    flags: Flags | None,
    op: Node | None,
    number: int,
    colour: OpColour | None,
    graph: Graph,
) -> Attrs:
    """An Application, numbered ``number`` within its operation ``op`` (None: not found)."""
    parts = [bold(title(node, f"shard {number}" if op is not None else short_id(node.id)))]
    irange = parse_range(node.tags.get(IPF_INDEX)) if node.tags else None
    if irange is not None:
        names = _axes_tag(op, INDEX_AXES) if op is not None else None
        parts.append(mono(_named_range(names, irange.start, irange.end)))
    elif op is None:
        parts.append(small(f'operation "{short(node.body.get("operationId"))}" not found'))
    placement = node.tags.get(PLACEMENT) if node.tags else None
    if isinstance(placement, dict):
        parts.append(small(_placement(placement, graph)))
    parts += issue_lines(flags)
    return [
        ("shape", "box"),
        ("style", '"rounded,filled"'),
        ("label", lines(parts)),
        ("fillcolor", dot_id(_fill(flags, colour.shard if colour else "#FFFFFF"))),
        ("color", dot_id(colour.strong if colour else TENSOR_LINE)),
    ]


def _placement(placement: dict[str, Any], graph: Graph) -> str:
    mesh_id = placement.get("mesh")
    found = graph.get(mesh_id) if isinstance(mesh_id, str) else None
    if found is not None and found.type == MESH and isinstance(found.body.get("name"), str):
        mesh_name = found.body["name"]
    else:
        mesh_name = short_id(short(mesh_id))
    coords = placement.get("coords")
    where = (
        "(" + ", ".join(short(c) for c in coords) + ")"
        if isinstance(coords, list)
        else short(coords)
    )
    return f"on {mesh_name} {where}"


def note(node: Node, flags: Flags | None) -> Attrs:
    message = node.body.get("message")
    text = clip(short(message) if message is not None else "", NOTE_CHARS)
    wrapped = "\n".join(
        textwrap.fill(para, NOTE_WIDTH) if para else "" for para in text.split("\n")
    )
    parts = [bold(node.label)] if node.label else []
    parts.append(html_text(wrapped))
    parts += issue_lines(flags)
    return [
        ("shape", "note"),
        ("label", lines(parts)),
        ("fillcolor", dot_id(_fill(flags, NOTE_FILL))),
        ("color", dot_id(NOTE_LINE)),
    ]


def mesh(node: Node, flags: Flags | None) -> Attrs:
    name = node.body.get("name")
    axes = node.body.get("axes")
    parts = [bold("mesh " + (short(name) if isinstance(name, str) else short_id(node.id)))]
    if isinstance(axes, dict):
        sizes = [f"{short(k)}={short(v)}" for k, v in axes.items()]
        devices = 1
        for v in axes.values():
            devices = devices * v if type(v) is int and v >= 1 else 0
        text = f" {TIMES} ".join(sizes) if sizes else "no axes"
        if devices:
            text += f" · {devices} device{'s' if devices != 1 else ''}"
        parts.append(mono(text))
    parts += issue_lines(flags)
    return [
        ("shape", "component"),
        ("label", lines(parts)),
        ("fillcolor", dot_id(_fill(flags, "#FFFFFF"))),
        ("color", dot_id(TENSOR_LINE)),
    ]


def axes_table(axes: list[Node], flags_of: Mapping[str, Flags]) -> tuple[Attrs, str]:
    """One table node for every Axis declaration and its tooltip: a column per axis (name,
    length, roles), wrapped every :data:`AXES_PER_ROW` axes so that it stays compact above a
    left-to-right graph."""
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
        flags = flags_of.get(node.id)
        bad = flags is not None and bool(flags.errors)
        cells.append(((name_text, length_text, ", ".join(words)), bad))
        if flags is not None and flags.any:
            tips.append(f"axis {name_text}: " + issue_tooltip(flags))
        elif isinstance(body.get("doc"), str) and body["doc"]:
            tips.append(f"axis {name_text}: {body['doc']}")
    table = (
        '<<table border="0" cellborder="0" cellspacing="0" cellpadding="0">'
        f"{''.join(_table_rows(cells))}</table>>"
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
    return attrs, "\n".join(tips)


def _table_rows(cells: list[tuple[tuple[str, str, str], bool]]) -> list[str]:
    pad = 'cellpadding="4"'
    rows = []
    for first in range(0, len(cells), AXES_PER_ROW):
        chunk = cells[first : first + AXES_PER_ROW]
        if first:
            rows.append(f'<tr><td colspan="{len(chunk) + 1}" height="6"></td></tr>')
        heads = [("axis", 0, 'face="' + MONO + '"'), ("length", 1, ""), ("roles", 2, "")]
        for head, field_no, face in heads:
            if field_no == 2 and not any(texts[2] for texts, _ in chunk):
                continue
            row = [f'<td {pad} align="left">' + font(head, f'color="{MUTED}"') + "</td>"]
            for texts, bad in chunk:
                bg = f' bgcolor="{ERROR_FILL}"' if bad else ""
                colour = ERROR if bad else INK
                size = ' point-size="9"' if field_no == 2 else ""
                text = clip(texts[field_no], 24 if field_no else TITLE_CHARS)
                row.append(
                    f'<td {pad} width="24" align="center"{bg}>'
                    + font(text, f'{face} color="{colour}"{size}'.strip())
                    + "</td>"
                )
            rows.append("<tr>" + "".join(row) + "</tr>")
    return rows


def other(node: Node, flags: Flags | None) -> Attrs:
    """A node of a type the diagram has no drawing for."""
    parts = [bold(title(node, short_id(node.id))), small(_type_name(node.type))]
    parts += issue_lines(flags)
    return [
        ("shape", "box"),
        ("style", '"dashed,filled"'),
        ("label", lines(parts)),
        ("fillcolor", dot_id(_fill(flags, "#FFFFFF"))),
        ("color", dot_id(MUTED)),
    ]


def _type_name(url: str) -> str:
    for sep in ("/", "#", ":"):
        url = url.rsplit(sep, 1)[-1]
    return url or "node"


def missing(ref: str) -> Attrs:
    """The dashed red box standing for a referenced node ``ref`` that does not exist."""
    parts = [bold("missing node"), small(clip(ref, 40), ERROR)]
    return [
        ("shape", "box"),
        ("style", '"dashed,filled"'),
        ("label", lines(parts)),
        ("fillcolor", dot_id(ERROR_FILL)),
        ("color", dot_id(ERROR)),
    ]
