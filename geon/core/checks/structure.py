"""SchemaConformance: whether each node is well-formed, and what the other checks read of it
(DESIGN.md §5). A node's envelope (a UUID id), its body and known tags against
:mod:`geon.core.schemas`, and the ranges JSON Schema cannot judge (start <= end, equal ranks).

>>> from geon.core.graph import NOTE
>>> [i.summary for i in judge(Node("n", NOTE, body={"message": "hi"})).issues]
['Node id is not a UUID']

A node of an unknown type is kept and reported as a *warning*. Values are the other
constraints' business (a dtype outside the list is ``TensorDTypesAreValid``), so one mistake
gives one issue; every other constraint skips a malformed node. The verdict is judged once per
node version (:func:`structure_of`) together with the node's parsed selections, which the other
checks read from here (an operation's index range and signature are the graph model's:
:mod:`geon.core.ranges`, :mod:`geon.core.signatures`). Applications are judged faster when the
fast path (:mod:`geon.core.checks.fastpath`) certifies them; the verdict is the same.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from geon.core import schemas
from geon.core.checks.messages import UUID_RE, context, issue, key_path
from geon.core.errors import quote
from geon.core.graph import (
    APPLICATION,
    IPF_INDEX,
    OPERATION,
    TENSOR,
    Graph,
    GraphIndex,
    Node,
)
from geon.core.issues import MAX_ISSUES_PER_CONSTRAINT, Context, Issue, not_listed, small
from geon.core.zspace import ZRange, parse_range, range_problem

__all__ = [
    "Parsed",
    "Sel",
    "Structure",
    "envelope_issues",
    "judge",
    "parsed",
    "structure_of",
    "tensor_range",
]


class Structure(NamedTuple):
    """SchemaConformance's verdict on one node, and what it parsed on the way."""

    issues: tuple[Issue, ...]
    ok: bool
    parsed: Parsed | None
    range: ZRange | None
    ipf_index: ZRange | None
    lazy: bool  # well-formed, selections not parsed yet (see parsed)


def _range_issue(nid: str, suffix: str, data: Any) -> Issue:
    """A SchemaConformance issue for a range the schema accepts but that is not a range."""
    problem = range_problem(data) or "range is invalid"
    return Issue(
        "SchemaConformance",
        "SchemaError",
        "Range is invalid",
        f"node {quote(nid)}: {problem}",
        params={"range": small(data)},
        node_ids=(nid,),
        contexts=(context("Range", nid, suffix, data),),
    )


def judge(node: Node, body_valid: bool = False, ipf_index: ZRange | None = None) -> Structure:
    """SchemaConformance's verdict on ``node``; ``body_valid`` says its body is already known
    to match its schema and ``ipf_index`` is its ``IPFIndex`` tag already known to be valid (a
    certified application, see ``_app_structure``)."""
    issues: list[Issue] = []
    nid = node.id
    name = "SchemaConformance"
    if UUID_RE.match(nid) is None:
        issues.append(
            Issue(
                name,
                "SchemaError",
                "Node id is not a UUID",
                f"node id {quote(nid)} is not a UUID; expected the form "
                '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)',
                params={"nodeId": nid},
                node_ids=(nid,),
                contexts=(context("Node id", nid, ".id", nid),),
            )
        )
    structured = True
    plain_range = None
    if node.type == TENSOR and not body_valid:
        # the common case read straight from the JSON: a str dtype and a plain range (see
        # parse_range's exact form) prove what the Tensor schema asks and that the range is valid
        body = node.body
        if type(body) is dict and type(body.get("dtype")) is str:
            plain_range = parse_range(body.get("range"), exact=True)
            body_valid = plain_range is not None
    body_ok = schemas.validator_for_node(node.type)
    if body_ok is None:
        issues.append(
            Issue(
                name,
                "SchemaError",
                "Unknown node type",
                f"node {quote(nid)} has type {quote(node.type)}, which geon does not know; it is "
                "kept but not checked",
                severity="warning",
                params={"type": node.type},
                node_ids=(nid,),
                contexts=(context("Node type", nid, ".type", node.type),),
            )
        )
    elif not body_valid and not body_ok(node.body):
        structured = False
        issues.extend(
            _violations(nid, ".body", schemas.errors_for_node(node.type, node.body), "body")
        )
    tags = node.tags
    index_tag_ok = True
    for url, value in tags.items():
        if ipf_index is not None and url == IPF_INDEX:
            continue
        tag_ok = schemas.validator_for_tag(url)
        if tag_ok is not None and not tag_ok(value):
            index_tag_ok = index_tag_ok and url != IPF_INDEX
            issues.extend(
                _violations(nid, f".tags['{url}']", schemas.errors_for_tag(url, value), "tag", url)
            )
    # ranges: parsed once here, reused by every other constraint through parsed()
    selections: Parsed | None = None
    trange: ZRange | None = None
    ranges_ok = True
    if ipf_index is None and index_tag_ok and IPF_INDEX in tags:
        ipf_index = parse_range(tags[IPF_INDEX])
        if ipf_index is None:
            ranges_ok = False
            issues.append(_range_issue(nid, f".tags['{IPF_INDEX}']", tags[IPF_INDEX]))
    if structured and node.type == TENSOR:
        trange = plain_range if plain_range is not None else parse_range(node.body["range"])
        if trange is None:
            ranges_ok = False
            issues.append(_range_issue(nid, ".body.range", node.body["range"]))
    elif structured and (node.type == OPERATION or (node.type == APPLICATION and not body_valid)):
        selections = _parse_selections(node, ipf_index, issues)
        ranges_ok = ranges_ok and selections is not None
    # a certified application's body is known valid: its selections are parsed when asked (see
    # parsed), and most applications of a sharded operation are certified and never asked
    lazy = structured and node.type == APPLICATION and body_valid
    ok = (
        structured
        and index_tag_ok
        and ranges_ok
        and (not issues or not any(i.severity == "error" for i in issues))
    )
    return Structure(
        tuple(issues),
        ok,
        selections if ok else None,
        trange if ok else None,
        ipf_index,
        lazy and ok,
    )


def _parse_selections(
    node: Node, ipf_index: ZRange | None, issues: list[Issue] | None = None
) -> Parsed | None:
    """The selections of an Operation or Application whose body matches its schema; each
    invalid range is reported in ``issues`` and makes the answer None (without ``issues``, every
    range is known to be valid)."""
    sides: dict[str, dict[str, tuple[Sel, ...]]] = {}
    valid = True
    for side in ("inputs", "outputs"):
        keys: dict[str, tuple[Sel, ...]] = {}
        for key, items in (node.body.get(side) or {}).items():
            sels = []
            for pos, item in enumerate(items):
                r = parse_range(item["range"])
                if r is None:
                    assert issues is not None, "a range judged valid is valid"
                    valid = False
                    path = f".body.{side}.{key_path(key)}[{pos}].range"
                    issues.append(_range_issue(node.id, path, item["range"]))
                else:
                    sels.append(Sel(item["tensorId"], r, side, key, pos))
            keys[key] = tuple(sels)
        sides[side] = keys
    return Parsed(sides, ipf_index) if valid else None


def _violations(
    nid: str, base: str, found: list[schemas.SchemaViolation], what: str, url: str = ""
) -> list[Issue]:
    summary = (
        "Node body does not match its schema"
        if what == "body"
        else ("Tag value does not match its schema")
    )
    out = []
    for v in found[:MAX_ISSUES_PER_CONSTRAINT]:
        where = f"body{v.path}" if what == "body" else f"tag {quote(url)}{v.path or ''}"
        message = v.message if len(v.message) <= 200 else v.message[:197] + "..."
        params: dict[str, Any] = {"path": base + v.path}
        if url:
            params["tag"] = url
        out.append(
            Issue(
                "SchemaConformance",
                "SchemaError",
                summary,
                f"node {quote(nid)} {where}: {message}",
                params=params,
                node_ids=(nid,),
                contexts=(context("Schema", nid, base + v.path, v.value),),
            )
        )
    if len(found) > MAX_ISSUES_PER_CONSTRAINT:
        rest = len(found) - MAX_ISSUES_PER_CONSTRAINT
        out.append(
            not_listed(
                "SchemaConformance",
                f"node {quote(nid)} {what}{f' {quote(url)}' if url else ''}: ... and {rest} more "
                "schema errors; fix the ones above first",
                rest,
                summaries=(summary,),
                node_ids=(nid,),
                params={"path": base},
            )
        )
    return out


def structure_of(index: GraphIndex, node: Node) -> Structure:
    """SchemaConformance's verdict on ``node``, judged once per node version (the long way,
    unless the fast path has already certified it)."""
    slots = index._memo.get(node.id)  # the fast path of index.memo, inlined: this is hot
    if slots is not None:
        hit = slots.get("structure")
        if hit is not None and hit[0] is node:
            return hit[1]
    return index.memo(node, "structure", judge)


def tensor_range(index: GraphIndex, tensor: Node) -> ZRange:
    """The range of a well-formed Tensor."""
    r = structure_of(index, tensor).range
    assert r is not None
    return r


class Sel(NamedTuple):
    """One parsed selection (a named tuple: made for every selection, so it must be cheap)."""

    tensor_id: str
    range: ZRange
    side: str
    key: str
    pos: int

    @property
    def path(self) -> str:
        return f".body.{self.side}.{key_path(self.key)}[{self.pos}]"


class Parsed(NamedTuple):
    """The selection maps of a well-formed Operation/Application: (side, key) -> selections."""

    sides: dict[str, dict[str, tuple[Sel, ...]]]
    ipf_index: ZRange | None


def parsed(index: GraphIndex, node: Node) -> Parsed:
    """The parsed selections of a well-formed Operation or Application."""
    st = structure_of(index, node)
    if st.parsed is not None:
        return st.parsed
    assert st.lazy
    found = index.memo(node, "parsed", lambda n: _parse_selections(n, st.ipf_index))
    assert found is not None
    return found


def envelope_issues(graph: Graph) -> list[Issue]:
    """The document-level issue of ``graph``: its id is not a UUID."""
    if UUID_RE.match(graph.id):
        return []
    return [
        issue(
            "SchemaConformance",
            "SchemaError",
            "Document id is not a UUID",
            f"document id {quote(graph.id)} is not a UUID; expected the form "
            '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)',
            (),
            (Context("Document id", "$.id", graph.id),),
            {"id": graph.id},
        )
    ]
