"""OperationIPFSignatureAgreement: an operation's ``IPFSignature`` agrees with its selections —
the same keys, one IPF per selection, ranks that fit, and each selection the projection of the
operation's index range (DESIGN.md §4 and §5).

An input selection may be the projection clipped to its tensor (a padded read, see
:func:`geon.core.zspace.selection_of`); :func:`expected_selection` adds the checker's own
conditions and the words that explain a clip, and is shared with
``ApplicationIPFSignatureAgreement`` (:mod:`geon.core.checks.applications`).
"""

from __future__ import annotations

from collections.abc import Iterator

from geon.core.checks.messages import context, few, issue, key_path, names
from geon.core.checks.structure import (
    Sel,
    parsed,
    structure_of,
    tensor_range,
)
from geon.core.errors import quote
from geon.core.graph import INDEX_AXES, IPF_INDEX, IPF_SIGNATURE, TENSOR, GraphIndex, Node
from geon.core.issues import Issue
from geon.core.ranges import index_range
from geon.core.signatures import signature_of
from geon.core.zspace import IPF, ZRange, selection_of

__all__ = ["expected_selection", "operation_signature_issues", "signature_path"]


def signature_path(side: str, key: str, pos: int | None = None) -> str:
    """The JSON path suffix of an operation's IPFSignature entry (built only for an issue)."""
    where = f".tags['{IPF_SIGNATURE}'].{side}.{key_path(key)}"
    return where if pos is None else f"{where}[{pos}]"


def operation_signature_issues(index: GraphIndex, node: Node) -> Iterator[Issue]:
    """OperationIPFSignatureAgreement's issues of an operation (uncached; the registered check
    is :func:`geon.core.checks.fastpath.operation_signature`)."""
    name = "OperationIPFSignatureAgreement"
    if not structure_of(index, node).ok:
        return
    sig = signature_of(index, node)
    if sig is None:
        return
    sig_path = f".tags['{IPF_SIGNATURE}']"
    irange = index_range(index, node)
    if irange is None and not (node.tags and IPF_INDEX in node.tags):
        has_axes = bool(node.tags and INDEX_AXES in node.tags)
        if not has_axes:
            yield issue(
                name,
                "NodeValidationError",
                "Operation has an IPFSignature but no IPFIndex",
                f"operation {quote(node.id)} has an IPFSignature but neither an IPFIndex tag nor "
                "IndexAxes with bound lengths; expected an IPFIndex giving its index range",
                (node.id,),
                (context("IPFSignature", node.id, sig_path, None),),
            )
    selections = parsed(index, node)
    images: dict[int, ZRange] = {}  # by IPF identity (the IPFs live as long as the signature)
    for side in ("inputs", "outputs"):
        body_keys = selections.sides[side]
        sig_keys = sig.get(side, {})
        if set(body_keys) != set(sig_keys):
            yield issue(
                name,
                "NodeValidationError",
                "IPFSignature keys do not match the operation's",
                f"operation {quote(node.id)} has {side} keys {names(sorted(body_keys))} but its "
                f"IPFSignature has {names(sorted(sig_keys))}; expected the same keys",
                (node.id,),
                (context("IPFSignature", node.id, f"{sig_path}.{side}", sorted(sig_keys)),),
                {
                    "side": side,
                    "keys": few(sorted(body_keys)),
                    "signatureKeys": few(sorted(sig_keys)),
                },
            )
            continue
        for key, sels in body_keys.items():
            ipfs = sig_keys[key]
            if len(ipfs) != len(sels):
                yield issue(
                    name,
                    "NodeValidationError",
                    "IPFSignature keys do not match the operation's",
                    f"operation {quote(node.id)} has {len(sels)} selections for {side} "
                    f"{quote(key)} but its IPFSignature has {len(ipfs)}; expected one IPF per "
                    "selection",
                    (node.id,),
                    (context("IPFSignature", node.id, signature_path(side, key), len(ipfs)),),
                    {"side": side, "key": key},
                )
                continue
            for pos, (sel, ipf) in enumerate(zip(sels, ipfs, strict=True)):
                if isinstance(ipf, str):
                    yield issue(
                        name,
                        "NodeValidationError",
                        "IPF is malformed",
                        f"operation {quote(node.id)} IPF for {side} {quote(key)}[{pos}]: {ipf}",
                        (node.id,),
                        (context("IPF", node.id, signature_path(side, key, pos), None),),
                        {"side": side, "key": key, "position": pos},
                    )
                    continue
                if ipf.map.out_dim != sel.range.rank:
                    yield issue(
                        name,
                        "NodeValidationError",
                        "IPF rank does not match the selection",
                        f"operation {quote(node.id)} IPF for {side} {quote(key)}[{pos}] has "
                        f"{ipf.map.out_dim} rows; expected {sel.range.rank}, the rank of the "
                        f"selection {quote(str(sel.range))}",
                        (node.id,),
                        (context("IPF", node.id, signature_path(side, key, pos), ipf.to_json()),),
                        {"side": side, "key": key, "position": pos},
                    )
                    continue
                if irange is None:
                    continue
                if ipf.map.in_dim is not None and ipf.map.in_dim != irange.rank:
                    yield issue(
                        name,
                        "NodeValidationError",
                        "IPF rank does not match the index",
                        f"operation {quote(node.id)} IPF for {side} {quote(key)}[{pos}] has "
                        f"{ipf.map.in_dim} columns; expected {irange.rank}, the rank of the "
                        f"index range {quote(str(irange))}",
                        (node.id,),
                        (context("IPF", node.id, signature_path(side, key, pos), ipf.to_json()),),
                        {"side": side, "key": key, "position": pos},
                    )
                    continue
                projected = images.get(id(ipf))
                if projected is None:  # equal IPFs are one object: project each once
                    projected = images[id(ipf)] = ipf.apply_range(irange)
                expected, clipped = expected_selection(index, side, sel, ipf, irange, projected)
                if expected != sel.range:
                    yield issue(
                        name,
                        "NodeValidationError",
                        "IPF projection does not match the selection",
                        f"operation {quote(node.id)} IPF for {side} {quote(key)}[{pos}] maps the "
                        f"index range {quote(str(irange))} to {quote(str(projected))}{clipped}; "
                        f"expected the selection {quote(str(sel.range))}",
                        (node.id,),
                        (
                            context("IPF", node.id, signature_path(side, key, pos), ipf.to_json()),
                            context("Selection", node.id, sel.path + ".range", sel.range.to_json()),
                        ),
                        {
                            "side": side,
                            "key": key,
                            "position": pos,
                            "expected": sel.range.to_json(),
                            "actual": expected.to_json(),
                        },
                    )


def expected_selection(
    index: GraphIndex, side: str, sel: Sel, ipf: IPF, irange: ZRange, projected: ZRange
) -> tuple[ZRange, str]:
    """What a selection must be, given ``projected``, the projection of its index range
    ``irange`` through ``ipf``, and the words that explain a clip. :func:`selection_of` holds
    the rule (an input reads the projection clipped to its tensor); the checker adds that an
    input its tensor does not contain (TensorOperationAgreement's issue), or whose tensor cannot
    be read, is held to the plain projection."""
    if side != "inputs" or projected == sel.range:
        return projected, ""
    tensor = index.get(sel.tensor_id)
    if tensor is None or tensor.type != TENSOR or not structure_of(index, tensor).ok:
        return projected, ""
    trange = tensor_range(index, tensor)
    if trange.rank != projected.rank or not trange.contains(sel.range):
        return projected, ""
    clipped = selection_of(ipf, irange, trange, read=True)
    if clipped == projected:
        return projected, ""
    if clipped.is_empty and not projected.is_empty:
        return clipped, f", which misses tensor {quote(tensor.id)} at {quote(str(trange))}"
    return clipped, (
        f", which tensor {quote(tensor.id)} at {quote(str(trange))} clips to {quote(str(clipped))}"
    )
