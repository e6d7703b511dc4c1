"""One edit's ops applied to a graph's live document (DESIGN.md §6): the limits of an edit, and
the rebase rule — an edit based on an older version is applied to the current one when the
versions since its base changed other node fields than it writes, and refused with
``conflict`` when they changed one of them (or added or removed a node it touches).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from geon.core.errors import DocumentError
from geon.core.graph import Change
from geon.graphs.edits import EditRefused, conflicts, expand, touched_by_ops
from geon.graphs.services.documents import LiveDocument

#: The fields each version changed, by version number: node id -> field names ("*": the node
#: was added or removed).
Touched = dict[int, dict[str, list[str]]]


def is_version(value: Any) -> bool:
    """Whether ``value`` can name a version: an integer >= 1 (not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def apply_ops(
    live: LiveDocument,
    number: int,
    ops: Any,
    base_version: Any,
    touched: Touched,
    max_ops: int | None = None,
) -> tuple[list[dict[str, Any]], list[Change]]:
    """Apply one edit's ``ops``, based on ``base_version``, to the live document at version
    ``number``: its node ops and the changes made, or :class:`EditRefused` with the document
    unchanged. ``touched`` has the fields touched by every version after the base (when it is
    older). ``max_ops`` bounds the edit's ops and the node ops they expand to
    (``GEON_MAX_OPS_PER_EDIT`` unless given)."""
    max_ops = settings.GEON_MAX_OPS_PER_EDIT if max_ops is None else max_ops
    _check_size_and_base(ops, base_version, number, max_ops)
    try:
        node_ops = expand(live.document, ops, max_ops=max_ops)
    except DocumentError as error:
        raise EditRefused("invalid_edit", str(error), version=number) from None
    except EditRefused as error:  # too_many_ops: the refusal names the version, as every one does
        error.details.setdefault("version", number)
        raise
    if base_version < number:
        _check_rebase(node_ops, touched, base_version, number)
    try:
        changes = live.document.apply(node_ops)
    except DocumentError as error:
        raise EditRefused("invalid_edit", str(error), version=number) from None
    return node_ops, changes


def _check_size_and_base(ops: Any, base_version: Any, number: int, max_ops: int) -> None:
    """Refuse an edit with more than ``max_ops`` ops (``too_many_ops``) or based on a version
    that does not exist (``unknown_version``); ``number`` is the current one."""
    if isinstance(ops, list) and len(ops) > max_ops:
        raise EditRefused(
            "too_many_ops",
            f"the edit has {len(ops)} ops; at most {max_ops} are allowed in one edit",
            version=number,
        )
    if not is_version(base_version) or base_version > number:
        raise EditRefused(
            "unknown_version",
            f'base version "{base_version}" does not exist; expected a version from 1 to {number}',
            version=number,
        )


def _check_rebase(node_ops: list[dict[str, Any]], touched: Touched, base: int, number: int) -> None:
    """Refuse (``conflict``) an edit on version ``base`` that writes a node field one of the
    versions after it changed; otherwise it applies to version ``number`` as it is."""
    found = conflicts(touched_by_ops(node_ops), _merge_touched(touched, base))
    if not found:
        return
    first = found[0]
    what = "was added or removed" if first["field"] == "*" else f'field "{first["field"]}" changed'
    raise EditRefused(
        "conflict",
        f'node "{first["id"]}" {what} after version {base}; reload version {number} and edit again',
        version=number,
        conflicts=found,
    )


def _merge_touched(touched: Touched, base: int) -> dict[str, list[str]]:
    """Every node field changed by the versions after ``base`` (``touched`` maps a version
    number to the fields it changed), merged.

    >>> _merge_touched({2: {"a": ["label"]}, 3: {"a": ["body"], "b": ["*"]}}, 1)
    {'a': ['label', 'body'], 'b': ['*']}
    """
    merged: dict[str, dict[str, None]] = {}
    for number in sorted(touched):
        if number > base:
            for nid, fields in touched[number].items():
                merged.setdefault(nid, {}).update(dict.fromkeys(fields))
    return {nid: list(fields) for nid, fields in merged.items()}
