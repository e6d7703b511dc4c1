"""A version's change in a few words, for the history panel (issue 21, "No history"): what an
edit added, removed, renamed, split or changed, by the names people read, and whether it only
moved nodes (a layout-only version, folded in the history).

>>> from geon.core.nodes import Node, TENSOR, LAYOUT
>>> old = Node.from_json({"id": "t", "type": TENSOR, "label": "W", "body": {"dtype": "float32"}})
>>> new = Node.from_json({"id": "t", "type": TENSOR, "label": "V", "body": {"dtype": "float32"}})
>>> summarize([Change("t", old, new)])
('renamed "W" to "V"', False)
>>> moved = Node.from_json({**old.to_json(), "tags": {LAYOUT: {"x": 1, "y": 2}}})
>>> summarize([Change("t", old, moved)])
('moved "W"', True)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from geon.core.editops import Change
from geon.core.nodes import (
    APPLICATION,
    AXIS,
    GROUP,
    LAYOUT,
    NOTE,
    TENSOR_AXES,
    Node,
    selected_tensor_ids,
)

__all__ = ["SUMMARY_MAX", "summarize"]

#: The longest summary (characters); a version's clauses past it are counted, not listed.
SUMMARY_MAX = 300
#: The clauses a summary lists before "and N more changes".
CLAUSES_MAX = 3
#: Tags that only place a node on the canvas.
PLACING = frozenset({LAYOUT, GROUP})

KINDS = {APPLICATION: "application", AXIS: "axis", NOTE: "note"}


def _kind(node: Node) -> str:
    return KINDS.get(node.type, node.type.rsplit("/", 1)[-1].lower())


def _fields(old: Node, new: Node) -> list[str]:
    """The fields that differ, as people call them: ``label``, a body key, a tag's short name."""
    found = []
    if old.label != new.label:
        found.append("label")
    before, after = old.body or {}, new.body or {}
    found += sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    tags_before, tags_after = old.tags or {}, new.tags or {}
    for tag in sorted(set(tags_before) | set(tags_after)):
        if tags_before.get(tag) != tags_after.get(tag):
            found.append("layout" if tag in PLACING else tag.rsplit("/", 1)[-1])
    return found


#: What an operation's connections imply: the checker and the editor derive them again.
DERIVED = frozenset({"outputs", "IPFIndex", "IPFSignature", "IndexAxes"})


def _said(
    old: Node, new: Node, fields: list[str], lookup: Callable[[str], Node | None]
) -> list[str]:
    """A change of a node as a person would say it: the axes a tensor was given, a tensor
    connected to or disconnected from an operation, new params, a new length; any other field
    by its name. Fields an operation's connections imply (its outputs, IPFs, index axes) are
    not listed beside the connection that implies them."""
    said: list[str] = []
    rest = list(fields)

    def named(node_id: str) -> str:
        found = lookup(node_id)
        return found.name if found is not None else node_id

    if "TensorAxes" in rest:
        rest.remove("TensorAxes")
        axes = new.tag(TENSOR_AXES)
        listed = axes.get("axes") if isinstance(axes, dict) else None
        shown = ", ".join(map(str, listed)) if isinstance(listed, list) else "none"
        said.append(f'gave "{new.name}" the axes ({shown})')
    if "inputs" in rest:
        rest = [f for f in rest if f != "inputs" and f not in DERIVED]
        before = selected_tensor_ids(old.body, "inputs")
        after = selected_tensor_ids(new.body, "inputs")
        added = [t for t in after if t not in before]
        gone = [t for t in before if t not in after]
        said += [f'connected "{named(t)}" to "{new.name}"' for t in added]
        said += [f'disconnected "{named(t)}" from "{new.name}"' for t in gone]
        if not added and not gone:
            said.append(f'reordered the inputs of "{new.name}"')
    elif rest and set(rest) <= DERIVED:
        return [*said, f'derived "{new.name}" again']
    if "params" in rest:
        rest.remove("params")
        said.append(f'changed the params of "{new.name}"')
    if "length" in rest and isinstance(new.body, dict):
        rest.remove("length")
        said.append(f'set the length of "{new.name}" to {new.body.get("length")}')
    if rest:
        said.append(f'changed "{new.name}": {", ".join(rest)}')
    return said


def summarize(
    changes: list[Change], lookup: Callable[[str], Node | None] = lambda node_id: None
) -> tuple[str, bool]:
    """``(summary, layout_only)`` of one version's net changes; ``lookup`` finds the operation
    an application's ``operationId`` names (in the document after the change), when known."""
    clauses: list[str] = []
    moved: list[str] = []
    splits: Counter[str] = Counter()
    unsplit: Counter[str] = Counter()
    for change in changes:
        old, new = change.old, change.new
        node = new or old
        assert node is not None
        if node.type == APPLICATION:
            operation_id = str((node.body or {}).get("operationId", ""))
            operation = lookup(operation_id)
            shown = operation.name if operation is not None else operation_id
            (splits if new is not None else unsplit)[shown] += 1
        elif old is None and new is not None:
            clauses.append(f'added {_kind(new)} "{new.name}"')
        elif new is None and old is not None:
            clauses.append(f'removed {_kind(old)} "{old.name}"')
        elif old is not None and new is not None:
            fields = _fields(old, new)
            if fields == ["layout"]:
                moved.append(new.name)
            elif fields == ["label"] or fields == ["label", "layout"]:
                clauses.append(f'renamed "{old.name}" to "{new.name}"')
            elif fields:
                clauses += _said(old, new, [f for f in fields if f != "layout"], lookup)
    for split, count in splits.items():
        clauses.insert(0, f'split "{split}" into {count}')
    clauses += [f'removed the split of "{name}"' for name in unsplit if name not in splits]
    layout_only = not clauses and bool(moved)
    if moved:
        clauses.append(f'moved "{moved[0]}"' if len(moved) == 1 else f"moved {len(moved)} nodes")
    return _join(clauses), layout_only


def _join(clauses: list[str]) -> str:
    shown = clauses[:CLAUSES_MAX]
    rest = len(clauses) - len(shown)
    text = "; ".join(shown) + (f"; and {rest} more change{'s' if rest > 1 else ''}" if rest else "")
    return text if len(text) <= SUMMARY_MAX else text[: SUMMARY_MAX - 1] + "…"
