"""Nodes of a LoomGraph document: the node and tag type URLs, :class:`Node`, and the readers of
what a node selects and references (selection maps, ``tensorId``/``operationId``/``mesh``
references, axis names in references) — DESIGN.md §3.

>>> n = Node.from_json({"id": "a", "type": APPLICATION, "body": {"operationId": "op",
...     "inputs": {"x": [{"tensorId": "t", "range": {"start": [0], "end": [2]}}]}}})
>>> node_references(n)
('op', 't')

:mod:`geon.core.graph` re-exports every name here; the document itself is
:class:`geon.core.graph.Graph`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from geon.core.errors import DocumentError, quote

__all__ = [
    "APPLICATION",
    "AXIS",
    "GEON_NODE_PREFIX",
    "GEON_TAG_PREFIX",
    "GROUP",
    "INDEX_AXES",
    "IO_SEQUENCE_POINT",
    "IPF_INDEX",
    "IPF_SIGNATURE",
    "LAYOUT",
    "LOOM_NODE_PREFIX",
    "LOOM_TAG_PREFIX",
    "MESH",
    "NODE_TYPES",
    "NOTE",
    "OPERATION",
    "PLACEMENT",
    "TAG_TYPES",
    "TENSOR",
    "TENSOR_AXES",
    "VARIABLE",
    "Node",
    "Selection",
    "axis_names_of_ref",
    "iter_selections",
    "node_references",
    "selected_tensor_ids",
    "shown_text",
    "split_level",
    "text_refusal",
    "unsafe_text",
]

LOOM_NODE_PREFIX = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/"
LOOM_TAG_PREFIX = "http://tensortapestry.org/schemas/loom/2024-01/tag_types.jsd#/tags/"
GEON_NODE_PREFIX = "urn:geon:2026-11:node_types.jsd#/nodes/"
GEON_TAG_PREFIX = "urn:geon:2026-11:tag_types.jsd#/tags/"

TENSOR = LOOM_NODE_PREFIX + "Tensor"
OPERATION = LOOM_NODE_PREFIX + "Operation"
APPLICATION = LOOM_NODE_PREFIX + "Application"
NOTE = LOOM_NODE_PREFIX + "Note"
AXIS = GEON_NODE_PREFIX + "Axis"
MESH = GEON_NODE_PREFIX + "Mesh"

IPF_SIGNATURE = LOOM_TAG_PREFIX + "IPFSignature"
IPF_INDEX = LOOM_TAG_PREFIX + "IPFIndex"
IO_SEQUENCE_POINT = LOOM_TAG_PREFIX + "IOSequencePoint"
TENSOR_AXES = GEON_TAG_PREFIX + "TensorAxes"
INDEX_AXES = GEON_TAG_PREFIX + "IndexAxes"
PLACEMENT = GEON_TAG_PREFIX + "Placement"
LAYOUT = GEON_TAG_PREFIX + "Layout"
GROUP = GEON_TAG_PREFIX + "Group"
VARIABLE = GEON_TAG_PREFIX + "Variable"

NODE_TYPES: dict[str, str] = {
    "Tensor": TENSOR,
    "Operation": OPERATION,
    "Application": APPLICATION,
    "Note": NOTE,
    "Axis": AXIS,
    "Mesh": MESH,
}
"""Short name -> type URL of every node type geon knows."""

TAG_TYPES: dict[str, str] = {
    "IPFSignature": IPF_SIGNATURE,
    "IPFIndex": IPF_INDEX,
    "IOSequencePoint": IO_SEQUENCE_POINT,
    "TensorAxes": TENSOR_AXES,
    "IndexAxes": INDEX_AXES,
    "Placement": PLACEMENT,
    "Layout": LAYOUT,
    "Variable": VARIABLE,
}
"""Short name -> type URL of every tag type geon knows (others are kept, not checked)."""

_NODE_KEYS = ("id", "type", "label", "body", "tags")


# --------------------------------------------------------------------------------------------
# Nodes


@dataclass(frozen=True, slots=True)
class Node:
    """One node of a document; a value (compare with ``==``, change with :meth:`replace`).

    >>> n = Node("t1", TENSOR, "x", {"dtype": "int32", "range": {"start": [0], "end": [4]}})
    >>> n.replace(label="y").label
    'y'
    >>> n.to_json()["body"]["dtype"]
    'int32'

    ``extra`` holds fields geon does not know, in their order; ``keys`` is the order the fields
    had in the loaded JSON (empty for nodes built in Python), so saving puts them back the same way.
    """

    id: str
    type: str
    label: str | None = None
    body: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, Any] = field(default_factory=dict)
    extra: tuple[tuple[str, Any], ...] = ()
    keys: tuple[str, ...] = ()

    def __hash__(self) -> int:
        # Bodies are dicts; equal nodes have equal ids and types, so this agrees with ``==``.
        return hash((self.id, self.type, self.label))

    def replace(self, **changes: Any) -> Node:
        """A copy with the given fields changed."""
        return replace(self, **changes)

    def tag(self, url: str, default: Any = None) -> Any:
        """The value of tag ``url`` or ``default``."""
        return self.tags.get(url, default)

    @property
    def name(self) -> str:
        """How people read the node (issue 21: names, never ids, wherever a person reads):
        its label, else an axis's or mesh's name, else an operation's kernel, else its id."""
        if self.label:
            return self.label
        body = self.body if isinstance(self.body, dict) else {}
        for key in ("name", "kernel"):
            if isinstance(body.get(key), str) and body[key]:
                return str(body[key])
        return self.id

    @classmethod
    def from_json(cls, data: Any, *, where: str = "node") -> Node:
        """Load a node; raises :class:`DocumentError` naming the bad field."""
        if not isinstance(data, dict):
            raise DocumentError(f"{where} is {quote(data)}; expected a JSON object")
        node_id = data.get("id")
        if not isinstance(node_id, str):
            raise DocumentError(
                f"{where} has id {quote(node_id)}; expected a string (a UUID)"
                if "id" in data
                else f'{where} has no "id"; expected a string (a UUID)'
            )
        node_type = data.get("type")
        if not isinstance(node_type, str):
            raise DocumentError(
                f"node {quote(node_id)} has type {quote(node_type)}; expected a type URL string"
                if "type" in data
                else f'node {quote(node_id)} has no "type"; expected a type URL string'
            )
        label = data.get("label")
        if label is not None and not isinstance(label, str):
            raise DocumentError(
                f"node {quote(node_id)} has label {quote(label)}; expected a string"
            )
        if "body" not in data:
            raise DocumentError(f'node {quote(node_id)} has no "body"; expected a JSON object')
        body = data["body"]
        if not isinstance(body, dict):
            raise DocumentError(
                f"node {quote(node_id)} has body {quote(body)}; expected a JSON object"
            )
        tags = data.get("tags", {})
        if not isinstance(tags, dict):
            raise DocumentError(
                f"node {quote(node_id)} has tags {quote(tags)}; expected a JSON object"
            )
        keys = tuple(data)
        extra = tuple((k, v) for k, v in data.items() if k not in _NODE_KEYS)
        return cls(node_id, node_type, label, body, tags, extra, keys)

    def to_json(self) -> dict[str, Any]:
        """The node as JSON data, fields in their loaded order (shares body and tag values)."""
        out: dict[str, Any] = {}
        extra = dict(self.extra)
        order = self.keys or _NODE_KEYS
        for key in order:
            self._put(out, key, extra)
        for key in _NODE_KEYS:
            if key not in out:
                self._put(out, key, extra)
        for key, value in self.extra:
            out.setdefault(key, value)
        return out

    def _put(self, out: dict[str, Any], key: str, extra: dict[str, Any]) -> None:
        if key == "id":
            out["id"] = self.id
        elif key == "type":
            out["type"] = self.type
        elif key == "label":
            if self.label is not None:
                out["label"] = self.label
        elif key == "body":
            out["body"] = self.body
        elif key == "tags":
            if self.tags or "tags" in self.keys:
                out["tags"] = self.tags
        elif key in extra:
            out[key] = extra[key]


# --------------------------------------------------------------------------------------------
# Selection maps and references


@dataclass(frozen=True, slots=True)
class Selection:
    """One entry of a selection map: ``body.<side>.<key>[<position>]`` = ``{tensorId, range}``."""

    side: str
    key: str
    position: int
    tensor_id: Any
    range: Any
    item: Any

    @property
    def path(self) -> str:
        """The JSON path of the entry below the node, e.g. ``body.inputs.x[0]``."""
        return f"body.{self.side}.{_path_key(self.key)}[{self.position}]"


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _path_key(key: str) -> str:
    return key if _IDENT.match(key) else f"['{key}']"


def iter_selections(body: Any, sides: Sequence[str] = ("inputs", "outputs")) -> Iterator[Selection]:
    """Every ``{tensorId, range}`` entry of a body's selection maps, in document order.

    Malformed parts (a side that is not an object, a key that is not a list) are skipped;
    :func:`geon.core.checks.check` reports them as ``SchemaConformance`` issues.

    >>> body = {"inputs": {"x": [{"tensorId": "t", "range": {"start": [0], "end": [2]}}]}}
    >>> [(s.key, s.tensor_id, s.path) for s in iter_selections(body)]
    [('x', 't', 'body.inputs.x[0]')]
    """
    if not isinstance(body, dict):
        return
    for side in sides:
        selmap = body.get(side)
        if not isinstance(selmap, dict):
            continue
        for key, items in selmap.items():
            if not isinstance(items, list):
                continue
            for position, item in enumerate(items):
                if isinstance(item, dict):
                    yield Selection(
                        side, key, position, item.get("tensorId"), item.get("range"), item
                    )
                else:
                    yield Selection(side, key, position, None, None, item)


def selected_tensor_ids(body: Any, side: str) -> tuple[str, ...]:
    """The distinct ``tensorId`` strings of one side of a body's selection maps, in document
    order; malformed parts are skipped, as :func:`iter_selections` skips them.

    >>> selected_tensor_ids({"inputs": {"x": [{"tensorId": "a"}, {"tensorId": "a"}]}}, "inputs")
    ('a',)
    """
    selmap = body.get(side) if isinstance(body, dict) else None
    if not isinstance(selmap, dict):
        return ()
    found: dict[str, None] = {}
    for items in selmap.values():
        if isinstance(items, list):
            for item in items:
                if isinstance(item, dict):
                    tensor_id = item.get("tensorId")
                    if isinstance(tensor_id, str):
                        found[tensor_id] = None
    return tuple(found)


def node_references(node: Node) -> tuple[str, ...]:
    """The ids a node references directly, in document order, without duplicates.

    Operations and Applications reference their tensors (``tensorId``), Applications their
    operation (``operationId``), and a ``Placement`` tag its mesh (``mesh``).
    """
    refs: dict[str, None] = {}
    if node.type == APPLICATION:
        op_id = node.body.get("operationId")
        if isinstance(op_id, str):
            refs[op_id] = None
    if node.type in (OPERATION, APPLICATION):
        for side in ("inputs", "outputs"):
            refs.update(dict.fromkeys(selected_tensor_ids(node.body, side)))
    placement = node.tags.get(PLACEMENT) if node.tags else None
    if isinstance(placement, dict):
        mesh = placement.get("mesh")
        if isinstance(mesh, str):
            refs[mesh] = None
    refs.pop(node.id, None)
    return tuple(refs)


_LEVEL_SUFFIX = re.compile(r"[+-][0-9]+$")


def split_level(part: str) -> tuple[str, str]:
    """One part of an axis reference (between ``*``) as its name and its dual-level suffix, both
    as written; text that is not a reference comes back whole as the name.

    >>> split_level("W-1"), split_level("H"), split_level("H+2")
    (('W', '-1'), ('H', ''), ('H', '+2'))
    """
    match = _LEVEL_SUFFIX.search(part)
    return (part[: match.start()], match.group()) if match else (part, "")


def axis_names_of_ref(ref: Any) -> tuple[str, ...]:
    """The axis names an axis reference string mentions: ``"W-1"`` -> ``("W",)``,
    ``"H*W"`` -> ``("H", "W")``; anything that is not a string mentions none.

    >>> axis_names_of_ref("W+2"), axis_names_of_ref("H*W-1")
    (('W',), ('H', 'W'))
    """
    if not isinstance(ref, str):
        return ()
    names = []
    for part in ref.split("*"):
        name = split_level(part.strip())[0]
        if name:
            names.append(name)
    return tuple(names)


# --------------------------------------------------------------------------------------------
# Text that names things: labels, axis names, axis references

#: What no label, axis name or axis reference may hold: the C0 and C1 control characters (CR,
#: LF, TAB, NUL, ESC, NEL...) and the line and paragraph separators U+2028 and U+2029. Each ends
#: a line somewhere a name is written (Python reads a lone CR as a new line, so a name written
#: into a comment of an exported script became code; JavaScript and terminals read the others).
UNSAFE_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

#: The operation params whose strings (or keys) are axis references.
_REF_PARAMS = ("axes", "out_axes", "reduction_axes", "along", "axis", "slices", "pad")

_ESCAPES = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}


def shown_text(text: str, limit: int = 80) -> str:
    """``text`` in double quotes for a message, its unsafe characters written as escapes
    (``\\r``, ``\\u2028``), cut to ``limit`` characters: a message never carries a line break.

    >>> print(shown_text("F\\r  x\\u2028"))
    "F\\r  x\\u2028"
    """
    clipped = text if len(text) <= limit else text[: limit - 3] + "..."
    escaped = UNSAFE_CHARACTERS.sub(
        lambda m: _ESCAPES.get(m.group(), f"\\u{ord(m.group()):04x}"), clipped
    )
    return f'"{escaped}"'


def _ref_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _ref_strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _ref_strings(key)
            if isinstance(item, (str, list)):
                yield from _ref_strings(item)


def _named_text(node: Node) -> Iterator[tuple[str, str]]:
    """``(what, text)`` for every label, axis name and axis reference of ``node``."""
    if node.label is not None:
        yield "label", node.label
    body = node.body if isinstance(node.body, dict) else {}
    if node.type == AXIS and isinstance(body.get("name"), str):
        yield "axis name", body["name"]
    if node.type == OPERATION and isinstance(body.get("params"), dict):
        for key in _REF_PARAMS:
            for ref in _ref_strings(body["params"].get(key)):
                yield f'axis reference in params "{key}"', ref
    for url in (TENSOR_AXES, INDEX_AXES):
        tag = node.tags.get(url) if isinstance(node.tags, dict) else None
        if isinstance(tag, dict):
            for ref in _ref_strings(tag.get("axes")):
                yield "axis reference", ref


def unsafe_text(node: Node) -> list[tuple[str, str]]:
    """``(what, text)`` for each label, axis name or axis reference of ``node`` that holds an
    unsafe character (:data:`UNSAFE_CHARACTERS`).

    >>> unsafe_text(Node("a", AXIS, "ok", {"name": "F\\r#"}))
    [('axis name', 'F\\r#')]
    """
    return [(what, text) for what, text in _named_text(node) if UNSAFE_CHARACTERS.search(text)]


def text_refusal(node: Node, before: Node | None = None) -> str | None:
    """Why ``node`` may not be stored: the first label, axis name or axis reference holding an
    unsafe character that ``before`` (the node as stored, if any) did not already hold, so that
    a stored node can still be moved or fixed; None when there is none. The one rule every
    writer of a document applies (edits on the websocket and REST, uploads and imports).

    >>> print(text_refusal(Node("a", AXIS, "x\\u2028y", {"name": "H"})))
    the label "x\\u2028y" holds a line break (U+2028); labels, axis names and axis references \
may not hold control characters (U+0000-U+001F, U+007F-U+009F) or the line separators U+2028 \
and U+2029
    >>> print(text_refusal(Node("t", TENSOR, "x", tags={TENSOR_AXES: {"axes": ["H\\r"]}}))[:60])
    the axis reference "H\\r" of "x" holds a control character (U
    """
    old = set(unsafe_text(before)) if before is not None else set()
    for what, text in unsafe_text(node):
        if (what, text) in old:
            continue
        found = UNSAFE_CHARACTERS.search(text)
        assert found is not None
        kind = "a line break" if found.group() in "\u2028\u2029" else "a control character"
        kind_of, _, inside = what.partition(" in ")
        subject = f"the {kind_of} {shown_text(text)}" + (f" in {inside}" if inside else "")
        if kind_of == "axis reference":
            subject += f" of {shown_text(node.name)}"
        return (
            f"{subject} holds {kind} (U+{ord(found.group()):04X}); labels, axis names and axis "
            "references may not hold control characters (U+0000-U+001F, U+007F-U+009F) or the "
            "line separators U+2028 and U+2029"
        )
    return None
