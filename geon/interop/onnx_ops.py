"""Per-operator mapping of the ONNX importer (:mod:`geon.interop.onnx_import`): one ONNX node
becomes one or a few geon ops on the unified axes.

MatMul with a weight of rank <= 2 is a ``dot`` (the weight's contracted axis one dual level up);
a batched MatMul is ``multiply`` + ``sum`` (``dot`` has no shared batch axes); Gemm is ``dot``,
times ``alpha``, plus ``beta * C``; keepdims of a reduction re-adds the length-1 axis with
``broadcast``. Conv, MaxPool and AveragePool (2-D, NCHW) are ``conv2d``, ``max_pool2d`` and
``avg_pool2d``: the importer gives the unified axes conv2d's roles (the input's C, H, W are
Channel, Height, Width; the weight's M is Channelout, its C the channel one dual level up) and
refuses what the kernels lack (``group`` != 1, dilations != 1, ``ceil_mode``, pads that differ
before and after); a Conv's bias is an ``add``. Flatten is a Reshape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geon.core.axes import Axis, AxisRef, CompositeRef, Ref
from geon.core.builder import Tensor, constant
from geon.core.builder import functions as F
from geon.core.builder.tensor import dot, make_op

_Importer = Any  # geon.interop.onnx_import._Importer (imported there, not here: no cycle)


def _refuse(n: Any, what: str) -> None:
    from geon.interop.onnx_common import OnnxImportError

    raise OnnxImportError(f'{n.op_type} "{n.name or n.output[0]}": {what}')


def _scalar(value: float, dtype: str) -> Tensor:
    from geon.core.dtypes import numpy_dtype

    return constant(np.asarray(value, dtype=numpy_dtype(dtype)), axes=[])


def emit(imp: _Importer, n: Any, a: dict[str, Any]) -> None:
    """Emit the geon ops of ONNX node ``n`` (attributes ``a``) into the importer."""
    from geon.interop.onnx_common import BINARY, LAYERED, NARY, REDUCE, UNARY

    op = n.op_type
    ins = list(n.input)
    out = n.output[0]
    for extra in n.output[1:]:
        if extra and op != "LayerNormalization":
            _refuse(n, f'output "{extra}" is used; geon maps only the first output of {op}')
    if op in UNARY:
        t = make_op(UNARY[op], {"tensor": [imp.get(ins[0])]})
    elif op == "Identity":
        t = imp.get(ins[0])
    elif op == "Gelu":
        approx = a.get("approximate", b"none")
        approx = approx.decode() if isinstance(approx, bytes) else approx
        t = make_op("op:gelu", {"tensor": [imp.get(ins[0])]}, {"approximate": approx})
    elif op in BINARY:
        t = BINARY[op](imp.aligned(ins[0], out), imp.aligned(ins[1], out))
    elif op in NARY:
        ops = [imp.aligned(i, out) for i in ins if i]
        t = ops[0] if len(ops) == 1 else NARY[op](*ops)
    elif op == "Transpose":
        x = imp.get(ins[0])
        perm = a.get("perm", list(reversed(range(len(x.axes)))))
        t = F.dimshuffle(x, [x.axes[p] for p in perm])
        t = imp.conform(t, imp.refs[out], out)
    elif op in REDUCE:
        t = _reduce(imp, n, a, REDUCE[op])
    elif op == "Softmax":
        x = imp.get(ins[0])
        axis = a.get("axis", -1 if imp.opset >= 13 else 1) % max(len(x.axes), 1)
        axes = [x.axes[axis]] if imp.opset >= 13 else list(x.axes[axis:])
        t = make_op("op:softmax", {"tensor": [x]}, {"reduction_axes": [str(r) for r in axes]})
    elif op == "LayerNormalization":
        t = _layer_norm(imp, n, a)
    elif op == "MatMul":
        t = _matmul(imp, n)
    elif op in ("Reshape", "Flatten"):
        t = _reshape(imp, n)
    elif op in ("Conv", "MaxPool", "AveragePool"):
        t = _windowed(imp, n, a)
    elif op == "Einsum":
        t = _einsum(imp, n)
    elif op in ("Squeeze", "Unsqueeze", "Gather"):
        t = _kept(imp, n)
    elif op == "Gemm":
        t = _gemm(imp, n, a)
    elif op in LAYERED:
        from geon.interop.onnx_layers import emit_layer

        t = emit_layer(imp, n, a)
    elif op == "Erf":
        _refuse(n, "geon has no erf kernel; Erf is imported only inside GELU, "
                   "x * 0.5 * (1 + erf(x / sqrt(2)))")  # fmt: skip
    else:  # pragma: no cover - check_ops refuses these first
        _refuse(n, "is not supported")
    imp.finish(out, t, n)


def _kept(imp: _Importer, n: Any) -> Tensor:
    x = imp.get(n.input[0])
    kept = imp.kept_dims(n)
    ro = imp.refs[n.output[0]]
    drops: dict[Any, Any] = {}
    if n.op_type == "Gather":
        idx = int(imp.consts[n.input[1]])
        drops = {x.axes[i]: idx for i in range(len(x.axes)) if i not in kept}
    else:
        drops = {x.axes[i]: 0 for i in range(len(x.axes)) if i not in kept}
    if drops:
        x = F.slice(x, drops)
    x = imp.conform(x, [ro[j] for _, j in sorted(kept.items())], n.input[0])
    if len(x.axes) != len(ro):
        x = F.broadcast(x, ro)
    return x


def _einsum(imp: _Importer, n: Any) -> Tensor:
    """One operand: a sum and a transpose; two: a ``dot`` (the second operand's contracted axes
    one dual level up) when no letter is shared and kept, else ``multiply`` + ``sum``."""
    from geon.interop.onnx_rewrite import einsum_terms

    ins = list(n.input)
    terms, result = einsum_terms(n, [len(imp.shapes[i]) for i in ins])
    out = n.output[0]
    ref: dict[str, Ref] = {c: imp.refs[out][i] for i, c in enumerate(result)}
    for v, letters in zip(ins, terms, strict=True):
        for i, c in enumerate(letters):
            ref.setdefault(c, imp.get(v).axes[i])
    ops = [imp.conform(imp.get(v), [ref[c] for c in t], v) for v, t in zip(ins, terms, strict=True)]
    summed = [c for c in dict.fromkeys("".join(terms)) if c not in result]
    if len(ops) == 2:
        shared = set(terms[0]) & set(terms[1])
        if shared and not shared & set(result) and set(summed) == shared:
            y = imp.conform(
                ops[1], [ref[c] + 1 if c in shared else ref[c] for c in terms[1]], ins[1]
            )
            return dot(ops[0], y)
        t = F.multiply(ops[0], ops[1])
    else:
        t = ops[0]
    return F.sum(t, reduction_axes=[ref[c] for c in summed]) if summed else t


def _reshape(imp: _Importer, n: Any) -> Tensor:
    from geon.interop.onnx_rewrite import reshape_groups

    x = imp.get(n.input[0])
    s, so = imp.shapes[n.input[0]], imp.shapes[n.output[0]]
    ro = imp.refs[n.output[0]]
    ones: dict[Any, Any] = {x.axes[i]: 0 for i, d in enumerate(s) if d == 1}
    if ones:
        x = F.slice(x, ones)
    out_refs: list[Any] = []
    for gi, go in reshape_groups(s, so):
        offset = len(out_refs)
        refs_now = list(x.axes)
        if len(gi) > 1:
            x = F.flatten(x, refs_now[offset : offset + len(gi)])
        target = [ro[j] for j in go]
        whole: Ref = target[0] if len(go) == 1 else CompositeRef.of(target)
        now = list(x.axes)
        if str(now[offset]) != str(whole):
            now[offset] = whole
            x = F.cast_axes(x, now)
        if len(go) > 1:
            x = F.unflatten(x, [CompositeRef.of(target)])
        out_refs += target
    if len(out_refs) != len(ro):
        x = F.broadcast(x, ro)
    return x


def _reduce(imp: _Importer, n: Any, a: dict[str, Any], fn: Any) -> Tensor:
    x = imp.get(n.input[0])
    axes, keep = imp._reduce_axes(n, a)
    if not axes:
        return x
    if n.op_type == "ReduceSum" and imp.dtype[n.input[0]] == "boolean":
        _refuse(n, "summing a boolean tensor is refused; ONNX does not define it either")
    r = fn(x, reduction_axes=[x.axes[i] for i in sorted(axes)])
    if keep:
        want = imp.refs[n.output[0]]
        r = F.broadcast(r, want)
    return r


def _layer_norm(imp: _Importer, n: Any, a: dict[str, Any]) -> Tensor:
    x = imp.get(n.input[0])
    axis = a.get("axis", -1) % len(x.axes)
    norm = list(x.axes[axis:])
    inputs: dict[str, list[Tensor]] = {"tensor": [x]}
    for key, name in zip(("scale", "bias"), n.input[1:3], strict=False):
        if not name:
            continue
        if imp.shapes[name] != tuple(r.length for r in norm):
            _refuse(
                n,
                f'{key} "{name}" has shape {imp.shapes[name]}; geon needs exactly the '
                f"normalised shape {tuple(r.length for r in norm)}",
            )
        inputs[key] = [imp.conform(imp.get(name), norm, name)]
    eps = float(a.get("epsilon", 1e-5))
    params = {"reduction_axes": [str(r) for r in norm], "epsilon": eps}
    if len(n.output) > 1 and any(n.output[1:]):  # Mean and InvStdDev, kept dims of length 1
        mean = F.mean(x, reduction_axes=norm)
        var = F.mean(F.square(F.subtract(x, mean)), reduction_axes=norm)
        dt = imp.dtype[n.input[0]]
        inv = F.divide(_scalar(1.0, dt), F.sqrt(F.add(var, _scalar(eps, dt))))
        for name, t in zip(n.output[1:], (mean, inv), strict=False):
            if name:
                imp.finish(name, F.broadcast(t, imp.refs[name]), n)
    return make_op("op:layer_norm", inputs, params)


def _base(r: Ref) -> str:
    return r.axis.name if isinstance(r, AxisRef) else str(r)


def _fresh(imp: _Importer, like: Ref, taken: set[str]) -> AxisRef:
    name, k = f"{_base(like)}_k", 1
    while name in taken:
        k += 1
        name = f"{_base(like)}_k{k}"
    return AxisRef(Axis(name, like.length))


def _matmul(imp: _Importer, n: Any) -> Tensor:
    an, bn = n.input[0], n.input[1]
    out = n.output[0]
    sa, sb, so = imp.shapes[an], imp.shapes[bn], imp.shapes[out]
    ro = imp.refs[out]
    x, y = imp.get(an), imp.get(bn)
    k_ref = x.axes[len(sa) - 1]
    if len(sb) <= 2 and len(so) >= 1:
        free_a = [ro[i] for i in range(len(sa) - 1)]
        x = imp.conform(x, [*free_a, k_ref], an)
        want_b = [k_ref + 1] + ([ro[-1]] if len(sb) == 2 else [])
        y = imp.conform(y, want_b, bn)
        return dot(x, y)
    # batched: multiply + sum over a contracted axis no output holds
    taken = {_base(r) for r in ro}
    if _base(k_ref) in taken or k_ref.level != 0:
        k_ref = _fresh(imp, k_ref, taken | {_base(r) for r in x.axes})
    xa = _batched(imp, an, sa, so, ro, k_ref, left=True, other_rank=len(sb))
    yb = _batched(imp, bn, sb, so, ro, k_ref, left=False, other_rank=len(sa))
    return F.sum(F.multiply(xa, yb), reduction_axes=[k_ref])


def _batched(
    imp: _Importer, name: str, s: tuple[int, ...], so: tuple[int, ...],
    ro: list[Ref], k_ref: Ref, *, left: bool, other_rank: int,
) -> Tensor:  # fmt: skip
    t = imp.get(name)
    if len(s) == 1:
        return imp.conform(t, [k_ref], name)
    nbo = len(so) - 1 - (1 if other_rank >= 2 else 0)
    drops: dict[Any, Any] = {}
    refs: list[Ref] = []
    nb = len(s) - 2
    for j in range(nb):
        i = nbo - nb + j
        if s[j] != so[i]:
            drops[t.axes[j]] = 0
        else:
            refs.append(ro[i])
    refs += [ro[nbo], k_ref] if left else [k_ref, ro[-1]]
    if drops:
        t = F.slice(t, drops)
    return imp.conform(t, refs, name)


def _gemm(imp: _Importer, n: Any, a: dict[str, Any]) -> Tensor:
    an, bn = n.input[0], n.input[1]
    out = n.output[0]
    ro = imp.refs[out]
    ta, tb = a.get("transA", 0), a.get("transB", 0)
    x, y = imp.get(an), imp.get(bn)
    k_ref = x.axes[0 if ta else 1]
    if k_ref.level != 0:
        k_ref = _fresh(imp, k_ref, {_base(r) for r in ro})
    x = imp.conform(x, [k_ref, ro[0]] if ta else [ro[0], k_ref], an)
    y = imp.conform(y, [ro[1], k_ref + 1] if tb else [k_ref + 1, ro[1]], bn)
    t = dot(x, y)
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    dt = imp.dtype[out]
    if alpha != 1.0:
        t = F.multiply(t, _scalar(alpha, dt))
    if len(n.input) > 2 and n.input[2]:
        c = imp.aligned(n.input[2], out)
        if beta != 1.0:
            c = F.multiply(c, _scalar(beta, dt))
        t = F.add(t, c)
    return t


def window_attrs(
    imp: _Importer, n: Any, a: dict[str, Any]
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """Kernel shape, strides and (symmetric) padding per spatial dim of a 2-D Conv or pool;
    refuses, naming the node and the value, what geon's kernels do not compute."""
    x = n.input[0]
    rank = len(imp.shapes[x])
    if rank != 4:
        _refuse(n, f'input "{x}" has rank {rank}; geon imports 2-D {n.op_type} only (rank 4, NCHW)')
    if n.op_type == "Conv":
        if a.get("group", 1) != 1:
            _refuse(n, f"group {a['group']} is not supported; geon imports group 1 only "
                       "(no grouped or depthwise convolution)")  # fmt: skip
        size = list(a.get("kernel_shape", imp.shapes[n.input[1]][2:]))
    else:
        size = list(a["kernel_shape"])
    if any(d != 1 for d in a.get("dilations", [1, 1])):
        _refuse(n, f"dilations {list(a['dilations'])} are not supported; geon imports dilations 1")
    if a.get("ceil_mode", 0):
        _refuse(n, f"ceil_mode {a['ceil_mode']} is not supported; geon imports ceil_mode 0 "
                   "(output lengths round down)")  # fmt: skip
    strides = list(a.get("strides", [1, 1]))
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    pads = list(a.get("pads", [0, 0, 0, 0]))
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0, 0, 0, 0]
        for i, (length, k, s) in enumerate(zip(imp.shapes[x][2:], size, strides, strict=True)):
            total = max((-(-length // s) - 1) * s + k - length, 0)
            small = total // 2
            pads[i], pads[i + 2] = (small, total - small) if auto == "SAME_UPPER" else (
                total - small, small)  # fmt: skip
    elif auto == "VALID":
        pads = [0, 0, 0, 0]
    if pads[:2] != pads[2:]:
        how = f"auto_pad {auto} gives pads {pads}, which" if auto.startswith("SAME") else (
            f"pads {pads}")  # fmt: skip
        _refuse(n, f"{how} differ before and after; geon pads each spatial dim "
                   "symmetrically (pads [h, w, h, w])")  # fmt: skip
    return (size[0], size[1]), (strides[0], strides[1]), (pads[0], pads[1])


def unify_window(imp: _Importer, n: Any, a: dict[str, Any]) -> None:
    """The unions and conv2d roles of a Conv or pool node (checking its attributes first)."""
    window_attrs(imp, n, a)
    x, out = n.input[0], n.output[0]
    uf, roles = imp.uf, imp.roles
    uf.union((x, 0), (out, 0))
    spatial = {(v, i): role for v in (x, out) for i, role in ((2, "Height"), (3, "Width"))}
    if n.op_type == "Conv":
        w = n.input[1]
        uf.union((x, 1), (w, 1))
        uf.union((w, 0), (out, 1))
        if len(n.input) > 2 and n.input[2]:
            uf.union((n.input[2], 0), (out, 1))
        spatial |= {(x, 1): "Channel", (w, 0): "Channelout", (w, 2): "Height", (w, 3): "Width"}
    else:
        uf.union((x, 1), (out, 1))
    for key, role in spatial.items():
        roles.setdefault(key, set()).add(role)


def _windowed(imp: _Importer, n: Any, a: dict[str, Any]) -> Tensor:
    size, strides, pads = window_attrs(imp, n, a)
    x = imp.get(n.input[0])
    ro = imp.refs[n.output[0]]
    if n.op_type == "MaxPool":
        return F.max_pool2d(x, ro, size, stride=strides, padding=pads)
    if n.op_type == "AveragePool":
        include = bool(a.get("count_include_pad", 0))
        return F.avg_pool2d(x, ro, size, stride=strides, padding=pads,
                            count_include_pad=include)  # fmt: skip
    w = imp.get(n.input[1])
    w = imp.conform(w, [ro[1], x.axes[1] + 1, *w.axes[2:]], n.input[1])
    t = F.conv2d(x, w, ro, stride=strides, padding=pads)
    if len(n.input) > 2 and n.input[2]:
        t = F.add(t, imp.conform(imp.get(n.input[2]), [ro[1]], n.input[2]))
    return t
