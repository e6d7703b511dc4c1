"""geon document -> ONNX model (opset 18), runnable in onnxruntime with the same results.

Graph inputs are the document's leaves that hold no constant (named by their labels, shapes from
their axes, ``dim_param``-free), constants become initializers, outputs are the tensors no
operation reads. ``dot`` is an ONNX ``Einsum`` (its einsum string), elementwise operands are
aligned by axis name (``Transpose`` then ``Reshape`` with length-1 dims), reductions are
``Reduce*`` with ``axes`` inputs, softmax and layer norm are written out over their named axes
(``ReduceMax``/``Exp``/``ReduceSum``, ``ReduceMean``/``Sqrt``), GELU as ``Erf`` (or the tanh form;
a float64 operand's ``Erf`` is taken in float32 and cast back, as onnxruntime has no double
``Erf``, within 1e-7 of the exact GELU). ``conv2d``, ``max_pool2d`` and ``avg_pool2d`` are
``Conv``, ``MaxPool`` and ``AveragePool`` on NCHW: the operand is transposed to (batch..., C, H, W)
by the axes' roles and reshaped to rank 4 (the batch axes merged; for a pool every axis but Height
and Width), then the result reshaped and transposed back to the geon result's axes. ``concat`` is
``Concat`` (each operand transposed to the result's order), ``where`` is ``Where`` (operands
aligned as elementwise ones, ``y`` and the condition cast where their types differ from what ONNX
needs), ``gather`` is ``Gather`` (the result's axes are ONNX's order already)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from geon.core.graph import Graph
from geon.core.nodes import shown_text
from geon.core.ops import CATALOGUE
from geon.interop.program import (
    MALFORMED,
    ExportError,
    Op,
    Program,
    Tensor,
    axis_name,
    einsum_of,
    malformed,
    read,
    reduced,
    with_role,
)

OPSET = 18
ELEM = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7, "boolean": 9,
        "float16": 10, "float64": 11, "complex64": 14, "complex128": 15}  # fmt: skip


class _Writer:
    def __init__(self, p: Program) -> None:
        from onnx import helper

        self.h = helper
        self.p = p
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.n = 0
        # each tensor's ONNX name: its label where no other tensor has it, else its variable
        # name; the names a writer makes up (fresh) never take one of these
        self.names: dict[str, str] = {}
        self.taken: set[str] = set()
        counts = Counter(t.label for t in p.tensors.values())
        for t in p.tensors.values():
            if t.label and counts[t.label] == 1:
                self.names[t.id] = t.label
                self.taken.add(t.label)
        for t in p.tensors.values():
            if t.id not in self.names:
                name, k = t.var, 1
                while name in self.taken:
                    k += 1
                    name = f"{t.var}_{k}"
                self.names[t.id] = name
                self.taken.add(name)
        self.taken.update([n + "_value" for n in self.names.values()])

    def fresh(self, hint: str) -> str:
        self.n += 1
        while f"_{hint}_{self.n}" in self.taken:
            self.n += 1
        return f"_{hint}_{self.n}"

    def const(self, value: Any, dtype: Any = np.int64) -> str:
        from onnx import numpy_helper

        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op: str, ins: list[str], out: str | None = None, **attrs: Any) -> str:
        out = out or self.fresh(op.lower())
        self.nodes.append(self.h.make_node(op, ins, [out], **attrs))
        return out

    def align(self, t: Tensor, dst: list[str]) -> str:
        kept = [a for a in dst if a in t.axes]
        name = self.p_name(t)
        perm = [t.axes.index(a) for a in kept]
        if perm != list(range(len(perm))):
            name = self.node("Transpose", [name], perm=perm)
        if len(kept) != len(dst):
            shape = [t.shape[t.axes.index(a)] if a in t.axes else 1 for a in dst]
            name = self.node("Reshape", [name, self.const(shape)])
        return name

    def p_name(self, t: Tensor) -> str:
        return self.names.get(t.id, t.var)

    def scalar(self, value: float, like: Tensor) -> str:
        return self.const(value, np.dtype(_np(like.dtype)))


def _np(dtype: str) -> str:
    return "bool" if dtype == "boolean" else dtype


def _emit(w: _Writer, op: Op) -> None:
    """Write ``op`` with the writer its kernel's entry names (``onnx_writer``)."""
    r = op.result
    k = CATALOGUE.get(op.kernel)
    writer = WRITERS.get(k.onnx_writer) if k is not None else None
    if writer is None:
        raise ExportError(f"operation {op.named} ({op.kernel}) has no ONNX form here")
    ins = [t for ts in op.inputs.values() for t in ts]
    if not ins:
        raise ExportError(f"operation {op.named} ({op.kernel}) has no operand")
    writer(w, op, ins, w.p_name(r))


def _onnx_op(op: Op) -> str:
    """The ONNX operator of ``op``'s kernel (its entry's ``onnx``)."""
    return str(CATALOGUE[op.kernel].onnx)


def _nary(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    names = [w.align(t, op.result.axes) for t in ins]
    acc = names[0]
    for i, nm in enumerate(names[1:]):
        acc = w.node(_onnx_op(op), [acc, nm], out if i == len(names) - 2 else None)
    if len(names) == 1:
        w.node("Identity", [acc], out)


def _node(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    w.node(_onnx_op(op), [w.p_name(ins[0])], out)


def _square(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    w.node("Mul", [w.p_name(ins[0]), w.p_name(ins[0])], out)


def _gelu(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    x = ins[0]
    xn = w.p_name(x)
    if op.params.get("approximate") == "tanh":
        cube = w.node("Mul", [w.node("Mul", [xn, xn]), xn])
        inner = w.node("Add", [xn, w.node("Mul", [cube, w.scalar(0.044715, x)])])
        th = w.node("Tanh", [w.node("Mul", [inner, w.scalar(np.sqrt(2 / np.pi), x)])])
    else:
        scaled = w.node("Div", [xn, w.scalar(np.sqrt(2.0), x)])
        if x.dtype == "float64":  # onnxruntime has no double Erf: erf in float32, cast back
            erf32 = w.node("Erf", [w.node("Cast", [scaled], to=ELEM["float32"])])
            th = w.node("Cast", [erf32], to=ELEM["float64"])
        else:
            th = w.node("Erf", [scaled])
    one = w.node("Add", [th, w.scalar(1.0, x)])
    w.node("Mul", [w.node("Mul", [xn, one]), w.scalar(0.5, x)], out)


def _einsum(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    xs, ys = op.inputs["x"][0], op.inputs["y"][0]
    w.node("Einsum", [w.p_name(xs), w.p_name(ys)], out, equation=einsum_of(w.p, op))


def _reduce(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    x, r = ins[0], op.result
    red = reduced(op)
    kept = [a for a in x.axes if a not in red]
    axes = w.const([x.axes.index(a) for a in red])
    tmp = w.node(_onnx_op(op), [w.p_name(x), axes], keepdims=0)
    w.node("Identity", [w.align(Tensor("", tmp, tmp, r.dtype, kept, r.shape), r.axes)], out)


def _softmax(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    x = ins[0]
    axes = w.const([x.axes.index(a) for a in reduced(op)])
    xn = w.p_name(x)
    e = w.node("Exp", [w.node("Sub", [xn, w.node("ReduceMax", [xn, axes], keepdims=1)])])
    w.node("Div", [e, w.node("ReduceSum", [e, axes], keepdims=1)], out)


def _layer_norm(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    x = ins[0]
    axes = w.const([x.axes.index(a) for a in reduced(op)])
    xn = w.p_name(x)
    d = w.node("Sub", [xn, w.node("ReduceMean", [xn, axes], keepdims=1)])
    var = w.node("ReduceMean", [w.node("Mul", [d, d]), axes], keepdims=1)
    eps = w.scalar(float(op.params.get("epsilon", 1e-5)), x)
    y = w.node("Div", [d, w.node("Sqrt", [w.node("Add", [var, eps])])])
    for key, onnx_op in (("scale", "Mul"), ("bias", "Add")):
        for t in op.inputs.get(key, []):
            y = w.node(onnx_op, [y, w.align(t, x.axes)])
    w.node("Identity", [y], out)


def _reshape(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    w.node("Reshape", [w.p_name(ins[0]), w.const(op.result.shape)], out)


def _transpose(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    x = ins[0]
    w.node("Transpose", [w.p_name(x)], out, perm=list(reversed(range(len(x.axes)))))


def _dimshuffle(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    w.node("Identity", [w.align(ins[0], op.result.axes)], out)


def _expand(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    r = op.result
    w.node("Expand", [w.align(ins[0], r.axes), w.const(r.shape)], out)


def _concat(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    r = op.result
    dim = int(r.axes.index(op.params["axis"]))
    names = [w.align(t, [j if i == dim else a for i, a in enumerate(r.axes)])
             for t, j in zip(ins, op.params["along"], strict=True)]  # fmt: skip
    w.node("Concat", names, out, axis=dim)


def _gather(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    table, idx = op.inputs["table"][0], op.inputs["indices"][0]
    at = int(table.axes.index(op.params["axis"]))
    w.node("Gather", [w.p_name(table), w.p_name(idx)], out, axis=at)


def _where(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    r = op.result
    xs, ys, cs = (op.inputs[key][0] for key in ("x", "y", "condition"))
    picked = []
    for t, want in ((cs, "boolean"), (xs, r.dtype), (ys, r.dtype)):
        name = w.align(t, r.axes)
        picked.append(name if t.dtype == want else w.node("Cast", [name], to=ELEM[want]))
    w.node("Where", picked, out)


def _slice(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    x = ins[0]
    starts, ends, axes, steps, drop = [], [], [], [], []
    for i, a in enumerate(x.axes):
        s = op.params.get("slices", {}).get(a)
        if s is None:
            continue
        if isinstance(s, int):
            s = {"start": s % x.shape[i], "stop": s % x.shape[i] + 1, "step": 1}
            drop.append(i)
        start, stop, step = s.get("start"), s.get("stop"), s.get("step") or 1
        starts.append(0 if start is None else start)
        ends.append((x.shape[i] if step > 0 else -(2**62)) if stop is None else stop)
        axes.append(i)
        steps.append(step)
    name = w.node(
        "Slice", [w.p_name(x), w.const(starts), w.const(ends), w.const(axes), w.const(steps)]
    )
    if drop:
        name = w.node("Squeeze", [name, w.const(drop)])
    w.node("Identity", [name], out)


def _windowed(w: _Writer, op: Op, ins: list[Tensor], out: str) -> None:
    """Conv / MaxPool / AveragePool on the operand made NCHW, the result made geon's again."""
    x = ins[0]
    p, r = w.p, op.result
    h, wd = with_role(p, x.axes, "Height"), with_role(p, x.axes, "Width")
    oh, ow = with_role(p, r.axes, "Height"), with_role(p, r.axes, "Width")
    size = {a: n for t in (x, r) for a, n in zip(t.axes, t.shape, strict=True)}
    ph, pw = op.params.get("padding", [0, 0])
    attrs: dict[str, Any] = {"strides": list(op.params["stride"]), "pads": [ph, pw, ph, pw]}
    filt: list[str] = []
    if op.kernel == "op:conv2d":
        f = op.inputs["filter"][0]
        c = with_role(p, x.axes, "Channel", (h, wd))
        fc = next(a for a in f.axes if axis_name(a) == axis_name(c))
        fk = with_role(p, f.axes, "Channelout", (fc,))
        fh, fw = with_role(p, f.axes, "Height", (fc,)), with_role(p, f.axes, "Width", (fc,))
        size |= dict(zip(f.axes, f.shape, strict=True))
        batch = [a for a in x.axes if a not in (c, h, wd)]
        chan, out_chan = [c], [fk]
        filt = [w.align(f, [fk, fc, fh, fw])]
    else:
        batch, chan = [], [a for a in x.axes if a not in (h, wd)]
        out_chan = chan
        attrs["kernel_shape"] = list(op.params["kernel_size"])
        if op.kernel == "op:avg_pool2d":
            attrs["count_include_pad"] = int(bool(op.params.get("count_include_pad", True)))
    n0 = int(np.prod([size[a] for a in batch]))
    n1 = int(np.prod([size[a] for a in chan]))
    name = w.align(x, [*batch, *chan, h, wd])
    name = w.node("Reshape", [name, w.const([n0, n1, size[h], size[wd]])])
    y = w.node(_onnx_op(op), [name, *filt], **attrs)
    axes = [*batch, *out_chan, oh, ow]
    shape = [size[a] for a in axes]
    y = w.node("Reshape", [y, w.const(shape)])
    w.node("Identity", [w.align(Tensor("", y, y, r.dtype, axes, shape), r.axes)], out)


WRITERS: dict[str, Callable[[_Writer, Op, list[Tensor], str], None]] = {
    "nary": _nary, "node": _node, "square": _square, "gelu": _gelu, "einsum": _einsum,
    "reduce": _reduce, "softmax": _softmax, "layer_norm": _layer_norm, "reshape": _reshape,
    "transpose": _transpose, "dimshuffle": _dimshuffle, "expand": _expand, "slice": _slice,
    "windowed": _windowed, "concat": _concat, "gather": _gather, "where": _where,
}  # fmt: skip
"""The ONNX writers, by the name a kernel's entry gives in ``onnx_writer``
(:mod:`geon.core.ops.catalogue`): ``"node"`` is one node of the entry's ``onnx`` operator."""


def to_onnx(
    graph: Graph, name: str = "geon", weights: dict[str, np.ndarray[Any, Any]] | None = None
) -> Any:
    """The ONNX ``ModelProto`` of ``graph`` (see the module docstring); leaves whose label is
    in ``weights`` become initializers holding those values."""
    from onnx import helper, numpy_helper

    p = read(graph)
    w = _Writer(p)
    inputs = []
    output_ids = {t.id for t in p.outputs}
    for t in p.leaves:
        value = t.value if t.value is not None else (weights or {}).get(t.label or "")
        if value is not None:
            if tuple(np.shape(value)) != tuple(t.shape):
                raise ExportError(
                    f"weight {shown_text(t.label or '')} has shape {np.shape(value)}; the tensor "
                    f"has {t.shape}"
                )
            arr = np.asarray(value, dtype=np.dtype(_np(t.dtype)))
            if t.id in output_ids:  # an initializer cannot be a graph output in onnxruntime
                w.inits.append(numpy_helper.from_array(arr, w.p_name(t) + "_value"))
                w.node("Identity", [w.p_name(t) + "_value"], w.p_name(t))
            else:
                w.inits.append(numpy_helper.from_array(arr, w.p_name(t)))
        else:
            inputs.append(helper.make_tensor_value_info(w.p_name(t), ELEM[t.dtype], t.shape))
    for op in p.ops:
        try:
            _emit(w, op)
        except MALFORMED as error:
            raise malformed(op, error) from None
    outputs = [helper.make_tensor_value_info(w.p_name(t), ELEM[t.dtype], t.shape)
               for t in p.outputs]  # fmt: skip
    g = helper.make_graph(w.nodes, name, inputs, outputs, initializer=w.inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model
