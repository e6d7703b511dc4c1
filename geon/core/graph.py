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

Edits (:meth:`Graph.apply`) take the node ops of the websocket protocol (DESIGN.md §6) and are
atomic. The document's parts live beside this module, which holds :class:`Graph` and re-exports
their names as the document's public surface:

- :mod:`geon.core.nodes`: the node and tag type URLs, :class:`Node`, and the readers of selection
  maps and references (:func:`iter_selections`, :func:`node_references`, ...).
- :mod:`geon.core.index`: :class:`GraphIndex`, the lookups the checker asks for, kept in step.
- :mod:`geon.core.editops`: edit ops — the one parser of an op's shape (the server's expansion
  uses it too), their staging, :class:`Change` and :func:`merge_patch`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from geon.core.editops import Change, apply_ops, merge_patch
from geon.core.errors import DocumentError, quote
from geon.core.index import GraphIndex
from geon.core.nodes import (
    APPLICATION,
    AXIS,
    GEON_NODE_PREFIX,
    GEON_TAG_PREFIX,
    INDEX_AXES,
    IO_SEQUENCE_POINT,
    IPF_INDEX,
    IPF_SIGNATURE,
    LAYOUT,
    LOOM_NODE_PREFIX,
    LOOM_TAG_PREFIX,
    MESH,
    NODE_TYPES,
    NOTE,
    OPERATION,
    PLACEMENT,
    TAG_TYPES,
    TENSOR,
    TENSOR_AXES,
    VARIABLE,
    Node,
    Selection,
    axis_names_of_ref,
    iter_selections,
    node_references,
    selected_tensor_ids,
)

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
    "VARIABLE",
    "Change",
    "Graph",
    "GraphIndex",
    "Node",
    "Selection",
    "axis_names_of_ref",
    "iter_selections",
    "merge_patch",
    "node_references",
    "selected_tensor_ids",
]

_GRAPH_KEYS = ("id", "nodes")


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
                raise DocumentError(f"node id {quote(node.id)} appears twice; ids must be unique")
            self.index.insert(node)

    # -- JSON --------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Any) -> Graph:
        """Load a document (already parsed JSON); raises :class:`DocumentError` naming what is
        malformed. Use :func:`geon.core.checks.check_document` to get issues instead."""
        if not isinstance(data, dict):
            raise DocumentError(f"document is {quote(data)}; expected a JSON object")
        graph_id = data.get("id")
        if not isinstance(graph_id, str):
            raise DocumentError(
                f"document has id {quote(graph_id)}; expected a string (a UUID)"
                if "id" in data
                else 'document has no "id"; expected a string (a UUID)'
            )
        nodes = data.get("nodes")
        if not isinstance(nodes, list):
            raise DocumentError(
                f"document has nodes {quote(nodes)}; expected a list of nodes"
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
        return self.index.in_document()

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
            raise DocumentError(f"node {quote(node_id)} does not exist in graph {quote(self.id)}")
        return node

    def of_type(self, node_type: str) -> list[Node]:
        """The nodes of one type URL, in document order."""
        return self.index.in_document(node_type)

    # -- checking ----------------------------------------------------------------------------

    def check(self) -> list[Issue]:
        """Every issue of the document (see :func:`geon.core.checks.check`)."""
        from geon.core.checks import check

        return check(self)

    # -- edits -------------------------------------------------------------------------------

    def apply(self, ops: Sequence[Mapping[str, Any]]) -> list[Change]:
        """Apply a batch of edit operations atomically; returns the net change of each node.

        Raises :class:`DocumentError` (and changes nothing) when any operation is refused.
        """
        return apply_ops(self.index, ops)

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
