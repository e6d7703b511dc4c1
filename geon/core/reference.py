"""A straightforward NumPy evaluation of a named graph: the oracle for the executor.

>>> from geon import core as gc
>>> H, W = gc.Axis("H", 2), gc.Axis("W", 3)
>>> x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W])
>>> s = gc.sum(x, out_axes=[W])
>>> out = evaluate_graph(gc.graph([s]), {})
>>> out[s.id].tolist()
[3.0, 5.0, 7.0]

Each Operation runs on whole tensors with plain NumPy (``einsum`` for dot and conv, ufuncs
for elementwise ops, indexing and ``np.pad`` for views, ``math.erf`` per element for GELU,
softmax and layer norm row by row over the normalised axes moved last); the shapes and orders
come from :func:`geon.core.ops.infer` on the axes stored in the document, so this module
re-derives nothing by itself. It favours clarity over speed and is the test oracle of the
array-API executor: tests and benchmarks import it, no module of ``geon`` does. Only named
operations run here; positional loom kernels raise :class:`~geon.core.errors.ExecutionError`.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from functools import reduce
from typing import Any

import numpy as np

from geon.core.axes import Axes, Axis
from geon.core.constants import CONSTANT, decode_constant
from geon.core.dtypes import REDUCERS, UFUNCS, numpy_dtype
from geon.core.errors import ExecutionError, GeonError, ShapeError
from geon.core.graph import AXIS, OPERATION, TENSOR, TENSOR_AXES, Graph, Node, iter_selections
from geon.core.ops import CATALOGUE, Inference, infer

__all__ = ["evaluate_graph", "run_op"]

Array = np.ndarray[Any, Any]


def _align(a: Array, cols: list[int], rank: int) -> Array:
    """Put an operand's dims at the index columns ``cols`` of a rank-``rank`` result."""
    order = sorted(range(len(cols)), key=cols.__getitem__)
    t = np.transpose(a, order)
    shape = [1] * rank
    for d in order:
        shape[cols[d]] = a.shape[d]
    return t.reshape(shape)


def _cols(inf: Inference, key: str, pos: int = 0) -> list[int]:
    out = []
    for dim in inf.operand_dims(key, pos):
        col = dim.column
        if col is None:
            raise ExecutionError(f"{inf.kernel}: dim {dim} does not follow one index axis")
        out.append(col)
    return out


def run_op(inf: Inference, inputs: Mapping[str, list[Array]]) -> Array:
    """The result of one op on whole operand arrays (in the operands' axis order)."""
    k = CATALOGUE[inf.kernel]
    rank = len(inf.result)
    if k.family in ("nary", "binary"):
        arrays = [a for key in k.inputs for a in inputs[key]]
        aligned = [_align(a, m, rank) for a, m in zip(arrays, inf.plan["align"], strict=True)]
        with np.errstate(all="ignore"):
            out = reduce(UFUNCS[k.name], aligned)
        return np.broadcast_to(out, inf.result.shape).copy()
    if k.name == "op:where":
        x, y, c = (_align(inputs[key][0], inf.plan["align"][i], rank)
                   for i, key in enumerate(("x", "y", "condition")))  # fmt: skip
        picked = np.where(c.astype(bool), x, y.astype(x.dtype))
        return np.broadcast_to(picked, inf.result.shape).copy()
    if k.name == "op:concat":
        parts = [np.transpose(a, p) for a, p in zip(inputs["tensors"], inf.plan["perm"],
                                                     strict=True)]  # fmt: skip
        return np.concatenate(parts, axis=inf.plan["dim"])
    if k.name == "op:gather":
        table, idx = inputs["table"][0], inputs["indices"][0].astype(np.int64)
        n = table.shape[inf.plan["axis"]]
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise ExecutionError(f"op:gather indices reach outside [-{n}, {n})")
        return np.take(table, np.where(idx < 0, idx + n, idx), axis=inf.plan["axis"])
    if k.name == "op:gelu":
        return _gelu(inf.params["approximate"], inputs["tensor"][0])
    if k.family == "unary":
        with np.errstate(all="ignore"):
            return np.asarray(UFUNCS[k.name](inputs["tensor"][0]))
    if k.family == "normalization":
        return _normalization(inf, inputs)
    if inf.kernel == "op:dot_partial":
        return _partial_dot(inf, inputs["x"][0], inputs["y"][0])
    if k.family == "dot":
        return _einsum_dot(inf, inputs["x"][0], inputs["y"][0])
    if k.family == "reduction" and "parts" in inf.plan:
        return _partial_reduction(inf, inputs["tensor"][0])
    if k.family == "reduction":
        a = inputs["tensor"][0]
        reduced = tuple(inf.plan["reduced"])
        r = np.asarray(REDUCERS[k.name](a, axis=reduced))
        kept = [i for i in range(a.ndim) if i not in reduced]
        cols = [inf.operand_dims("tensor")[i].column for i in kept]
        order = sorted(range(len(kept)), key=lambda j: cols[j] or 0)
        return np.transpose(r, order)
    if k.family == "conv":
        return _conv2d(inf, inputs["x"][0], inputs["filter"][0])
    if k.family == "pool":
        return _pool2d(inf, inputs["tensor"][0])
    return _view(inf, inputs["tensor"][0])


def _gelu(approximate: str, x: Array) -> Array:
    """Hendrycks & Gimpel's GELU, ``x·Φ(x) = x/2·(1 + erf(x/√2))`` element by element, or its
    tanh approximation."""
    if approximate == "tanh":
        return np.asarray(
            0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * np.power(x, 3))))
        )
    exact = np.vectorize(lambda v: v / 2 * (1 + math.erf(v / math.sqrt(2))), otypes=[np.float64])
    return np.asarray(exact(x))


def _normalization(inf: Inference, inputs: Mapping[str, list[Array]]) -> Array:
    """softmax and layer norm on rows: the normalised dims moved last and flattened, one row per
    index point, then moved back."""
    x = inputs["tensor"][0].astype(np.float64)
    reduced = list(inf.plan["reduced"])
    kept = [d for d in range(x.ndim) if d not in reduced]
    rows = np.transpose(x, kept + reduced).reshape(-1, math.prod(x.shape[d] for d in reduced))
    if inf.kernel == "op:softmax":
        log_norm = rows.max(axis=1, keepdims=True)
        log_norm = log_norm + np.log(np.exp(rows - log_norm).sum(axis=1, keepdims=True))
        out = np.exp(rows - log_norm)
    else:
        out = (rows - rows.mean(axis=1, keepdims=True)) / np.sqrt(
            rows.var(axis=1, keepdims=True) + inf.params["epsilon"]
        )
        for key in ("scale", "bias"):
            if key in inf.plan:
                order = sorted(range(len(reduced)), key=lambda j: inf.plan[key][j])
                w = np.transpose(inputs[key][0], order).reshape(1, -1)
                out = out * w if key == "scale" else out + w
    shaped = out.reshape([x.shape[d] for d in kept + reduced])
    return np.transpose(shaped, np.argsort(kept + reduced))


def _partial_dot(inf: Inference, x: Array, y: Array) -> Array:
    """``op:dot_partial``: the dot of each part ``p`` of the split axis (elements
    ``[chunk·p, chunk·(p+1))`` of both operands), stacked along the parts axis."""
    parts = inf.plan["parts"]
    chunk, i, j = parts["chunk"], parts["x"], parts["y"]
    whole = infer(
        "op:dot", {"x": [inf.operand("x")], "y": [inf.operand("y")]}
    )  # the dot of one part: same pairs and result order
    out = []
    for p in range(inf.result.shape[0]):
        xs = np.take(x, range(chunk * p, chunk * (p + 1)), axis=i)
        ys = np.take(y, range(chunk * p, chunk * (p + 1)), axis=j)
        out.append(_einsum_dot(whole, xs, ys))
    return np.stack(out)


def _partial_reduction(inf: Inference, a: Array) -> Array:
    """A reduction with ``parts``: the whole reduction of each part ``p`` of the split axis
    (elements ``[chunk·p, chunk·(p+1))``), stacked along the parts axis."""
    parts = inf.plan["parts"]
    chunk, dim = parts["chunk"], parts["dim"]
    whole = infer(
        inf.kernel, {"tensor": [inf.operand("tensor")]}, {"out_axes": list(inf.params["out_axes"])}
    )  # the reduction of one part: same result order
    return np.stack(
        [
            run_op(whole, {"tensor": [np.take(a, range(chunk * p, chunk * (p + 1)), axis=dim)]})
            for p in range(inf.result.shape[0])
        ]
    )


def _einsum_dot(inf: Inference, x: Array, y: Array) -> Array:
    letters = iter(string.ascii_letters)
    out_letters = [next(letters) for _ in inf.result]
    xs: list[str] = []
    for dim in inf.operand_dims("x"):
        xs.append(out_letters[dim.column] if dim.column is not None else "")
    ys: list[str] = []
    for dim in inf.operand_dims("y"):
        ys.append(out_letters[dim.column] if dim.column is not None else "")
    for i, j in inf.plan["pairs"]:
        c = next(letters)
        xs[i] = c
        ys[j] = c
    spec = f"{''.join(xs)},{''.join(ys)}->{''.join(out_letters)}"
    return np.asarray(np.einsum(spec, x, y))


def _view(inf: Inference, a: Array) -> Array:
    name = inf.kernel
    if name == "op:cast_axes":
        return a.copy()
    if name in ("op:broadcast",):
        return np.broadcast_to(
            _align(a, _cols(inf, "tensor"), len(inf.result)), inf.result.shape
        ).copy()
    if name == "op:dimshuffle":
        cols = _cols(inf, "tensor")
        return np.transpose(a, sorted(range(a.ndim), key=cols.__getitem__)).copy()
    if name == "op:transpose":
        return np.transpose(a, tuple(reversed(range(a.ndim)))).copy()
    if name == "op:slice":
        index: list[Any] = []
        for spec in inf.plan["slices"]:
            if spec is None:
                index.append(slice(None))
            elif isinstance(spec, int):
                index.append(spec)
            else:
                start, stop, step = spec
                index.append(slice(start, stop if stop >= 0 else None, step))
        return np.asarray(a[tuple(index)]).copy()
    if name == "op:pad":
        return np.pad(a, [tuple(w) for w in inf.plan["pad"]])
    if name in ("op:flatten", "op:unflatten"):
        return a.reshape(inf.result.shape).copy()
    raise ExecutionError(f'kernel "{name}" has no reference implementation')


def _conv2d(inf: Inference, x: Array, f: Array) -> Array:
    px, pf, po = inf.plan["x"], inf.plan["filter"], inf.plan["out"]
    batch = list(inf.plan["batch"])
    xt = np.transpose(x, [*batch, px["channel"], px["height"], px["width"]])
    ft = np.transpose(f, [pf["channel"], pf["height"], pf["width"], pf["channelout"]])
    ph, pw = inf.params["padding"]
    sh, sw = inf.params["stride"]
    widths = [(0, 0)] * (xt.ndim - 2) + [(ph, ph), (pw, pw)]
    xp = np.pad(xt, widths)
    r, s = ft.shape[1], ft.shape[2]
    win = np.lib.stride_tricks.sliding_window_view(xp, (r, s), axis=(-2, -1))
    win = win[..., ::sh, ::sw, :, :]
    out = np.einsum("...cpqrs,crsk->...kpq", win, ft)
    current = [*po["batch"], po["channelout"], po["height"], po["width"]]
    order = sorted(range(len(current)), key=current.__getitem__)
    return np.transpose(out, order).copy()


def _pool2d(inf: Inference, x: Array) -> Array:
    """Max or average pooling window by window, from the definition (PyTorch's ``MaxPool2d``
    and ``AvgPool2d`` docs): padding reads -inf for max; the average divides by the window's
    size, or with ``count_include_pad`` false by the number of input cells it covers."""
    plan = inf.plan
    kept = [d for d in range(x.ndim) if d not in (plan["height"], plan["width"])]
    xt = np.transpose(x, [*kept, plan["height"], plan["width"]])
    kh, kw = inf.params["kernel_size"]
    sh, sw = inf.params["stride"]
    ph, pw = inf.params["padding"]
    rows, cols = xt.shape[-2:]
    p = (rows + 2 * ph - kh) // sh + 1
    q = (cols + 2 * pw - kw) // sw + 1
    work = xt.astype(np.float64)
    out = np.zeros((*xt.shape[:-2], p, q))
    for i in range(p):
        for j in range(q):
            r0, c0 = i * sh - ph, j * sw - pw
            cells = work[..., max(r0, 0) : r0 + kh, max(c0, 0) : c0 + kw]
            if inf.kernel == "op:max_pool2d":
                out[..., i, j] = cells.max(axis=(-2, -1))
            else:
                real = cells.shape[-2] * cells.shape[-1]
                count = kh * kw if inf.params["count_include_pad"] else real
                out[..., i, j] = cells.sum(axis=(-2, -1)) / count
    current = [*plan["out"], plan["out_height"], plan["out_width"]]
    order = sorted(range(len(current)), key=current.__getitem__)
    return np.transpose(out, order).astype(x.dtype)


# ------------------------------------------------------------------------------------------
# Graphs


def _tensor_axes(node: Node, declared: Mapping[str, Axis]) -> Axes | None:
    tag = node.tags.get(TENSOR_AXES) if node.tags else None
    if not isinstance(tag, dict):
        return None
    return Axes.parse(tag.get("axes", []), declared)


def evaluate_graph(graph: Graph, inputs: Mapping[str, Any]) -> dict[str, Array]:
    """Every tensor's value: constants from their tags, placeholders from ``inputs`` (keyed by
    tensor id or label), the rest computed op by op. Raises a ``GeonError`` naming what is
    missing or malformed."""
    declared: dict[str, Axis] = {}
    for node in graph.of_type(AXIS):
        declared[node.body.get("name", "")] = Axis.from_json(node.body)
    by_label: dict[str, list[str]] = {}
    values: dict[str, Array] = {}
    tensors: dict[str, Node] = {}
    for node in graph.of_type(TENSOR):
        tensors[node.id] = node
        if node.label:
            by_label.setdefault(node.label, []).append(node.id)
    for key, value in inputs.items():
        ids = [key] if key in tensors else by_label.get(key, [])
        if len(ids) != 1:
            raise ExecutionError(
                f'input "{key}" names no single tensor; expected a tensor id or a unique label'
            )
        values[ids[0]] = np.asarray(value)
    written = {
        sel.tensor_id
        for op in graph.of_type(OPERATION)
        for sel in iter_selections(op.body, ("outputs",))
    }
    for tid, node in tensors.items():
        shape = _shape(node)
        dtype = numpy_dtype(node.body["dtype"])
        if node.tags.get(CONSTANT) is not None:
            values[tid] = decode_constant(node.tags[CONSTANT], node.body["dtype"], shape)
        elif tid in values:
            if values[tid].shape != shape:
                raise ShapeError(
                    f'input for tensor "{node.label or tid}" has shape {values[tid].shape}; '
                    f"expected {shape}"
                )
            values[tid] = values[tid].astype(dtype, copy=False)
        elif tid not in written:
            axes = node.tags.get(TENSOR_AXES, {}).get("axes", [])
            raise ExecutionError(
                f'placeholder "{node.label or tid}" has no value; feed an array of shape {shape}'
                f" (axes {tuple(axes)})"
            )
    pending = list(graph.of_type(OPERATION))
    while pending:
        progressed = False
        rest = []
        for op in pending:
            reads = [s.tensor_id for s in iter_selections(op.body, ("inputs",))]
            if all(r in values for r in reads):
                _run(op, tensors, values, declared)
                progressed = True
            else:
                rest.append(op)
        if not progressed:
            raise ExecutionError(
                f"operations {tuple(o.id for o in rest)} wait on tensors no operation computes"
            )
        pending = rest
    return values


def _shape(node: Node) -> tuple[int, ...]:
    rng = node.body["range"]
    return tuple(int(e) - int(s) for s, e in zip(rng["start"], rng["end"], strict=True))


def _run(
    op: Node, tensors: Mapping[str, Node], values: dict[str, Array], declared: Mapping[str, Axis]
) -> None:
    kname = op.body.get("kernel")
    if kname not in CATALOGUE or not CATALOGUE[kname].named:
        raise ExecutionError(
            f'operation "{op.id}" has kernel "{kname}"; the reference runs named catalogue '
            "kernels only"
        )
    arrays: dict[str, list[Array]] = {}
    axes: dict[str, list[Axes]] = {}
    for sel in iter_selections(op.body, ("inputs",)):
        node = tensors[sel.tensor_id]
        ax = _tensor_axes(node, declared)
        if ax is None:
            raise ExecutionError(
                f'operation "{op.id}" ({kname}) reads tensor "{node.label or node.id}", which has '
                "no TensorAxes; the reference runs named operations only"
            )
        # A named op's params count from its tensors' origins and its selections are the
        # regions it reads, so the kernel sees whole tensors.
        arrays.setdefault(sel.key, []).append(values[sel.tensor_id])
        axes.setdefault(sel.key, []).append(ax)
    try:
        inf = infer(kname, axes, op.body.get("params"), declared)
    except GeonError as e:
        raise ExecutionError(f'operation "{op.id}" ({kname}): {e}') from None
    result = run_op(inf, arrays)
    for sel in iter_selections(op.body, ("outputs",)):
        node = tensors[sel.tensor_id]
        dtype = node.body["dtype"]
        shape = _shape(node)
        target = values.get(sel.tensor_id)
        if target is None:
            target = np.zeros(shape, dtype=numpy_dtype(dtype))
            values[sel.tensor_id] = target
        start = node.body["range"]["start"]
        idx = tuple(
            slice(int(s) - int(t0), int(e) - int(t0))
            for s, e, t0 in zip(sel.range["start"], sel.range["end"], start, strict=True)
        )
        target[idx] = result
