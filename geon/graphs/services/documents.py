"""A graph's document on the server (DESIGN.md §3 and §5): loading an untrusted one, and the
live document of each graph — its current version kept in memory with an incremental checker,
so that an edit re-checks only what it can affect — with the ``snapshot`` message built from it.

>>> bounded_issues([], 10)
([], {'error': 0, 'warning': 0})
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from geon.core.checks import IncrementalChecker, check
from geon.core.errors import DocumentError
from geon.core.graph import Graph as Document
from geon.core.issues import Issue
from geon.core.nodes import text_refusal
from geon.graphs.models import Graph, GraphVersion


def parse_document(document: Any) -> Document:
    """Load an untrusted LoomGraph document; raises :class:`DocumentError` naming the problem
    (:func:`geon.core.checks.check_document`, by contrast, returns the issues), among them a
    label, axis name or axis reference holding a control character or line break
    (:func:`geon.core.nodes.text_refusal`, the rule edits follow too)."""
    loaded = Document.from_json(document)
    for number, node in enumerate(loaded.nodes):
        refusal = text_refusal(node)
        if refusal is not None:
            raise DocumentError(f"node {number}: {refusal}")
    return loaded


def over_request_size(document: dict[str, Any]) -> tuple[int, int] | None:
    """``(its bytes, the limit)`` when ``document`` as compact JSON is larger than the REST API
    accepts for a request (``GEON_MAX_REQUEST_BYTES``), else None: the bound of a document that
    did not come in one request (an import made by a worker, an export of a stored graph)."""
    size = len(json.dumps(document, separators=(",", ":")))
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return (size, limit) if size > limit else None


def document_issues(
    document: dict[str, Any], *, strict_broadcasting: bool = False
) -> list[dict[str, Any]]:
    """Every issue the checker finds in a stored document, as JSON (DESIGN.md §5)."""
    found = check(parse_document(document), strict_broadcasting=strict_broadcasting)
    return [issue.to_json() for issue in found]


@dataclass
class LiveDocument:
    """A graph's current document with its incremental checker, at one stored version.

    ``trial`` remembers the last plan tried on it (:mod:`~geon.graphs.services.plan_trials`):
    the plan's key, the version it was tried at and the planned copy (or the refusal), so that
    the ``planCost`` an ``applied`` carries and the plan's REST cost asked right after write the
    plan once."""

    version: int
    checker: IncrementalChecker
    trial: tuple[Any, int, Any] | None = None

    @property
    def document(self) -> Document:
        return self.checker.graph

    def issues(self) -> list[dict[str, Any]]:
        """Every issue of the document (the REST API's full list)."""
        return [issue.to_json() for issue in self.checker.issues]

    def issue_report(self) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """The issues a websocket message carries, and the counts of all of them
        (:func:`bounded_issues` with ``GEON_WS_MAX_ISSUES``)."""
        return bounded_issues(self.checker.issues, settings.GEON_WS_MAX_ISSUES)


def bounded_issues(
    issues: Sequence[Issue], limit: int
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """At most ``limit`` of ``issues`` as JSON, errors first and each severity in the given
    order, with the count of every issue per severity: what ``applied`` and ``snapshot``
    carry, so that a graph with very many issues does not send them all with every edit.

    >>> def issue(severity): return Issue("C", "T", "s", "m", severity=severity)
    >>> shown, counts = bounded_issues([issue("warning"), issue("error"), issue("error")], 2)
    >>> [i["severity"] for i in shown], counts
    (['error', 'error'], {'error': 2, 'warning': 1})
    """
    errors = [issue for issue in issues if issue.severity == "error"]
    counts = {"error": len(errors), "warning": len(issues) - len(errors)}
    chosen = errors[:limit]
    if len(chosen) < limit:
        warnings = (issue for issue in issues if issue.severity != "error")
        chosen.extend(itertools.islice(warnings, limit - len(chosen)))
    return [issue.to_json() for issue in chosen], counts


#: One live document per graph in this process, most recently used last. A writer holds the
#: graph's row lock while it reads or moves an entry, so the entry is the stored version or
#: gets rebuilt from it (another process may have written).
_LIVE: OrderedDict[uuid.UUID, LiveDocument] = OrderedDict()
_LIVE_LOCK = threading.RLock()
LIVE_MAX = 32


def live_document(graph: Graph) -> LiveDocument:
    """The live document of ``graph`` at its current version (a full check when rebuilt)."""
    version = graph.current_version
    assert version is not None  # check_can refuses graphs without a version
    with _LIVE_LOCK:
        live = _LIVE.get(graph.pk)
        if live is not None and live.version == version.number:
            _LIVE.move_to_end(graph.pk)
            return live
    document = GraphVersion.objects.get(pk=version.pk).document
    checker = IncrementalChecker(
        Document.from_json(document), strict_broadcasting=graph.strict_broadcasting
    )
    live = LiveDocument(version.number, checker)
    with _LIVE_LOCK:
        _LIVE[graph.pk] = live
        while len(_LIVE) > LIVE_MAX:
            _LIVE.popitem(last=False)
    return live


def kept_live(graph_id: uuid.UUID) -> LiveDocument | None:
    """The live document this process keeps of the graph, as it is (None: none is kept)."""
    with _LIVE_LOCK:
        return _LIVE.get(graph_id)


def forget_live(graph_id: uuid.UUID) -> None:
    """Drop a live document (after a failed write, or when the graph is replaced)."""
    with _LIVE_LOCK:
        _LIVE.pop(graph_id, None)


def current_version_number(graph_id: uuid.UUID) -> int:
    """The number of the graph's current version."""
    number = Graph.objects.filter(pk=graph_id).values_list("current_version__number", flat=True)
    return int(number.first() or 1)


def snapshot(graph: Graph) -> dict[str, Any]:
    """The ``snapshot`` websocket message but what each client gets of its own (``present``,
    ``role``): the current document, its version and issues (at most ``GEON_WS_MAX_ISSUES``,
    with the counts of all)."""
    live = live_document(graph)
    shown, counts = live.issue_report()
    return {
        "type": "snapshot",
        "document": live.document.to_json(),
        "version": live.version,
        "issues": shown,
        "issueCounts": counts,
    }
