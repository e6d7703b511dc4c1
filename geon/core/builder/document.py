"""From handles to a document (DESIGN.md §3, §8): :func:`graph` writes the LoomGraph document of
some tensors (see :mod:`geon.core.builder` for what it holds).

>>> from geon.core.builder import Axis, constant
>>> H = Axis("H", 2)
>>> [n.label for n in graph(constant([1.0, 2.0], axes=[H], name="c")).nodes]
['H', 'c']
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from geon.core.builder.tensor import Tensor, merge_scope
from geon.core.constants import CONSTANT, encode_constant
from geon.core.errors import GeonError, ShapeError
from geon.core.graph import (
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    VARIABLE,
    Graph,
    Node,
)


def walk_tensors(outputs: Sequence[Tensor]) -> list[Tensor]:
    seen: dict[int, Tensor] = {}
    order: list[Tensor] = []
    stack: list[tuple[Tensor, bool]] = [(t, False) for t in reversed(outputs)]
    while stack:
        t, done = stack.pop()
        if done:
            order.append(t)
            continue
        if id(t) in seen:
            continue
        seen[id(t)] = t
        stack.append((t, True))
        for _, ts in reversed(t.inputs):
            for i in reversed(ts):
                if id(i) not in seen:
                    stack.append((i, False))
    return order


def _range(t: Tensor) -> dict[str, list[int]]:
    return {"start": [0] * len(t.axes), "end": list(t.shape)}


def graph(outputs: Sequence[Tensor] | Tensor, *, id: str | None = None) -> Graph:
    """The LoomGraph document computing ``outputs`` (see the module docstring).

    >>> from geon.core.builder import Axis, constant
    >>> H = Axis("H", 2)
    >>> g = graph([constant([1.0, 2.0], axes=[H]) * 2.0])
    >>> sorted(n.type.rsplit("/", 1)[1] for n in g.nodes)
    ['Axis', 'Operation', 'Tensor', 'Tensor', 'Tensor']
    """
    return Graph(document_nodes(outputs), id=id or str(uuid.uuid4()))


def document_nodes(
    outputs: Sequence[Tensor] | Tensor,
    *,
    known_tensors: AbstractSet[str] = frozenset(),
    known_axes: AbstractSet[str] = frozenset(),
) -> list[Node]:
    """The nodes :func:`graph` writes for ``outputs``, less the Tensor nodes whose ids are in
    ``known_tensors`` and the Axis nodes named in ``known_axes`` (what a document holds already,
    when nodes are added to it: :func:`geon.core.autodiff.forward.merge`)."""
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    for o in outs:
        if not isinstance(o, Tensor):
            raise GeonError(f'graph output "{o!r}" is not a tensor; expected geon Tensors')
    tensors = [t for t in walk_tensors(outs) if t.id not in known_tensors]
    scope = merge_scope(t.scope for t in tensors)
    nodes: list[Node] = []
    for axis in scope.values():
        if axis.name in known_axes:
            continue
        nodes.append(
            Node(
                str(uuid.uuid5(uuid.NAMESPACE_URL, f"geon-axis:{axis.name}")),
                AXIS,
                axis.name,
                axis.to_json(),
            )
        )
    for t in tensors:
        for ref in t.axes:
            if ref.length is None:
                raise ShapeError(
                    f'tensor {t!r} has axis "{ref}" without a length; bind it (e.g. '
                    f'Axis("{ref.axes[0].name}", 4)) before building a document'
                )
        tags: dict[str, Any] = {TENSOR_AXES: {"axes": list(t.axes.names)}}
        if t.value is not None:
            tags[CONSTANT] = encode_constant(t.value)
        if t.variable is not None:
            tags[VARIABLE] = dict(t.variable)
        nodes.append(Node(t.id, TENSOR, t.name, {"dtype": t.dtype, "range": _range(t)}, tags))
    for t in tensors:
        if t.kernel is None or t.inference is None or t.op_id is None:
            continue
        ranges = {key: [([0] * len(i.axes), list(i.shape)) for i in ts] for key, ts in t.inputs}
        ranges["result"] = [([0] * len(t.axes), list(t.shape))]
        read = t.inference.selections(ranges)
        inputs = {
            key: [{"tensorId": i.id, "range": r} for i, r in zip(ts, read[key], strict=True)]
            for key, ts in t.inputs
        }
        body: dict[str, Any] = {"kernel": t.kernel}
        if t.params:
            body["params"] = t.params
        body["inputs"] = inputs
        body["outputs"] = {"result": [{"tensorId": t.id, "range": read["result"][0]}]}
        tags = {
            INDEX_AXES: t.inference.index_json(),
            IPF_INDEX: t.inference.index_range(),
            IPF_SIGNATURE: t.inference.signature(),
        }
        nodes.append(Node(t.op_id, OPERATION, t.kernel, body, tags))
    return nodes
