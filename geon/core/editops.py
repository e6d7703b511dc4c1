"""Edit ops (DESIGN.md §6): the one parser of an op's shape, and the atomic staging of node ops.

>>> from geon.core.index import GraphIndex
>>> index = GraphIndex()
>>> [c.new.id for c in apply_ops(index, [{"op": "add_node", "node": {"id": "n",
...     "type": "urn:x", "body": {}}}])]
['n']
>>> read_op({"op": "explode"}, 2, NODE_OPS)
Traceback (most recent call last):
geon.core.errors.DocumentError: edit op 2 has op "explode"; expected one of ("add_node", \
"remove_node", "update_node")

Two layers read edit ops: :meth:`geon.core.graph.Graph.apply` stages the node ops
(``add_node``, ``remove_node``, ``update_node``) and :func:`geon.graphs.edits.expand` turns the
server's higher-level ops into node ops. Both check an op's shape with :func:`check_op_list`,
:func:`read_op` and :func:`check_fields`, so a malformed op gets the same message from either.

The node ops:

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

Labels, axis names and axis references may not hold control characters or the line separators
U+2028/U+2029 (:func:`geon.core.nodes.text_refusal`): an ``add_node`` or ``update_node`` that
would store one is refused, naming the text (a node stored before the rule keeps what it holds
until an edit changes it).

A batch is atomic: every op is validated against the state the ones before it leave, on a
staging area beside the index, and the index changes only once all of them succeed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from geon.core.errors import DocumentError, quote
from geon.core.index import GraphIndex
from geon.core.nodes import Node, node_references, text_refusal

__all__ = [
    "NODE_OPS",
    "NODE_OP_FIELDS",
    "Change",
    "apply_ops",
    "check_fields",
    "check_op_list",
    "merge_patch",
    "read_op",
]

NODE_OP_FIELDS: dict[str, tuple[str, ...]] = {
    "add_node": ("op", "node"),
    "remove_node": ("op", "id", "cascade"),
    "update_node": ("op", "id", "label", "body", "tags"),
}
"""The fields each node op may have."""

NODE_OPS = tuple(NODE_OP_FIELDS)
"""The ops :meth:`geon.core.graph.Graph.apply` takes."""


# --------------------------------------------------------------------------------------------
# The shape of an op


def _listed(names: Sequence[str]) -> str:
    return "(" + ", ".join(quote(n) for n in names) + ")"


def check_op_list(ops: Any) -> None:
    """Refuse ``ops`` unless it is a list (a sequence that is not text or a mapping)."""
    if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Sequence):
        raise DocumentError(f"edit ops are {quote(ops)}; expected a list of edit operations")


def read_op(op: Any, number: int, kinds: Sequence[str]) -> tuple[str, str]:
    """The kind of edit op number ``number`` (one of ``kinds``) and how messages name the op,
    ``edit op 3 (add_node)``; raises :class:`DocumentError` when it is not an object with a
    known ``"op"``."""
    where = f"edit op {number}"
    if not isinstance(op, dict):
        raise DocumentError(f'{where} is {quote(op)}; expected a JSON object with an "op"')
    kind = op.get("op")
    if not isinstance(kind, str) or kind not in kinds:
        raise DocumentError(f"{where} has op {quote(kind)}; expected one of {_listed(kinds)}")
    return kind, f"{where} ({kind})"


def check_fields(op: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    """Refuse a field of ``op`` (an op, or an object inside one) that is not in ``allowed``."""
    for key in op:
        if key not in allowed:
            raise DocumentError(
                f"{where} has unknown field {quote(key)}; expected one of {_listed(allowed)}"
            )


# --------------------------------------------------------------------------------------------
# Staging node ops


@dataclass(frozen=True, slots=True)
class Change:
    """The net change of one node by an edit: ``old`` None = added, ``new`` None = removed."""

    id: str
    old: Node | None
    new: Node | None


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
    """The state of a graph while a batch of edits is validated; nothing touches the index."""

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

    def commit(self) -> list[Change]:
        """Write the staged nodes into the index; the net change of each node."""
        changes: list[Change] = []
        index = self.index
        for nid, new in self.staged.items():
            old = index.get(nid)
            if old is new or (old is None and new is None):
                continue
            if new is None:
                index.delete(nid)
            elif old is None:
                index.insert(new)
            elif nid in self.moved:
                index.delete(nid)
                index.insert(new)
            else:
                index.replace(new)
            changes.append(Change(nid, old, new))
        return changes


def apply_ops(index: GraphIndex, ops: Any) -> list[Change]:
    """Apply a batch of node ops to ``index`` atomically; the net change of each node.

    Raises :class:`DocumentError` (and changes nothing) when any op is refused.
    """
    check_op_list(ops)
    staging = _Staging(index)
    for number, op in enumerate(ops):
        kind, where = read_op(op, number, NODE_OPS)
        check_fields(op, NODE_OP_FIELDS[kind], where)
        if kind == "add_node":
            _add(staging, op, where)
        elif kind == "remove_node":
            _remove(staging, op, where, _existing(staging, op, where))
        else:
            _update(staging, op, where, _existing(staging, op, where))
    return staging.commit()


def _add(staging: _Staging, op: dict[str, Any], where: str) -> None:
    if "node" not in op:
        raise DocumentError(f'{where} has no "node"; expected a node object')
    try:
        node = Node.from_json(op["node"], where="node")
    except DocumentError as exc:
        raise DocumentError(f"{where}: {exc}") from None
    if staging.get(node.id) is not None:
        raise DocumentError(f"{where}: node {quote(node.id)} already exists; use a new id")
    refusal = text_refusal(node)
    if refusal is not None:
        raise DocumentError(f"{where}: {refusal}")
    if node.id in staging.staged and staging.index.get(node.id) is not None:
        staging.moved.add(node.id)  # removed earlier in this batch: it goes to the end
    staging.staged[node.id] = node


def _existing(staging: _Staging, op: dict[str, Any], where: str) -> Node:
    node_id = op.get("id")
    if not isinstance(node_id, str):
        raise DocumentError(f"{where} has id {quote(node_id)}; expected the id of a node")
    current = staging.get(node_id)
    if current is None:
        raise DocumentError(f"{where}: node {quote(node_id)} does not exist")
    return current


def _remove(staging: _Staging, op: dict[str, Any], where: str, current: Node) -> None:
    cascade = op.get("cascade", False)
    if not isinstance(cascade, bool):
        raise DocumentError(f"{where} has cascade {quote(cascade)}; expected true or false")
    node_id = current.id
    if cascade:
        doomed = _with_referrers(staging, node_id)
    else:
        users = staging.referrers(node_id)
        if users:
            names = ", ".join(f'"{u}"' for u in users)
            raise DocumentError(
                f"{where}: node {quote(node_id)} is referenced by {names}; remove or "
                'change those first, or pass "cascade": true to remove them too'
            )
        doomed = [node_id]
    for nid in doomed:
        staging.staged[nid] = None


def _with_referrers(staging: _Staging, node_id: str) -> list[str]:
    """``node_id`` and every node referencing it, transitively, in the order they are found."""
    doomed = [node_id]
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
    return doomed


def _update(staging: _Staging, op: dict[str, Any], where: str, current: Node) -> None:
    changes: dict[str, Any] = {}
    if "label" in op:
        label = op["label"]
        if label is not None and not isinstance(label, str):
            raise DocumentError(f"{where} has label {quote(label)}; expected a string or null")
        changes["label"] = label
        if label is None and "label" in current.keys:
            changes["keys"] = tuple(k for k in current.keys if k != "label")
    for side in ("body", "tags"):
        if side in op:
            patch = op[side]
            if not isinstance(patch, dict):
                raise DocumentError(
                    f"{where} has {side} {quote(patch)}; expected a JSON object (a merge patch)"
                )
            changes[side] = merge_patch(getattr(current, side), patch)
    if not changes:
        staging.staged[current.id] = current
        return
    new = current.replace(**changes)
    refusal = text_refusal(new, staging.index.get(current.id))
    if refusal is not None:
        raise DocumentError(f"{where}: {refusal}")
    staging.staged[current.id] = new
