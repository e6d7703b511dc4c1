"""What an ONNX import refuses before any of its work runs, and what it may compute on constants
(issue 30; geon/interop/README.md, "Bounds"): data kept in files the model names, control flow,
operators geon neither maps nor folds, a document that would surely be too large
(:func:`estimate_document`), and folded outputs past :data:`MAX_FOLDED` elements by ONNX's shape
inference of the node (:func:`fits`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from geon.interop.onnx_common import (
    CONTROL_FLOW,
    FOLDABLE,
    MAX_NODES,
    SHAPE_OPS,
    SUPPORTED,
    OnnxImportError,
    UnsupportedOperators,
    external_tensors,
)

__all__ = [
    "MAX_FOLDED", "NODE_BYTES", "admit", "estimate_document", "fits", "live_nodes",
    "refuse_external", "refuse_unsupported",
]  # fmt: skip


#: The most elements a folded node may make, counted from ONNX's shape inference of the node
#: on its constant inputs before it is computed (ConstantOfShape, Expand, Tile, Range, Pad...).
MAX_FOLDED = 1 << 20
#: The fewest bytes of document JSON one ONNX node on data becomes (an operation and its output
#: tensor: 1,073 measured on a chain of unnamed scalar Relu, 1,150 on 2-D ones, 1,190 for an
#: Identity or a Reshape that only regroups; the encoder's nodes take ~1,560 each):
#: :func:`estimate_document` multiplies it, so a model refused by it would have been too large.
NODE_BYTES = 1000


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def refuse_external(model: Any, who: str = "the model") -> None:
    """Refuse a model any of whose tensors keeps its data in an external file
    (:func:`geon.interop.onnx_common.external_tensors`): reading it would open a file the
    model names, relative to the reader's working folder."""
    external = external_tensors(model)
    if external:
        names = ", ".join(f'"{t}"' for t in external[:3])
        raise OnnxImportError(
            f"{who} keeps the data of {names}{', ...' if len(external) > 3 else ''} in external "
            "files; expected a model with its weights inside (onnx.save without "
            "save_as_external_data)"
        )


def live_nodes(g: Any) -> list[Any]:
    """The nodes of graph ``g`` (in order) that a graph output depends on."""
    live = {vi.name for vi in g.output}
    live.discard("")
    kept = []
    for n in reversed(g.node):
        for o in n.output:
            if o in live:
                kept.append(n)
                live.update(n.input)
                live.discard("")
                break
    return kept[::-1]


def estimate_document(model: Any, known: Mapping[str, Any] | None = None) -> tuple[int, int]:
    """``(nodes on data, the fewest bytes of JSON their document has)``, read from the graph
    alone (no inference, nothing computed): of the nodes an output depends on, one is on
    constants when it is a ``Constant``, a ``Shape``/``Size`` (shapes are static) or all its
    inputs are; every other node becomes at least one operation and its output tensor
    (:data:`NODE_BYTES`).

    >>> from onnx import helper as h, TensorProto as T
    >>> v = lambda n: h.make_tensor_value_info(n, T.FLOAT, [2])
    >>> nodes = [h.make_node("Relu", ["x"], [f"r{i}"]) for i in range(3)]
    >>> nodes += [h.make_node("Add", ["r0", "r1"], ["y"])]  # r2 is dead
    >>> estimate_document(h.make_model(h.make_graph(nodes, "g", [v("x")], [v("y")])))
    (3, 3000)
    """
    return _estimate(model, live_nodes(model.graph), known)


def _estimate(model: Any, live: list[Any], known: Mapping[str, Any] | None) -> tuple[int, int]:
    consts = {i.name for i in model.graph.initializer} | set(known or {}) | {""}
    nodes = 0
    for n in live:
        ins = n.input
        if n.op_type in ("Constant", "Shape", "Size") or (
            ins and all(i in consts for i in ins) and n.op_type in FOLDABLE
        ):
            consts.update(n.output)
        else:
            nodes += 1
    return nodes, nodes * NODE_BYTES


def refuse_unsupported(nodes: Sequence[Any], allowed: frozenset[str] = SUPPORTED) -> None:
    """Refuse every operator of ``nodes`` outside ``allowed`` at once, naming its nodes: before
    folding ``allowed`` is :data:`FOLDABLE` (nothing else is ever computed), after it
    :data:`SUPPORTED` (shape arithmetic left on data, or too large to compute)."""
    missing: dict[str, list[str]] = {}
    for i, n in enumerate(nodes):
        if n.domain not in ("", "ai.onnx") or n.op_type not in allowed:
            op = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
            missing.setdefault(op, []).append(n.name or f"#{i}")
    if missing:
        listed = "; ".join(f"{op} ({', '.join(names[:3])}"
                           f"{', ...' if len(names) > 3 else ''})"
                           for op, names in sorted(missing.items()))  # fmt: skip
        folded = sorted(op for op in missing if op in SHAPE_OPS)
        note = (
            f"; {', '.join(folded)} only on constants (shape arithmetic), when the result "
            f"has at most {MAX_FOLDED:,} elements"
            if folded
            else ""
        )
        raise UnsupportedOperators(
            f"unsupported ONNX operators: {listed}; geon imports {', '.join(sorted(SUPPORTED))}"
            + note
        )


def admit(model: Any, known: Mapping[str, Any], max_bytes: int | None, bound: str) -> list[Any]:
    """What is refused before anything is inferred or computed: data kept outside the
    model, too many nodes, control flow, operators geon neither maps nor folds, and a model
    whose document would surely be over ``max_bytes`` (:func:`estimate_document`). Returns the
    nodes a graph output depends on, in order: the document would hold no others."""
    refuse_external(model)
    nodes = model.graph.node
    if len(nodes) > MAX_NODES:
        raise OnnxImportError(
            f"the model has {len(nodes):,} nodes; at most {MAX_NODES:,} can be imported"
        )
    flow = [n for n in nodes if n.op_type in CONTROL_FLOW and n.domain in ("", "ai.onnx")]
    if flow:
        n = flow[0]
        raise UnsupportedOperators(
            f'{n.op_type} "{n.name or n.output[0]}": control flow ({", ".join(CONTROL_FLOW)}) '
            "is not imported, and its subgraphs are never run; geon imports a static graph "
            "(export the model with its loops unrolled)"
        )
    live = live_nodes(model.graph)
    refuse_unsupported(live, FOLDABLE | SUPPORTED)
    if max_bytes is None:
        return live
    count, least = _estimate(model, live, known)
    if least > max_bytes:
        raise OnnxImportError(
            f"the model has {count:,} nodes on data (besides constants and shape "
            f"arithmetic); its document would have at least {_mib(least)} of JSON (about "
            f"{NODE_BYTES} bytes a node), over the {_mib(max_bytes)} a graph may have "
            f"({bound}): geon imports at most {max_bytes // NODE_BYTES:,} such nodes"
        )
    return live


def fits(n: Any, consts: Mapping[str, np.ndarray[Any, Any]], opset: int) -> bool:
    """Whether ``n``'s outputs, on its constant inputs ``consts``, have at most :data:`MAX_FOLDED`
    elements by ONNX's shape inference of this one node (nothing is computed). Past it, or
    when inference cannot tell, a mapped operator stays in the graph (an operation of the
    document); one geon does not map is refused here, naming the bound."""
    from onnx import defs, numpy_helper, shape_inference
    from onnx import helper as h

    sizes: list[float] = []
    try:
        schema = defs.get_schema(n.op_type, opset, n.domain)
        types = {
            i: h.make_tensor_type_proto(
                h.np_dtype_to_tensor_dtype(consts[i].dtype), consts[i].shape
            )
            for i in consts
        }
        data = {i: numpy_helper.from_array(np.asarray(consts[i]), i) for i in consts}
        got = shape_inference.infer_node_outputs(schema, n, types, input_data=data)
        for o in n.output:
            if not o:
                continue
            dims = got[o].tensor_type.shape.dim
            if not got[o].tensor_type.HasField("shape") or any(
                not d.HasField("dim_value") for d in dims
            ):
                sizes.append(float("inf"))
            else:
                sizes.append(float(np.prod([float(d.dim_value) for d in dims])))
    except Exception:  # an invalid node, no schema: not computed here
        sizes.append(float("inf"))
    total = sum(sizes)
    if total <= MAX_FOLDED:
        return True
    if n.op_type in SUPPORTED:
        return False
    what = "a size shape inference cannot tell" if total == float("inf") else (
        f"{int(total):,} elements")  # fmt: skip
    raise UnsupportedOperators(
        f"unsupported ONNX operators: {n.op_type} ({n.name or n.output[0]}); geon imports "
        f"{', '.join(sorted(SUPPORTED))}; {n.op_type} only on constants (shape arithmetic), "
        f'when the result has at most {MAX_FOLDED:,} elements: "{n.output[0]}" would have '
        f"{what}"
    )
