"""How the checks word and place an issue: JSON paths, contexts, short listings and the
reference issues every family reports alike (DESIGN.md §5's issue shape).

>>> issue("C", "T", "Thing is wrong", "thing is wrong", ("n1",)).to_json()["nodeIds"]
['n1']
>>> names(["a", "b"])
'("a", "b")'
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from geon.core.errors import quote
from geon.core.graph import Node
from geon.core.issues import Context, Issue, small

__all__ = [
    "MAX_LISTED",
    "UUID_RE",
    "context",
    "few",
    "issue",
    "key_path",
    "missing",
    "names",
    "path",
    "wrong_type",
]

UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)

MAX_LISTED = 16
"""At most this many gap boxes, writers of a tensor, members of a cycle or other declarations of
a name are listed in one issue (the rest are counted), so that no issue grows with the
document."""

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def names(values: Iterable[Any]) -> str:
    """``("a", "b")`` for messages: at most ``MAX_LISTED`` names, then how many more."""
    items = list(values)
    shown = ", ".join(f'"{v}"' for v in items[:MAX_LISTED])
    if len(items) > MAX_LISTED:
        shown += f" and {len(items) - MAX_LISTED} more"
    return "(" + shown + ")"


def few(values: Iterable[Any]) -> list[Any]:
    """The first ``MAX_LISTED`` of ``values`` (a list in an issue's params stays small)."""
    return list(itertools.islice(values, MAX_LISTED))


def path(node_id: str, suffix: str = "") -> str:
    """The JSON path of a node's part: ``$.nodes['<id>']<suffix>``."""
    return f"$.nodes['{node_id}']{suffix}"


def key_path(key: str) -> str:
    """An IO key as a JSON path step: ``.x`` for an identifier, ``['odd key']`` otherwise."""
    return key if _IDENT.match(key) else f"['{key}']"


def context(name: str, node_id: str, suffix: str, data: Any) -> Context:
    """A context at a node's part, its data cut short when large."""
    return Context(name, path(node_id, suffix), small(data))


def issue(
    constraint: str,
    kind: str,
    summary: str,
    message: str,
    node_ids: Sequence[str],
    contexts: Sequence[Context] = (),
    params: Mapping[str, Any] | None = None,
    severity: Any = "error",
) -> Issue:
    """An :class:`Issue` from plain sequences and mappings."""
    return Issue(
        constraint,
        kind,
        summary,
        message,
        severity=severity,
        params=dict(params or {}),
        node_ids=tuple(node_ids),
        contexts=tuple(contexts),
    )


def missing(constraint: str, owner: Node, ref: str, suffix: str, what: str) -> Issue:
    """``owner`` references ``ref``, which does not exist."""
    return issue(
        constraint,
        "NodeReferenceError",
        "Referenced node does not exist",
        f"node {quote(owner.id)} references {what} {quote(ref)}, which does not exist; expected "
        f"the id of {what} in this graph",
        (owner.id,),
        (context("Reference", owner.id, suffix, ref),),
        {"nodeId": ref},
    )


def wrong_type(constraint: str, owner: Node, target: Node, suffix: str, what: str) -> Issue:
    """``owner`` references ``target``, which is not ``what``."""
    short = target.type.rsplit("/", 1)[-1]
    return issue(
        constraint,
        "NodeReferenceError",
        f"Referenced node is not {what}",
        f"node {quote(owner.id)} references {quote(target.id)}, which is {quote(short)}; "
        f"expected {what}",
        (owner.id, target.id),
        (context("Reference", owner.id, suffix, target.id),),
        {"nodeId": target.id, "type": target.type},
    )
