"""The checker's fast path: certificates, the caches, and the compiled schema validators' memos
— everything that makes a full check cost about three ``json.loads`` and a re-check after an
edit under 5 ms, kept apart from the rules it speeds up (which give the same issues without it:
``tests/core/test_fastpath.py`` checks every example both ways).

- **Certificates.** An application whose body is exactly the projection of its index range
  through its operation's (clean) signature is *certified* (:func:`is_certified`), which proves
  that ``OperationApplicationAgreement`` and ``ApplicationIPFSignatureAgreement`` have nothing to
  say about it. The certificate is read straight from the JSON (plain ints, exact keys) and also
  proves that the body matches its schema, so a certified application is neither validated nor
  parsed (:func:`checked_structure`). What certifying needs from an operation (its distinct
  projections and padded-read clips, :func:`_op_context`) is built once per operation.
- **Caches.** A constraint's issues for a node depend only on that node and the nodes it reads
  (the protocol in :mod:`geon.core.checks`); :func:`cached` remembers the last result with the
  nodes (and derived index ranges) it read and reuses it while they are the same objects, so
  re-checking a neighbour of an edited node costs a few identity comparisons. Values derived
  from several nodes are reused while ``GraphIndex.version`` is unchanged. Equal IPFs are built
  once across graphs (:func:`geon.core.zspace.ipf_of`), as are strings that matched
  a schema pattern; :func:`clear_caches` forgets both.

Switching the fast path off is replacing ``_certificate`` by a function that returns None: every
application then goes the long way.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, TypeVar

from geon.core import schemas
from geon.core.checks.messages import UUID_RE
from geon.core.checks.operation_signature import operation_signature_issues
from geon.core.checks.structure import (
    Structure,
    judge,
    parsed,
    structure_of,
)
from geon.core.graph import APPLICATION, IPF_INDEX, OPERATION, GraphIndex, Node
from geon.core.issues import Issue
from geon.core.ranges import index_range
from geon.core.signatures import signature_of
from geon.core.zspace import IPF, ZRange, bounding_range, parse_range, selection_of
from geon.core.zspace import ipf_of as _ipf_of

__all__ = [
    "Certificate",
    "CertifiedSpans",
    "OpContext",
    "cached",
    "certified_outputs",
    "certified_spans",
    "checked_structure",
    "clear_caches",
    "is_certified",
    "is_well_formed",
    "operation_of",
    "operation_signature",
    "per_version",
    "schema_conformance",
]


# --------------------------------------------------------------------------------------------
# Caches


def _new_box(node: Node) -> list[Any]:
    """``[deps, value, index version at which deps were last confirmed]``."""
    return [None, (), -1]


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether two dependency tuples hold the same values (identity first: nodes are shared)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):  # noqa: SIM110 -- a plain loop is faster on this hot path
        if x is not y and x != y:
            return False
    return True


T = TypeVar("T")


def per_version(
    index: GraphIndex, node: Node, key: str, compute: Callable[[GraphIndex, Node], T]
) -> T:
    """``compute(index, node)``, kept under ``key`` while the index version is unchanged (for
    what several constraints ask of one node in a check)."""
    box = index.memo(node, key, _unjudged)
    version = index.version
    if box[0] != version:
        box[1] = compute(index, node)
        box[0] = version
    value: T = box[1]
    return value


def _unjudged(node: Node) -> list[Any]:
    """``[index version it was judged at, the answer]``."""
    return [-1, None]


def cached(
    index: GraphIndex,
    node: Node,
    key: str,
    deps: tuple[Any, ...],
    compute: Callable[[GraphIndex, Node], Iterable[Issue]],
) -> tuple[Issue, ...]:
    """``compute(index, node)`` as a tuple, reused under ``key`` while ``node`` and ``deps``
    (the nodes and derived values it read) are unchanged."""
    box = index.memo(node, key, _new_box)
    if box[0] is not None and _same(box[0], deps):
        return box[1]
    value = tuple(compute(index, node))
    box[0] = deps
    box[1] = value
    return value


def operation_of(index: GraphIndex, app: Node) -> Node | None:
    """The node an application's ``operationId`` names, if any (of any type)."""
    op_id = app.body.get("operationId")
    return index.get(op_id) if isinstance(op_id, str) else None


def operation_signature(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    """OperationIPFSignatureAgreement's issues of ``node``, cached on what they read (its index
    range and the nodes it references: tensors clip padded reads). Certifying asks for them."""
    get = index.get
    deps = (index_range(index, node), *(get(r) for r in index.references(node.id)))
    return cached(index, node, "OIPF", deps, operation_signature_issues)


# --------------------------------------------------------------------------------------------
# Structure: certified applications are not validated twice


def checked_structure(index: GraphIndex, node: Node) -> Structure:
    """SchemaConformance's verdict on ``node`` (see :func:`structure_of`), an application's
    judged by its certificate when it has one (the same verdict, without validating)."""
    slots = index._memo.get(node.id)  # the fast path of index.memo, inlined: this is hot
    if slots is not None:
        hit = slots.get("structure")
        if hit is not None and hit[0] is node:
            return hit[1]
    if node.type == APPLICATION:
        return index.memo(node, "structure", functools.partial(_app_structure, index))
    return structure_of(index, node)


def is_well_formed(index: GraphIndex, node: Node | None) -> bool:
    """Whether ``node`` exists and has no ``SchemaConformance`` error (cached per node version)."""
    if node is None:
        return False
    return checked_structure(index, node).ok


def schema_conformance(index: GraphIndex, node: Node) -> Iterable[Issue]:
    """SchemaConformance's issues of ``node`` (the rule: :mod:`geon.core.checks.structure`)."""
    return checked_structure(index, node).issues


def _app_structure(index: GraphIndex, app: Node) -> Structure:
    """An application's structure, certifying it on the way: most applications of a sharded
    operation are exact projections of their index range, and certifying one from its JSON
    (``_certify_body``) proves its body matches the schema, so it is not validated twice. The
    verdict is the same either way; the certificate is kept for the application's checks."""
    idx = _valid_ipf_index(app)
    if idx is None:
        return judge(app)
    op = operation_of(index, app)
    context = _op_context(index, op)
    cert = _certify_body(app.body, idx, context) if context is not None else None
    if cert is None:
        return judge(app)
    found = _certified_structure(app, idx)
    if found.ok:
        box = index.memo(app, "certificate", _new_box)
        box[0] = (op, context)
        box[1] = cert
        box[2] = index.version
    return found


def _certified_structure(app: Node, idx: ZRange) -> Structure:
    """The structure of an application whose body and ``IPFIndex`` are known to be valid: only
    its id and its other tags are left to judge (the long way when one of them is wrong)."""
    if UUID_RE.match(app.id) is None:
        return judge(app, body_valid=True, ipf_index=idx)
    for url, value in app.tags.items():
        if url != IPF_INDEX:
            tag_ok = schemas.validator_for_tag(url)
            if tag_ok is not None and not tag_ok(value):
                return judge(app, body_valid=True, ipf_index=idx)
    return Structure((), True, None, None, idx, True)


def _valid_ipf_index(node: Node) -> ZRange | None:
    """A node's ``IPFIndex`` when it is a plain valid range (see ``parse_range``), else None."""
    return parse_range(node.tags.get(IPF_INDEX), exact=True) if node.tags else None


# --------------------------------------------------------------------------------------------
# Certificates


class Certificate(NamedTuple):
    """Proof that an application agrees with its operation: its body is exactly the projection
    of its index range through the operation's signature, and that range lies inside the
    operation's. Then OperationApplicationAgreement and ApplicationIPFSignatureAgreement have
    nothing to say about it (selections inside the operation's follow from the hull being
    monotone and the operation's own signature agreeing), and coverage can use ``outputs``."""

    ipf_index: ZRange
    outputs: dict[str, tuple[ZRange, ...]]
    feet: tuple[ZRange, ...]
    """Per footprint of the operation's context (``OpContext.footprints``), the selection."""


def _certificate(index: GraphIndex, app: Node) -> Certificate | None:
    """The certificate of ``app`` (None: it goes the long way), re-judged only when its
    operation or the operation's context changed."""
    version = index._version  # the fast path of index.memo and .version, inlined: this is hot
    slots = index._memo.get(app.id)
    hit = slots.get("certificate") if slots is not None else None
    if hit is not None and hit[0] is app and hit[1][2] == version:
        return hit[1][1]  # nothing changed since it was judged (one full check asks 4 times)
    box = index.memo(app, "certificate", _new_box)
    op = operation_of(index, app)
    context = _op_context(index, op)
    deps = (op, context)
    if box[0] is None or not _same(box[0], deps):
        box[0] = deps
        box[1] = _certify(index, app, context)
    box[2] = version
    return box[1]


def is_certified(index: GraphIndex, app: Node) -> bool:
    """Whether ``app`` is certified: the application checks then have nothing to say about it
    (through ``_certificate``, the one switch of the fast path)."""
    return _certificate(index, app) is not None


def certified_outputs(index: GraphIndex, app: Node) -> dict[str, tuple[ZRange, ...]] | None:
    """The output selections of a certified application, by key (None: not certified); they
    have the operation's keys, tensors and ranks."""
    cert = _certificate(index, app)
    return cert.outputs if cert is not None else None


class CertifiedSpans(NamedTuple):
    """What the certified applications of one operation say about its shard bounding ranges."""

    certified: tuple[bool, ...]
    """Per application, whether it is certified (its selections are counted in ``bounds``)."""
    bounds: dict[tuple[str, str, int], ZRange]
    """Per selection of the operation (side, key, position), the bounding range of the
    certified applications' selections there (absent when they select nothing)."""
    complete: bool
    """Whether every selection is known to be spanned: every application is certified with
    identity footprints and their index ranges span the operation's."""


def certified_spans(
    index: GraphIndex, op: Node, apps: Sequence[Node], spanned: bool
) -> CertifiedSpans:
    """The shard bounding ranges the certified applications of ``op`` give, counted once per
    footprint by the bounding range of their projections (``spanned``: the applications'
    index ranges are known to span the operation's index range)."""
    context = _op_context(index, op)
    certs = [_certificate(index, app) for app in apps]
    certified = tuple(cert is not None for cert in certs)
    if context is None or not any(certified):
        return CertifiedSpans(certified, {}, False)
    if spanned and all(certified) and all(identity for _, _, identity in context.footprints):
        # each selection is the index range of its shard, and these span the operation's
        # index range, which is the operation's selection (its signature is clean)
        return CertifiedSpans(certified, {}, True)
    known = [cert for cert in certs if cert is not None]
    # an identity footprint's images are the index ranges, bounded once for all of them
    index_bound = bounding_range([cert.ipf_index for cert in known])
    feet = [
        index_bound if identity else bounding_range([cert.feet[k] for cert in known])
        for k, (_, _, identity) in enumerate(context.footprints)
    ]
    bounds: dict[tuple[str, str, int], ZRange] = {}
    for side, key, entries in context.plan:
        for pos, (_, foot) in enumerate(entries):
            bound = feet[foot]
            if bound is not None:
                bounds[side, key, pos] = bound
    return CertifiedSpans(certified, bounds, False)


class OpContext(NamedTuple):
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


def _op_context(index: GraphIndex, op: Node | None) -> OpContext | None:
    """What certifying the applications of ``op`` needs, or None when they go the long way."""
    if op is None or op.type != OPERATION:
        return None
    version = index._version  # the fast path of index.memo and .version, inlined: this is hot
    slots = index._memo.get(op.id)
    hit = slots.get("certify-context") if slots is not None else None
    if hit is not None and hit[0] is op and hit[1][2] == version:
        return hit[1][1]  # nothing changed since it was built (asked once per application)
    box = index.memo(op, "certify-context", _new_box)
    irange = index_range(index, op) if is_well_formed(index, op) else None
    if irange is None:
        box[0] = None
        box[1] = None
        box[2] = version
        return None
    # the operation's own signature issues (cached on what they read, tensors included)
    own = operation_signature(index, op)
    if box[0] is not None and _same(box[0], (irange, own)):
        box[2] = version
        return box[1]
    value = None
    sig = signature_of(index, op)
    # with issues in the operation's own signature, its applications go the long way
    if sig is not None and not own:
        sides = parsed(index, op).sides
        # equal IPFs are one object (ipf_from_json), so footprints and images go by IPF identity,
        # as in OperationIPFSignatureAgreement (hashing an IPF costs more than projecting it)
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
            value = OpContext(op.id, irange, keys, tuple(feet), tuple(plan), irange.rank)
    box[0] = (irange, own)
    box[1] = value
    box[2] = version
    return value


def _certify(index: GraphIndex, app: Node, context: OpContext | None) -> Certificate | None:
    if context is None:
        return None
    st = checked_structure(index, app)
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


def _certify_body(body: Any, idx: ZRange, context: OpContext) -> Certificate | None:
    """The certificate of an application whose body is *exactly* the projection of its index
    range ``idx`` through the operation's signature, else None — read straight from the JSON.

    It needs no schema validation first: every value it accepts is one the Application schema
    accepts (the operation id and tensor ids equal the well-formed operation's, selections and
    ranges have exactly their keys, coordinates equal ints without being booleans — whole
    floats are JSON Schema integers — and start <= end), so a certified body is also proof of
    the application's structure (see ``_app_structure``)."""
    # non-empty (start <= end holds) and inside the operation's index range, in C-level loops
    start, end = idx.start, idx.end
    irange = context.irange
    if (
        len(start) != context.rank
        or not all(map(operator.lt, start, end))
        or not all(map(operator.le, irange.start, start))
        or not all(map(operator.ge, irange.end, end))
    ):
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
        # a padded read is clipped to the operation's selection (bounds)
        image = idx if identity else selection_of(ipf, idx, bounds, read=True)
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
    return Certificate(idx, outputs, tuple(feet))


def clear_caches() -> None:
    """Forget what the checker remembers across graphs (equal IPFs, strings that matched a
    schema pattern), so that the next check starts cold — as the benchmark's full check does."""
    _ipf_of.cache_clear()
    schemas.clear_memos()
