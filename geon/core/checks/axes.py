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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from geon.core.axes import KNOWN_ROLES, Axes, Axis, AxisRef, Ref, parse_ref_string
from geon.core.checks.fastpath import is_well_formed
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
from geon.core.ops import CATALOGUE, Inference, check_io, infer

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
# Reading declarations and tensor axes


def _axis_of_node(node: Node) -> Axis | None:
    try:
        return Axis.from_json(node.body)
    except GeonError:
        return None


def _declared(index: GraphIndex, name: str, seen: set[str] | None = None) -> Axis | None:
    """The declaration of ``name`` (None when missing or malformed); ``seen`` records the
    names read, so cached results know which declarations they depend on."""
    if seen is not None:
        seen.add(name)
    node = index.axis(name)
    if node is None:
        return None
    return index.memo(node, "geon.axis", _axis_of_node)


@dataclass(frozen=True, slots=True)
class _Deps:
    """What a cached result was computed from: node versions by id and declarations by name."""

    nodes: tuple[tuple[str, Node | None], ...]
    axes: tuple[tuple[str, Node | None], ...]

    def fresh(self, index: GraphIndex) -> bool:
        return all(index.get(i) is n for i, n in self.nodes) and all(
            index.axis(a) is n for a, n in self.axes
        )


def _deps(index: GraphIndex, node_ids: Iterable[str], names: Iterable[str]) -> _Deps:
    return _Deps(
        tuple((i, index.get(i)) for i in node_ids), tuple((a, index.axis(a)) for a in names)
    )


T = TypeVar("T")


def _cached(
    index: GraphIndex,
    node: Node,
    key: str,
    compute: Callable[[set[str]], tuple[T, bool]],
    outer: set[str] | None = None,
) -> T:
    """``compute(seen)`` for ``node``, reused while the node, the nodes it references and the
    declarations it read are unchanged. ``compute`` says whether its result may be kept.

    ``outer`` (a caller's ``seen``) receives the declaration names this result depends on,
    whether it was computed now or reused, so a cached result built on top of this one (an
    operation's inference on its tensors' axes) depends on them too — including names read by
    a resolution that failed."""
    slot: list[tuple[_Deps, T]] = index.memo(node, key, lambda n: [])
    if slot and slot[0][0].fresh(index):
        if outer is not None:
            outer.update(a for a, _ in slot[0][0].axes)
        return slot[0][1]
    slot.clear()
    seen: set[str] = set()
    value, keep = compute(seen)
    if outer is not None:
        outer |= seen
    if keep:
        slot.append((_deps(index, index.references(node.id), sorted(seen)), value))
    return value


@dataclass(frozen=True, slots=True)
class _TensorAxes:
    axes: Axes | None  # None: the tag is malformed (its problem is in ``problem``)
    problem: str | None
    kind: str


def _tensor_axes(index: GraphIndex, node: Node, seen: set[str] | None = None) -> _TensorAxes | None:
    """The tensor's axes, or None when it has no ``TensorAxes`` tag (positional); ``seen``
    receives the declaration names they were resolved from (also when resolving failed)."""
    if not node.tags or TENSOR_AXES not in node.tags:
        return None  # positional, whatever is declared

    def compute(seen: set[str]) -> tuple[_TensorAxes | None, bool]:
        found = _read_tensor_axes(index, node, seen)
        return found, True

    return _cached(index, node, "geon.tensor_axes", compute, seen)


def _read_tensor_axes(index: GraphIndex, node: Node, seen: set[str]) -> _TensorAxes | None:
    tag = node.tags.get(TENSOR_AXES) if node.tags else None
    if tag is None:
        return None
    refs = tag.get("axes") if isinstance(tag, dict) else None
    if not isinstance(refs, list):
        return _TensorAxes(
            None,
            f'tensor {quote(node.id)} has TensorAxes {quote(tag)}; expected {{"axes": [...]}}',
            "AxisError",
        )
    parsed: list[Ref] = []
    for ref in refs:
        try:
            parts = parse_ref_string(ref)
        except GeonError as e:
            return _TensorAxes(None, f"tensor {quote(node.id)}: {e}", "AxisError")
        for axis_name, _ in parts:
            if index.axis(axis_name) is not None and _declared(index, axis_name, seen) is None:
                return _TensorAxes(None, None, "AxisError")  # AxisDeclarations reports it
            if _declared(index, axis_name, seen) is None:
                return _TensorAxes(
                    None,
                    f"tensor {quote(node.id)} names axis {quote(axis_name)}, which is not "
                    f'declared; expected an Axis node with name "{axis_name}", or an axis that '
                    "is declared",
                    "AxisError",
                )
        parsed.append(AxisRef.parse(ref, lambda n: _declared(index, n, seen)))
    try:
        return _TensorAxes(Axes(tuple(parsed)), None, "AxisError")
    except GeonError as e:
        return _TensorAxes(None, f"tensor {quote(node.id)}: {e}", type(e).__name__)


def _extent(node: Node) -> tuple[tuple[int, ...], tuple[int, ...]]:
    rng = node.body["range"]
    start = tuple(int(s) for s in rng["start"])
    end = tuple(int(e) for e in rng["end"])
    return start, tuple(e - s for s, e in zip(start, end, strict=True))


# --------------------------------------------------------------------------------------------
# TensorAxesAgreement


def _tensor_axes_agreement(index: GraphIndex, node: Node) -> Iterator[Issue]:
    name = "TensorAxesAgreement"
    if not node.tags or TENSOR_AXES not in node.tags or not is_well_formed(index, node):
        return
    where = (
        Context("TensorAxes", path(node.id, f".tags['{TENSOR_AXES}']"), node.tags[TENSOR_AXES]),
    )
    found = _tensor_axes(index, node)
    if found is None or (found.axes is None and found.problem is None):
        return
    if found.axes is None:
        yield issue(
            name, found.kind, "Tensor axes are invalid", found.problem or "", (node.id,), where
        )
        return
    axes = found.axes
    _, shape = _extent(node)
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


@dataclass(frozen=True, slots=True)
class _OpAxes:
    """What an operation's axis checks read: inputs/outputs as (tensor node, axes) by key."""

    inputs: dict[str, list[tuple[Node, Axes]]]
    outputs: dict[str, list[tuple[Node, Axes]]]


def _op_axes(index: GraphIndex, node: Node, seen: set[str] | None = None) -> _OpAxes | None:
    """The named operands of a well-formed catalogue op, or None when the op is not checked
    here (positional, custom kernel, malformed or dangling parts reported elsewhere)."""
    kname = node.body.get("kernel")
    if (
        not isinstance(kname, str) or kname not in CATALOGUE
    ):  # a malformed kernel is SchemaConformance's
        return None
    if not CATALOGUE[kname].named or not is_well_formed(index, node):
        return None
    sides: dict[str, dict[str, list[tuple[Node, Axes]]]] = {"inputs": {}, "outputs": {}}
    named = positional = 0
    for sel in iter_selections(node.body):
        tensor = index.get(sel.tensor_id)
        if tensor is None or tensor.type != TENSOR or not is_well_formed(index, tensor):
            return None
        found = _tensor_axes(index, tensor, seen)  # notes the names read, even on failure
        if found is None:
            positional += 1
            continue
        named += 1
        if found.axes is None:
            return None  # TensorAxesAgreement reports it
        sides[sel.side].setdefault(sel.key, []).append((tensor, found.axes))
    if named == 0 or positional:
        return None if named == 0 else _OpAxes({}, {})
    return _OpAxes(sides["inputs"], sides["outputs"])


def _lengths_of(op: _OpAxes) -> tuple[dict[str, int], list[tuple[str, int, int]]]:
    """Extents of unbound axes across the operands, and conflicts (name, extent, other)."""
    bound: dict[str, int] = {}
    conflicts: list[tuple[str, int, int]] = []
    for side in (op.inputs, op.outputs):
        for group in side.values():
            for tensor, axes in group:
                _, shape = _extent(tensor)
                for ref, n in zip(axes, shape, strict=False):
                    if isinstance(ref, AxisRef) and ref.length is None:
                        old = bound.setdefault(ref.name, n)
                        if old != n:
                            conflicts.append((ref.name, old, n))
    return bound, conflicts


def infer_operation(index: GraphIndex, node: Node) -> tuple[Inference | None, Issue | None]:
    """Re-infer a named catalogue operation from the document: ``(inference, None)``, or
    ``(None, issue)`` when the axes are wrong, or ``(None, None)`` when the op is not checked
    here (positional, custom, or malformed in a way another constraint reports). Results are
    cached per node version while the tensors and declarations they read are unchanged."""
    get = index.get
    for ref in index.references(node.id):
        tensor = get(ref)
        if tensor is not None and tensor.tags and TENSOR_AXES in tensor.tags:
            break
    else:
        return None, None  # no named tensor: positional (loom), whatever is declared

    def compute(seen: set[str]) -> tuple[tuple[Inference | None, Issue | None], bool]:
        found = _infer_operation(index, node, seen)
        return found, True

    return _cached(index, node, "geon.infer", compute)


def _infer_operation(
    index: GraphIndex, node: Node, seen: set[str]
) -> tuple[Inference | None, Issue | None]:
    name = "OperationAxesInference"
    op = _op_axes(index, node, seen)
    if op is None:
        return None, None
    kname = node.body["kernel"]
    k = CATALOGUE[kname]
    ctx_body = (Context("Operation", path(node.id, ".body"), {"kernel": kname}),)
    if not op.inputs and not op.outputs:
        return None, issue(
            name,
            "AxisError",
            "Operation mixes named and positional tensors",
            f"operation {quote(node.id)} ({kname}) reads or writes tensors with and without "
            "TensorAxes; expected TensorAxes on every tensor of a named operation",
            (node.id,),
            ctx_body,
        )
    try:
        check_io(k, {key: [a for _, a in group] for key, group in op.inputs.items()})
        outs = op.outputs.get("result", [])
        if set(op.outputs) - {"result"} or len(outs) != 1:
            raise GeonError(
                f"{kname} writes outputs {quote(sorted(op.outputs))}; expected exactly one tensor "
                'in "result"'
            )
        inf = infer(
            kname,
            {key: [a for _, a in group] for key, group in op.inputs.items()},
            node.body.get("params") or {},
            lambda n: _declared(index, n, seen),
        )
    except GeonError as e:
        return None, issue(
            name,
            type(e).__name__,
            "Operation axes do not infer",
            f"operation {quote(node.id)} ({kname}): {e}",
            (node.id,),
            ctx_body,
            {"kernel": kname},
        )
    _, conflicts = _lengths_of(op)
    if conflicts:
        axis, a, b = conflicts[0]
        return None, issue(
            name,
            "ShapeError",
            "Unbound axis has two extents",
            f"operation {quote(node.id)} ({kname}) reads axis {quote(axis)} with {a} and with {b} "
            "elements; an unbound axis must have one extent across the operands",
            (node.id,),
            ctx_body,
            {"axis": axis, "extents": [a, b]},
        )
    out_tensor, out_axes = outs[0]
    if out_axes != inf.result:
        return None, issue(
            name,
            "AxisError",
            "Output axes differ from the inferred axes",
            f"operation {quote(node.id)} ({kname}) infers the result axes {inf.result} but its "
            f"output tensor {quote(out_tensor.id)} has {out_axes}; expected TensorAxes "
            f"{list(inf.result.names)}",
            (node.id, out_tensor.id),
            (
                Context(
                    "TensorAxes",
                    path(out_tensor.id, f".tags['{TENSOR_AXES}']"),
                    list(out_axes.names),
                ),
            ),
            {"expected": list(inf.result.names), "actual": list(out_axes.names)},
        )
    return inf, None


def _operation_axes_inference(index: GraphIndex, node: Node) -> Iterator[Issue]:
    _, issue = infer_operation(index, node)
    if issue is not None:
        yield issue


def _kernel_signature_agreement(index: GraphIndex, node: Node) -> Iterator[Issue]:
    name = "KernelSignatureAgreement"
    inf, _ = infer_operation(index, node)
    if inf is None:
        return
    op = _op_axes(index, node)
    assert op is not None
    bound, _ = _lengths_of(op)

    def size(ref: Ref) -> int:
        total = 1
        for part in ref.parts if not isinstance(ref, AxisRef) else (ref,):
            total *= part.length if part.length is not None else bound.get(part.name, 0)
        return total

    starts: dict[str, list[list[int]]] = {}
    for operands in (op.inputs, op.outputs):
        for key, group in operands.items():
            starts[key] = [list(_extent(t)[0]) for t, _ in group]
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
