"""The edit vocabulary of the websocket and the REST API, on top of :meth:`Graph.apply`.

Clients send node ops (``add_node``, ``remove_node``, ``update_node``) and a few higher-level
ops that :func:`expand` turns into node ops:

- ``{"op": "set_layout", "id", "x", "y"}``: the node's ``Layout`` tag (canvas position).
- ``{"op": "add_axis", "axis": {"name", "length", "roles"?, "cls"?, "batch"?, "doc"?}, "id"?}``:
  declares an axis (an Axis node; the name must be new).
- ``{"op": "set_axis", "name", "rename"?, "length"?}``: renames and/or resizes a declared
  axis. A rename rewrites every reference to the axis, keeping dual levels and composites
  (``H-1`` -> ``H2-1``, ``H*W`` -> ``H2*W``): ``TensorAxes`` and ``IndexAxes`` tags (rewritten,
  not re-derived: an operation whose inference fails, or a custom kernel's, keeps its index
  names in step), the Axis node's label where it was the name, and the operation params that
  name axes in :mod:`geon.core.ops`' table of params: the lists ``axes``, ``out_axes``,
  ``reduction_axes``, ``along``; slice's and pad's ``axes`` map (keys and values); the keys of
  ``slices`` and ``pad``; ``axis``; ``parts``' ``axis`` and ``into``. No param holds an
  einsum-like string. Other params, a custom kernel's too, are kept as they are (their meaning is
  the kernel's). A length change writes only the Axis: tensors' ranges are left for the checker
  to report (the editor's axis command also resizes them; it sends node ops, not ``set_axis``).
  The editor mirrors this rule (``frontend/src/model/axisRename.ts``); both run the shared cases
  of ``tests/core/axis_rename_cases.json``, refusals word for word after ``edit op N
  (set_axis): ``.
- ``{"op": "shard", "operation", "dim"?, "parts"?, "chunk"?, "sizes"?, "grid"?, "mesh"?,
  "over"?}``: replaces the operation's Applications by one per shard
  (the ops :func:`geon.core.plans.shard_op_edits` returns), in the same atomic edit.

Bounds: the node ops a ``shard`` makes (its Applications and the removal of the old ones) count,
with the ops before it in the edit, against the edit's bound (``GEON_MAX_OPS_PER_EDIT``; a
generated plan's is ``GEON_MAX_PLAN_OPS``); more is refused with ``too_many_ops`` before any
shard is built. (An axis rename's rewrites do not count: they are
bounded by the document.) Lengths are integers of at most ``INT64_MAX`` and layout positions
finite numbers within int64's range.

Ops are expanded in order, each against the document as the ops before it leave it (so a
``shard`` may name a Mesh added earlier in the same edit). ``applied`` messages carry the
expanded node ops, so every client can fold them in the same way. An op's shape (an object, a
known ``"op"``, only its fields) is read by :mod:`geon.core.editops`, the parser
:meth:`Graph.apply` uses too; this module holds the expansion, and the touched fields,
conflicts and diffs that rebasing reads.

>>> touched_by_ops([{"op": "update_node", "id": "n", "body": {"dtype": "int8"}}])
{'n': ['body.dtype']}
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings

from geon.core.axes import AXIS_NAME
from geon.core.editops import NODE_OPS, check_fields, check_op_list, read_op
from geon.core.errors import DocumentError, GeonError, quote
from geon.core.graph import AXIS, INDEX_AXES, LAYOUT, OPERATION, TENSOR_AXES, Change, Node
from geon.core.graph import Graph as Document
from geon.core.limits import INT64_MAX, INT64_MIN, MAX_PIECES, in_int64, show_int
from geon.core.nodes import split_level
from geon.core.plans import shard_op_edits
from geon.core.zspace import TooManyPieces

_SHARD_FIELDS = ("op", "operation", "dim", "parts", "chunk", "sizes", "grid", "mesh", "over")
HIGH_OP_FIELDS: dict[str, tuple[str, ...]] = {
    "set_layout": ("op", "id", "x", "y"),
    "add_axis": ("op", "axis", "id"),
    "set_axis": ("op", "name", "rename", "length"),
    "shard": _SHARD_FIELDS,
}
"""The fields each higher-level op may have."""

EDIT_OPS = NODE_OPS + tuple(HIGH_OP_FIELDS)

WHOLE = "*"
"""The field of a node that was added or removed: it conflicts with every field."""

_AXIS_FIELDS = ("name", "length", "roles", "cls", "batch", "doc")
# The params that name axes (geon.core.ops' table of params), by shape:
_PARAM_LISTS = ("axes", "out_axes", "reduction_axes", "along")  # refs (slice's axes: ref -> ref)
_PARAM_KEYED = ("slices", "pad")  # keys are refs
_PARAM_REFS = ("axis",)  # one ref
_PARAM_PARTS = ("axis", "into")  # the refs of "parts"


class EditRefused(GeonError):
    """An edit cannot be applied; ``reason`` is a stable code (``invalid_edit``, ``conflict``)."""

    def __init__(self, reason: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.details = details


def _axis_node(doc: Document, name: str) -> Node | None:
    for node in doc.index.axis_declarations(name):
        return node
    return None


def rename_ref(ref: Any, old: str, new: str) -> Any:
    """An axis reference with axis ``old`` renamed to ``new``; anything else is kept.

    >>> rename_ref("H-1", "H", "R"), rename_ref("H*W+1", "W", "V"), rename_ref("HH", "H", "R")
    ('R-1', 'H*V+1', 'HH')
    """
    if not isinstance(ref, str):
        return ref
    parts = []
    for part in ref.split("*"):
        name, level = split_level(part)
        parts.append((new if name == old else name) + level)
    return "*".join(parts)


def _renamed_params(params: Any, old: str, new: str) -> Any:
    if not isinstance(params, dict):
        return params
    out = dict(params)
    for key in _PARAM_LISTS:
        value = out.get(key)
        if isinstance(value, list):
            out[key] = [rename_ref(r, old, new) for r in value]
        elif isinstance(value, dict):
            out[key] = {rename_ref(k, old, new): rename_ref(v, old, new) for k, v in value.items()}
    for key in _PARAM_KEYED:
        value = out.get(key)
        if isinstance(value, dict):
            out[key] = {rename_ref(k, old, new): v for k, v in value.items()}
    for key in _PARAM_REFS:
        if key in out:
            out[key] = rename_ref(out[key], old, new)
    parts = out.get("parts")
    if isinstance(parts, dict):
        out["parts"] = {
            k: rename_ref(v, old, new) if k in _PARAM_PARTS else v for k, v in parts.items()
        }
    return out


def _rename_ops(doc: Document, old: str, new: str) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    # every operation's params renamed once: those that change are rewritten below, and an
    # operation may name the axis in its params only (its inputs not connected yet)
    renamed: dict[str, Any] = {}
    for n in doc.nodes:
        if n.type == OPERATION and "params" in n.body:
            params = _renamed_params(n.body["params"], old, new)
            if params != n.body["params"]:
                renamed[n.id] = params
    readers = set(doc.index.axis_readers(old)) | renamed.keys()
    for nid in doc.index.in_document_order(readers):
        node = doc.node(nid)
        op: dict[str, Any] = {"op": "update_node", "id": nid}
        tags: dict[str, Any] = {}
        for url in (TENSOR_AXES, INDEX_AXES):
            tag = node.tags.get(url) if node.tags else None
            if isinstance(tag, dict) and isinstance(tag.get("axes"), list):
                axes = [rename_ref(r, old, new) for r in tag["axes"]]
                if axes != tag["axes"]:
                    tags[url] = {"axes": axes}
        if tags:
            op["tags"] = tags
        if nid in renamed:
            # a merge patch would merge the maps' old keys back in: replace params whole
            op["body"] = {"params": None}
            ops.append(op)
            op = {"op": "update_node", "id": nid, "body": {"params": renamed[nid]}}
        if len(op) > 2:
            ops.append(op)
    return ops


def _check_length(length: Any, name: str, where: str) -> None:
    """Refuse an axis length beyond int64 (the checker reports other bad values)."""
    if type(length) is int and not in_int64(length):
        raise DocumentError(
            f"{where} has length {quote(show_int(length))} for axis {quote(name)}; expected at "
            f"most {INT64_MAX}"
        )


def _add_axis(doc: Document, op: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    axis = op.get("axis")
    if not isinstance(axis, dict):
        raise DocumentError(
            f"{where} has axis {quote(axis)}; expected an object with name and length"
        )
    check_fields(axis, _AXIS_FIELDS, f"{where} axis")
    name = axis.get("name")
    if not isinstance(name, str) or not AXIS_NAME.match(name):
        raise DocumentError(
            f"{where} has axis name {quote(name)}; expected a name like "
            '"H" or "batch_1" (letters, digits, _; not starting with a digit)'
        )
    if _axis_node(doc, name) is not None:
        raise DocumentError(f"{where}: axis {quote(name)} is already declared; pick another name")
    if "length" not in axis:
        raise DocumentError(
            f'{where} axis {quote(name)} has no "length"; expected an integer >= 1 or null'
        )
    _check_length(axis["length"], name, where)
    node_id = op.get("id", str(uuid.uuid4()))
    return [{"op": "add_node", "node": {"id": node_id, "type": AXIS, "body": dict(axis)}}]


def _set_axis(doc: Document, op: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    name = op.get("name")
    node = _axis_node(doc, name) if isinstance(name, str) else None
    if node is None:
        known = ", ".join(quote(n) for n in doc.index.axis_names())
        raise DocumentError(
            f"{where}: axis {quote(name)} is not declared; expected one of ({known})"
        )
    assert isinstance(name, str)
    body: dict[str, Any] = {}
    ops: list[dict[str, Any]] = []
    if "length" in op:
        length = op["length"]
        if length is not None and (
            isinstance(length, bool) or not isinstance(length, int) or length < 1
        ):
            raise DocumentError(
                f"{where}: axis {quote(name)} cannot have length {quote(length)}; expected an "
                "integer >= 1, or null for not yet bound"
            )
        _check_length(length, name, where)
        body["length"] = length
    if "rename" in op:
        new = op["rename"]
        if not isinstance(new, str) or not AXIS_NAME.match(new):
            raise DocumentError(
                f"{where}: axis {quote(name)} cannot be renamed to {quote(new)}; expected a name "
                'like "H" or "batch_1" (letters, digits, _; not starting with a digit)'
            )
        if new != name and _axis_node(doc, new) is not None:
            raise DocumentError(
                f"{where}: axis {quote(name)} cannot be renamed to {quote(new)}, which is already "
                "declared; pick another name"
            )
        body["name"] = new
        ops.extend(_rename_ops(doc, name, new))
    if not body:
        raise DocumentError(f'{where} changes nothing; expected "rename" and/or "length"')
    # the label follows the name where it was the name (the editor labels an axis so)
    renamed = body.get("name", name) != name and node.label == name
    label: dict[str, Any] = {"label": body["name"]} if renamed else {}
    if "length" in body and body["length"] is None:
        # A merge patch cannot write null (null deletes the key): the Axis node is replaced,
        # which moves it to the end of the document; references are by name, so none break.
        data = node.to_json()
        return [
            {"op": "remove_node", "id": node.id},
            {"op": "add_node", "node": {**data, **label, "body": {**node.body, **body}}},
            *ops,
        ]
    return [{"op": "update_node", "id": node.id, **label, "body": body}, *ops]


def _set_layout(op: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    for key in ("x", "y"):
        value = op.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            # values in Python's spelling ("None", "nan", "-inf"), as the protocol has them
            raise DocumentError(f"{where} has {key} {quote(str(value))}; expected a number")
        # NaN and infinities are not JSON: a browser could not read the document back
        if not (math.isfinite(value) if isinstance(value, float) else True) or not (
            INT64_MIN <= value <= INT64_MAX
        ):
            shown = show_int(value) if isinstance(value, int) else str(value)
            raise DocumentError(
                f"{where} has {key} {quote(shown)}; expected a finite number from {INT64_MIN} to "
                f"{INT64_MAX}"
            )
    return [
        {"op": "update_node", "id": op.get("id"), "tags": {LAYOUT: {"x": op["x"], "y": op["y"]}}}
    ]


def _shard(
    doc: Document,
    op: Mapping[str, Any],
    where: str,
    new_id: Callable[[], str],
    used: int,
    max_ops: int,
) -> list[dict[str, Any]]:
    """The node ops of a ``shard`` op, which may bring the edit's ``used`` node ops up to
    ``max_ops``: :class:`EditRefused` (``too_many_ops``) before building more shards."""
    op_id = op.get("operation")
    if not isinstance(op_id, str):
        raise DocumentError(f"{where} has operation {quote(op_id)}; expected an operation id")
    kwargs = {k: op[k] for k in _SHARD_FIELDS[2:] if k in op}
    # a dim written as a JSON key ("1") is read by sharding.resolve_dim, as an axis name is
    replaced = len(doc.index.applications_of(op_id))
    budget = max(0, max_ops - used - replaced)
    try:
        return shard_op_edits(doc, op_id, new_id=new_id, limit=min(MAX_PIECES, budget), **kwargs)
    except TooManyPieces as error:
        why = (
            f" (an edit makes at most {max_ops} node ops: its earlier ops take {used} and "
            f"removing the operation's Applications {replaced})"
            if error.limit == budget
            else " (shards per operation)"
        )
        raise EditRefused("too_many_ops", f"{where}: {error}{why}") from None
    except GeonError as error:
        raise DocumentError(f"{where}: {error}") from None


def expand(
    doc: Document,
    ops: Any,
    *,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    max_ops: int | None = None,
) -> list[dict[str, Any]]:
    """The node ops of an edit: node ops as they are, higher-level ops expanded against ``doc``.

    Raises :class:`DocumentError` naming the op and what is wrong, or :class:`EditRefused`
    (``too_many_ops``) when a ``shard`` would bring the node ops past ``max_ops``
    (``GEON_MAX_OPS_PER_EDIT`` unless given); nothing changes.
    """
    if max_ops is None:
        max_ops = int(settings.GEON_MAX_OPS_PER_EDIT)
    check_op_list(ops)
    out: list[dict[str, Any]] = []
    view = doc  # the document as the ops so far leave it (a copy once it differs)
    done = 0  # how many of ``out`` the copy has applied
    for number, op in enumerate(ops):
        kind, where = read_op(op, number, EDIT_OPS)
        if kind in NODE_OPS:
            out.append(op)
            continue
        if out and view is doc and kind != "set_layout":
            # a higher-level op after others sees what they did: expand against a copy
            view = doc.copy()
            try:
                view.apply(out)
            except DocumentError as error:
                raise DocumentError(str(error)) from None
            done = len(out)
        check_fields(op, HIGH_OP_FIELDS[kind], where)
        if kind == "set_layout":
            out.extend(_set_layout(op, where))
        elif kind == "add_axis":
            out.extend(_add_axis(view, op, where))
        elif kind == "set_axis":
            out.extend(_set_axis(view, op, where))
        else:
            out.extend(_shard(view, op, where, new_id, len(out), max_ops))
        if view is not doc and len(out) > done:
            view.apply(out[done:])
            done = len(out)
    return out


def touched_by_ops(ops: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The node fields an edit's node ops write (before it is applied; see :data:`WHOLE`)."""
    out: dict[str, dict[str, None]] = {}
    for op in ops:
        kind = op.get("op")
        if kind == "add_node":
            node = op.get("node")
            nid = node.get("id") if isinstance(node, dict) else None
            if isinstance(nid, str):
                out.setdefault(nid, {})[WHOLE] = None
        elif isinstance(op.get("id"), str):
            fields = out.setdefault(op["id"], {})
            if kind == "remove_node":
                fields[WHOLE] = None
                continue
            if "label" in op:
                fields["label"] = None
            for side in ("body", "tags"):
                if isinstance(op.get(side), dict):
                    for key in op[side]:
                        fields[f"{side}.{key}"] = None
    return {nid: list(fields) for nid, fields in out.items()}


def node_fields(old: Node | None, new: Node | None) -> list[str]:
    """The fields that differ between two states of a node (``["*"]`` when added or removed)."""
    if old is None or new is None:
        return [WHOLE]
    fields: list[str] = []
    if old.type != new.type:
        fields.append("type")
    if old.label != new.label:
        fields.append("label")
    for side, a, b in (("body", old.body, new.body), ("tags", old.tags or {}, new.tags or {})):
        for key in {**a, **b}:
            if a.get(key, None) != b.get(key, None) or (key in a) != (key in b):
                fields.append(f"{side}.{key}")
    return fields


def touched_by_changes(changes: Iterable[Change]) -> dict[str, list[str]]:
    """What an applied edit changed, per node (stored on the version it made)."""
    out = {}
    for change in changes:
        fields = node_fields(change.old, change.new)
        if fields:
            out[change.id] = fields
    return out


def conflicts(
    incoming: Mapping[str, Sequence[str]], since: Mapping[str, Sequence[str]]
) -> list[dict[str, str]]:
    """The ``{id, field}`` pairs an incoming edit writes that changed since its base version."""
    found = []
    for nid, fields in incoming.items():
        theirs = since.get(nid)
        if not theirs:
            continue
        for f in fields:
            if f == WHOLE or WHOLE in theirs or f in theirs:
                field = WHOLE if WHOLE in theirs else (theirs[0] if f == WHOLE else f)
                found.append({"id": nid, "field": field})
                break
    return found


def diff(old: Document, new: Document) -> dict[str, Any]:
    """The node-level difference between two documents: ids added and removed, and per changed
    node the fields that differ, in the new (then old) document order."""
    added = [n.id for n in new.nodes if n.id not in old]
    removed = [n.id for n in old.nodes if n.id not in new]
    changed = []
    for node in new.nodes:
        before = old.get(node.id)
        if before is not None and before != node:
            fields = node_fields(before, node)
            if fields:
                changed.append({"id": node.id, "fields": fields})
    return {"added": added, "removed": removed, "changed": changed}


__all__ = [
    "EDIT_OPS",
    "EditRefused",
    "conflicts",
    "diff",
    "expand",
    "node_fields",
    "rename_ref",
    "touched_by_changes",
    "touched_by_ops",
]
