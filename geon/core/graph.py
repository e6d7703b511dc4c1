"""The document: a LoomGraph envelope of nodes, loaded from and saved to JSON without loss.

>>> g = Graph.from_json({"id": "g", "nodes": [
...     {"id": "n1", "type": NOTE, "label": "hello", "body": {"message": "hi"}}]})
>>> g.node("n1").body["message"]
'hi'
>>> g.apply([{"op": "update_node", "id": "n1", "body": {"message": "bye"}}])[0].new.body
{'message': 'bye'}
>>> g.to_json()["nodes"][0]["label"]
'hello'

A graph is ``{"id": uuid, "nodes": [node...]}`` and a node is
``{"id", "type", "label"?, "body", "tags"?}`` (DESIGN.md §3). Loading keeps everything it does not
understand: unknown top-level and node fields, unknown tags, the order of nodes and of keys, so
``json.dumps(Graph.from_json(d).to_json(), indent=2)`` reproduces a loom document byte for byte.
Bodies and tag values stay plain JSON data (dicts, lists, str, int, float, bool, None); geon never
mutates them in place — an edit builds new dicts along the changed path and shares the rest.

Edits (:meth:`Graph.apply`) take the operations of the websocket protocol (DESIGN.md §6):

- ``{"op": "add_node", "node": {...}}`` appends a node; its id must be new.
- ``{"op": "remove_node", "id": ..., "cascade"?: bool}`` removes a node. When other nodes
  reference it (by id: an operation's ``tensorId``, an application's ``operationId``, a
  ``Placement``'s ``mesh``) the removal is refused and the error names them, unless ``cascade`` is
  true, which also removes every node that references it, transitively. Axis declarations are
  referenced by *name*, not id, so removing an Axis is never refused; the checker reports the
  tensors that still name it.
- ``{"op": "update_node", "id": ..., "label"?, "body"?, "tags"?}``: ``body`` and ``tags`` are JSON
  merge patches (RFC 7386: objects merge recursively, ``null`` deletes a key, anything else
  replaces); ``label`` replaces the label (``null`` removes it).

A batch is atomic: every operation is validated against the state left by the ones before it and
nothing changes unless all succeed; a refused batch raises :class:`~geon.core.errors.DocumentError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from geon.core.errors import DocumentError

if TYPE_CHECKING:
    from geon.core.issues import Issue

__all__ = [
    "APPLICATION",
    "AXIS",
    "GEON_NODE_PREFIX",
    "GEON_TAG_PREFIX",
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
    "Change",
    "Graph",
    "GraphIndex",
    "Node",
    "Selection",
    "axis_names_of_ref",
    "iter_selections",
    "node_references",
    "selected_tensor_ids",
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
}
"""Short name -> type URL of every tag type geon knows (others are kept, not checked)."""

_NODE_KEYS = ("id", "type", "label", "body", "tags")
_GRAPH_KEYS = ("id", "nodes")
_EDIT_OPS = ("add_node", "remove_node", "update_node")

T = TypeVar("T")


def _quote(value: Any) -> str:
    """``"value"`` for messages: strings are shown as they are, anything else as its repr."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f'"{text}"'


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

    @classmethod
    def from_json(cls, data: Any, *, where: str = "node") -> Node:
        """Load a node; raises :class:`DocumentError` naming the bad field."""
        if not isinstance(data, dict):
            raise DocumentError(f"{where} is {_quote(data)}; expected a JSON object")
        node_id = data.get("id")
        if not isinstance(node_id, str):
            raise DocumentError(
                f"{where} has id {_quote(node_id)}; expected a string (a UUID)"
                if "id" in data
                else f'{where} has no "id"; expected a string (a UUID)'
            )
        node_type = data.get("type")
        if not isinstance(node_type, str):
            raise DocumentError(
                f"node {_quote(node_id)} has type {_quote(node_type)}; expected a type URL string"
                if "type" in data
                else f'node {_quote(node_id)} has no "type"; expected a type URL string'
            )
        label = data.get("label")
        if label is not None and not isinstance(label, str):
            raise DocumentError(
                f"node {_quote(node_id)} has label {_quote(label)}; expected a string"
            )
        if "body" not in data:
            raise DocumentError(f'node {_quote(node_id)} has no "body"; expected a JSON object')
        body = data["body"]
        if not isinstance(body, dict):
            raise DocumentError(
                f"node {_quote(node_id)} has body {_quote(body)}; expected a JSON object"
            )
        tags = data.get("tags", {})
        if not isinstance(tags, dict):
            raise DocumentError(
                f"node {_quote(node_id)} has tags {_quote(tags)}; expected a JSON object"
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
    :func:`geon.core.constraints.check` reports them as ``SchemaConformance`` issues.

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
        name = _LEVEL_SUFFIX.sub("", part.strip())
        if name:
            names.append(name)
    return tuple(names)


def _tensor_axis_names(node: Node) -> tuple[str, ...]:
    if node.type != TENSOR:
        return ()
    return _tag_axis_names(node, TENSOR_AXES)


def _index_axis_names(node: Node) -> tuple[str, ...]:
    if node.type != OPERATION:
        return ()
    return _tag_axis_names(node, INDEX_AXES)


def _tag_axis_names(node: Node, url: str) -> tuple[str, ...]:
    if not node.tags:
        return ()
    tag = node.tags.get(url)
    if not isinstance(tag, dict):
        return ()
    axes = tag.get("axes")
    if not isinstance(axes, list):
        return ()
    names: dict[str, None] = {}
    for ref in axes:
        for name in axis_names_of_ref(ref):
            names[name] = None
    return tuple(names)


def _written(node: Node) -> tuple[str, ...]:
    """The tensor ids an Operation writes (its ``outputs`` selections)."""
    return selected_tensor_ids(node.body, "outputs") if node.type == OPERATION else ()


def _axis_name(node: Node) -> str | None:
    name = node.body.get("name") if node.type == AXIS else None
    return name if isinstance(name, str) else None


# --------------------------------------------------------------------------------------------
# The index


class GraphIndex:
    """The lookups constraints need, kept in step with every edit of its :class:`Graph`.

    >>> g = Graph.from_json({"id": "g", "nodes": [
    ...     {"id": "t", "type": TENSOR, "body": {"dtype": "int32",
    ...      "range": {"start": [0], "end": [2]}}},
    ...     {"id": "op", "type": OPERATION, "body": {"kernel": "k", "outputs": {"result": [
    ...      {"tensorId": "t", "range": {"start": [0], "end": [2]}}]}}}]})
    >>> g.index.referrers("t"), g.index.operations_using("t")
    (('op',), ('op',))
    """

    __slots__ = (
        "_apps_of",
        "_axes_by_name",
        "_axes_in_order",
        "_by_type",
        "_memo",
        "_next_seq",
        "_nodes",
        "_ops_by_index_axis",
        "_referrers",
        "_refs",
        "_seq",
        "_tensors_by_axis",
        "_version",
        "_writers",
    )

    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self._nodes: dict[str, Node] = {}
        self._seq: dict[str, int] = {}
        self._next_seq = 0
        self._by_type: dict[str, dict[str, None]] = {}
        self._refs: dict[str, tuple[str, ...]] = {}
        self._referrers: dict[str, dict[str, None]] = {}
        self._axes_by_name: dict[str, dict[str, None]] = {}
        # each name's declarations in document order, at the version they were sorted
        self._axes_in_order: dict[str, tuple[int, tuple[str, ...]]] = {}
        self._tensors_by_axis: dict[str, dict[str, None]] = {}
        self._ops_by_index_axis: dict[str, dict[str, None]] = {}
        self._writers: dict[str, dict[str, None]] = {}
        self._memo: dict[str, dict[str, tuple[Node, Any]]] = {}
        self._apps_of: dict[str, tuple[int, tuple[Node, ...]]] = {}
        self._version = 0
        for node in nodes:
            self._insert(node)

    # -- maintenance (called by Graph) -------------------------------------------------------

    def _insert(self, node: Node) -> None:
        nid = node.id
        self._version += 1
        self._nodes[nid] = node
        self._seq[nid] = self._next_seq
        self._next_seq += 1
        self._by_type.setdefault(node.type, {})[nid] = None
        refs = node_references(node)
        self._refs[nid] = refs
        for ref in refs:
            self._referrers.setdefault(ref, {})[nid] = None
        name = _axis_name(node)
        if name is not None:
            self._axes_by_name.setdefault(name, {})[nid] = None
        for axis in _tensor_axis_names(node):
            self._tensors_by_axis.setdefault(axis, {})[nid] = None
        for axis in _index_axis_names(node):
            self._ops_by_index_axis.setdefault(axis, {})[nid] = None
        for tid in _written(node):
            self._writers.setdefault(tid, {})[nid] = None

    def _delete(self, nid: str) -> Node:
        node = self._nodes.pop(nid)
        self._version += 1
        del self._seq[nid]
        self._memo.pop(nid, None)
        self._apps_of.pop(nid, None)
        _discard(self._by_type, node.type, nid)
        for ref in self._refs.pop(nid, ()):
            _discard(self._referrers, ref, nid)
        name = _axis_name(node)
        if name is not None:
            _discard(self._axes_by_name, name, nid)
        for axis in _tensor_axis_names(node):
            _discard(self._tensors_by_axis, axis, nid)
        for axis in _index_axis_names(node):
            _discard(self._ops_by_index_axis, axis, nid)
        for tid in _written(node):
            _discard(self._writers, tid, nid)
        return node

    def axis_readers(self, name: str) -> set[str]:
        """The ids of the nodes whose checks read the declaration of axis ``name``: Axis nodes
        declaring it, Tensors naming it and the Operations using them, Operations whose
        ``IndexAxes`` name it and their Applications."""
        out: set[str] = set(self._axes_by_name.get(name, ()))
        for tid in self._tensors_by_axis.get(name, ()):
            out.add(tid)
            out.update(self.operations_using(tid))
        for oid in self._ops_by_index_axis.get(name, ()):
            out.add(oid)
            out.update(a.id for a in self.applications_of(oid))
        return out

    def _replace(self, node: Node) -> None:
        """Put ``node`` in place of the node with its id, keeping its position."""
        seq = self._seq[node.id]
        self._delete(node.id)
        self._insert(node)
        self._seq[node.id] = seq
        self._next_seq -= 1

    # -- lookups -----------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """A number that changes with every node added, removed or replaced: a value derived
        from several nodes and computed at one version holds while the version is the same."""
        return self._version

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._nodes

    def get(self, node_id: Any) -> Node | None:
        """The node with id ``node_id``, or None."""
        return self._nodes.get(node_id) if isinstance(node_id, str) else None

    def node_ids(self) -> Iterator[str]:
        """Every node id (in insertion order; use :meth:`position` for document order)."""
        return iter(self._nodes)

    def position(self, node_id: str) -> int:
        """A number that orders nodes as the document does."""
        return self._seq[node_id]

    def in_document_order(self, node_ids: Iterable[str]) -> list[str]:
        """``node_ids`` (that exist) sorted into document order."""
        seq = self._seq
        return sorted((n for n in node_ids if n in seq), key=seq.__getitem__)

    def of_type(self, node_type: str) -> list[Node]:
        """The nodes of one type URL, in insertion order."""
        nodes = self._nodes
        return [nodes[n] for n in self._by_type.get(node_type, ())]

    def references(self, node_id: str) -> tuple[str, ...]:
        """The ids node ``node_id`` references (see :func:`node_references`)."""
        return self._refs.get(node_id, ())

    def referrers(self, node_id: str) -> tuple[str, ...]:
        """The ids of the nodes that reference ``node_id``, in document order."""
        found = self._referrers.get(node_id)
        if not found:
            return ()
        if len(found) == 1:
            return tuple(found)
        return tuple(self.in_document_order(found))

    def applications_of(self, op_id: str) -> list[Node]:
        """The Application nodes whose ``operationId`` is ``op_id``, in document order
        (remembered while :attr:`version` is unchanged: a check asks several times per
        operation)."""
        hit = self._apps_of.get(op_id)
        if hit is not None and hit[0] == self._version:
            return list(hit[1])
        nodes = self._nodes
        out = []
        for rid in self.referrers(op_id):
            node = nodes[rid]
            if node.type == APPLICATION and node.body.get("operationId") == op_id:
                out.append(node)
        self._apps_of[op_id] = (self._version, tuple(out))
        return out

    def operations_using(self, tensor_id: str) -> tuple[str, ...]:
        """The ids of the Operations that read or write tensor ``tensor_id``."""
        nodes = self._nodes
        return tuple(r for r in self.referrers(tensor_id) if nodes[r].type == OPERATION)

    def axis_declaration_ids(self, name: str) -> tuple[str, ...]:
        """The ids of the Axis nodes declaring ``name``, in document order: sorted once per
        version, since a check asks for each of n declarations of one name (sorting, or
        building the list, per call made that O(n²))."""
        found = self._axes_by_name.get(name)
        if not found:
            return ()
        cached = self._axes_in_order.get(name)
        if cached is not None and cached[0] == self._version:
            return cached[1]
        order = tuple(self.in_document_order(found))
        self._axes_in_order[name] = (self._version, order)
        return order

    def axis_declarations(self, name: str) -> list[Node]:
        """Every Axis node declaring ``name`` (more than one is an ``AxisDeclarations`` issue)."""
        nodes = self._nodes
        return [nodes[n] for n in self.axis_declaration_ids(name)]

    def axis(self, name: str) -> Node | None:
        """The first Axis node declaring ``name``, or None."""
        order = self.axis_declaration_ids(name)
        return self._nodes[order[0]] if order else None

    def axis_names(self) -> tuple[str, ...]:
        """Every declared axis name."""
        return tuple(self._axes_by_name)

    def tensors_with_axis(self, name: str) -> tuple[str, ...]:
        """The ids of the Tensors whose ``TensorAxes`` tag names axis ``name``."""
        return tuple(self.in_document_order(self._tensors_by_axis.get(name, ())))

    def writers_of(self, tensor_id: str) -> tuple[str, ...]:
        """The ids of the Operations whose ``outputs`` select tensor ``tensor_id``."""
        found = self._writers.get(tensor_id)
        if not found:
            return ()
        return tuple(found) if len(found) == 1 else tuple(self.in_document_order(found))

    def operations_with_index_axis(self, name: str) -> tuple[str, ...]:
        """The ids of the Operations whose ``IndexAxes`` tag names axis ``name``."""
        return tuple(self.in_document_order(self._ops_by_index_axis.get(name, ())))

    def memo(self, node: Node, key: str, compute: Callable[[Node], T]) -> T:
        """``compute(node)``, remembered while ``node`` is the current version of its id.

        The index drops nothing else on an edit: a cached result that reads other nodes or
        Axis declarations must record them and compare them before reuse (as the checkers'
        ``_cached`` helpers do)."""
        slots = self._memo.get(node.id)
        if slots is None:
            slots = self._memo[node.id] = {}
        hit = slots.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        value = compute(node)
        slots[key] = (node, value)
        return value


def _discard(table: dict[str, dict[str, None]], key: str, value: str) -> None:
    bucket = table.get(key)
    if bucket is not None:
        bucket.pop(value, None)
        if not bucket:
            del table[key]


# --------------------------------------------------------------------------------------------
# Edits


@dataclass(frozen=True, slots=True)
class Change:
    """The net change of one node by an edit: ``old`` None = added, ``new`` None = removed."""

    id: str
    old: Node | None
    new: Node | None


_MISSING = object()


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch; returns new containers, never changes ``target``.

    >>> merge_patch({"a": 1, "b": {"c": 2}}, {"b": {"c": None, "d": 3}})
    {'a': 1, 'b': {'d': 3}}
    """
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


class _Staging:
    """The state of a graph while a batch of edits is validated; nothing touches the graph."""

    def __init__(self, index: GraphIndex) -> None:
        self.index = index
        self.staged: dict[str, Node | None] = {}
        self.moved: set[str] = set()

    def get(self, node_id: str) -> Node | None:
        if node_id in self.staged:
            return self.staged[node_id]
        return self.index.get(node_id)

    def referrers(self, node_id: str) -> list[str]:
        found: dict[str, None] = {}
        for rid in self.index.referrers(node_id):
            if rid not in self.staged:
                found[rid] = None
        for rid, node in self.staged.items():
            if node is not None and node_id in node_references(node):
                found[rid] = None
        return list(found)


_ADD_KEYS = ("op", "node")
_REMOVE_KEYS = ("op", "id", "cascade")
_UPDATE_KEYS = ("op", "id", "label", "body", "tags")


def _check_keys(op: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in op:
        if key not in allowed:
            raise DocumentError(
                f"{where} has unknown field {_quote(key)}; expected one of "
                + "("
                + ", ".join(f'"{k}"' for k in allowed)
                + ")"
            )


def _stage(staging: _Staging, op: Any, number: int) -> None:
    where = f"edit op {number}"
    if not isinstance(op, dict):
        raise DocumentError(f'{where} is {_quote(op)}; expected a JSON object with an "op"')
    kind = op.get("op")
    if kind not in _EDIT_OPS:
        raise DocumentError(
            f"{where} has op {_quote(kind)}; expected one of "
            + "("
            + ", ".join(f'"{k}"' for k in _EDIT_OPS)
            + ")"
        )
    where = f"{where} ({kind})"
    if kind == "add_node":
        _check_keys(op, _ADD_KEYS, where)
        if "node" not in op:
            raise DocumentError(f'{where} has no "node"; expected a node object')
        try:
            node = Node.from_json(op["node"], where="node")
        except DocumentError as exc:
            raise DocumentError(f"{where}: {exc}") from None
        if staging.get(node.id) is not None:
            raise DocumentError(f"{where}: node {_quote(node.id)} already exists; use a new id")
        if node.id in staging.staged and staging.index.get(node.id) is not None:
            staging.moved.add(node.id)  # removed earlier in this batch: it goes to the end
        staging.staged[node.id] = node
        return
    _check_keys(op, _REMOVE_KEYS if kind == "remove_node" else _UPDATE_KEYS, where)
    node_id = op.get("id")
    if not isinstance(node_id, str):
        raise DocumentError(f"{where} has id {_quote(node_id)}; expected the id of a node")
    current = staging.get(node_id)
    if current is None:
        raise DocumentError(f"{where}: node {_quote(node_id)} does not exist")
    if kind == "remove_node":
        cascade = op.get("cascade", False)
        if not isinstance(cascade, bool):
            raise DocumentError(f"{where} has cascade {_quote(cascade)}; expected true or false")
        doomed = [node_id]
        if cascade:
            seen = {node_id}
            frontier = [node_id]
            while frontier:
                nxt = []
                for nid in frontier:
                    for rid in staging.referrers(nid):
                        if rid not in seen:
                            seen.add(rid)
                            doomed.append(rid)
                            nxt.append(rid)
                frontier = nxt
        else:
            users = staging.referrers(node_id)
            if users:
                names = ", ".join(f'"{u}"' for u in users)
                raise DocumentError(
                    f"{where}: node {_quote(node_id)} is referenced by {names}; remove or "
                    'change those first, or pass "cascade": true to remove them too'
                )
        for nid in doomed:
            staging.staged[nid] = None
        return
    changes: dict[str, Any] = {}
    if "label" in op:
        label = op["label"]
        if label is not None and not isinstance(label, str):
            raise DocumentError(f"{where} has label {_quote(label)}; expected a string or null")
        changes["label"] = label
        if label is None and "label" in current.keys:
            changes["keys"] = tuple(k for k in current.keys if k != "label")
    if "body" in op:
        patch = op["body"]
        if not isinstance(patch, dict):
            raise DocumentError(
                f"{where} has body {_quote(patch)}; expected a JSON object (a merge patch)"
            )
        changes["body"] = merge_patch(current.body, patch)
    if "tags" in op:
        patch = op["tags"]
        if not isinstance(patch, dict):
            raise DocumentError(
                f"{where} has tags {_quote(patch)}; expected a JSON object (a merge patch)"
            )
        changes["tags"] = merge_patch(current.tags, patch)
    staging.staged[node_id] = current.replace(**changes) if changes else current


# --------------------------------------------------------------------------------------------
# The graph


class Graph:
    """A LoomGraph document: an id and an ordered set of nodes, with an index kept in step.

    >>> g = Graph(id="g")
    >>> _ = g.apply([{"op": "add_node", "node": {"id": "n", "type": NOTE,
    ...     "body": {"message": "m"}}}])
    >>> [n.id for n in g.nodes]
    ['n']
    """

    __slots__ = ("extra", "id", "index", "keys")

    def __init__(
        self,
        nodes: Iterable[Node] = (),
        *,
        id: str = "",
        extra: tuple[tuple[str, Any], ...] = (),
        keys: tuple[str, ...] = (),
    ) -> None:
        self.id = id
        self.extra = extra
        self.keys = keys
        self.index = GraphIndex()
        for node in nodes:
            if node.id in self.index:
                raise DocumentError(f"node id {_quote(node.id)} appears twice; ids must be unique")
            self.index._insert(node)

    # -- JSON --------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Any) -> Graph:
        """Load a document (already parsed JSON); raises :class:`DocumentError` naming what is
        malformed. Use :func:`geon.core.constraints.check_document` to get issues instead."""
        if not isinstance(data, dict):
            raise DocumentError(f"document is {_quote(data)}; expected a JSON object")
        graph_id = data.get("id")
        if not isinstance(graph_id, str):
            raise DocumentError(
                f"document has id {_quote(graph_id)}; expected a string (a UUID)"
                if "id" in data
                else 'document has no "id"; expected a string (a UUID)'
            )
        nodes = data.get("nodes")
        if not isinstance(nodes, list):
            raise DocumentError(
                f"document has nodes {_quote(nodes)}; expected a list of nodes"
                if "nodes" in data
                else 'document has no "nodes"; expected a list of nodes'
            )
        extra = tuple((k, v) for k, v in data.items() if k not in _GRAPH_KEYS)
        return cls(
            (Node.from_json(n, where=f"node {i}") for i, n in enumerate(nodes)),
            id=graph_id,
            extra=extra,
            keys=tuple(data),
        )

    def to_json(self) -> dict[str, Any]:
        """The document as JSON data, in its loaded order (node bodies are shared, not copied)."""
        out: dict[str, Any] = {}
        extra = dict(self.extra)
        for key in self.keys or _GRAPH_KEYS:
            if key == "id":
                out["id"] = self.id
            elif key == "nodes":
                out["nodes"] = [n.to_json() for n in self.nodes]
            elif key in extra:
                out[key] = extra[key]
        out.setdefault("id", self.id)
        if "nodes" not in out:
            out["nodes"] = [n.to_json() for n in self.nodes]
        for key, value in self.extra:
            out.setdefault(key, value)
        return out

    def copy(self) -> Graph:
        """An independent graph with the same nodes (nodes are values, so they are shared)."""
        return Graph(self.nodes, id=self.id, extra=self.extra, keys=self.keys)

    # -- lookups -----------------------------------------------------------------------------

    @property
    def nodes(self) -> list[Node]:
        """The nodes in document order."""
        index = self.index
        return [index._nodes[n] for n in index.in_document_order(index._nodes)]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.index

    def get(self, node_id: str) -> Node | None:
        """The node with this id, or None."""
        return self.index.get(node_id)

    def node(self, node_id: str) -> Node:
        """The node with this id; raises :class:`DocumentError` when there is none."""
        node = self.index.get(node_id)
        if node is None:
            raise DocumentError(f"node {_quote(node_id)} does not exist in graph {_quote(self.id)}")
        return node

    def of_type(self, node_type: str) -> list[Node]:
        """The nodes of one type URL, in document order."""
        index = self.index
        return [index._nodes[n] for n in index.in_document_order(index._by_type.get(node_type, ()))]

    # -- checking ----------------------------------------------------------------------------

    def check(self) -> list[Issue]:
        """Every issue of the document (see :func:`geon.core.constraints.check`)."""
        from geon.core.constraints import check

        return check(self)

    # -- edits -------------------------------------------------------------------------------

    def apply(self, ops: Sequence[Mapping[str, Any]]) -> list[Change]:
        """Apply a batch of edit operations atomically; returns the net change of each node.

        Raises :class:`DocumentError` (and changes nothing) when any operation is refused.
        """
        if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Sequence):
            raise DocumentError(f"edit ops are {_quote(ops)}; expected a list of edit operations")
        staging = _Staging(self.index)
        for number, op in enumerate(ops):
            _stage(staging, op, number)
        changes: list[Change] = []
        index = self.index
        for nid, new in staging.staged.items():
            old = index.get(nid)
            if old is new:
                continue
            if old is None and new is None:
                continue
            if new is None:
                index._delete(nid)
            elif old is None:
                index._insert(new)
            elif nid in staging.moved:
                index._delete(nid)
                index._insert(new)
            else:
                index._replace(new)
            changes.append(Change(nid, old, new))
        return changes

    def add_node(self, node: Node | Mapping[str, Any]) -> Change:
        """Append one node (see :meth:`apply`)."""
        data = node.to_json() if isinstance(node, Node) else node
        return self.apply([{"op": "add_node", "node": data}])[0]

    def remove_node(self, node_id: str, *, cascade: bool = False) -> list[Change]:
        """Remove one node, and with ``cascade`` every node referencing it (see :meth:`apply`)."""
        return self.apply([{"op": "remove_node", "id": node_id, "cascade": cascade}])

    def update_node(self, node_id: str, **fields: Any) -> list[Change]:
        """Merge ``label``/``body``/``tags`` into one node (see :meth:`apply`)."""
        return self.apply([{"op": "update_node", "id": node_id, **fields}])
