"""Reading an operation's axes from a document and re-running the operations' inference rules
(:func:`geon.core.ops.infer`) on them: the graph model's reading, shared by the checker
(``OperationAxesInference``, ``KernelSignatureAgreement``, accidental broadcasts, the loom
checks of unnamed operations) and by teaching, which re-derives an exercise's operations at new
lengths (issue 37: the checker is not a helper library).

>>> import numpy as np
>>> from geon import core as gc
>>> H, W = gc.Axis("H", 2), gc.Axis("W", 3)
>>> g = gc.graph([gc.constant(np.ones((2, 3)), axes=[H, W]) * 2.0])
>>> from geon.core.graph import OPERATION
>>> op = g.of_type(OPERATION)[0]
>>> inf, refusal = infer_operation(g.index, op)
>>> str(inf.result), refusal
('(H, W)', None)

What is read here is only what can be read: a node that does not conform to its schema
(:func:`geon.core.documents.conforms`) is not read, and a tag that cannot be read is an
:class:`AxesRefusal` or a :class:`TensorAxesReading` with a ``problem``, never an exception.
The checker words its issues from these results (their summaries, contexts and params); the
``message`` of a refusal is the sentence both the checker's issue and teaching's
:class:`~geon.core.errors.GeonError` say.

Results are cached per node version while the nodes and Axis declarations they read are
unchanged (``GraphIndex.memo``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from geon.core.axes import Axes, Axis, AxisRef, Ref, parse_ref_string
from geon.core.documents import conforms
from geon.core.errors import GeonError, quote
from geon.core.graph import TENSOR, TENSOR_AXES, GraphIndex, Node, iter_selections
from geon.core.ops import CATALOGUE, Inference, check_io, infer

__all__ = [
    "AxesRefusal",
    "OperationAxes",
    "TensorAxesReading",
    "declared_axis",
    "extent",
    "infer_operation",
    "operation_axes",
    "tensor_axes",
    "unbound_lengths",
]

# --------------------------------------------------------------------------------------------
# Declarations and the cache


def _axis_of_node(node: Node) -> Axis | None:
    try:
        return Axis.from_json(node.body)
    except GeonError:
        return None


def declared_axis(index: GraphIndex, name: str, seen: set[str] | None = None) -> Axis | None:
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
    compute: Callable[[set[str]], T],
    outer: set[str] | None = None,
) -> T:
    """``compute(seen)`` for ``node``, reused while the node, the nodes it references and the
    declarations it read are unchanged.

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
    value = compute(seen)
    if outer is not None:
        outer |= seen
    slot.append((_deps(index, index.references(node.id), sorted(seen)), value))
    return value


# --------------------------------------------------------------------------------------------
# A tensor's axes


@dataclass(frozen=True, slots=True)
class TensorAxesReading:
    """A tensor's ``TensorAxes`` as read: ``axes``, or None with ``problem`` (a refusal that
    names the bad value, of error class ``kind``) — or with no problem when an axis it names is
    declared by a malformed Axis node (the declaration's own issue says why)."""

    axes: Axes | None
    problem: str | None
    kind: str


def tensor_axes(
    index: GraphIndex, node: Node, seen: set[str] | None = None
) -> TensorAxesReading | None:
    """The tensor's axes, or None when it has no ``TensorAxes`` tag (positional); ``seen``
    receives the declaration names they were resolved from (also when resolving failed)."""
    if not node.tags or TENSOR_AXES not in node.tags:
        return None  # positional, whatever is declared
    return _cached(
        index, node, "geon.tensor_axes", lambda s: _read_tensor_axes(index, node, s), seen
    )


def _read_tensor_axes(index: GraphIndex, node: Node, seen: set[str]) -> TensorAxesReading | None:
    tag = node.tags.get(TENSOR_AXES) if node.tags else None
    if tag is None:
        return None
    refs = tag.get("axes") if isinstance(tag, dict) else None
    if not isinstance(refs, list):
        return TensorAxesReading(
            None,
            f'tensor {quote(node.id)} has TensorAxes {quote(tag)}; expected {{"axes": [...]}}',
            "AxisError",
        )
    parsed: list[Ref] = []
    for ref in refs:
        try:
            parts = parse_ref_string(ref)
        except GeonError as e:
            return TensorAxesReading(None, f"tensor {quote(node.id)}: {e}", "AxisError")
        for axis_name, _ in parts:
            if declared_axis(index, axis_name, seen) is None:
                if index.axis(axis_name) is not None:  # declared, but malformed
                    return TensorAxesReading(None, None, "AxisError")
                return TensorAxesReading(
                    None,
                    f"tensor {quote(node.id)} names axis {quote(axis_name)}, which is not "
                    f'declared; expected an Axis node with name "{axis_name}", or an axis that '
                    "is declared",
                    "AxisError",
                )
        parsed.append(AxisRef.parse(ref, lambda n: declared_axis(index, n, seen)))
    try:
        return TensorAxesReading(Axes(tuple(parsed)), None, "AxisError")
    except GeonError as e:
        return TensorAxesReading(None, f"tensor {quote(node.id)}: {e}", type(e).__name__)


def extent(node: Node) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A (conforming) tensor's range as its start and its extent per dim."""
    rng = node.body["range"]
    start = tuple(int(s) for s in rng["start"])
    end = tuple(int(e) for e in rng["end"])
    return start, tuple(e - s for s, e in zip(start, end, strict=True))


# --------------------------------------------------------------------------------------------
# An operation's axes


@dataclass(frozen=True, slots=True)
class OperationAxes:
    """An operation's operands as (tensor node, axes) by key; both empty when it mixes named
    and positional tensors."""

    inputs: dict[str, list[tuple[Node, Axes]]]
    outputs: dict[str, list[tuple[Node, Axes]]]


def operation_axes(
    index: GraphIndex, node: Node, seen: set[str] | None = None
) -> OperationAxes | None:
    """The named operands of a conforming catalogue op, or None when its axes are not read here
    (positional, custom kernel, a part that does not conform, dangles or has unreadable axes)."""
    kname = node.body.get("kernel")
    if not isinstance(kname, str) or kname not in CATALOGUE:
        return None
    if not CATALOGUE[kname].named or not conforms(index, node):
        return None
    sides: dict[str, dict[str, list[tuple[Node, Axes]]]] = {"inputs": {}, "outputs": {}}
    named = positional = 0
    for sel in iter_selections(node.body):
        tensor = index.get(sel.tensor_id)
        if tensor is None or tensor.type != TENSOR or not conforms(index, tensor):
            return None
        found = tensor_axes(index, tensor, seen)  # notes the names read, even on failure
        if found is None:
            positional += 1
            continue
        named += 1
        if found.axes is None:
            return None
        sides[sel.side].setdefault(sel.key, []).append((tensor, found.axes))
    if named == 0 or positional:
        return None if named == 0 else OperationAxes({}, {})
    return OperationAxes(sides["inputs"], sides["outputs"])


def unbound_lengths(op: OperationAxes) -> tuple[dict[str, int], list[tuple[str, int, int]]]:
    """Extents of unbound axes across the operands, and conflicts (name, extent, other)."""
    bound: dict[str, int] = {}
    conflicts: list[tuple[str, int, int]] = []
    for side in (op.inputs, op.outputs):
        for group in side.values():
            for tensor, axes in group:
                _, shape = extent(tensor)
                for ref, n in zip(axes, shape, strict=False):
                    if isinstance(ref, AxisRef) and ref.length is None:
                        old = bound.setdefault(ref.name, n)
                        if old != n:
                            conflicts.append((ref.name, old, n))
    return bound, conflicts


@dataclass(frozen=True, slots=True)
class AxesRefusal:
    """Why an operation's axes do not infer. ``reason``: ``"mixed"`` (named and positional
    tensors), ``"infer"`` (its ports or :func:`geon.core.ops.infer` refused), ``"extents"`` (an
    unbound axis has two extents) or ``"output"`` (the output tensor's axes differ from the
    inferred ones, ``output`` is that tensor); ``kind`` is the error's class name and ``data``
    the values the refusal names."""

    reason: str
    kind: str
    kernel: str
    message: str
    output: Node | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


def infer_operation(index: GraphIndex, node: Node) -> tuple[Inference | None, AxesRefusal | None]:
    """Re-infer a named catalogue operation from the document: ``(inference, None)``, or
    ``(None, refusal)`` when the axes are wrong, or ``(None, None)`` when its axes are not read
    here (see :func:`operation_axes`)."""
    get = index.get
    for ref in index.references(node.id):
        tensor = get(ref)
        if tensor is not None and tensor.tags and TENSOR_AXES in tensor.tags:
            break
    else:
        return None, None  # no named tensor: positional (loom), whatever is declared
    return _cached(index, node, "geon.infer", lambda seen: _infer(index, node, seen))


def _infer(
    index: GraphIndex, node: Node, seen: set[str]
) -> tuple[Inference | None, AxesRefusal | None]:
    op = operation_axes(index, node, seen)
    if op is None:
        return None, None
    kname = node.body["kernel"]
    where = f"operation {quote(node.id)} ({kname})"
    if not op.inputs and not op.outputs:
        return None, AxesRefusal(
            "mixed",
            "AxisError",
            kname,
            f"{where} reads or writes tensors with and without TensorAxes; expected TensorAxes "
            "on every tensor of a named operation",
        )
    try:
        check_io(CATALOGUE[kname], {key: [a for _, a in group] for key, group in op.inputs.items()})
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
            lambda n: declared_axis(index, n, seen),
        )
    except GeonError as e:
        return None, AxesRefusal(
            "infer", type(e).__name__, kname, f"operation {quote(node.id)} ({kname}): {e}"
        )
    _, conflicts = unbound_lengths(op)
    if conflicts:
        axis, a, b = conflicts[0]
        return None, AxesRefusal(
            "extents",
            "ShapeError",
            kname,
            f"{where} reads axis {quote(axis)} with {a} and with {b} elements; an unbound axis "
            "must have one extent across the operands",
            data={"axis": axis, "extents": [a, b]},
        )
    out_tensor, out_axes = outs[0]
    if out_axes != inf.result:
        return None, AxesRefusal(
            "output",
            "AxisError",
            kname,
            f"{where} infers the result axes {inf.result} but its output tensor "
            f"{quote(out_tensor.id)} has {out_axes}; expected TensorAxes "
            f"{list(inf.result.names)}",
            output=out_tensor,
            data={"expected": list(inf.result.names), "actual": list(out_axes.names)},
        )
    return inf, None
