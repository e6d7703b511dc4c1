"""Export a geon document: a standalone NumPy script, einsum strings per contraction, and geon
builder Python code that rebuilds the graph (ONNX is :mod:`geon.interop.onnx_export`).

A placed document (one a plan was written into) is exported as its LOGICAL model (issue 35:
"export under a plan with partial products exports the logical model, or says why it cannot"):
:func:`logical` puts every operation a plan split over a contracted or reduced axis back whole
(:func:`geon.core.plans.contract.restore_ops`, which switching plans uses too) and leaves the
Applications and the Mesh out, and :func:`export_logical` answers the notice the REST header, the
editor's menu and ``geon export`` show: none of these formats holds a placement (the JAX program
of :mod:`geon.interop.jax_export` is the export that does).

Every export reads the document through :func:`geon.interop.program.read` (leaves, operations
in run order, axes per tensor). Operands of elementwise ops are aligned by axis name (transposed
and given length-1 dims where an axis is missing), as geon's elementwise rule says.

>>> from geon import core as gc
>>> H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
>>> x = gc.placeholder(axes=[H, W], name="x")
>>> y = gc.placeholder(axes=[W + 1, N], name="y")
>>> print(to_einsum(gc.graph([gc.dot(x, y, name="z")])))
z = einsum("ab,bc->ac", x, y)  # ('H', 'W')·('W+1', 'N') -> ('H', 'N')
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from geon.core.graph import APPLICATION, MESH, Graph
from geon.core.ops import CATALOGUE
from geon.core.plans.contract import restore_ops
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
    shown,
    with_role,
)

_HEADER = '''"""A geon model (written by python -m geon export --to numpy).

Run: python {{this file}} --inputs in.npz --out out.npz  (keys = tensor labels)
"""

import argparse
import math

import numpy as np

TITLE = {title}


def align(x, src, dst):
    """x with axes src, transposed to dst's order, with length-1 dims for dst's other axes."""
    kept = [a for a in dst if a in src]
    x = np.transpose(x, [src.index(a) for a in kept])
    return x.reshape([x.shape[kept.index(a)] if a in src else 1 for a in dst])


_erf = np.vectorize(math.erf)


def windows(x, size, stride, padding, fill):
    """The (R, S) windows of x[n, c, H, W] padded with fill: [n, c, P, Q, R, S]."""
    (ph, pw), (sh, sw) = padding, stride
    x = np.pad(x, [(0, 0), (0, 0), (ph, ph), (pw, pw)], constant_values=fill)
    return np.lib.stride_tricks.sliding_window_view(x, size, axis=(2, 3))[:, :, ::sh, ::sw]


def conv2d(x, f, stride, padding):
    """x[n, C, H, W] convolved with f[K, C, R, S] (cross-correlation): [n, K, P, Q]."""
    return np.einsum("ncpqrs,kcrs->nkpq", windows(x, f.shape[2:], stride, padding, 0), f)


def pool2d(x, kind, size, stride, padding, include):
    """Max or average pooling of x[n, c, H, W]; an average counts padding when include."""
    if kind == "max":
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        return windows(x, size, stride, padding, low).max(axis=(4, 5)).astype(x.dtype)
    total = windows(x, size, stride, padding, 0).sum(axis=(4, 5))
    ones = np.ones((1, 1, *x.shape[2:]))
    count = size[0] * size[1] if include else windows(ones, size, stride, padding, 0).sum((4, 5))
    return (total / count).astype(x.dtype)

'''

_FOOTER = """

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with np.load(args.inputs) as data:
        inputs = {{k: data[k] for k in data.files}}
    np.savez(args.out, **model(inputs))
"""


def _ax(axes: list[str]) -> str:
    """Axis references for a comment, each through ``repr`` (they are canonical, parsed and
    written again, but no document text reaches the script otherwise)."""
    return "(" + ", ".join(repr(a) for a in axes) + ")"


def _literal(value: Any) -> str:
    """A constant's values as a Python literal: numbers only, NaN and infinities as ``np.nan``
    and ``np.inf`` (``repr`` writes them as names no script defines)."""
    text = repr(value.tolist())
    return re.sub(r"\b(nan|inf)\b", r"np.\1", text)


def _int_or_none(value: Any, op: Op) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExportError(
            f"operation {op.named} has slice bound {shown(value)}; expected an integer or null"
        )
    return str(value)


def _np_line(p: Program, op: Op) -> str:
    """The script's line of ``op``, by the writer its kernel's entry names (``numpy``)."""
    k = CATALOGUE.get(op.kernel)
    writer = NP_WRITERS.get(k.numpy) if k is not None else None
    if writer is None:
        raise ExportError(f"operation {op.named} ({op.kernel}) has no NumPy form here")
    ins = [t for ts in op.inputs.values() for t in ts]
    if not ins:
        raise ExportError(f"operation {op.named} ({op.kernel}) has no operand")
    return writer(p, op, ins)


def _expr(op: Op) -> str:
    """What the entry of ``op``'s kernel gives its writer to fill in (``numpy_expr``)."""
    return CATALOGUE[op.kernel].numpy_expr


def _np_nary(p: Program, op: Op, ins: list[Tensor]) -> str:
    r = op.result
    args = [f"align({t.var}, {t.axes!r}, {r.axes!r})" for t in ins]
    expr = args[0]
    for a in args[1:]:
        expr = f"{_expr(op)}({expr}, {a})"
    return f"{r.var} = np.asarray({expr}, dtype=np.{_np_dtype(r.dtype)})"


def _np_unary(p: Program, op: Op, ins: list[Tensor]) -> str:
    return f"{op.result.var} = {_expr(op).format(x=ins[0].var)}"


def _np_gelu(p: Program, op: Op, ins: list[Tensor]) -> str:
    r, x = op.result, ins[0]
    if op.params.get("approximate") == "tanh":
        return (f"{r.var} = 0.5 * {x.var} * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * "
                f"({x.var} + 0.044715 * {x.var} ** 3)))")  # fmt: skip
    erf = f"_erf({x.var} / math.sqrt(2.0))"
    return f"{r.var} = (0.5 * {x.var} * (1.0 + {erf})).astype({x.var}.dtype)"


def _np_einsum(p: Program, op: Op, ins: list[Tensor]) -> str:
    xs, ys = op.inputs["x"][0], op.inputs["y"][0]
    return f'{op.result.var} = np.einsum("{einsum_of(p, op)}", {xs.var}, {ys.var})'


def _np_reduce(p: Program, op: Op, ins: list[Tensor]) -> str:
    r, x = op.result, ins[0]
    red = reduced(op)
    idx = tuple(x.axes.index(a) for a in red)
    kept = [a for a in x.axes if a not in red]
    return (f"{r.var} = align(np.{_expr(op)}({x.var}, axis={idx}), {kept!r}, "
            f"{r.axes!r})")  # fmt: skip


def _np_softmax(p: Program, op: Op, ins: list[Tensor]) -> str:
    r, x = op.result, ins[0]
    idx = tuple(x.axes.index(a) for a in reduced(op))
    return (f"{r.var} = np.exp({x.var} - {x.var}.max(axis={idx}, keepdims=True)); "
            f"{r.var} = {r.var} / {r.var}.sum(axis={idx}, keepdims=True)")  # fmt: skip


def _np_layer_norm(p: Program, op: Op, ins: list[Tensor]) -> str:
    r, x = op.result, ins[0]
    idx = tuple(x.axes.index(a) for a in reduced(op))
    eps = op.params.get("epsilon", 1e-5)
    line = (f"_m = {x.var}.mean(axis={idx}, keepdims=True); "
            f"{r.var} = ({x.var} - _m) / np.sqrt((({x.var} - _m) ** 2).mean(axis={idx}, "
            f"keepdims=True) + {eps!r})")  # fmt: skip
    for key, opname in (("scale", "*"), ("bias", "+")):
        for t in op.inputs.get(key, []):
            line += f"; {r.var} = {r.var} {opname} align({t.var}, {t.axes!r}, {x.axes!r})"
    return line


def _np_reshape(p: Program, op: Op, ins: list[Tensor]) -> str:
    return f"{op.result.var} = np.reshape({ins[0].var}, {tuple(op.result.shape)!r})"


def _np_transpose(p: Program, op: Op, ins: list[Tensor]) -> str:
    return f"{op.result.var} = np.transpose({ins[0].var})"


def _np_dimshuffle(p: Program, op: Op, ins: list[Tensor]) -> str:
    r, x = op.result, ins[0]
    return f"{r.var} = align({x.var}, {x.axes!r}, {r.axes!r})"


def _np_broadcast(p: Program, op: Op, ins: list[Tensor]) -> str:
    r, x = op.result, ins[0]
    return (f"{r.var} = np.broadcast_to(align({x.var}, {x.axes!r}, {r.axes!r}), "
            f"{tuple(r.shape)!r})")  # fmt: skip


def _np_slice(p: Program, op: Op, ins: list[Tensor]) -> str:
    return f"{op.result.var} = {ins[0].var}[{_index(op, ins[0].axes)}]"


def _np_concat(p: Program, op: Op, ins: list[Tensor]) -> str:
    r = op.result
    dim = r.axes.index(op.params["axis"])
    parts = ", ".join(
        f"align({t.var}, {t.axes!r}, {[j if i == dim else a for i, a in enumerate(r.axes)]!r})"
        for t, j in zip(ins, op.params["along"], strict=True)
    )
    return f"{r.var} = np.concatenate([{parts}], axis={dim})"


def _np_gather(p: Program, op: Op, ins: list[Tensor]) -> str:
    tab, ids = op.inputs["table"][0], op.inputs["indices"][0]
    at = tab.axes.index(op.params["axis"])
    return f"{op.result.var} = np.take({tab.var}, {ids.var}, axis={at})"


def _np_where(p: Program, op: Op, ins: list[Tensor]) -> str:
    r = op.result
    xs, ys, cs = (op.inputs[key][0] for key in ("x", "y", "condition"))
    x_, y_, c_ = (f"align({t.var}, {t.axes!r}, {r.axes!r})" for t in (xs, ys, cs))
    return (f"{r.var} = np.broadcast_to(np.where({c_}.astype(bool), {x_}, {y_}), "
            f"{tuple(r.shape)!r}).astype(np.{_np_dtype(r.dtype)})")  # fmt: skip


def _np_windowed(p: Program, op: Op, ins: list[Tensor]) -> str:
    """conv2d and the pools on the operand made NCHW (by the axes' roles, as the ONNX export
    does), the result made geon's again."""
    x = ins[0]
    r = op.result
    h, wd = with_role(p, x.axes, "Height"), with_role(p, x.axes, "Width")
    oh, ow = with_role(p, r.axes, "Height"), with_role(p, r.axes, "Width")
    size = {a: n for t in (x, r) for a, n in zip(t.axes, t.shape, strict=True)}
    stride, padding = list(op.params["stride"]), list(op.params.get("padding", [0, 0]))
    if op.kernel == "op:conv2d":
        f = op.inputs["filter"][0]
        c = with_role(p, x.axes, "Channel", (h, wd))
        fc = next(a for a in f.axes if axis_name(a) == axis_name(c))
        fk = with_role(p, f.axes, "Channelout", (fc,))
        fh, fw = with_role(p, f.axes, "Height", (fc,)), with_role(p, f.axes, "Width", (fc,))
        batch, chan, out_chan = [a for a in x.axes if a not in (c, h, wd)], [c], [fk]
        filt = f"align({f.var}, {f.axes!r}, {[fk, fc, fh, fw]!r})"
        call = f"conv2d(_x, {filt}, {stride!r}, {padding!r})"
    else:
        batch, chan = [], [a for a in x.axes if a not in (h, wd)]
        out_chan = chan
        kind = "max" if op.kernel == "op:max_pool2d" else "avg"
        include = bool(op.params.get("count_include_pad", True))
        call = (f"pool2d(_x, {kind!r}, {list(op.params['kernel_size'])!r}, {stride!r}, "
                f"{padding!r}, {include!r})")  # fmt: skip
    n0 = math.prod(size[a] for a in batch)
    n1 = math.prod(size[a] for a in chan)
    nchw = [*batch, *chan, h, wd]
    axes = [*batch, *out_chan, oh, ow]
    shape = tuple(size[a] for a in axes)
    return (f"_x = align({x.var}, {x.axes!r}, {nchw!r}).reshape({(n0, n1, size[h], size[wd])!r}); "
            f"{r.var} = align({call}.reshape({shape!r}), {axes!r}, {r.axes!r})")  # fmt: skip


def _index(op: Op, axes: list[str]) -> str:
    parts = []
    for a in axes:
        s = op.params.get("slices", {}).get(a)
        if s is None:
            parts.append(":")
        elif isinstance(s, int) and not isinstance(s, bool):
            parts.append(str(s))
        elif isinstance(s, dict):
            start, stop = _int_or_none(s.get("start"), op), _int_or_none(s.get("stop"), op)
            step = _int_or_none(s.get("step"), op)
            parts.append(f"{start}:{stop}{':' + step if step else ''}")
        else:
            raise ExportError(
                f"operation {op.named} slices axis {a!r} by {shown(s)}; expected an integer or "
                "{start, stop, step}"
            )
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


def _np_dtype(dtype: str) -> str:
    return "bool_" if dtype == "boolean" else dtype


NP_WRITERS: dict[str, Callable[[Program, Op, list[Tensor]], str]] = {
    "nary": _np_nary, "unary": _np_unary, "gelu": _np_gelu, "einsum": _np_einsum,
    "reduce": _np_reduce, "softmax": _np_softmax, "layer_norm": _np_layer_norm,
    "reshape": _np_reshape, "transpose": _np_transpose, "dimshuffle": _np_dimshuffle,
    "broadcast": _np_broadcast, "slice": _np_slice, "windowed": _np_windowed,
    "concat": _np_concat, "gather": _np_gather, "where": _np_where,
}  # fmt: skip
"""The NumPy writers, by the name a kernel's entry gives in ``numpy``
(:mod:`geon.core.ops.catalogue`); a writer fills in the entry's ``numpy_expr`` where it has one."""


def to_numpy(graph: Graph, title: str = "geon model") -> str:
    """A standalone NumPy script computing ``graph``: ``model(inputs) -> outputs`` by label."""
    p = read(graph)
    lines = [_HEADER.format(title=repr(title)), "def model(inputs):"]
    lines.append('    """The outputs (by label) of the document, from its inputs (by label)."""')
    for t in p.leaves:
        key = t.key
        if t.value is not None:
            lines.append(
                f"    {t.var} = np.asarray({_literal(t.value)}, dtype=np.{_np_dtype(t.dtype)})"
            )
        else:
            lines.append(f"    {t.var} = np.asarray(inputs[{key!r}])  # {_ax(t.axes)}")
    for op in p.ops:
        try:
            line = _np_line(p, op)
        except MALFORMED as error:
            raise malformed(op, error) from None
        lines.append(f"    {line}  # {op.kernel} -> {_ax(op.result.axes)}")
    outs = ", ".join(f"{t.key!r}: {t.var}" for t in p.outputs)
    lines.append(f"    return {{{outs}}}")
    return "\n".join(lines) + _FOOTER.format()


def to_einsum(graph: Graph) -> str:
    """One line per ``dot``: its einsum string, operands and axes."""
    p = read(graph)
    out = []
    for op in p.ops:
        if op.kernel != "op:dot":
            continue
        try:
            x, y, r = op.inputs["x"][0], op.inputs["y"][0], op.result
            spec = einsum_of(p, op)
        except MALFORMED as error:
            raise malformed(op, error) from None
        out.append(
            f'{r.var} = einsum("{spec}", {x.var}, {y.var})  # {_ax(x.axes)}·'
            f"{_ax(y.axes)} -> {_ax(r.axes)}"
        )
    return "\n".join(out)


def to_python(graph: Graph) -> str:
    """geon builder code (DESIGN.md §8) that rebuilds ``graph``'s operations and axes."""
    p = read(graph)
    lines = [
        '"""Rebuilds the document with geon\'s builder (python -m geon export --to python)."""',
        "",
        "import numpy as np",
        "",
        "from geon import core as gc",
        "from geon.core.builder.tensor import make_op",
        "",
        "AX = {",
    ]
    for a in p.axes:
        extra = "".join(f", {k}={a[k]!r}" for k in ("roles", "cls", "batch", "doc") if a.get(k))
        lines.append(f"    {a['name']!r}: gc.Axis({a['name']!r}, {a['length']!r}{extra}),")
    lines += [
        "}",
        "",
        "",
        "def R(ref):",
        '    """The axis reference written ref ("W", "W-1", "W+1")."""',
        "    for sign in ('+', '-'):",
        "        name, s, k = ref.rpartition(sign)",
        "        if s and k.isdigit() and name in AX:",
        "            return AX[name] + int(k) if sign == '+' else AX[name] - int(k)",
        "    return AX[ref] - 0",
        "",
        "",
        "def build():",
        '    """The output tensors (geon builder handles) of the document."""',
    ]
    for t in p.leaves:
        refs = "[" + ", ".join(f"R({a!r})" for a in t.axes) + "]"
        if t.value is not None:
            lines.append(
                f"    {t.var} = gc.constant(np.asarray({_literal(t.value)}, "
                f"dtype={_np_dtype(t.dtype)!r}), axes={refs}, name={t.label!r})"
            )
        else:
            lines.append(
                f"    {t.var} = gc.placeholder(axes={refs}, name={t.label!r}, dtype={t.dtype!r})"
            )
    for op in p.ops:
        ins = ", ".join(f"{k!r}: [{', '.join(t.var for t in ts)}]" for k, ts in op.inputs.items())
        lines.append(
            f"    {op.result.var} = make_op({op.kernel!r}, {{{ins}}}, {op.params!r}, "
            f"list(AX.values()), name={op.result.label!r})"
        )
    lines.append(f"    return [{', '.join(t.var for t in p.outputs)}]")
    lines += ["", "", "graph = gc.graph(build())", ""]
    return "\n".join(lines)


#: What each format is called in the notice of a placed document's export.
FORMAT_NAMES = {
    "onnx": "ONNX",
    "numpy": "a NumPy script",
    "einsum": "einsum strings",
    "python": "geon builder code",
}


def logical(graph: Graph) -> tuple[Graph, str | None]:
    """The logical model of ``graph`` and what of a plan was left out of it (None, and ``graph``
    itself, when no plan placed it): a copy with every split operation put back whole (its
    partial products, their sum and the parts axis the plan added become the one operation it
    was, same id and label) and without Applications. The Mesh node and the inputs' placement
    tags stay (they name the mesh) and no exporter reads them: the notice counts the mesh among
    what is left out of the file.

    >>> from geon import core as gc
    >>> from geon.core.plans.write import apply_plan
    >>> N, F = gc.Axis("N", 4), gc.Axis("F", 6)
    >>> g = gc.graph([gc.sum(gc.placeholder(axes=[N, F], name="x"), reduction_axes=[F], name="s")])
    >>> plan = {"name": "tp", "mesh": {"axes": {"tp": 2}}, "axisMapping": {"F": "tp"}}
    >>> placed = apply_plan(g, plan)
    >>> back, left_out = logical(placed)
    >>> [n for n in back.to_json()["nodes"] if n["type"] != MESH] == g.to_json()["nodes"], left_out
    (True, '1 split operation put back whole, 2 Applications and the mesh left out')
    >>> logical(g) == (g, None)
    True
    """
    restore = restore_ops(graph)
    apps = sum(1 for n in graph.nodes if n.type == APPLICATION)
    meshes = sum(1 for n in graph.nodes if n.type == MESH)
    if not restore and not apps and not meshes:
        return graph, None
    out = graph.copy()
    out.apply(restore)
    placement = [n.id for n in out.nodes if n.type == APPLICATION]
    out.apply([{"op": "remove_node", "id": i} for i in placement])
    split = sum(1 for o in restore if o["op"] == "update_node")
    parts = [f"{split} split operation{'s' * (split != 1)} put back whole"] if split else []
    dropped = [f"{apps} Application{'s' * (apps != 1)}"] if apps else []
    dropped += ["the mesh"] if meshes else []
    parts += [" and ".join(dropped) + " left out"] if dropped else []
    return out, ", ".join(parts)


def export_logical(
    graph: Graph, to: str, weights: dict[str, Any] | None = None
) -> tuple[Any, str | None]:
    """:func:`export` of ``graph`` and, for a placed document, the notice that says its logical
    model was exported: "exported the logical model; the plan's placement is not part of ONNX
    (...)", naming what was left out; None for a document no plan placed."""
    model, left_out = logical(graph)
    result = _export(model, to, weights)
    if left_out is None:
        return result, None
    what = FORMAT_NAMES.get(to, to)
    return result, (
        f"exported the logical model; the plan's placement is not part of {what} ({left_out})"
    )


def export(graph: Graph, to: str, weights: dict[str, Any] | None = None) -> Any:
    """Export the logical model of ``graph`` (:func:`logical`) to ``numpy``, ``einsum`` or
    ``python`` (text) or ``onnx`` (a ModelProto, with ``weights`` by label as initializers)."""
    return _export(logical(graph)[0], to, weights)


def _export(graph: Graph, to: str, weights: dict[str, Any] | None) -> Any:
    if to not in FORMAT_NAMES:
        raise ExportError(
            f'export format "{to}" is unknown; expected onnx, numpy, einsum or python'
        )
    if to == "numpy":
        return to_numpy(graph)
    if to == "einsum":
        return to_einsum(graph)
    if to == "python":
        return to_python(graph)
    from geon.interop.onnx_export import to_onnx

    return to_onnx(graph, weights=weights)
