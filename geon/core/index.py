"""The index of a document's nodes: the lookups the checker, sharding and the server ask for
(by id, by type, referrers, axis declarations and their readers, writers of a tensor), kept in
step with every edit, and a memo of per-node results (DESIGN.md §5: checking on every keystroke
reads these instead of scanning the document).

>>> index = GraphIndex([
...     Node("t", TENSOR, body={"dtype": "int32", "range": {"start": [0], "end": [2]}}),
...     Node("op", OPERATION, body={"kernel": "k", "outputs": {"result": [
...         {"tensorId": "t", "range": {"start": [0], "end": [2]}}]}})])
>>> index.referrers("t"), index.operations_using("t")
(('op',), ('op',))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from geon.core.nodes import (
    APPLICATION,
    AXIS,
    INDEX_AXES,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    Node,
    axis_names_of_ref,
    node_references,
    selected_tensor_ids,
)

__all__ = ["GraphIndex"]

T = TypeVar("T")


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


class GraphIndex:
    """The lookups the checks need, kept in step with every edit of its
    :class:`~geon.core.graph.Graph` (only the graph and its edit staging call :meth:`insert`,
    :meth:`delete` and :meth:`replace`)."""

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
            self.insert(node)

    # -- maintenance (by Graph and its edit staging only) ----------------------------------

    def insert(self, node: Node) -> None:
        """Add ``node`` at the end of the document order."""
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

    def delete(self, nid: str) -> Node:
        """Drop node ``nid`` and everything the index knows about it; the node it had."""
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

    def replace(self, node: Node) -> None:
        """Put ``node`` in place of the node with its id, keeping its position."""
        seq = self._seq[node.id]
        self.delete(node.id)
        self.insert(node)
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

    def in_document(self, node_type: str | None = None) -> list[Node]:
        """The nodes (of one type URL, when given) in document order."""
        nodes = self._nodes
        ids = nodes if node_type is None else self._by_type.get(node_type, ())
        return [nodes[n] for n in self.in_document_order(ids)]

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
