"""Loading a document that may be malformed in any way (DESIGN.md §3 and §5): bad JSON, a missing
field, a node that cannot be read or appears twice — each becomes a ``SchemaConformance`` issue,
never a traceback. The checker (:func:`geon.core.checks.check_document`) starts here; the
command line, teaching and the renderer load documents here too, without the checker (issue 37).
The document's envelope (a UUID id) is the checker's to judge
(:func:`geon.core.checks.structure.envelope_issues`).

:func:`conforms` says whether a node can be read (its body and known tags match their schemas and
its ranges are ranges): what a plan asks before it reads an operation, without the checker.

>>> graph, issues = load_document('{"id": "x", "nodes": [{"id": 1}]}')
>>> len(graph.nodes), [i.summary for i in issues]
(0, ['Node is malformed'])
"""

from __future__ import annotations

import json
from typing import Any

from geon.core import schemas
from geon.core.errors import DocumentError, quote
from geon.core.graph import (
    APPLICATION,
    IPF_INDEX,
    OPERATION,
    TENSOR,
    Graph,
    GraphIndex,
    Node,
)
from geon.core.issues import Context, Issue, small
from geon.core.zspace import parse_range

__all__ = ["conforms", "load_document"]


def _doc_issue(
    summary: str, message: str, path: str = "$", data: Any = None, **params: Any
) -> Issue:
    """A document-level SchemaConformance issue (``DocumentError``) at ``path``."""
    return Issue(
        "SchemaConformance",
        "DocumentError",
        summary,
        message,
        params=params,
        contexts=(Context("Document", path, small(data)),),
    )


def load_document(data: Any) -> tuple[Graph | None, list[Issue]]:
    """Load JSON text (str/bytes) or parsed data into a :class:`Graph`, turning every problem
    into an issue: the graph holds the nodes that could be loaded (None when even the envelope
    is unusable), the issues say what was left out and why."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, [
                _doc_issue(
                    "Document is not valid JSON",
                    f"document is not UTF-8 text: byte {exc.start} is invalid; expected JSON text",
                    offset=exc.start,
                )
            ]
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            return None, [
                _doc_issue(
                    "Document is not valid JSON",
                    f"document is not valid JSON: {exc.msg} at line {exc.lineno} column "
                    f"{exc.colno}; expected a JSON object",
                    line=exc.lineno,
                    column=exc.colno,
                )
            ]
        except (RecursionError, ValueError) as exc:
            return None, [
                _doc_issue(
                    "Document is not valid JSON",
                    f"document cannot be read as JSON: {exc}; expected a JSON object",
                )
            ]
    if not isinstance(data, dict):
        return None, [
            _doc_issue(
                "Document is malformed",
                f'document is {quote(data)}; expected a JSON object with "id" and "nodes"',
                data=data,
            )
        ]
    issues: list[Issue] = []
    graph_id = data.get("id")
    if not isinstance(graph_id, str):
        issues.append(
            _doc_issue(
                "Document is malformed",
                (f"document has id {quote(graph_id)}" if "id" in data else 'document has no "id"')
                + "; expected a string (a UUID)",
                "$.id",
                graph_id,
            )
        )
        graph_id = ""
    nodes = data.get("nodes")
    if not isinstance(nodes, list):
        issues.append(
            _doc_issue(
                "Document is malformed",
                (
                    f"document has nodes {quote(nodes)}"
                    if "nodes" in data
                    else 'document has no "nodes"'
                )
                + "; expected a list of nodes",
                "$.nodes",
                nodes,
            )
        )
        return None, issues
    good: list[Node] = []
    seen: set[str] = set()
    for i, raw in enumerate(nodes):
        try:
            node = Node.from_json(raw, where=f"node {i}")
        except DocumentError as exc:
            issues.append(_doc_issue("Node is malformed", str(exc), f"$.nodes[{i}]", raw))
            continue
        if node.id in seen:
            issues.append(
                _doc_issue(
                    "Node id appears twice",
                    f"node {i} has id {quote(node.id)}, which an earlier node already has; "
                    "expected unique ids (the later node is ignored)",
                    f"$.nodes[{i}].id",
                    node.id,
                    nodeId=node.id,
                )
            )
            continue
        seen.add(node.id)
        good.append(node)
    extra = tuple((k, v) for k, v in data.items() if k not in ("id", "nodes"))
    return Graph(good, id=graph_id, extra=extra, keys=tuple(data)), issues


def _conforms(node: Node) -> bool:
    body_ok = schemas.validator_for_node(node.type)
    if body_ok is not None and not body_ok(node.body):
        return False
    for url, value in node.tags.items():
        tag_ok = schemas.validator_for_tag(url)
        if tag_ok is not None and not tag_ok(value):
            return False
    if IPF_INDEX in node.tags and parse_range(node.tags[IPF_INDEX]) is None:
        return False
    if body_ok is None:
        return True
    if node.type == TENSOR:
        return parse_range(node.body["range"]) is not None
    if node.type in (OPERATION, APPLICATION):
        return all(
            parse_range(item["range"]) is not None
            for side in ("inputs", "outputs")
            for items in (node.body.get(side) or {}).values()
            for item in items
        )
    return True


def conforms(index: GraphIndex, node: Node) -> bool:
    """Whether ``node`` can be read: its body and known tags match their schemas
    (:mod:`geon.core.schemas`) and its ranges are ranges; judged once per node version.

    This is the checker's ``SchemaConformance`` verdict less the form of the node's id (a
    non-UUID id stops no reading): ``tests/core/test_documents.py`` holds the two equal on every
    example and on malformed nodes.
    """
    return bool(index.memo(node, "geon.conforms", _conforms))
