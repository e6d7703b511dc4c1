"""The axis constraints (DESIGN.md §2 and §5), registered with the checker in
:mod:`geon.core.checks.registry`.

>>> import numpy as np
>>> from geon import core as gc
>>> H, W = gc.Axis("H", 2), gc.Axis("W", 3)
>>> g = gc.graph([gc.constant(np.ones((2, 3)), axes=[H, W]) * 2.0])
>>> g.check()
[]

- ``AxisDeclarations`` (Axis nodes): a valid name, a length that is an integer >= 1 or null, known
  roles, a string ``cls``, a boolean ``batch``; no other Axis node declares the same name.
- ``TensorAxesAgreement`` (Tensors with a ``TensorAxes`` tag): every reference parses and names a
  declared axis, no reference appears twice, the rank equals the range's rank and each bound
  length equals the range's extent (an unbound axis takes any extent).
- ``OperationAxesInference`` (Operations with a catalogue kernel on named tensors): the IO keys
  are the kernel's, :func:`geon.core.ops.infer` accepts the operands' axes and params (every
  §2 error becomes an issue naming the axis), unbound axes have one extent across the operands,
  and the output tensor's axes are the inferred ones.
- ``KernelSignatureAgreement`` (the same operations): the ``IPFSignature`` tag equals the one
  derived from the axes (offsets from the tensors' range starts), ``IndexAxes`` names the
  derived index axes and ``IPFIndex`` is ``[0, length)`` over them.

Operations whose tensors carry no ``TensorAxes`` are positional (pure loom) and are left to the
loom constraints; custom kernels (not in the catalogue) keep their edited signatures.
Each check reads only its node, the tensors an operation references and Axis declarations.

Reading a tensor's and an operation's axes and re-running the inference is the graph model's
(:mod:`geon.core.operation_axes`, which teaching reads too); the checker reads it only where
``SchemaConformance`` has nothing to say (:func:`is_well_formed`, stricter than the model's
``conforms`` by the form of the node id) and words the issues from its results.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from geon.core.axes import KNOWN_ROLES, Axis, AxisRef, Ref
from geon.core.checks.fastpath import is_well_formed, per_version
from geon.core.checks.messages import MAX_LISTED, issue, path
from geon.core.errors import GeonError, quote
from geon.core.graph import (
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    GraphIndex,
    Node,
    iter_selections,
)
from geon.core.issues import Constraint, Context, Issue
from geon.core.operation_axes import (
    AxesRefusal,
    extent,
    operation_axes,
    tensor_axes,
    unbound_lengths,
)
from geon.core.operation_axes import infer_operation as read_inference
from geon.core.ops import Inference

__all__ = ["CONSTRAINTS", "infer_operation"]

# --------------------------------------------------------------------------------------------
# AxisDeclarations


def _axis_declarations(index: GraphIndex, node: Node) -> Iterator[Issue]:
    name = "AxisDeclarations"
    body = node.body
    ctx = (Context("Axis", path(node.id, ".body"), body),)
    axis_name = body.get("name")
    problems: list[str] = []
    invalid = _name_problem(axis_name)
    if invalid:
        problems.append(invalid)
    length = body.get("length")
    if length is not None and (type(length) is not int or length < 1):
        problems.append(
            f"axis {quote(axis_name)} has length {quote(length)}; expected an integer >= 1 or null"
        )
    roles = body.get("roles", [])
    if isinstance(roles, list):
        for role in roles:
            if role not in KNOWN_ROLES:
                problems.append(
                    f"axis {quote(axis_name)} has role {quote(role)}; expected one of "
                    + "("
                    + ", ".join(f'"{r}"' for r in KNOWN_ROLES)
                    + ")"
                )
    else:
        problems.append(
            f"axis {quote(axis_name)} has roles {quote(roles)}; expected a list of roles"
        )
    cls = body.get("cls")
    if cls is not None and not isinstance(cls, str):
        problems.append(f"axis {quote(axis_name)} has cls {quote(cls)}; expected a string or null")
    batch = body.get("batch", False)
    if not isinstance(batch, bool):
        problems.append(f"axis {quote(axis_name)} has batch {quote(batch)}; expected true or false")
    for message in problems:
        yield issue(name, "AxisError", "Axis declaration is invalid", message, (node.id,), ctx)
    if isinstance(axis_name, str):
        declared = index.axis_declaration_ids(axis_name)
        if len(declared) > 1:
            # the first few others: each of n duplicates listing all others would be n^2
            others = [n for n in declared[: MAX_LISTED + 1] if n != node.id][:MAX_LISTED]
            rest = len(declared) - 1 - len(others)
            yield issue(
                name,
                "AxisError",
                "Axis name is declared twice",
                f"axis {quote(axis_name)} is declared by {len(declared)} Axis nodes; expected "
                "one declaration per name (rename or remove the others: "
                + ", ".join(quote(o) for o in others)
                + (f" and {rest} more" if rest else "")
                + ")",
                (node.id, *others),
                ctx,
                {"name": axis_name, "others": others, **({"more": rest} if rest else {})},
            )


def _name_problem(name: Any) -> str | None:
    """What is wrong with ``name`` as an axis name (Axis's own message, which also says when it
    is too long), or None."""
    if not isinstance(name, str):
        return (
            f'axis name {quote(name)} is invalid; expected a letter or "_" followed by letters, '
            'digits or "_"'
        )
    try:
        Axis(name)
    except GeonError as error:
        return str(error)
    return None


# --------------------------------------------------------------------------------------------
# TensorAxesAgreement


def _tensor_axes_agreement(index: GraphIndex, node: Node) -> Iterator[Issue]:
    name = "TensorAxesAgreement"
    if not node.tags or TENSOR_AXES not in node.tags or not is_well_formed(index, node):
        return
    where = (
        Context("TensorAxes", path(node.id, f".tags['{TENSOR_AXES}']"), node.tags[TENSOR_AXES]),
    )
    found = tensor_axes(index, node)
    if found is None or (found.axes is None and found.problem is None):
        return
    if found.axes is None:
        yield issue(
            name, found.kind, "Tensor axes are invalid", found.problem or "", (node.id,), where
        )
        return
    axes = found.axes
    _, shape = extent(node)
    if len(axes) != len(shape):
        yield issue(
            name,
            "ShapeError",
            "Tensor axes do not match its rank",
            f"tensor {quote(node.id)} has {len(axes)} axes {axes} but its range has rank "
            f"{len(shape)}; expected one axis per dim",
            (node.id,),
            where,
            {"axes": list(axes.names), "shape": list(shape)},
        )
        return
    for dim, (ref, n) in enumerate(zip(axes, shape, strict=True)):
        if ref.length is not None and ref.length != n:
            yield issue(
                name,
                "ShapeError",
                "Tensor extent does not match its axis",
                f"tensor {quote(node.id)} has {n} elements along axis {quote(str(ref))} "
                f"(dim {dim}), which has length {ref.length}; expected the range's extent to "
                "equal the axis length",
                (node.id,),
                where,
                {"axis": str(ref), "dim": dim, "extent": n, "length": ref.length},
            )


# --------------------------------------------------------------------------------------------
# Operations


def infer_operation(index: GraphIndex, node: Node) -> tuple[Inference | None, Issue | None]:
    """The model's inference of a named catalogue operation
    (:func:`geon.core.operation_axes.infer_operation`) as the checker judges it:
    ``(inference, None)``, or ``(None, issue)`` when the axes are wrong, or ``(None, None)``
    when the op is not checked here (positional, custom, or the operation or one of its tensors
    has a ``SchemaConformance`` issue, which another constraint reports). Five constraints ask
    of each operation, so the answer is kept while the index version is unchanged."""
    return per_version(index, node, "geon.infer.checked", _infer_operation)


def _infer_operation(index: GraphIndex, node: Node) -> tuple[Inference | None, Issue | None]:
    inf, refusal = read_inference(index, node)
    if (inf is None and refusal is None) or not _well_formed_operands(index, node):
        return None, None
    if refusal is None:
        return inf, None
    box: list[Any] = index.memo(node, "geon.infer.issue", lambda n: [None, None])
    if box[0] is not refusal:
        box[0], box[1] = refusal, _refusal_issue(node, refusal)
    return None, box[1]


def _well_formed_operands(index: GraphIndex, node: Node) -> bool:
    """Whether the operation and every tensor it selects (that exists) are well-formed: the
    checker reads axes only where ``SchemaConformance`` has nothing to say, which is stricter
    than the model's :func:`geon.core.documents.conforms` (a node id must be a UUID)."""
    if not is_well_formed(index, node):
        return False
    for sel in iter_selections(node.body):
        tensor = index.get(sel.tensor_id)
        if tensor is not None and tensor.type == TENSOR and not is_well_formed(index, tensor):
            return False
    return True


_SUMMARIES = {
    "mixed": "Operation mixes named and positional tensors",
    "infer": "Operation axes do not infer",
    "extents": "Unbound axis has two extents",
    "output": "Output axes differ from the inferred axes",
}


def _refusal_issue(node: Node, refusal: AxesRefusal) -> Issue:
    name = "OperationAxesInference"
    summary = _SUMMARIES[refusal.reason]
    ctx_body = (Context("Operation", path(node.id, ".body"), {"kernel": refusal.kernel}),)
    out = refusal.output
    if out is None:  # the operation's own refusal: named at its body, with the values it names
        params = {"kernel": refusal.kernel} if refusal.reason == "infer" else refusal.data
        return issue(name, refusal.kind, summary, refusal.message, (node.id,), ctx_body, params)
    return issue(
        name,
        refusal.kind,
        summary,
        refusal.message,
        (node.id, out.id),
        (
            Context(
                "TensorAxes",
                path(out.id, f".tags['{TENSOR_AXES}']"),
                list(refusal.data["actual"]),
            ),
        ),
        dict(refusal.data),
    )


def _operation_axes_inference(index: GraphIndex, node: Node) -> Iterator[Issue]:
    _, issue = infer_operation(index, node)
    if issue is not None:
        yield issue


def _kernel_signature_agreement(index: GraphIndex, node: Node) -> Iterator[Issue]:
    name = "KernelSignatureAgreement"
    inf, _ = infer_operation(index, node)
    if inf is None:
        return
    op = operation_axes(index, node)
    assert op is not None
    bound, _ = unbound_lengths(op)

    def size(ref: Ref) -> int:
        total = 1
        for part in ref.parts if not isinstance(ref, AxisRef) else (ref,):
            total *= part.length if part.length is not None else bound.get(part.name, 0)
        return total

    starts: dict[str, list[list[int]]] = {}
    for operands in (op.inputs, op.outputs):
        for key, group in operands.items():
            starts[key] = [list(extent(t)[0]) for t, _ in group]
    kname = node.body["kernel"]
    try:
        expected = inf.signature(starts, size)
    except GeonError:
        return
    tags = node.tags or {}
    sig_path = f".tags['{IPF_SIGNATURE}']"
    actual = tags.get(IPF_SIGNATURE)
    if actual is None:
        yield issue(
            name,
            "KernelError",
            "Operation has no IPFSignature",
            f"operation {quote(node.id)} ({kname}) has no IPFSignature; expected the one derived "
            "from its axes (see params.expected)",
            (node.id,),
            (Context("IPFSignature", path(node.id, sig_path), None),),
            {"expected": expected},
        )
    else:
        for side in ("inputs", "outputs"):
            for key, entries in expected[side].items():
                got = (actual.get(side) or {}).get(key) if isinstance(actual, dict) else None
                for pos, entry in enumerate(entries):
                    have = got[pos] if isinstance(got, list) and pos < len(got) else None
                    if _normal(have) != entry:
                        yield issue(
                            name,
                            "KernelError",
                            "IPFSignature differs from the kernel's",
                            f"operation {quote(node.id)} ({kname}) has IPF {quote(have, 400)} for "
                            f"{side} {quote(key)}[{pos}]; the kernel derives "
                            f"{quote(entry, 400)} from the axes",
                            (node.id,),
                            (
                                Context(
                                    "IPF",
                                    path(node.id, f"{sig_path}.{side}.{key}[{pos}]"),
                                    have,
                                ),
                            ),
                            {"side": side, "key": key, "position": pos, "expected": entry},
                        )
    index_axes = tags.get(INDEX_AXES)
    want_axes = list(inf.index.names)
    have_axes = index_axes.get("axes") if isinstance(index_axes, dict) else None
    if index_axes is not None and have_axes != want_axes:
        yield issue(
            name,
            "AxisError",
            "IndexAxes differ from the kernel's",
            f"operation {quote(node.id)} ({kname}) has IndexAxes {quote(have_axes)}; the "
            f"kernel's index axes are {quote(want_axes)}",
            (node.id,),
            (Context("IndexAxes", path(node.id, f".tags['{INDEX_AXES}']"), index_axes),),
            {"expected": want_axes},
        )
    ipf_index = tags.get(IPF_INDEX)
    want_index = {"start": [0] * len(inf.index), "end": [size(r) for r in inf.index]}
    if ipf_index is not None and _normal(ipf_index) != want_index:
        yield issue(
            name,
            "KernelError",
            "IPFIndex differs from the index axes",
            f"operation {quote(node.id)} ({kname}) has IPFIndex {quote(ipf_index)}; its index axes "
            f"{quote(want_axes)} give {quote(want_index)}",
            (node.id,),
            (Context("IPFIndex", path(node.id, f".tags['{IPF_INDEX}']"), ipf_index),),
            {"expected": want_index},
        )


def _normal(value: Any) -> Any:
    """JSON data with whole floats as ints, so ``1.0`` in a loaded document equals ``1``."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint("AxisDeclarations", frozenset({AXIS}), _axis_declarations),
    Constraint("TensorAxesAgreement", frozenset({TENSOR}), _tensor_axes_agreement),
    Constraint("OperationAxesInference", frozenset({OPERATION}), _operation_axes_inference),
    Constraint("KernelSignatureAgreement", frozenset({OPERATION}), _kernel_signature_agreement),
)
"""The axis constraints, in reporting order."""
