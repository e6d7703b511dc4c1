"""ONNX operators listed in :data:`geon.interop.onnx_common.LAYERED`: for each, how its dims
unify (:func:`unify_layer`, called by the importer's unification pass) and which geon ops it
becomes (:func:`emit_layer`, called by :func:`geon.interop.onnx_ops.emit`).

- **Concat** is ``op:concat``: every dim but ``axis`` unifies with the output's; the joined
  dims stay their own axes and the output's is a new axis of the summed length, so a plan can
  split the concat over any other axis.
- **Split** is one ``op:slice`` per output: the split dim of each output is a new axis of its
  length (ONNX's shape inference gives the lengths, whichever of ``split``, ``num_outputs`` or an
  equal split set them), the other dims unify with the input's.
- **Where** is ``op:where``, its three operands broadcast from the right as in ONNX.
- **Gather** by an index tensor (an embedding lookup) is ``op:gather``: the output's dims are
  the data's before ``axis``, the indices', then the data's after it; the indexed dim is read
  whole. A Gather by one constant scalar index stays the importer's slice (:func:`is_lookup`
  tells them apart; the importer routes lookups here).
- **BatchNormalization** (inference, ``training_mode`` 0) folds into existing ops:
  ``(x - mean) * (scale / sqrt(var + epsilon)) + B`` with the per-channel parameters' dim
  unified with the input's dim 1.

>>> import onnx
>>> from onnx import helper as h, TensorProto as T
>>> from geon.interop.onnx_import import import_onnx
>>> g = h.make_graph([h.make_node("Concat", ["a", "b"], ["y"], axis=1)], "g",
...     [h.make_tensor_value_info("a", T.FLOAT, [2, 3]),
...      h.make_tensor_value_info("b", T.FLOAT, [2, 1])],
...     [h.make_tensor_value_info("y", T.FLOAT, [2, 4])])
>>> doc = import_onnx(h.make_model(g, opset_imports=[h.make_opsetid("", 17)])).graph
>>> [n.body["kernel"] for n in doc.nodes if n.type.endswith("/Operation")]
['op:concat']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geon.core.builder import Tensor, constant
from geon.core.builder import functions as F
from geon.core.builder.tensor import make_op
from geon.interop.onnx_atoms import conform_dims, counts, grouped
from geon.interop.onnx_common import KERNEL_OF, refuse

_Importer = Any  # geon.interop.onnx_import._Importer (imported there, not here: no cycle)


def _axis(imp: _Importer, n: Any, a: dict[str, Any], default: int | None = 0) -> int:
    rank = len(imp.shapes[n.input[0]])
    if "axis" not in a and default is None:
        refuse(n, "has no axis attribute; ONNX requires one")
    axis = int(a.get("axis", default or 0))
    if not -rank <= axis < rank:
        refuse(n, f"axis {axis} is out of range for rank {rank}; expected {-rank}..{rank - 1}")
    return axis % rank


def is_lookup(imp: _Importer, n: Any) -> bool:
    """Whether Gather node ``n`` looks up by an index tensor (``op:gather``), not by one
    constant scalar index (a slice)."""
    idx = imp.consts.get(n.input[1]) if len(n.input) > 1 else None
    return n.op_type == "Gather" and not (idx is not None and np.ndim(idx) == 0)


def unify_layer(imp: _Importer, n: Any, a: dict[str, Any]) -> None:
    """Union the dims of node ``n`` that its operator forces equal (refusing, naming the
    attribute, what geon does not import)."""
    op, out = n.op_type, n.output[0]
    ins = [i for i in n.input if i]
    if op == "Concat":
        axis = _axis(imp, n, a, None)
        for v in ins:
            for d in range(len(imp.shapes[v])):
                if d != axis:
                    imp.uf.union((v, d), (out, d))
    elif op == "Split":
        axis = _axis(imp, n, a)
        for o in n.output:
            for d in range(len(imp.shapes[ins[0]])):
                if o and d != axis:
                    imp.uf.union((ins[0], d), (o, d))
    elif op == "Where":
        imp._bcast(ins, out)
    elif op == "Gather":
        axis, q = _axis(imp, n, a), len(imp.shapes[ins[1]])
        for d in range(len(imp.shapes[ins[0]])):
            if d != axis:
                imp.uf.union((ins[0], d), (out, d if d < axis else d + q - 1))
        for j in range(q):
            imp.uf.union((ins[1], j), (out, axis + j))
    elif op == "BatchNormalization":
        _batch_norm_attrs(imp, n, a)
        imp._bcast(ins[:1], out)
        for p in ins[1:5]:
            imp.uf.union((p, 0), (ins[0], 1))


def emit_layer(imp: _Importer, n: Any, a: dict[str, Any]) -> Tensor:
    """The geon tensor for ``n``'s first output (Split records its other outputs itself)."""
    op = n.op_type
    if op == "Concat":
        return _concat(imp, n, _axis(imp, n, a, None))
    if op == "Split":
        return _split(imp, n, _axis(imp, n, a))
    if op == "Gather":
        return _gather(imp, n, _axis(imp, n, a))
    if op == "Where":
        out = n.output[0]
        operands = {k: [imp.aligned_atoms(v, out)] for k, v in zip(("condition", "x", "y"), n.input,
                                                                  strict=True)}  # fmt: skip
        return make_op(KERNEL_OF[op], {k: operands[k] for k in ("x", "y", "condition")})
    return _batch_norm(imp, n, a)


def _concat(imp: _Importer, n: Any, axis: int) -> Tensor:
    out = n.output[0]
    ro = imp.refs[out]
    parts = []
    along = []
    for v in n.input:
        t = imp.get(v)
        own = t.axes[axis]
        parts.append(imp.conform(t, [own if d == axis else r for d, r in enumerate(ro)], v))
        along.append(str(own))
    params = {"along": along, "axis": str(ro[axis])}
    return make_op(KERNEL_OF[n.op_type], {"tensors": parts}, params, new_axes=ro[axis].axes)


def _gather(imp: _Importer, n: Any, axis: int) -> Tensor:
    data, ids, out = n.input[0], n.input[1], n.output[0]
    ro, q = imp.refs[out], len(imp.shapes[ids])
    t = imp.get(data)
    own = t.axes[axis]
    t = imp.conform(t, [*ro[:axis], own, *ro[axis + q :]], data)
    i = imp.conform(imp.get(ids), ro[axis : axis + q], ids)
    return make_op(KERNEL_OF[n.op_type], {"table": [t], "indices": [i]}, {"axis": str(own)})


def _split(imp: _Importer, n: Any, axis: int) -> Tensor:
    x = imp.get(n.input[0])
    length = imp.shapes[n.input[0]][axis]
    sizes = [imp.shapes[o][axis] if o else None for o in n.output]
    if any(s is None for s in sizes):  # an unnamed output: its length is the rest's remainder
        refuse(n, "has an unnamed output; geon imports a Split whose outputs all have names")
    if sum(s or 0 for s in sizes) != length:
        refuse(n, f"outputs of lengths {sizes} do not add up to the split dim's {length}")
    first: Tensor | None = None
    start = 0
    for o, size in zip(n.output, sizes, strict=True):
        ro = imp.refs[o]
        old = x.axes[axis]
        t = F.slice(x, {old: slice(start, start + (size or 0))}, axes={old: ro[axis]})
        start += size or 0
        t = imp.conform(t, ro, o)
        if first is None:
            first = t
        else:
            imp.finish(o, t, n)
    assert first is not None  # a node has at least one output
    return first


def _batch_norm_attrs(imp: _Importer, n: Any, a: dict[str, Any]) -> float:
    if a.get("training_mode", 0):
        refuse(n, f"training_mode {a['training_mode']} is not supported; geon imports "
                   "inference mode (training_mode 0), which normalises with the given mean "
                   "and var")  # fmt: skip
    if not a.get("spatial", 1):
        refuse(n, "spatial 0 is not supported; geon imports spatial 1 (per-channel mean, var)")
    for extra in n.output[1:]:
        if extra:
            refuse(n, f'output "{extra}" (a running or saved statistic) is used; geon imports '
                       "inference mode, which has only the normalised output")  # fmt: skip
    if len(imp.shapes[n.input[0]]) < 2:
        refuse(n, f'input "{n.input[0]}" has rank {len(imp.shapes[n.input[0]])}; expected '
                   "rank >= 2 (N, C, ...)")  # fmt: skip
    for p in n.input[1:5]:
        if len(imp.shapes[p]) != 1:
            refuse(n, f'"{p}" has shape {imp.shapes[p]}; expected one value per channel')
    return float(a.get("epsilon", 1e-5))


def _batch_norm(imp: _Importer, n: Any, a: dict[str, Any]) -> Tensor:
    from geon.core.dtypes import numpy_dtype

    eps = _batch_norm_attrs(imp, n, a)
    x = imp.atoms(n.input[0])
    channel = grouped(x, counts(imp.parts[n.input[0]]))[1]
    scale, bias, mean, var = (
        conform_dims(imp.atoms(p), counts(imp.parts[p]), [channel]) for p in n.input[1:5]
    )
    dt = numpy_dtype(imp.dtype[n.input[4]])
    inv = F.divide(scale, F.sqrt(F.add(var, constant(np.asarray(eps, dtype=dt), axes=[]))))
    return F.add(F.multiply(F.subtract(x, mean), inv), bias)
