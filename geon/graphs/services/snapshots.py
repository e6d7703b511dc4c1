"""Snapshots: every ``GEON_SNAPSHOT_EVERY`` versions the whole document is stored beside the
version's ops, so that reading a later version replays a few ops from there
(:attr:`geon.graphs.models.GraphVersion.document`). The document is the same either way, only
how it is kept differs; so a snapshot is written outside the edit's transaction, at once or
when the edit queue is quiet (:mod:`geon.graphs.services.queue`).

>>> empty = Document.from_json({"id": "00000000-0000-4000-8000-000000000000", "nodes": []})
>>> json.loads(encode_document(empty)) == empty.to_json()
True
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Expression, JSONField

from geon.core.graph import Graph as Document
from geon.graphs.models import GraphVersion
from geon.graphs.services.documents import current_version_number, kept_live

#: Graphs whose edits passed a multiple of ``GEON_SNAPSHOT_EVERY`` with the snapshot deferred
#: (:func:`schedule_snapshot`): graph id -> the version that passed it.
_SNAPSHOTS_DUE: dict[uuid.UUID, int] = {}


def schedule_snapshot(graph_id: uuid.UUID, before: int, after: int, *, deferred: bool) -> None:
    """Once the transaction that moved the graph from version ``before`` to ``after`` commits,
    store a snapshot if it passed a multiple of ``GEON_SNAPSHOT_EVERY``: at once, or with
    ``deferred`` when the caller stores it later (:func:`snapshot_due` says when one is due)."""
    every = settings.GEON_SNAPSHOT_EVERY
    if after // every <= before // every:
        return
    if deferred:
        transaction.on_commit(lambda: _SNAPSHOTS_DUE.setdefault(graph_id, after))
    else:
        transaction.on_commit(lambda: do_store_snapshot(graph_id), robust=True)


def snapshot_due(graph_id: uuid.UUID) -> int | None:
    """How many versions ago a deferred snapshot of the graph fell due (None: none is due)."""
    since = _SNAPSHOTS_DUE.get(graph_id)
    if since is None:
        return None
    live = kept_live(graph_id)
    return live.version - since if live is not None else 0


def do_store_snapshot(graph_id: uuid.UUID) -> None:
    """Store the whole current document on the graph's current version, beside its ops, so
    that reading a later version replays from here (:attr:`GraphVersion.document`).

    Serialising and storing a large document takes long (3.7 MB: 150 ms and more on a busy
    machine, holding the interpreter most of it), so it is not part of the edit's
    transaction. The version's document does not change, only how it is kept; a snapshot
    that is never stored (the process ended, or another one wrote since) makes reads replay
    from an earlier one, which is slower and still right.
    """
    _SNAPSHOTS_DUE.pop(graph_id, None)
    live = kept_live(graph_id)
    if live is None or current_version_number(graph_id) != live.version:
        return
    GraphVersion.objects.filter(
        graph_id=graph_id, number=live.version, snapshot__isnull=True
    ).update(snapshot=EncodedJSON(encode_document(live.document)))


def encode_document(document: Document) -> str:
    """The document as JSON text, encoded a node at a time.

    One ``json.dumps`` of a 3.7 MB document holds the interpreter for 100 ms and more on a
    busy machine, and meanwhile the event loop sends nothing to anyone; between nodes it can.
    """
    data = document.to_json()
    parts = []
    for key, value in data.items():
        if key == "nodes":
            text = "[" + ", ".join(json.dumps(node) for node in value) + "]"
        else:
            text = json.dumps(value)
        parts.append(f"{json.dumps(key)}: {text}")
    return "{" + ", ".join(parts) + "}"


class EncodedJSON(Expression):
    """JSON text stored as it is in a JSON column (a ``JSONField`` would encode it again)."""

    def __init__(self, text: str) -> None:
        super().__init__(output_field=JSONField())
        self.text = text

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[str]]:
        return "%s", (self.text,)

    def as_postgresql(self, compiler: Any, connection: Any) -> tuple[str, tuple[str]]:
        return "%s::json", (self.text,)
