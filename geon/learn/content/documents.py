"""What a puzzle check does to a geon document: resize it to drawn axis lengths, find its inputs
and its result, and list its kernels.

A puzzle's documents (the reference and a student's solution) are built at some axis lengths;
a check runs them at many others. :func:`resize` rewrites a document for new lengths: each Axis
node's length, each named tensor's range, and each named operation's selections and derived
tags (``IndexAxes``, ``IPFIndex``, ``IPFSignature``), re-inferred from the new axes exactly as
the builder derives them.

>>> import numpy as np
>>> from geon import core as gc
>>> H, W = gc.Axis("H", 2), gc.Axis("W", 3)
>>> x = gc.placeholder(axes=[H, W], name="x")
>>> g = gc.graph([gc.sum(x, reduction_axes=[W], name="rows")])
>>> big = resize(g, {"H": 4, "W": 1})
>>> big.check(), result_tensor(big).label, [n.label for n in input_tensors(big)]
([], 'rows', ['x'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from geon.core.axes import Axis
from geon.core.errors import GeonError
from geon.core.graph import (
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    Graph,
    Node,
)
from geon.core.operation_axes import infer_operation

_LEVEL = re.compile(r"[+-][0-9]+$")

__all__ = ["declared_axes", "input_tensors", "kernels", "resize", "result_tensor", "tensor_axes"]


def tensor_axes(node: Node) -> list[str]:
    """The axis references of a tensor's ``TensorAxes`` tag (``[]`` without one)."""
    tag = (node.tags or {}).get(TENSOR_AXES)
    refs = tag.get("axes") if isinstance(tag, dict) else None
    return [str(r) for r in refs] if isinstance(refs, list) else []


def _written_and_read(graph: Graph) -> tuple[set[str], set[str]]:
    written: set[str] = set()
    read: set[str] = set()
    for op in graph.of_type(OPERATION):
        for side, found in (("inputs", read), ("outputs", written)):
            groups = op.body.get(side)
            if isinstance(groups, dict):
                for sels in groups.values():
                    for sel in sels if isinstance(sels, list) else []:
                        if isinstance(sel, dict) and isinstance(sel.get("tensorId"), str):
                            found.add(sel["tensorId"])
    return written, read


def input_tensors(graph: Graph) -> list[Node]:
    """The tensors no operation writes and that hold no constant: the puzzle's inputs."""
    written, _ = _written_and_read(graph)
    return [
        t
        for t in graph.of_type(TENSOR)
        if t.id not in written and "Constant" not in "".join((t.tags or {}).keys())
    ]


def result_tensor(graph: Graph) -> Node:
    """The one tensor an operation writes and no operation reads (GeonError otherwise)."""
    written, read = _written_and_read(graph)
    found = [t for t in graph.of_type(TENSOR) if t.id in written and t.id not in read]
    if len(found) != 1:
        labels = ", ".join(f'"{t.label or t.id}"' for t in found) or "none"
        raise GeonError(
            f"the document has {len(found)} result tensors ({labels}); expected exactly one "
            "tensor that an operation writes and no operation reads"
        )
    return found[0]


def kernels(graph: Graph) -> list[str]:
    """The kernels the document's operations use, in document order, each once."""
    out: list[str] = []
    for op in graph.of_type(OPERATION):
        k = op.body.get("kernel")
        if isinstance(k, str) and k not in out:
            out.append(k)
    return out


def _length_of(ref: str, lengths: Mapping[str, int], declared: Mapping[str, int]) -> int:
    size = 1
    for part in ref.split("*"):
        name = _LEVEL.sub("", part.strip())
        size *= lengths.get(name, declared.get(name, 1))
    return size


def resize(graph: Graph, lengths: Mapping[str, int]) -> Graph:
    """``graph`` with the axes named in ``lengths`` at those lengths (a new Graph; the input is
    unchanged). Raises GeonError when an operation does not infer at the new lengths."""
    declared: dict[str, int] = {}
    nodes: list[Node] = []
    for node in graph.nodes:
        if node.type == AXIS:
            name = node.body.get("name")
            if isinstance(name, str) and name in lengths:
                node = node.replace(body={**node.body, "length": int(lengths[name])})
            if isinstance(name, str) and isinstance(node.body.get("length"), int):
                declared[name] = node.body["length"]
        nodes.append(node)
    out: list[Node] = []
    for node in nodes:
        refs = tensor_axes(node) if node.type == TENSOR else []
        if refs:
            start = list(node.body["range"]["start"])
            end = [s + _length_of(r, lengths, declared) for s, r in zip(start, refs, strict=True)]
            node = node.replace(body={**node.body, "range": {"start": start, "end": end}})
        out.append(node)
    staged = Graph(out, id=graph.id)
    final: list[Node] = []
    for node in staged.nodes:
        if node.type == OPERATION:
            node = _rederive(staged, node)
        final.append(node)
    return Graph(final, id=graph.id)


def _rederive(graph: Graph, op: Node) -> Node:
    inf, problem = infer_operation(graph.index, op)
    if problem is not None:
        raise GeonError(problem.message)
    if inf is None:
        return op
    ranges: dict[str, list[tuple[list[int], list[int]]]] = {}
    for side in ("inputs", "outputs"):
        for key, sels in op.body[side].items():
            ranges[key] = []
            for sel in sels:
                t = graph.index.get(sel["tensorId"])
                assert t is not None
                start = list(t.body["range"]["start"])
                end = list(t.body["range"]["end"])
                ranges[key].append((start, [e - s for s, e in zip(start, end, strict=True)]))
    zero = {k: [([0] * len(s), n) for s, n in v] for k, v in ranges.items()}
    read = inf.selections(zero)
    body: dict[str, Any] = dict(op.body)
    for side in ("inputs", "outputs"):
        body[side] = {
            key: [
                {**sel, "range": _shift(read[key][pos], ranges[key][pos][0])}
                for pos, sel in enumerate(sels)
            ]
            for key, sels in op.body[side].items()
        }
    tags = dict(op.tags or {})
    if INDEX_AXES in tags or IPF_SIGNATURE in tags:
        starts = {k: [s for s, _ in v] for k, v in ranges.items()}
        tags[INDEX_AXES] = inf.index_json()
        tags[IPF_INDEX] = inf.index_range()
        tags[IPF_SIGNATURE] = (
            inf.signature(starts)
            if any(any(x for x in s) for v in starts.values() for s in v)
            else inf.signature()
        )
    return op.replace(body=body, tags=tags)


def _shift(sel: dict[str, list[int]], start: list[int]) -> dict[str, list[int]]:
    return {
        "start": [a + b for a, b in zip(sel["start"], start, strict=True)],
        "end": [a + b for a, b in zip(sel["end"], start, strict=True)],
    }


def declared_axes(graph: Graph) -> dict[str, Axis]:
    """The document's Axis declarations by name (malformed ones left out)."""
    out: dict[str, Axis] = {}
    for node in graph.of_type(AXIS):
        try:
            axis = Axis.from_json(node.body)
        except GeonError:
            continue
        out[axis.name] = axis
    return out
