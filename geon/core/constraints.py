"""The checker: a document in, every issue out (DESIGN.md §5).

>>> import json
>>> from importlib import resources
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> check_document(text)
[]
>>> [i.summary for i in check_document('{"id": "x", "nodes": []}')]
['Document id is not a UUID']

``check(graph)`` runs **every** constraint on every node and returns every issue (it never stops
at the first failing constraint). ``check_document(data)`` takes JSON text or parsed data that may
be malformed in any way and turns each problem into an issue — bad JSON, a missing field, a
non-UUID id, a range with start > end, a rank of a million — never a traceback.
``IncrementalChecker`` keeps the issues of a graph current across edits by re-checking only the
nodes an edit can affect; its result always equals a full ``check``.

The constraint protocol
-----------------------
A constraint is a :class:`geon.core.issues.Constraint` ``(name, node_types, check)``.
``check(index, node)`` yields the issues of one node whose type URL is in ``node_types`` (an empty
``node_types`` means every node type). It receives the graph's :class:`~geon.core.graph.GraphIndex`
and may read

1. the node itself,
2. the nodes it references directly (``index.references(node.id)``: an operation's tensors, an
   application's operation and tensors, a placement's mesh) and the nodes that reference it
   directly (``index.referrers(node.id)``, e.g. ``index.applications_of(op.id)``,
   ``index.operations_using(tensor.id)``),
3. Axis declarations, by name, through the index (``index.axis(name)``,
   ``index.axis_declarations(name)``),

and nothing else (no walk over the whole graph, no two-hop reads). Each issue's ``node_ids`` starts
with the checked node. Constraints must not raise on malformed data: a node whose structure is
wrong is reported once by ``SchemaConformance``, and the other constraints skip it — use
:func:`is_well_formed` on the node and on every node it reads. Whole-graph rules
(``NoTensorOperationCycles``, the document envelope) live inside the checker.

The incremental dependency rule
-------------------------------
After an edit changes node ``n`` (added, removed or updated, from ``old`` to ``new``), the checker
re-checks:

- ``n`` itself;
- the nodes ``old`` or ``new`` references, and the nodes that reference ``n``;
- when ``n`` is an Axis (old or new): every Axis node declaring the old or the new name, every
  Tensor whose ``TensorAxes`` names it and every Operation using those tensors, and every Operation
  whose ``IndexAxes`` names it together with that operation's Applications (an operation's index
  range may come from its index axes' lengths).

Cycles are recomputed (in linear time) only when an edit changes which tensors an operation reads
or writes, or adds or removes an operation.

Decisions (where DESIGN.md is silent)
-------------------------------------
- ``SchemaConformance`` covers structure: the node envelope (ids must be UUIDs), bodies and
  known tags against :mod:`geon.core.schemas`, and ranges JSON Schema cannot judge (start <= end,
  equal ranks). A node of an unknown type is kept and reported as a *warning*. Values are the
  other constraints' business (a dtype outside the list is ``TensorDTypesAreValid``), so one
  mistake gives one issue. Every other constraint skips malformed nodes (``is_well_formed``).
- ``TensorOperationAgreement`` also reports a Tensor written by more than one Operation (on the
  tensor, naming the writers).
- An Operation's index range is its ``IPFIndex`` tag or, without one, ``[0, lengths)`` of its
  ``IndexAxes`` (so operations built from named axes need no IPFIndex).
- Operation-level checks over applications (their span, output coverage) are judged only when
  every application is well-formed and agrees with the operation on the selection concerned;
  otherwise the disagreement is reported once, by ``OperationApplicationAgreement``.
- Padded reads: an *input* selection must equal the projection of the index range (the
  operation's, or an application's ``IPFIndex``) clipped to its tensor's range, because pad and
  a padded conv2d reach past the tensor and read zeros there (as the executor does). Outputs
  must equal the projection exactly. An input selection the tensor does not contain is
  ``TensorOperationAgreement``'s issue and is held to the plain projection.
- Coverage is cell-exact by interval arithmetic: overlaps by a sweep over boxes, gaps by box
  subtraction; a gap and an overlap of the same size are two issues.
- The output is bounded whatever the document (issue 13: 800 identical applications gave
  319,600 overlap issues): at most ``MAX_ISSUES_PER_CONSTRAINT`` issues per constraint and
  node, then one summary issue (type ``IssuesNotListed``, ``params.notListed``), and at most
  ``MAX_ISSUES_PER_CHECK`` per check, then one summary per constraint (see
  :mod:`geon.core.issues`); the incremental checker bounds the same way, so it still equals a
  full check. The overlap sweep stops after ``MAX_OVERLAPS_COUNTED`` overlapping pairs of one
  output selection (its summary then says "at least"), so it never enumerates every pair.
- Unsigned operations, as in loom: an Application of an Operation without an IPFSignature needs
  no IPFIndex (``ApplicationIPFSignatureAgreement`` does not visit it), and for every operation
  with applications, each selection's shard bounding range (the smallest range holding its
  applications' selections) must be the operation's selection (loom's "range zr[0:2, 0:3] !=
  shard bounding range zr[0:2, 0:2]"), reported by ``OperationApplicationAgreement`` unless
  the applications' IPFIndex ranges already fail to span the operation's index range.
- Speed: an application whose body is exactly the projection of its index range through its
  operation's (clean) signature is *certified*, which proves the two application constraints
  have nothing to say. The certificate is read straight from the JSON (plain ints, exact keys)
  and also proves the body matches its schema, so a certified application is neither
  validated nor parsed. What certifying needs from an operation (its distinct projections and
  padded-read clips) is built once per operation, and values derived from several nodes are
  reused while ``GraphIndex.version`` is unchanged. Output coverage of a split is confirmed by
  one sorted sweep; only other shapes take the general box arithmetic. Tests check that
  switching the certificate off changes no issue.

Constraints
-----------
``SchemaConformance`` (structure: node envelope, bodies and known tags against :mod:`schemas`,
well-formed ranges), ``TensorDTypesAreValid``, ``TensorOperationAgreement``,
``NoTensorOperationCycles``, ``OperationIPFSignatureAgreement``,
``OperationApplicationAgreement``, ``ApplicationIPFSignatureAgreement``,
``ApplicationOutputRangeCoverageIsExact`` (cell-exact: gaps and overlaps are found even when the
sizes add up), then the axis constraints registered in :data:`geon.core.axis_checks.CONSTRAINTS`,
then ``PlanPlacement``. Issues come in document order of the node they belong to, and for one node
in the order of the constraints above; document-level issues come first and cycles last.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from geon.core import axis_checks, schemas
from geon.core.errors import DocumentError
from geon.core.graph import (
    APPLICATION,
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    MESH,
    OPERATION,
    PLACEMENT,
    TENSOR,
    Change,
    Graph,
    GraphIndex,
    Node,
    axis_names_of_ref,
    node_references,
    selected_tensor_ids,
)
from geon.core.issues import (
    MAX_ISSUES_PER_CONSTRAINT,
    Constraint,
    Context,
    Issue,
    bound_check_issues,
    bound_node_issues,
    not_listed,
)
from geon.core.tensors import DTYPES
from geon.core.zspace import (
    IPF,
    ZRange,
    bounding_range,
    coverage,
    parse_range,
    range_problem,
    selection_of,
)

__all__ = [
    "DTYPES",
    "LOOM_CONSTRAINTS",
    "IncrementalChecker",
    "all_constraints",
    "check",
    "check_document",
    "check_node",
    "clear_caches",
    "coverage",
    "index_range",
    "is_well_formed",
    "parse_range",
]


UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)

MAX_LISTED = 16
"""At most this many gap boxes, writers of a tensor or members of a cycle are listed in one
issue (the rest are counted), so that no issue grows with the document."""


# --------------------------------------------------------------------------------------------
# Small helpers


def _q(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    if len(text) > 80:
        text = text[:77] + "..."
    return f'"{text}"'


def _names(values: Iterable[Any]) -> str:
    """``("a", "b")`` for messages: at most ``MAX_LISTED`` names, then how many more."""
    items = list(values)
    shown = ", ".join(f'"{v}"' for v in items[:MAX_LISTED])
    if len(items) > MAX_LISTED:
        shown += f" and {len(items) - MAX_LISTED} more"
    return "(" + shown + ")"


def _few(values: Iterable[Any]) -> list[Any]:
    """The first ``MAX_LISTED`` of ``values`` (a list in an issue's params stays small)."""
    return list(itertools.islice(values, MAX_LISTED))


def _small(value: Any) -> Any:
    """``value`` for an issue's context, or a short stand-in when it is large."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)[:200]
    return value if len(text) <= 400 else text[:200] + "..."


def _path(node_id: str, suffix: str = "") -> str:
    return f"$.nodes['{node_id}']{suffix}"


def _ctx(name: str, node_id: str, suffix: str, data: Any) -> Context:
    return Context(name, _path(node_id, suffix), _small(data))


def _fmt_range(r: ZRange) -> str:
    return str(r)


# --------------------------------------------------------------------------------------------
# Well-formedness (SchemaConformance) — every other constraint relies on it


class _Structure(NamedTuple):
    """SchemaConformance's verdict on one node, and what it parsed on the way."""

    issues: tuple[Issue, ...]
    ok: bool
    parsed: _Parsed | None
    range: ZRange | None
    ipf_index: ZRange | None
    lazy: bool  # well-formed, selections not parsed yet (see _parsed)


def _range_issue(nid: str, suffix: str, data: Any) -> Issue:
    problem = range_problem(data) or "range is invalid"
    return Issue(
        "SchemaConformance",
        "SchemaError",
        "Range is invalid",
        f"node {_q(nid)}: {problem}",
        params={"range": _small(data)},
        node_ids=(nid,),
        contexts=(_ctx("Range", nid, suffix, data),),
    )


def _structure(node: Node, body_valid: bool = False, ipf_index: ZRange | None = None) -> _Structure:
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
                f"node id {_q(nid)} is not a UUID; expected the form "
                '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)',
                params={"nodeId": nid},
                node_ids=(nid,),
                contexts=(_ctx("Node id", nid, ".id", nid),),
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
                f"node {_q(nid)} has type {_q(node.type)}, which geon does not know; it is kept "
                "but not checked",
                severity="warning",
                params={"type": node.type},
                node_ids=(nid,),
                contexts=(_ctx("Node type", nid, ".type", node.type),),
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
    # ranges: parsed once here, reused by every other constraint through _parsed()
    parsed: _Parsed | None = None
    trange: ZRange | None = None
    ranges_ok = True
    lazy = False
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
    elif structured and node.type == APPLICATION and not body_valid:
        # validated here without building ranges: most applications are then certified against
        # their operation (_certificate) and never need their selections parsed
        for side in ("inputs", "outputs"):
            for key, items in (node.body.get(side) or {}).items():
                for pos, item in enumerate(items):
                    data = item["range"]
                    start, end = data["start"], data["end"]
                    if len(start) != len(end) or not all(map(operator.le, start, end)):
                        ranges_ok = False
                        path = f".body.{side}.{_key(key)}[{pos}].range"
                        issues.append(_range_issue(nid, path, data))
    if structured and node.type == APPLICATION:
        lazy = True
    elif structured and node.type == OPERATION:
        body = node.body
        sides: dict[str, dict[str, tuple[_Sel, ...]]] = {}
        for side in ("inputs", "outputs"):
            keys: dict[str, tuple[_Sel, ...]] = {}
            for key, items in (body.get(side) or {}).items():
                sels = []
                for pos, item in enumerate(items):
                    r = parse_range(item["range"])
                    if r is None:
                        ranges_ok = False
                        path = f".body.{side}.{_key(key)}[{pos}].range"
                        issues.append(_range_issue(nid, path, item["range"]))
                    else:
                        sels.append(_Sel(item["tensorId"], r, side, key, pos))
                keys[key] = tuple(sels)
            sides[side] = keys
        parsed = _Parsed(sides, ipf_index)
    ok = (
        structured
        and index_tag_ok
        and ranges_ok
        and (not issues or not any(i.severity == "error" for i in issues))
    )
    return _Structure(
        tuple(issues), ok, parsed if ok else None, trange if ok else None, ipf_index, lazy and ok
    )


def _parse_selections(node: Node, ipf_index: ZRange | None) -> _Parsed:
    """The selections of a well-formed Operation or Application (ranges already validated)."""
    sides: dict[str, dict[str, tuple[_Sel, ...]]] = {}
    for side in ("inputs", "outputs"):
        keys: dict[str, tuple[_Sel, ...]] = {}
        for key, items in (node.body.get(side) or {}).items():
            sels = []
            for pos, item in enumerate(items):
                data = item["range"]
                r = ZRange._raw(tuple(map(int, data["start"])), tuple(map(int, data["end"])))
                sels.append(_Sel(item["tensorId"], r, side, key, pos))
            keys[key] = tuple(sels)
        sides[side] = keys
    return _Parsed(sides, ipf_index)


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
        where = f"body{v.path}" if what == "body" else f"tag {_q(url)}{v.path or ''}"
        message = v.message if len(v.message) <= 200 else v.message[:197] + "..."
        params: dict[str, Any] = {"path": base + v.path}
        if url:
            params["tag"] = url
        out.append(
            Issue(
                "SchemaConformance",
                "SchemaError",
                summary,
                f"node {_q(nid)} {where}: {message}",
                params=params,
                node_ids=(nid,),
                contexts=(_ctx("Schema", nid, base + v.path, v.value),),
            )
        )
    if len(found) > MAX_ISSUES_PER_CONSTRAINT:
        rest = len(found) - MAX_ISSUES_PER_CONSTRAINT
        out.append(
            not_listed(
                "SchemaConformance",
                f"node {_q(nid)} {what}{f' {_q(url)}' if url else ''}: ... and {rest} more "
                "schema errors; fix the ones above first",
                rest,
                summaries=(summary,),
                node_ids=(nid,),
                params={"path": base},
            )
        )
    return out


def _structure_memo(index: GraphIndex, node: Node) -> _Structure:
    slots = index._memo.get(node.id)  # the fast path of index.memo, inlined: this is hot
    if slots is not None:
        hit = slots.get("structure")
        if hit is not None and hit[0] is node:
            return hit[1]
    if node.type == APPLICATION:
        return index.memo(node, "structure", functools.partial(_app_structure, index))
    return index.memo(node, "structure", _structure)


def _app_structure(index: GraphIndex, app: Node) -> _Structure:
    """An application's structure, certifying it on the way: most applications of a sharded
    operation are exact projections of their index range, and certifying one from its JSON
    (``_certify_body``) proves its body matches the schema, so it is not validated twice. The
    verdict is the same either way; the certificate is kept for the application's checks."""
    idx = _valid_ipf_index(app)
    if idx is None:
        return _structure(app)
    op = _op_of(index, app)
    context = _op_context(index, op)
    cert = _certify_body(app.body, idx, context) if context is not None else None
    if cert is None:
        return _structure(app)
    found = _certified_structure(app, idx)
    if found.ok:
        box = index.memo(app, "certificate", _new_box)
        box[0] = (op, context)
        box[1] = cert
        box[2] = index.version
    return found


def _certified_structure(app: Node, idx: ZRange) -> _Structure:
    """The structure of an application whose body and ``IPFIndex`` are known to be valid: only
    its id and its other tags are left to judge (the long way when one of them is wrong)."""
    if UUID_RE.match(app.id) is None:
        return _structure(app, body_valid=True, ipf_index=idx)
    for url, value in app.tags.items():
        if url != IPF_INDEX:
            tag_ok = schemas.validator_for_tag(url)
            if tag_ok is not None and not tag_ok(value):
                return _structure(app, body_valid=True, ipf_index=idx)
    return _Structure((), True, None, None, idx, True)


def _valid_ipf_index(node: Node) -> ZRange | None:
    """A node's ``IPFIndex`` when it is a plain valid range (see ``parse_range``), else None."""
    return parse_range(node.tags.get(IPF_INDEX), exact=True) if node.tags else None


def _schema_memo(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    return _structure_memo(index, node).issues


def is_well_formed(index: GraphIndex, node: Node | None) -> bool:
    """Whether ``node`` exists and has no ``SchemaConformance`` error (cached per node version)."""
    if node is None:
        return False
    return _structure_memo(index, node).ok


def _tensor_range(index: GraphIndex, tensor: Node) -> ZRange:
    """The range of a well-formed Tensor."""
    r = _structure_memo(index, tensor).range
    assert r is not None
    return r


def _schema_conformance(index: GraphIndex, node: Node) -> Iterable[Issue]:
    return _schema_memo(index, node)


# --------------------------------------------------------------------------------------------
# Parsed views of operations and applications (cached per node version)


class _Sel(NamedTuple):
    """One parsed selection (a named tuple: made for every selection, so it must be cheap)."""

    tensor_id: str
    range: ZRange
    side: str
    key: str
    pos: int

    @property
    def path(self) -> str:
        return f".body.{self.side}.{_key(self.key)}[{self.pos}]"


class _Parsed(NamedTuple):
    """The selection maps of a well-formed Operation/Application: (side, key) -> selections."""

    sides: dict[str, dict[str, tuple[_Sel, ...]]]
    ipf_index: ZRange | None


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _key(key: str) -> str:
    return key if _IDENT.match(key) else f"['{key}']"


def _parsed(index: GraphIndex, node: Node) -> _Parsed:
    """The parsed selections of a well-formed Operation or Application."""
    st = _structure_memo(index, node)
    if st.parsed is not None:
        return st.parsed
    assert st.lazy
    return index.memo(node, "parsed", lambda n: _parse_selections(n, st.ipf_index))


_Signature = dict[str, dict[str, tuple[IPF | str, ...]]]


class _Certificate(NamedTuple):
    """Proof that an application agrees with its operation: its body is exactly the projection
    of its index range through the operation's signature, and that range lies inside the
    operation's. Then OperationApplicationAgreement and ApplicationIPFSignatureAgreement have
    nothing to say about it (selections inside the operation's follow from the hull being
    monotone and the operation's own signature agreeing), and coverage can use ``outputs``."""

    ipf_index: ZRange
    outputs: dict[str, tuple[ZRange, ...]]
    feet: tuple[ZRange, ...]
    """Per footprint of the operation's context (``_OpContext.footprints``), the selection."""


def _certificate(index: GraphIndex, app: Node) -> _Certificate | None:
    box = index.memo(app, "certificate", _new_box)
    version = index.version
    if box[2] == version:  # nothing changed since it was judged (one full check asks 3 times)
        return box[1]
    op = _op_of(index, app)
    context = _op_context(index, op)
    deps = (op, context)
    if box[0] is None or not _same(box[0], deps):
        box[0] = deps
        box[1] = _certify(index, app, context)
    box[2] = version
    return box[1]


class _OpContext(NamedTuple):
    """What certifying any application of one operation needs (None: certify none)."""

    op_id: str
    irange: ZRange
    """The operation's index range (see :func:`index_range`)."""
    keys: dict[str, frozenset[str]]
    """Per side, the operation's IO keys."""
    footprints: tuple[tuple[IPF, ZRange | None, bool], ...]
    """The distinct (IPF, clip) pairs of the signature: a shard's selection is the projection of
    its index range through the IPF, clipped to the operation's selection for a padded read
    (else None). Most operations use one or two, so a shard projects each once. The third item
    says the selection is the shard's index range itself (the identity IPF, no clip), as for
    elementwise operations."""
    plan: tuple[tuple[str, str, tuple[tuple[str, int], ...]], ...]
    """Per (side, key): per position, the tensor id and its footprint's number."""
    rank: int


def _op_context(index: GraphIndex, op: Node | None) -> _OpContext | None:
    """What certifying the applications of ``op`` needs, or None when they go the long way."""
    if op is None or op.type != OPERATION:
        return None
    box = index.memo(op, "certify-context", _new_box)
    version = index.version
    if box[2] == version:  # nothing changed since it was built (asked once per application)
        return box[1]
    irange = index_range(index, op) if is_well_formed(index, op) else None
    if irange is None:
        box[0] = None
        box[1] = None
        box[2] = version
        return None
    # the operation's own signature issues (cached on what they read, tensors included)
    own = _operation_signature(index, op)
    if box[0] is not None and _same(box[0], (irange, own)):
        box[2] = version
        return box[1]
    value = None
    sig = _signature_memo(index, op)
    # with issues in the operation's own signature, its applications go the long way
    if sig is not None and not own:
        sides = _parsed(index, op).sides
        # equal IPFs are one object (_ipf), so footprints and images go by IPF identity, as in
        # OperationIPFSignatureAgreement (hashing an IPF costs more than projecting it)
        footprints: dict[tuple[int, ZRange | None], int] = {}
        feet: list[tuple[IPF, ZRange | None, bool]] = []
        images: dict[int, ZRange] = {}
        plan = []
        usable = True
        for side in ("inputs", "outputs"):
            for key, sels in sides[side].items():
                entries = []
                for o, f in zip(sels, sig[side][key], strict=True):
                    if isinstance(f, str) or (f.map.in_dim not in (None, irange.rank)):
                        usable = False
                        break
                    # a clean operation's input selection is its projection clipped to the
                    # tensor, so a shard's projection clipped to the tensor is the shard's
                    # projection clipped to the operation's selection
                    image = images.get(id(f))
                    if image is None:
                        image = images[id(f)] = f.apply_range(irange)
                    clip = o.range if side == "inputs" and image != o.range else None
                    number = footprints.setdefault((id(f), clip), len(footprints))
                    if number == len(feet):
                        feet.append((f, clip, clip is None and f.is_identity))
                    entries.append((o.tensor_id, number))
                plan.append((side, key, tuple(entries)))
        if usable:
            keys = {side: frozenset(sides[side]) for side in ("inputs", "outputs")}
            value = _OpContext(op.id, irange, keys, tuple(feet), tuple(plan), irange.rank)
    box[0] = (irange, own)
    box[1] = value
    box[2] = version
    return value


def _certify(index: GraphIndex, app: Node, context: _OpContext | None) -> _Certificate | None:
    if context is None:
        return None
    st = _structure_memo(index, app)
    if not st.ok or st.ipf_index is None:
        return None
    return _certify_body(app.body, st.ipf_index, context)


_RANGE = operator.itemgetter("range")
_START = operator.itemgetter("start")
_END = operator.itemgetter("end")


def _holds_bool(items: list[Any], coords: Callable[[Any], list[Any]]) -> bool:
    """Whether a coordinate that ``coords`` (``_START`` or ``_END``) picks from the ranges of the
    selections ``items`` is a boolean. Loops in C only: this screens every selection."""
    lists = map(coords, map(_RANGE, items))
    return bool in map(type, itertools.chain.from_iterable(lists))


def _certify_body(body: Any, idx: ZRange, context: _OpContext) -> _Certificate | None:
    """The certificate of an application whose body is *exactly* the projection of its index
    range ``idx`` through the operation's signature, else None — read straight from the JSON.

    It needs no schema validation first: every value it accepts is one the Application schema
    accepts (the operation id and tensor ids equal the well-formed operation's, selections and
    ranges have exactly their keys, coordinates equal ints without being booleans — whole
    floats are JSON Schema integers — and start <= end), so a certified body is also proof of
    the application's structure (see ``_app_structure``)."""
    if len(idx.start) != context.rank or idx.is_empty or not context.irange.contains(idx):
        return None
    if type(body) is not dict or body.get("operationId") != context.op_id:
        return None
    for side in ("inputs", "outputs"):
        mine = body.get(side)
        if mine is None:
            if side in body or context.keys[side]:
                return None
        elif type(mine) is not dict or mine.keys() != context.keys[side]:
            return None
    # each distinct footprint projected once, as the JSON range a selection must equal
    feet: list[ZRange] = []
    ranges: list[dict[str, list[int]]] = []
    bool_prone_start = bool_prone_end = False  # a coordinate a boolean could pass for (0, 1)
    for ipf, bounds, identity in context.footprints:
        if identity:
            image = idx
        else:
            image = ipf.apply_range(idx)
            if bounds is not None:
                image = image.clip(bounds)
        feet.append(image)
        start, end = image.start, image.end
        ranges.append({"start": list(start), "end": list(end)})
        bool_prone_start = bool_prone_start or 0 in start or 1 in start
        bool_prone_end = bool_prone_end or 0 in end or 1 in end
    outputs: dict[str, tuple[ZRange, ...]] = {}
    selections: list[Any] = []
    for side, key, entries in context.plan:
        items = body[side][key]
        # one comparison in C per key: exactly these selections, keys, tensors and coordinates
        if type(items) is not list or items != [
            {"tensorId": tensor_id, "range": ranges[foot]} for tensor_id, foot in entries
        ]:
            return None
        selections += items
        if side == "outputs":
            outputs[key] = tuple([feet[foot] for _, foot in entries])
    # equal values leave one way to be wrong: a boolean passing for a 0 or 1 (False == 0)
    if bool_prone_start and _holds_bool(selections, _START):
        return None
    if bool_prone_end and _holds_bool(selections, _END):
        return None
    return _Certificate(idx, outputs, tuple(feet))


def clear_caches() -> None:
    """Forget what the checker remembers across graphs (equal IPFs, strings that matched a
    schema pattern), so that the next check starts cold — as the benchmark's full check does."""
    _ipf_of.cache_clear()
    schemas.clear_memos()


def _signature(node: Node) -> _Signature | None:
    """The op's IPFSignature as IPFs (a str in place of an IPF says why it is malformed)."""
    tag = node.tags.get(IPF_SIGNATURE) if node.tags else None
    if tag is None:
        return None
    out: dict[str, dict[str, tuple[IPF | str, ...]]] = {}
    for side in ("inputs", "outputs"):
        keys: dict[str, tuple[IPF | str, ...]] = {}
        for key, items in (tag.get(side) or {}).items():
            ipfs: list[IPF | str] = []
            for item in items:
                try:
                    ipfs.append(_ipf(item))
                except Exception as exc:  # a malformed IPF is reported, never raised
                    ipfs.append(str(exc))
            keys[key] = tuple(ipfs)
        out[side] = keys
    return out


@functools.lru_cache(maxsize=4096)
def _ipf_of(key: tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[int, ...]]) -> IPF:
    return IPF(key[0], key[1], key[2])


def _ipf(item: Any) -> IPF:
    """An IPF from its JSON; equal IPFs (most operations repeat a few) are built once."""
    try:
        amap = item["affineMap"]
        key = (tuple(map(tuple, amap["projection"])), tuple(amap["offset"]), tuple(item["shape"]))
        hash(key)
    except (KeyError, TypeError):
        return IPF.from_json(item)
    return _ipf_of(key)


def _signature_memo(index: GraphIndex, node: Node) -> _Signature | None:
    return index.memo(node, "signature", _signature)


def _ipf_index_of(node: Node) -> ZRange | None:
    return parse_range(node.tags.get(IPF_INDEX))


def index_range(index: GraphIndex, op: Node) -> ZRange | None:
    """An operation's index range: its ``IPFIndex`` tag, else ``[0, lengths)`` of its
    ``IndexAxes`` when every one is declared with a bound length, else None."""
    if op.tags and IPF_INDEX in op.tags:
        return index.memo(op, "ipf_index", _ipf_index_of)
    tag = op.tags.get(INDEX_AXES) if op.tags else None
    if not isinstance(tag, dict) or not isinstance(tag.get("axes"), list):
        return None
    lengths = []
    for ref in tag["axes"]:
        names = axis_names_of_ref(ref)
        if not names:
            return None
        n = 1
        for name in names:
            decl = index.axis(name)
            length = decl.body.get("length") if decl is not None else None
            if type(length) is not int or length < 1:
                return None
            n *= length
        lengths.append(n)
    return ZRange._raw((0,) * len(lengths), tuple(lengths))


def _issue(
    constraint: str,
    kind: str,
    summary: str,
    message: str,
    node_ids: Sequence[str],
    contexts: Sequence[Context] = (),
    params: Mapping[str, Any] | None = None,
    severity: Any = "error",
) -> Issue:
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


def _missing(constraint: str, owner: Node, ref: str, suffix: str, what: str) -> Issue:
    return _issue(
        constraint,
        "NodeReferenceError",
        "Referenced node does not exist",
        f"node {_q(owner.id)} references {what} {_q(ref)}, which does not exist; expected the id "
        f"of {what} in this graph",
        (owner.id,),
        (_ctx("Reference", owner.id, suffix, ref),),
        {"nodeId": ref},
    )


def _wrong_type(constraint: str, owner: Node, target: Node, suffix: str, what: str) -> Issue:
    short = target.type.rsplit("/", 1)[-1]
    return _issue(
        constraint,
        "NodeReferenceError",
        f"Referenced node is not {what}",
        f"node {_q(owner.id)} references {_q(target.id)}, which is {_q(short)}; expected {what}",
        (owner.id, target.id),
        (_ctx("Reference", owner.id, suffix, target.id),),
        {"nodeId": target.id, "type": target.type},
    )


# --------------------------------------------------------------------------------------------
# TensorDTypesAreValid


def _tensor_dtypes(index: GraphIndex, node: Node) -> Iterable[Issue]:
    dtype = node.body.get("dtype")
    if not isinstance(dtype, str) or dtype in DTYPES:
        return ()
    return (
        _issue(
            "TensorDTypesAreValid",
            "NodeValidationError",
            "Tensor dtype is not valid",
            f"tensor {_q(node.id)} has dtype {_q(dtype)}; expected one of ("
            + ", ".join(f'"{d}"' for d in DTYPES)
            + ")",
            (node.id,),
            (_ctx("Tensor dtype", node.id, ".body.dtype", dtype),),
            {"dtype": dtype},
        ),
    )


# --------------------------------------------------------------------------------------------
# TensorOperationAgreement


def _tensor_operation_agreement_uncached(index: GraphIndex, node: Node) -> Iterator[Issue]:
    name = "TensorOperationAgreement"
    if node.type == TENSOR:
        yield from _producers(index, node)
        return
    if not is_well_formed(index, node):
        return
    for side in _parsed(index, node).sides.values():
        for sels in side.values():
            for sel in sels:
                tensor = index.get(sel.tensor_id)
                if tensor is None:
                    yield _missing(name, node, sel.tensor_id, sel.path, "a Tensor")
                    continue
                if tensor.type != TENSOR:
                    yield _wrong_type(name, node, tensor, sel.path, "a Tensor")
                    continue
                trange = _structure_memo(index, tensor).range  # None: malformed, reported
                if trange is None:
                    continue
                if len(trange.start) != len(sel.range.start):
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "Selection rank does not match the tensor",
                        f"operation {_q(node.id)} selects {_q(str(sel.range))} of rank "
                        f"{sel.range.rank} in tensor {_q(tensor.id)} of rank {trange.rank}; "
                        f"expected a range of rank {trange.rank}",
                        (node.id, tensor.id),
                        (_ctx("Selection", node.id, sel.path + ".range", sel.range.to_json()),),
                        {
                            "tensorId": tensor.id,
                            "range": sel.range.to_json(),
                            "tensorRange": trange.to_json(),
                        },
                    )
                elif not trange.contains(sel.range):
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "Selection is out of the tensor's bounds",
                        f"operation {_q(node.id)} selects {_q(str(sel.range))} of tensor "
                        f"{_q(tensor.id)}, which spans {_q(str(trange))}; expected a range "
                        "inside it",
                        (node.id, tensor.id),
                        (_ctx("Selection", node.id, sel.path + ".range", sel.range.to_json()),),
                        {
                            "tensorId": tensor.id,
                            "range": sel.range.to_json(),
                            "tensorRange": trange.to_json(),
                        },
                    )


def _producers(index: GraphIndex, tensor: Node) -> Iterator[Issue]:
    """A tensor is written by at most one operation."""
    writers = []
    for rid in index.writers_of(tensor.id):
        op = index.get(rid)
        if op is not None and is_well_formed(index, op):
            writers.append(op.id)
    if len(writers) > 1:
        listed = writers[:MAX_LISTED]  # the issue stays small however many there are
        params: dict[str, Any] = {"operationIds": listed}
        many, more = "", ""
        if len(writers) > len(listed):
            params["count"] = len(writers)
            many, more = f"{len(writers)} ", f" and {len(writers) - len(listed)} more"
        yield _issue(
            "TensorOperationAgreement",
            "NodeValidationError",
            "Tensor is written by more than one operation",
            f"tensor {_q(tensor.id)} is written by {many}operations "
            + ", ".join(f'"{w}"' for w in listed)
            + f"{more}; expected at most one producer",
            (tensor.id, *listed),
            (_ctx("Tensor", tensor.id, "", tensor.label),),
            params,
        )


# --------------------------------------------------------------------------------------------
# OperationIPFSignatureAgreement


def _sig_path(side: str, key: str, pos: int | None = None) -> str:
    """The JSON path suffix of an operation's IPFSignature entry (built only for an issue)."""
    where = f".tags['{IPF_SIGNATURE}'].{side}.{_key(key)}"
    return where if pos is None else f"{where}[{pos}]"


def _operation_signature_uncached(index: GraphIndex, node: Node) -> Iterator[Issue]:
    name = "OperationIPFSignatureAgreement"
    if not is_well_formed(index, node):
        return
    sig = _signature_memo(index, node)
    if sig is None:
        return
    sig_path = f".tags['{IPF_SIGNATURE}']"
    irange = index_range(index, node)
    if irange is None and not (node.tags and IPF_INDEX in node.tags):
        has_axes = bool(node.tags and INDEX_AXES in node.tags)
        if not has_axes:
            yield _issue(
                name,
                "NodeValidationError",
                "Operation has an IPFSignature but no IPFIndex",
                f"operation {_q(node.id)} has an IPFSignature but neither an IPFIndex tag nor "
                "IndexAxes with bound lengths; expected an IPFIndex giving its index range",
                (node.id,),
                (_ctx("IPFSignature", node.id, sig_path, None),),
            )
    parsed = _parsed(index, node)
    images: dict[int, ZRange] = {}  # by IPF identity (the IPFs live as long as the signature)
    for side in ("inputs", "outputs"):
        body_keys = parsed.sides[side]
        sig_keys = sig.get(side, {})
        if set(body_keys) != set(sig_keys):
            yield _issue(
                name,
                "NodeValidationError",
                "IPFSignature keys do not match the operation's",
                f"operation {_q(node.id)} has {side} keys {_names(sorted(body_keys))} but its "
                f"IPFSignature has {_names(sorted(sig_keys))}; expected the same keys",
                (node.id,),
                (_ctx("IPFSignature", node.id, f"{sig_path}.{side}", sorted(sig_keys)),),
                {
                    "side": side,
                    "keys": _few(sorted(body_keys)),
                    "signatureKeys": _few(sorted(sig_keys)),
                },
            )
            continue
        for key, sels in body_keys.items():
            ipfs = sig_keys[key]
            if len(ipfs) != len(sels):
                yield _issue(
                    name,
                    "NodeValidationError",
                    "IPFSignature keys do not match the operation's",
                    f"operation {_q(node.id)} has {len(sels)} selections for {side} {_q(key)} "
                    f"but its IPFSignature has {len(ipfs)}; expected one IPF per selection",
                    (node.id,),
                    (_ctx("IPFSignature", node.id, _sig_path(side, key), len(ipfs)),),
                    {"side": side, "key": key},
                )
                continue
            for pos, (sel, ipf) in enumerate(zip(sels, ipfs, strict=True)):
                if isinstance(ipf, str):
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "IPF is malformed",
                        f"operation {_q(node.id)} IPF for {side} {_q(key)}[{pos}]: {ipf}",
                        (node.id,),
                        (_ctx("IPF", node.id, _sig_path(side, key, pos), None),),
                        {"side": side, "key": key, "position": pos},
                    )
                    continue
                if ipf.map.out_dim != sel.range.rank:
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "IPF rank does not match the selection",
                        f"operation {_q(node.id)} IPF for {side} {_q(key)}[{pos}] has "
                        f"{ipf.map.out_dim} rows; expected {sel.range.rank}, the rank of the "
                        f"selection {_q(str(sel.range))}",
                        (node.id,),
                        (_ctx("IPF", node.id, _sig_path(side, key, pos), ipf.to_json()),),
                        {"side": side, "key": key, "position": pos},
                    )
                    continue
                if irange is None:
                    continue
                if ipf.map.in_dim is not None and ipf.map.in_dim != irange.rank:
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "IPF rank does not match the index",
                        f"operation {_q(node.id)} IPF for {side} {_q(key)}[{pos}] has "
                        f"{ipf.map.in_dim} columns; expected {irange.rank}, the rank of the "
                        f"index range {_q(str(irange))}",
                        (node.id,),
                        (_ctx("IPF", node.id, _sig_path(side, key, pos), ipf.to_json()),),
                        {"side": side, "key": key, "position": pos},
                    )
                    continue
                projected = images.get(id(ipf))
                if projected is None:  # equal IPFs are one object (_ipf): project each once
                    projected = images[id(ipf)] = ipf.apply_range(irange)
                expected, clipped = _expected_selection(index, side, sel, ipf, irange, projected)
                if expected != sel.range:
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "IPF projection does not match the selection",
                        f"operation {_q(node.id)} IPF for {side} {_q(key)}[{pos}] maps the "
                        f"index range {_q(str(irange))} to {_q(str(projected))}{clipped}; "
                        f"expected the selection {_q(str(sel.range))}",
                        (node.id,),
                        (
                            _ctx("IPF", node.id, _sig_path(side, key, pos), ipf.to_json()),
                            _ctx("Selection", node.id, sel.path + ".range", sel.range.to_json()),
                        ),
                        {
                            "side": side,
                            "key": key,
                            "position": pos,
                            "expected": sel.range.to_json(),
                            "actual": expected.to_json(),
                        },
                    )


def _expected_selection(
    index: GraphIndex, side: str, sel: _Sel, ipf: IPF, irange: ZRange, projected: ZRange
) -> tuple[ZRange, str]:
    """What a selection must be, given ``projected``, the projection of its index range
    ``irange`` through ``ipf``, and the words that explain a clip. :func:`selection_of` holds
    the rule (an input reads the projection clipped to its tensor); the checker adds that an
    input its tensor does not contain (TensorOperationAgreement's issue), or whose tensor cannot
    be read, is held to the plain projection."""
    if side != "inputs" or projected == sel.range:
        return projected, ""
    tensor = index.get(sel.tensor_id)
    if tensor is None or tensor.type != TENSOR or not is_well_formed(index, tensor):
        return projected, ""
    trange = _tensor_range(index, tensor)
    if trange.rank != projected.rank or not trange.contains(sel.range):
        return projected, ""
    clipped = selection_of(ipf, irange, trange, read=True)
    if clipped == projected:
        return projected, ""
    if clipped.is_empty and not projected.is_empty:
        return clipped, f", which misses tensor {_q(tensor.id)} at {_q(str(trange))}"
    return clipped, (
        f", which tensor {_q(tensor.id)} at {_q(str(trange))} clips to {_q(str(clipped))}"
    )


# --------------------------------------------------------------------------------------------
# OperationApplicationAgreement


def _operation_application_uncached(index: GraphIndex, node: Node) -> Iterator[Issue]:
    if node.type == OPERATION:
        yield from _applications_span(index, node)
    else:
        yield from _application_agrees(index, node)


def _application_agrees(index: GraphIndex, app: Node) -> Iterator[Issue]:
    name = "OperationApplicationAgreement"
    if not is_well_formed(index, app) or _certificate(index, app) is not None:
        return
    op_id = app.body["operationId"]
    op = index.get(op_id)
    if op is None:
        yield _missing(name, app, op_id, ".body.operationId", "an Operation")
        return
    if op.type != OPERATION:
        yield _wrong_type(name, app, op, ".body.operationId", "an Operation")
        return
    if not is_well_formed(index, op):
        return
    mine = _parsed(index, app)
    theirs = _parsed(index, op)
    for side in ("inputs", "outputs"):
        a_keys, o_keys = mine.sides[side], theirs.sides[side]
        if a_keys.keys() != o_keys.keys():
            yield _issue(
                name,
                "NodeValidationError",
                "Application keys do not match the operation's",
                f"application {_q(app.id)} has {side} keys {_names(sorted(a_keys))}; expected "
                f"{_names(sorted(o_keys))} like its operation {_q(op.id)}",
                (app.id, op.id),
                (_ctx("Selections", app.id, f".body.{side}", sorted(a_keys)),),
                {
                    "side": side,
                    "keys": _few(sorted(a_keys)),
                    "operationKeys": _few(sorted(o_keys)),
                },
            )
            continue
        for key, a_sels in a_keys.items():
            o_sels = o_keys[key]
            if len(a_sels) != len(o_sels):
                yield _issue(
                    name,
                    "NodeValidationError",
                    "Application keys do not match the operation's",
                    f"application {_q(app.id)} has {len(a_sels)} selections for {side} "
                    f"{_q(key)}; expected {len(o_sels)} like its operation {_q(op.id)}",
                    (app.id, op.id),
                    (_ctx("Selections", app.id, f".body.{side}.{_key(key)}", len(a_sels)),),
                    {"side": side, "key": key},
                )
                continue
            for a, o in zip(a_sels, o_sels, strict=True):
                if a.tensor_id != o.tensor_id:
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "Application tensor does not match the operation's",
                        f"application {_q(app.id)} selects tensor {_q(a.tensor_id)} at "
                        f"{a.path[1:]}; expected {_q(o.tensor_id)} like its operation "
                        f"{_q(op.id)}",
                        (app.id, op.id),
                        (_ctx("Selection", app.id, a.path + ".tensorId", a.tensor_id),),
                        {"tensorId": a.tensor_id, "expected": o.tensor_id},
                    )
                elif len(a.range.start) != len(o.range.start) or not o.range.contains(a.range):
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "Application selection is outside the operation's",
                        f"application {_q(app.id)} selects {_q(str(a.range))} of tensor "
                        f"{_q(a.tensor_id)}; expected a range inside {_q(str(o.range))}, the "
                        f"selection of its operation {_q(op.id)}",
                        (app.id, op.id),
                        (_ctx("Selection", app.id, a.path + ".range", a.range.to_json()),),
                        {
                            "tensorId": a.tensor_id,
                            "range": a.range.to_json(),
                            "operationRange": o.range.to_json(),
                        },
                    )
    irange = index_range(index, op)
    if (
        mine.ipf_index is not None
        and irange is not None
        and (len(mine.ipf_index.start) != len(irange.start) or not irange.contains(mine.ipf_index))
    ):
        yield _issue(
            name,
            "NodeValidationError",
            "Application index is outside the operation's",
            f"application {_q(app.id)} has index range {_q(str(mine.ipf_index))}; expected a "
            f"range inside {_q(str(irange))}, the index range of its operation {_q(op.id)}",
            (app.id, op.id),
            (_ctx("IPFIndex", app.id, f".tags['{IPF_INDEX}']", mine.ipf_index.to_json()),),
            {"range": mine.ipf_index.to_json(), "operationRange": irange.to_json()},
        )


def _applications_span(index: GraphIndex, op: Node) -> Iterator[Issue]:
    """The bounding range of an operation's shards is the operation's: their ``IPFIndex``
    ranges span its index range (when it has one and they all have one), and, as loom asks of
    every operation, each selection's shard bounding range is the operation's selection."""
    if not is_well_formed(index, op):
        return
    apps = index.applications_of(op.id)
    if not apps:
        return
    shards = []
    for app in apps:
        st = _structure_memo(index, app)
        if not st.ok:
            return  # cannot be judged until the application is fixed
        shards.append(st.ipf_index)
    irange = index_range(index, op)
    spanned = False
    if irange is not None and None not in shards:
        rank = len(irange.start)
        if any(len(r.start) != rank for r in shards if r is not None):
            return  # reported per application
        bound = bounding_range([r for r in shards if r is not None])
        if bound != irange:
            shown = str(bound) if bound is not None else "[]"
            yield _issue(
                "OperationApplicationAgreement",
                "NodeValidationError",
                "Applications do not span the operation's index range",
                f"the applications of operation {_q(op.id)} span {_q(shown)}; expected its "
                f"index range {_q(str(irange))}",
                (op.id,),
                (_ctx("IPFIndex", op.id, f".tags['{IPF_INDEX}']", irange.to_json()),),
                {
                    "range": irange.to_json(),
                    "applicationsRange": bound.to_json() if bound else None,
                },
            )
            return  # the selections follow from the index ranges: one mistake, one issue
        spanned = True
    yield from _selection_spans(index, op, apps, spanned)


def _shard_selections(
    index: GraphIndex, op: Node, apps: Sequence[Node], spanned: bool
) -> dict[tuple[str, str, int], list[ZRange]] | None:
    """Per selection of ``op`` (side, key, position), ranges whose bounding range is that of
    its applications' selections there, or None when an application disagrees with the
    operation on keys, tensors or ranks, or selects outside it (then
    OperationApplicationAgreement reports it on the application). Certified applications
    count once per footprint, by the bounding range of their projections (``spanned``: their
    index ranges are known to span the operation's index range)."""
    context = _op_context(index, op)
    certified = [_certificate(index, app) for app in apps]
    if (
        spanned
        and context is not None
        and None not in certified
        and all(identity for _, _, identity in context.footprints)
    ):
        # each selection is the index range of its shard, and these span the operation's
        # index range, which is the operation's selection (its signature is clean)
        return {}
    sides = _parsed(index, op).sides
    found: dict[tuple[str, str, int], list[ZRange]] = {
        (side, key, pos): []
        for side in ("inputs", "outputs")
        for key, sels in sides[side].items()
        for pos in range(len(sels))
    }
    for app, cert in zip(apps, certified, strict=True):
        if cert is not None:  # its selections are the projections of its index range
            continue
        mine = _parsed(index, app).sides
        for side in ("inputs", "outputs"):
            if mine[side].keys() != sides[side].keys():
                return None
            for key, o_sels in sides[side].items():
                a_sels = mine[side][key]
                if len(a_sels) != len(o_sels):
                    return None
                for pos, (a, o) in enumerate(zip(a_sels, o_sels, strict=True)):
                    if (
                        a.tensor_id != o.tensor_id
                        or len(a.range.start) != len(o.range.start)
                        or not o.range.contains(a.range)
                    ):
                        return None
                    found[side, key, pos].append(a.range)
    certs = [cert for cert in certified if cert is not None]
    if context is not None and certs:
        # an identity footprint's images are the index ranges, bounded once for all of them
        index_bound = bounding_range([cert.ipf_index for cert in certs])
        bounds = [
            index_bound if identity else bounding_range([cert.feet[k] for cert in certs])
            for k, (_, _, identity) in enumerate(context.footprints)
        ]
        for side, key, entries in context.plan:
            for pos, (_, foot) in enumerate(entries):
                bound = bounds[foot]
                if bound is not None:
                    found[side, key, pos].append(bound)
    return found


def _selection_spans(
    index: GraphIndex, op: Node, apps: Sequence[Node], spanned: bool
) -> Iterator[Issue]:
    """Loom's shard bounding range rule: per selection of ``op``, the smallest range holding
    its applications' selections there is the operation's selection."""
    found = _shard_selections(index, op, apps, spanned)
    if found is None:
        return
    sides = _parsed(index, op).sides
    for (side, key, pos), ranges in found.items():
        o = sides[side][key][pos]
        bound = ranges[0] if len(ranges) == 1 and not ranges[0].is_empty else bounding_range(ranges)
        if bound == o.range or (bound is None and o.range.is_empty):
            continue
        shown = str(bound) if bound is not None else "[]"
        path = f".body.{side}.{_key(key)}[{pos}].range"
        yield _issue(
            "OperationApplicationAgreement",
            "NodeValidationError",
            "Applications do not span the operation's selection",
            f"the applications of operation {_q(op.id)} select {_q(shown)} of {side} "
            f"{_q(key)}[{pos}] (tensor {_q(o.tensor_id)}) in all, their shard bounding range; "
            f"expected the operation's selection {_q(str(o.range))}",
            (op.id,),
            (_ctx("Selection", op.id, path, o.range.to_json()),),
            {
                "side": side,
                "key": key,
                "position": pos,
                "tensorId": o.tensor_id,
                "range": o.range.to_json(),
                "shardBoundingRange": bound.to_json() if bound is not None else None,
            },
        )


# --------------------------------------------------------------------------------------------
# ApplicationIPFSignatureAgreement


def _application_signature_uncached(index: GraphIndex, app: Node) -> Iterator[Issue]:
    name = "ApplicationIPFSignatureAgreement"
    if not is_well_formed(index, app) or _certificate(index, app) is not None:
        return
    op = index.get(app.body["operationId"])
    if op is None or op.type != OPERATION or not is_well_formed(index, op):
        return  # OperationApplicationAgreement reports it
    sig = _signature_memo(index, op)
    if sig is None:
        return  # as in loom: unsigned operations' shards are judged by their selections alone
    mine = _parsed(index, app)
    if mine.ipf_index is None:
        yield _issue(
            name,
            "NodeValidationError",
            "Application has no IPFIndex",
            f"application {_q(app.id)} has no IPFIndex tag; expected the index range of its "
            f"shard, since its operation {_q(op.id)} has an IPFSignature",
            (app.id, op.id),
            (_ctx("Tags", app.id, ".tags", sorted(app.tags)),),
        )
        return
    for side, keys in mine.sides.items():
        for key, sels in keys.items():
            ipfs = sig.get(side, {}).get(key)
            if ipfs is None or len(ipfs) != len(sels):
                continue  # OperationIPFSignatureAgreement / OperationApplicationAgreement
            for pos, (sel, ipf) in enumerate(zip(sels, ipfs, strict=True)):
                if isinstance(ipf, str) or len(ipf.shape) != len(sel.range.start):
                    continue
                if ipf.map.in_dim is not None and ipf.map.in_dim != len(mine.ipf_index.start):
                    continue
                projected = ipf.apply_range(mine.ipf_index)
                expected, clipped = _expected_selection(
                    index, side, sel, ipf, mine.ipf_index, projected
                )
                if expected != sel.range:
                    what = (
                        f"{_q(str(projected))}, the projection of its index range "
                        f"{_q(str(mine.ipf_index))}"
                        if not clipped
                        else f"{_q(str(expected))}, the projection {_q(str(projected))} of its "
                        f"index range {_q(str(mine.ipf_index))} clipped to its tensor"
                    )
                    yield _issue(
                        name,
                        "NodeValidationError",
                        "Application selection does not match its projected index",
                        f"application {_q(app.id)} selects {_q(str(sel.range))} for {side} "
                        f"{_q(key)}[{pos}]; expected {what}",
                        (app.id, op.id),
                        (_ctx("Selection", app.id, sel.path + ".range", sel.range.to_json()),),
                        {
                            "side": side,
                            "key": key,
                            "position": pos,
                            "expected": expected.to_json(),
                            "actual": sel.range.to_json(),
                        },
                    )


# --------------------------------------------------------------------------------------------
# ApplicationOutputRangeCoverageIsExact


def _coverage_exact_uncached(index: GraphIndex, op: Node) -> Iterator[Issue]:
    if not is_well_formed(index, op):
        return
    apps = index.applications_of(op.id)
    if not apps or not all(is_well_formed(index, a) for a in apps):
        return  # none (the operation runs whole), or not judged until they are fixed
    outputs: list[tuple[str, dict[str, tuple[ZRange, ...]] | None, _Parsed | None]] = []
    for app_node in apps:
        cert = _certificate(index, app_node)
        if cert is not None:
            outputs.append((app_node.id, cert.outputs, None))
        else:
            outputs.append((app_node.id, None, _parsed(index, app_node)))
    for key, o_sels in _parsed(index, op).sides["outputs"].items():
        for pos, o in enumerate(o_sels):
            owners: list[str] = []
            ranges: list[ZRange] = []
            for app_id, certified, p in outputs:
                if certified is not None:  # same keys, tensors and ranks as the operation
                    owners.append(app_id)
                    ranges.append(certified[key][pos])
                    continue
                assert p is not None
                a_sels = p.sides["outputs"].get(key)
                if a_sels is None or len(a_sels) != len(o_sels):
                    break
                a = a_sels[pos]
                if a.tensor_id != o.tensor_id or len(a.range.start) != len(o.range.start):
                    break
                owners.append(app_id)
                ranges.append(a.range)
            else:
                yield from _coverage_issues(op, key, pos, o, owners, ranges)


def _coverage_issues(
    op: Node, key: str, pos: int, o: _Sel, owners: list[str], ranges: list[ZRange]
) -> Iterator[Issue]:
    """Gaps and overlaps of one output selection; only called when every application agrees
    with the operation on that selection's key, position, tensor and rank (otherwise
    OperationApplicationAgreement reports the disagreement and coverage is not judged)."""
    name = "ApplicationOutputRangeCoverageIsExact"
    # the gap issue, the overlaps and one summary fit in MAX_ISSUES_PER_CONSTRAINT + 1 issues
    room = MAX_ISSUES_PER_CONSTRAINT
    found = coverage(o.range, ranges, max_listed=room + 1)
    gaps, overlaps = found.gaps, found.overlaps
    if not found.gap_cells and not overlaps:
        return
    if found.gap_cells:
        room -= 1
    unlisted = found.unlisted + max(0, len(overlaps) - room)
    if unlisted > 1 or not found.complete:
        overlaps = overlaps[:room]
    else:
        unlisted = 0
    where = f"outputs {_q(key)}[{pos}]"
    path = f".body.outputs.{_key(key)}[{pos}].range"
    if found.gap_cells:
        cells = found.gap_cells if found.gaps_exact else f"at least {found.gap_cells}"
        listed = [g.to_json() for g in gaps[:MAX_LISTED]]
        shown = (
            ", ".join(str(g) for g in gaps[:4]) + (" ..." if len(gaps) > 4 else "")
            if gaps
            else "too scattered to list"
        )
        params: dict[str, Any] = {
            "tensorId": o.tensor_id,
            "key": key,
            "position": pos,
            "cells": found.gap_cells,
            "gaps": listed,
        }
        if not found.gaps_exact:
            params["atLeast"] = True
        yield _issue(
            name,
            "CoverageError",
            "Application outputs leave a gap",
            f"the applications of operation {_q(op.id)} leave {cells} cells of {where} "
            f"(tensor {_q(o.tensor_id)}) unwritten: {shown}; expected them to cover "
            f"{_q(str(o.range))} exactly",
            (op.id,),
            (_ctx("Output", op.id, path, o.range.to_json()),),
            params,
        )
    for i, j, inter in overlaps:
        yield _issue(
            name,
            "CoverageError",
            "Application outputs overlap",
            f"applications {_q(owners[i])} and {_q(owners[j])} of operation "
            f"{_q(op.id)} both write {_q(str(inter))} ({inter.size} cells) of {where} "
            f"(tensor {_q(o.tensor_id)}); expected each cell to be written once",
            (op.id, owners[i], owners[j]),
            (
                _ctx("Output", owners[i], path, ranges[i].to_json()),
                _ctx("Output", owners[j], path, ranges[j].to_json()),
            ),
            {
                "tensorId": o.tensor_id,
                "key": key,
                "position": pos,
                "cells": inter.size,
                "overlap": inter.to_json(),
            },
        )
    if unlisted:
        more = f"at least {unlisted}" if not found.complete else str(unlisted)
        yield not_listed(
            name,
            f"... and {more} more overlaps of {where} (tensor {_q(o.tensor_id)}) of operation "
            f"{_q(op.id)}; fix the ones above first",
            unlisted,
            at_least=not found.complete,
            summaries=("Application outputs overlap",),
            node_ids=(op.id,),
            params={"tensorId": o.tensor_id, "key": key, "position": pos},
        )


# --------------------------------------------------------------------------------------------
# PlanPlacement


def _plan_placement_uncached(index: GraphIndex, node: Node) -> Iterator[Issue]:
    name = "PlanPlacement"
    tag = node.tags.get(PLACEMENT) if node.tags else None
    if tag is None or not is_well_formed(index, node):
        return
    path = f".tags['{PLACEMENT}']"
    mesh_id = tag["mesh"]
    mesh = index.get(mesh_id)
    if mesh is None:
        yield _missing(name, node, mesh_id, path + ".mesh", "a Mesh")
        return
    if mesh.type != MESH:
        yield _wrong_type(name, node, mesh, path + ".mesh", "a Mesh")
        return
    if not is_well_formed(index, mesh):
        return
    sizes = list(mesh.body["axes"].values())
    names = list(mesh.body["axes"])
    coords = [int(c) for c in tag["coords"]]
    if len(coords) != len(sizes):
        yield _issue(
            name,
            "PlacementError",
            "Placement coordinates do not match the mesh",
            f"node {_q(node.id)} is placed at {_q(coords)} of mesh {_q(mesh.id)}, which has "
            f"{len(sizes)} axes {_names(names)}; expected {len(sizes)} coordinates",
            (node.id, mesh.id),
            (_ctx("Placement", node.id, path + ".coords", coords),),
            {"mesh": mesh.id, "coords": coords, "meshAxes": dict(mesh.body["axes"])},
        )
        return
    for d, (c, n) in enumerate(zip(coords, sizes, strict=True)):
        if not 0 <= c < n:
            yield _issue(
                name,
                "PlacementError",
                "Placement coordinates are outside the mesh",
                f"node {_q(node.id)} is placed at {_q(coords)}; coordinate {c} of mesh axis "
                f"{_q(names[d])} is outside 0..{n - 1} of mesh {_q(mesh.id)}",
                (node.id, mesh.id),
                (_ctx("Placement", node.id, f"{path}.coords[{d}]", c),),
                {"mesh": mesh.id, "coords": coords, "meshAxes": dict(mesh.body["axes"])},
            )


# --------------------------------------------------------------------------------------------
# Caching constraint results by what they read
#
# A constraint's issues for a node depend only on that node and the nodes it reads (see the
# protocol above). Each loom constraint below remembers its last result together with the
# nodes (and derived index ranges) it read, and reuses it while they are the same objects, so
# that re-checking a neighbour of an edited node costs a few identity comparisons.


def _new_box(node: Node) -> list[Any]:
    """``[deps, value, index version at which deps were last confirmed]``."""
    return [None, (), -1]


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):  # noqa: SIM110 -- a plain loop is faster on this hot path
        if x is not y and x != y:
            return False
    return True


def _cached(
    index: GraphIndex,
    node: Node,
    key: str,
    deps: tuple[Any, ...],
    compute: Callable[[GraphIndex, Node], Iterable[Issue]],
) -> tuple[Issue, ...]:
    box = index.memo(node, key, _new_box)
    if box[0] is not None and _same(box[0], deps):
        return box[1]
    value = tuple(compute(index, node))
    box[0] = deps
    box[1] = value
    return value


def _op_of(index: GraphIndex, app: Node) -> Node | None:
    op_id = app.body.get("operationId")
    return index.get(op_id) if isinstance(op_id, str) else None


def _irange_dep(index: GraphIndex, op: Node | None) -> ZRange | None:
    return index_range(index, op) if op is not None and op.type == OPERATION else None


def _tensor_operation_agreement(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    get = index.get
    if node.type == TENSOR:
        writers = index.writers_of(node.id)
        if len(writers) < 2:
            return ()  # a tensor's only issue here is a second writer
        deps = tuple(get(r) for r in writers)
    else:
        deps = tuple(get(r) for r in index.references(node.id))
    return _cached(index, node, "TOA", deps, _tensor_operation_agreement_uncached)


def _operation_signature(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    get = index.get
    deps = (index_range(index, node), *(get(r) for r in index.references(node.id)))
    return _cached(index, node, "OIPF", deps, _operation_signature_uncached)


def _operation_application(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    if node.type == OPERATION:
        deps: tuple[Any, ...] = (index_range(index, node), *index.applications_of(node.id))
    else:
        if _certificate(index, node) is not None:
            return ()  # an exact projection of its index: nothing to say (kept current itself)
        op = _op_of(index, node)
        deps = (op, _irange_dep(index, op))
    return _cached(index, node, "OAA", deps, _operation_application_uncached)


def _application_signature(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    if _certificate(index, node) is not None:
        return ()  # an exact projection of its index: nothing to say (kept current itself)
    get = index.get  # the operation and the tensors (whose ranges clip padded reads)
    deps = tuple(get(r) for r in index.references(node.id))
    return _cached(index, node, "AIPF", deps, _application_signature_uncached)


def _coverage_exact(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    deps = tuple(index.applications_of(node.id))
    return _cached(index, node, "COV", deps, _coverage_exact_uncached)


def _plan_placement(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    tag = node.tags.get(PLACEMENT) if node.tags else None
    if tag is None:
        return ()
    mesh = tag.get("mesh") if isinstance(tag, dict) else None
    deps = (index.get(mesh) if isinstance(mesh, str) else None,)
    return _cached(index, node, "PP", deps, _plan_placement_uncached)


# --------------------------------------------------------------------------------------------
# NoTensorOperationCycles (whole graph)


def _dataflow(op: Node) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tensor ids an operation reads and writes."""
    return selected_tensor_ids(op.body, "inputs"), selected_tensor_ids(op.body, "outputs")


def _cycle_components(index: GraphIndex) -> list[list[str]]:
    """The sets of operation and tensor ids that depend on each other in a cycle."""
    succ: dict[str, list[str]] = {}
    for op in index.of_type(OPERATION):
        ins, outs = index.memo(op, "dataflow", _dataflow)
        for t in ins:
            succ.setdefault(t, []).append(op.id)
        if outs:
            succ.setdefault(op.id, []).extend(outs)
    # Tarjan's strongly connected components, iteratively.
    counter = 0
    low: dict[str, int] = {}
    num: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in list(succ):
        if root in num:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                num[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            children = succ.get(v, ())
            descended = False
            while i < len(children):
                w = children[i]
                i += 1
                if w not in num:
                    work.append((v, i))
                    work.append((w, 0))
                    descended = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], num[w])
            if descended:
                continue
            if low[v] == num[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return found


def _cycle_issues(index: GraphIndex, found: list[list[str]]) -> list[Issue]:
    """One issue per cycle component (members that no longer exist are left out)."""
    issues = []
    for comp in found:
        members = index.in_document_order(comp)
        if not members:
            continue
        ops = [m for m in members if _type_of(index, m) == OPERATION]
        op_set = set(ops)
        tensors = sorted(m for m in comp if m not in op_set)
        shown = ", ".join(f'"{m}"' for m in members[:8])
        if len(members) > 8:
            shown += f" ... ({len(members)} in all)"
        # a cycle through thousands of nodes is still one small issue: the first are named
        params: dict[str, Any] = {
            "operationIds": ops[:MAX_LISTED],
            "tensorIds": tensors[:MAX_LISTED],
        }
        if len(members) > MAX_LISTED:
            params["count"] = len(members)
        issues.append(
            _issue(
                "NoTensorOperationCycles",
                "ReferenceCycleError",
                "Operations and tensors form a cycle",
                f"operations and tensors {shown} depend on each other in a cycle; expected "
                "every tensor to be computed before the operations that read it",
                tuple(members[:MAX_LISTED]),
                tuple(_ctx("Operation", m, "", None) for m in ops[:8]),
                params,
            )
        )
    issues.sort(key=lambda i: index.position(i.node_ids[0]))
    return issues


def _type_of(index: GraphIndex, node_id: str) -> str | None:
    node = index.get(node_id)
    return node.type if node is not None else None


def _cycles(index: GraphIndex) -> list[Issue]:
    return _cycle_issues(index, _cycle_components(index))


# --------------------------------------------------------------------------------------------
# The registry and the full check

_ALL: frozenset[str] = frozenset()

LOOM_CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint("SchemaConformance", _ALL, _schema_conformance),
    Constraint("TensorDTypesAreValid", frozenset({TENSOR}), _tensor_dtypes),
    Constraint(
        "TensorOperationAgreement", frozenset({OPERATION, TENSOR}), _tensor_operation_agreement
    ),
    Constraint("OperationIPFSignatureAgreement", frozenset({OPERATION}), _operation_signature),
    Constraint(
        "OperationApplicationAgreement",
        frozenset({OPERATION, APPLICATION}),
        _operation_application,
    ),
    Constraint(
        "ApplicationIPFSignatureAgreement", frozenset({APPLICATION}), _application_signature
    ),
    Constraint("ApplicationOutputRangeCoverageIsExact", frozenset({OPERATION}), _coverage_exact),
)
"""The per-node constraints of loom's rules (plus SchemaConformance); cycles are whole-graph."""

PLACEMENT_CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint("PlanPlacement", _ALL, _plan_placement),
)


def all_constraints() -> tuple[Constraint, ...]:
    """Every per-node constraint, in reporting order (read at call time, so constraints
    registered in :data:`geon.core.axis_checks.CONSTRAINTS` are always included)."""
    return (*LOOM_CONSTRAINTS, *axis_checks.CONSTRAINTS, *PLACEMENT_CONSTRAINTS)


class _Dispatch:
    """Per node type, the constraints that apply (built once per check)."""

    def __init__(self, constraints: Sequence[Constraint]) -> None:
        self.constraints = tuple(constraints)
        self._by_type: dict[str, tuple[Constraint, ...]] = {}

    def for_type(self, node_type: str) -> tuple[Constraint, ...]:
        found = self._by_type.get(node_type)
        if found is None:
            found = tuple(
                c for c in self.constraints if not c.node_types or node_type in c.node_types
            )
            self._by_type[node_type] = found
        return found


def _run_node(dispatch: _Dispatch, index: GraphIndex, node: Node) -> list[Issue]:
    out: list[Issue] = []
    for c in dispatch.for_type(node.type):
        try:
            out.extend(c.check(index, node))  # O(node size) issues each (coverage: bounded)
        except Exception as exc:  # a bug in one constraint must not hide the other issues
            out.append(
                Issue(
                    c.name,
                    "InternalError",
                    "Constraint failed to run",
                    f"constraint {_q(c.name)} failed on node {_q(node.id)}: "
                    f"{type(exc).__name__}: {exc}",
                    node_ids=(node.id,),
                )
            )
    if len(out) > MAX_ISSUES_PER_CONSTRAINT + 1:  # rare: bound each constraint's share
        grouped = itertools.groupby(out, key=operator.attrgetter("constraint"))
        out = [i for name, group in grouped for i in bound_node_issues(name, node.id, group)]
    return out


def check_node(index: GraphIndex, node: Node) -> list[Issue]:
    """The issues of one node under every per-node constraint."""
    return _run_node(_Dispatch(all_constraints()), index, node)


def _envelope(graph: Graph) -> list[Issue]:
    if UUID_RE.match(graph.id):
        return []
    return [
        _issue(
            "SchemaConformance",
            "SchemaError",
            "Document id is not a UUID",
            f"document id {_q(graph.id)} is not a UUID; expected the form "
            '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)',
            (),
            (Context("Document id", "$.id", graph.id),),
            {"id": graph.id},
        )
    ]


def check(graph: Graph) -> list[Issue]:
    """Every issue of ``graph``: document-level, then per node in document order, then cycles —
    bounded per constraint and node and per check (see :mod:`geon.core.issues`)."""
    return bound_check_issues(_check_all(graph))


def _check_all(graph: Graph) -> list[Issue]:
    """:func:`check` before the bound per check."""
    dispatch = _Dispatch(all_constraints())
    index = graph.index
    issues = _envelope(graph)
    for node in graph.nodes:
        issues.extend(_run_node(dispatch, index, node))
    issues.extend(_cycles(index))
    return issues


# --------------------------------------------------------------------------------------------
# Raw documents


def _doc_issue(
    summary: str, message: str, path: str = "$", data: Any = None, **params: Any
) -> Issue:
    return _issue(
        "SchemaConformance",
        "DocumentError",
        summary,
        message,
        (),
        (Context("Document", path, _small(data)),),
        params,
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
                f'document is {_q(data)}; expected a JSON object with "id" and "nodes"',
                data=data,
            )
        ]
    issues: list[Issue] = []
    graph_id = data.get("id")
    if not isinstance(graph_id, str):
        issues.append(
            _doc_issue(
                "Document is malformed",
                (f"document has id {_q(graph_id)}" if "id" in data else 'document has no "id"')
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
                    f"document has nodes {_q(nodes)}"
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
                    f"node {i} has id {_q(node.id)}, which an earlier node already has; expected "
                    "unique ids (the later node is ignored)",
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


def check_document(data: Any) -> list[Issue]:
    """Check a document that may be malformed in any way (JSON text, bytes or parsed data).

    >>> [i.summary for i in check_document("{")]
    ['Document is not valid JSON']
    """
    graph, issues = load_document(data)
    if graph is None:
        return issues
    found = _check_all(graph)
    if not graph.id and found and found[0].summary == "Document id is not a UUID":
        found = found[1:]  # already reported as malformed
    return bound_check_issues(issues + found)


# --------------------------------------------------------------------------------------------
# Incremental checking


class IncrementalChecker:
    """Keeps the issues of a graph current across edits, re-checking only what an edit affects.

    >>> from geon.core.graph import NOTE
    >>> g = Graph(id="00000000-0000-0000-0000-000000000000")
    >>> ic = IncrementalChecker(g)
    >>> [i.summary for i in ic.apply([{"op": "add_node", "node": {"id": "n", "type": NOTE,
    ...     "body": {"message": "hi"}}}])]
    ['Node id is not a UUID']
    >>> ic.apply([{"op": "remove_node", "id": "n"}])
    []
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._dispatch = _Dispatch(all_constraints())
        self._by_node: dict[str, list[Issue]] = {}
        self._dataflow: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._cache: list[Issue] | None = None
        self.rechecked: int = 0
        """How many nodes the last update re-checked (for tests and benchmarks)."""
        self._full()

    def _full(self) -> None:
        index = self.graph.index
        self._by_node = {}
        for node in self.graph.nodes:
            found = _run_node(self._dispatch, index, node)
            if found:
                self._by_node[node.id] = found
        self._dataflow = {op.id: _dataflow(op) for op in index.of_type(OPERATION)}
        self._envelope = _envelope(self.graph)
        self._components = _cycle_components(index)
        self._cycles = _cycle_issues(index, self._components)
        self._cache = None
        self.rechecked = len(index)

    @property
    def issues(self) -> list[Issue]:
        """Every issue, in the order :func:`check` gives them."""
        if self._cache is None:
            index = self.graph.index
            out = list(self._envelope)
            for nid in index.in_document_order(self._by_node):
                out.extend(self._by_node[nid])
            out.extend(self._cycles)
            self._cache = bound_check_issues(out)
        return list(self._cache)

    def apply(self, ops: Sequence[Mapping[str, Any]]) -> list[Issue]:
        """Apply edit ops to the graph (atomically, see :meth:`Graph.apply`), re-check what they
        affect and return every issue. A refused edit raises and changes nothing."""
        changes = self.graph.apply(ops)
        self.update(changes)
        return self.issues

    def update(self, changes: Iterable[Change]) -> None:
        """Re-check after changes that were applied to the graph by other means."""
        index = self.graph.index
        affected: set[str] = set()
        axis_readers: set[str] = set()
        dataflow_changed = False
        for ch in changes:
            affected.add(ch.id)
            for node in (ch.old, ch.new):
                if node is None:
                    continue
                affected.update(node_references(node))
                if node.type == AXIS:
                    axis_readers.update(self._axis_dependents(node))
            affected.update(index.referrers(ch.id))
            old_flow = self._dataflow.pop(ch.id, None)
            new_flow = None
            if ch.new is not None and ch.new.type == OPERATION:
                new_flow = _dataflow(ch.new)
                self._dataflow[ch.id] = new_flow
            if old_flow != new_flow:
                dataflow_changed = True
        affected |= axis_readers
        for nid in affected:
            node = index.get(nid)
            if node is None:
                self._by_node.pop(nid, None)
                continue
            found = _run_node(self._dispatch, index, node)
            if found:
                self._by_node[nid] = found
            else:
                self._by_node.pop(nid, None)
        if dataflow_changed:
            self._components = _cycle_components(index)
        if dataflow_changed or self._components:
            self._cycles = _cycle_issues(index, self._components)
        self._cache = None
        self.rechecked = len(affected)

    def _axis_dependents(self, axis: Node) -> set[str]:
        name = axis.body.get("name")
        return self.graph.index.axis_readers(name) if isinstance(name, str) else set()
