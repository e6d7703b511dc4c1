"""OperationApplicationAgreement and ApplicationIPFSignatureAgreement (DESIGN.md §5): an
application references an operation and agrees with it (keys, tensors, selections and index
range inside the operation's); the applications of an operation span it (their index ranges its
index range, and per selection their shard bounding range its selection, as loom asks); and an
application's selections are the projections of its ``IPFIndex`` through the operation's
``IPFSignature`` (clipped for padded reads, as :func:`geon.core.zspace.selection_of` says).

As in loom, an Application of an Operation without an IPFSignature needs no IPFIndex, and its
selections are judged by the shard bounding range alone. A certified application
(:mod:`geon.core.checks.fastpath`) has nothing to say here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from geon.core.checks.fastpath import (
    cached,
    certified_spans,
    checked_structure,
    is_certified,
    is_well_formed,
    operation_of,
)
from geon.core.checks.messages import (
    context,
    few,
    issue,
    key_path,
    missing,
    names,
    wrong_type,
)
from geon.core.checks.operation_signature import expected_selection
from geon.core.checks.structure import parsed
from geon.core.errors import quote
from geon.core.graph import (
    IPF_INDEX,
    OPERATION,
    GraphIndex,
    Node,
)
from geon.core.issues import Issue
from geon.core.ranges import index_range
from geon.core.signatures import signature_of
from geon.core.zspace import ZRange, bounding_range

__all__ = ["application_signature", "operation_application"]


def operation_application(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    """OperationApplicationAgreement's issues of an operation (its applications span it) or an
    application (it agrees with its operation), cached on what they read."""
    if node.type == OPERATION:
        deps: tuple[Any, ...] = (index_range(index, node), *index.applications_of(node.id))
    else:
        if is_certified(index, node):
            return ()  # an exact projection of its index: nothing to say (kept current itself)
        op = operation_of(index, node)
        deps = (op, _irange_dep(index, op))
    return cached(index, node, "OAA", deps, _operation_application_uncached)


def _irange_dep(index: GraphIndex, op: Node | None) -> ZRange | None:
    """The index range of the operation an application names (a dependency of its result)."""
    return index_range(index, op) if op is not None and op.type == OPERATION else None


def _operation_application_uncached(index: GraphIndex, node: Node) -> Iterator[Issue]:
    """OperationApplicationAgreement on an operation (span) or an application (agreement)."""
    if node.type == OPERATION:
        yield from _applications_span(index, node)
    else:
        yield from _application_agrees(index, node)


def _application_agrees(index: GraphIndex, app: Node) -> Iterator[Issue]:
    """An application references an Operation and agrees with it: keys, tensors, selections
    and index range inside the operation's."""
    name = "OperationApplicationAgreement"
    if not is_well_formed(index, app) or is_certified(index, app):
        return
    op_id = app.body["operationId"]
    op = index.get(op_id)
    if op is None:
        yield missing(name, app, op_id, ".body.operationId", "an Operation")
        return
    if op.type != OPERATION:
        yield wrong_type(name, app, op, ".body.operationId", "an Operation")
        return
    if not is_well_formed(index, op):
        return
    mine = parsed(index, app)
    theirs = parsed(index, op)
    for side in ("inputs", "outputs"):
        a_keys, o_keys = mine.sides[side], theirs.sides[side]
        if a_keys.keys() != o_keys.keys():
            yield issue(
                name,
                "NodeValidationError",
                "Application keys do not match the operation's",
                f"application {quote(app.id)} has {side} keys {names(sorted(a_keys))}; expected "
                f"{names(sorted(o_keys))} like its operation {quote(op.id)}",
                (app.id, op.id),
                (context("Selections", app.id, f".body.{side}", sorted(a_keys)),),
                {
                    "side": side,
                    "keys": few(sorted(a_keys)),
                    "operationKeys": few(sorted(o_keys)),
                },
            )
            continue
        for key, a_sels in a_keys.items():
            o_sels = o_keys[key]
            if len(a_sels) != len(o_sels):
                yield issue(
                    name,
                    "NodeValidationError",
                    "Application keys do not match the operation's",
                    f"application {quote(app.id)} has {len(a_sels)} selections for {side} "
                    f"{quote(key)}; expected {len(o_sels)} like its operation {quote(op.id)}",
                    (app.id, op.id),
                    (context("Selections", app.id, f".body.{side}.{key_path(key)}", len(a_sels)),),
                    {"side": side, "key": key},
                )
                continue
            for a, o in zip(a_sels, o_sels, strict=True):
                if a.tensor_id != o.tensor_id:
                    yield issue(
                        name,
                        "NodeValidationError",
                        "Application tensor does not match the operation's",
                        f"application {quote(app.id)} selects tensor {quote(a.tensor_id)} at "
                        f"{a.path[1:]}; expected {quote(o.tensor_id)} like its operation "
                        f"{quote(op.id)}",
                        (app.id, op.id),
                        (context("Selection", app.id, a.path + ".tensorId", a.tensor_id),),
                        {"tensorId": a.tensor_id, "expected": o.tensor_id},
                    )
                elif len(a.range.start) != len(o.range.start) or not o.range.contains(a.range):
                    yield issue(
                        name,
                        "NodeValidationError",
                        "Application selection is outside the operation's",
                        f"application {quote(app.id)} selects {quote(str(a.range))} of tensor "
                        f"{quote(a.tensor_id)}; expected a range inside {quote(str(o.range))}, the "
                        f"selection of its operation {quote(op.id)}",
                        (app.id, op.id),
                        (context("Selection", app.id, a.path + ".range", a.range.to_json()),),
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
        yield issue(
            name,
            "NodeValidationError",
            "Application index is outside the operation's",
            f"application {quote(app.id)} has index range {quote(str(mine.ipf_index))}; expected a "
            f"range inside {quote(str(irange))}, the index range of its operation {quote(op.id)}",
            (app.id, op.id),
            (context("IPFIndex", app.id, f".tags['{IPF_INDEX}']", mine.ipf_index.to_json()),),
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
        st = checked_structure(index, app)
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
            yield issue(
                "OperationApplicationAgreement",
                "NodeValidationError",
                "Applications do not span the operation's index range",
                f"the applications of operation {quote(op.id)} span {quote(shown)}; expected its "
                f"index range {quote(str(irange))}",
                (op.id,),
                (context("IPFIndex", op.id, f".tags['{IPF_INDEX}']", irange.to_json()),),
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
    count by what the fast path knows of them (``spanned``: their index ranges are known to
    span the operation's index range)."""
    known = certified_spans(index, op, apps, spanned)
    if known.complete:
        return {}
    sides = parsed(index, op).sides
    found: dict[tuple[str, str, int], list[ZRange]] = {
        (side, key, pos): []
        for side in ("inputs", "outputs")
        for key, sels in sides[side].items()
        for pos in range(len(sels))
    }
    for app, certified in zip(apps, known.certified, strict=True):
        if certified:  # its selections are the projections of its index range
            continue
        mine = parsed(index, app).sides
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
    for selection, bound in known.bounds.items():
        found[selection].append(bound)
    return found


def _selection_spans(
    index: GraphIndex, op: Node, apps: Sequence[Node], spanned: bool
) -> Iterator[Issue]:
    """Loom's shard bounding range rule: per selection of ``op``, the smallest range holding
    its applications' selections there is the operation's selection."""
    found = _shard_selections(index, op, apps, spanned)
    if found is None:
        return
    sides = parsed(index, op).sides
    for (side, key, pos), ranges in found.items():
        o = sides[side][key][pos]
        bound = ranges[0] if len(ranges) == 1 and not ranges[0].is_empty else bounding_range(ranges)
        if bound == o.range or (bound is None and o.range.is_empty):
            continue
        shown = str(bound) if bound is not None else "[]"
        path = f".body.{side}.{key_path(key)}[{pos}].range"
        yield issue(
            "OperationApplicationAgreement",
            "NodeValidationError",
            "Applications do not span the operation's selection",
            f"the applications of operation {quote(op.id)} select {quote(shown)} of {side} "
            f"{quote(key)}[{pos}] (tensor {quote(o.tensor_id)}) in all, their shard bounding "
            f"range; expected the operation's selection {quote(str(o.range))}",
            (op.id,),
            (context("Selection", op.id, path, o.range.to_json()),),
            {
                "side": side,
                "key": key,
                "position": pos,
                "tensorId": o.tensor_id,
                "range": o.range.to_json(),
                "shardBoundingRange": bound.to_json() if bound is not None else None,
            },
        )


def application_signature(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    """ApplicationIPFSignatureAgreement's issues of an application, cached on what they read (its
    operation, and the tensors whose ranges clip padded reads)."""
    if is_certified(index, node):
        return ()  # an exact projection of its index: nothing to say (kept current itself)
    get = index.get  # the operation and the tensors (whose ranges clip padded reads)
    deps = tuple(get(r) for r in index.references(node.id))
    return cached(index, node, "AIPF", deps, _application_signature_uncached)


def _application_signature_uncached(index: GraphIndex, app: Node) -> Iterator[Issue]:
    """An application's selections are the projections of its ``IPFIndex`` (clipped for a
    padded read)."""
    name = "ApplicationIPFSignatureAgreement"
    if not is_well_formed(index, app) or is_certified(index, app):
        return
    op = index.get(app.body["operationId"])
    if op is None or op.type != OPERATION or not is_well_formed(index, op):
        return  # OperationApplicationAgreement reports it
    sig = signature_of(index, op)
    if sig is None:
        return  # as in loom: unsigned operations' shards are judged by their selections alone
    mine = parsed(index, app)
    if mine.ipf_index is None:
        yield issue(
            name,
            "NodeValidationError",
            "Application has no IPFIndex",
            f"application {quote(app.id)} has no IPFIndex tag; expected the index range of its "
            f"shard, since its operation {quote(op.id)} has an IPFSignature",
            (app.id, op.id),
            (context("Tags", app.id, ".tags", sorted(app.tags)),),
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
                expected, clipped = expected_selection(
                    index, side, sel, ipf, mine.ipf_index, projected
                )
                if expected != sel.range:
                    what = (
                        f"{quote(str(projected))}, the projection of its index range "
                        f"{quote(str(mine.ipf_index))}"
                        if not clipped
                        else f"{quote(str(expected))}, the projection {quote(str(projected))} "
                        f"of its index range {quote(str(mine.ipf_index))} clipped to its tensor"
                    )
                    yield issue(
                        name,
                        "NodeValidationError",
                        "Application selection does not match its projected index",
                        f"application {quote(app.id)} selects {quote(str(sel.range))} for {side} "
                        f"{quote(key)}[{pos}]; expected {what}",
                        (app.id, op.id),
                        (context("Selection", app.id, sel.path + ".range", sel.range.to_json()),),
                        {
                            "side": side,
                            "key": key,
                            "position": pos,
                            "expected": expected.to_json(),
                            "actual": sel.range.to_json(),
                        },
                    )
