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

from geon.core.axes import Axis, AxisRef, Ref
from geon.core.builder import Tensor, constant
from geon.core.builder import functions as F
from geon.core.builder.tensor import dot, make_op
from geon.interop.onnx_atoms import conform_dims, counts, emit_reshape, flat, grouped
from geon.interop.onnx_common import KERNEL_OF, refuse

_Importer = Any  # geon.interop.onnx_import._Importer (imported there, not here: no cycle)


def _scalar(value: float, dtype: str) -> Tensor:
    from geon.core.dtypes import numpy_dtype

    return constant(np.asarray(value, dtype=numpy_dtype(dtype)), axes=[])


def emit(imp: _Importer, n: Any, a: dict[str, Any]) -> None:
    """Emit the geon ops of ONNX node ``n`` (attributes ``a``) into the importer."""
    from geon.interop.onnx_common import BINARY, LAYERED, MULTI_OUTPUT, NARY, REDUCE, UNARY
    from geon.interop.onnx_layers import is_lookup

    op = n.op_type
    ins = list(n.input)
    out = n.output[0]
    for extra in n.output[1:]:
        if extra and op not in MULTI_OUTPUT:
            refuse(n, f'output "{extra}" is used; geon maps only the first output of {op}')
    if op in UNARY:
        t = make_op(UNARY[op], {"tensor": [imp.atoms(ins[0])]})
    elif op == "Identity":
        t = imp.atoms(ins[0])
    elif op == "Gelu":
        approx = a.get("approximate", b"none")
        approx = approx.decode() if isinstance(approx, bytes) else approx
        t = make_op(KERNEL_OF[op], {"tensor": [imp.atoms(ins[0])]}, {"approximate": approx})
    elif op in BINARY:
        t = BINARY[op](imp.aligned_atoms(ins[0], out), imp.aligned_atoms(ins[1], out))
    elif op in NARY:
        ops = [imp.aligned_atoms(i, out) for i in ins if i]
        t = ops[0] if len(ops) == 1 else NARY[op](*ops)
    elif op == "Transpose":
        x = imp.atoms(ins[0])
        g = grouped(x, counts(imp.parts[ins[0]]))
        perm = a.get("perm", list(reversed(range(len(g)))))
        t = F.dimshuffle(x, [r for p in perm for r in g[p]])
        t = conform_dims(t, [len(g[p]) for p in perm], imp.parts[out])
    elif op in REDUCE:
        t = _reduce(imp, n, a, REDUCE[op])
    elif op == "Softmax":
        x = imp.atoms(ins[0])
        g = grouped(x, counts(imp.parts[ins[0]]))
        axis = a.get("axis", -1 if imp.opset >= 13 else 1) % max(len(g), 1)
        axes = flat([g[axis]] if imp.opset >= 13 else g[axis:])
        t = make_op(KERNEL_OF[op], {"tensor": [x]}, {"reduction_axes": [str(r) for r in axes]})
    elif op == "LayerNormalization":
        t = _layer_norm(imp, n, a)
    elif op == "MatMul":
        t = _matmul(imp, n)
    elif op in ("Reshape", "Flatten"):
        t = emit_reshape(imp, n)
    elif op in ("Conv", "MaxPool", "AveragePool"):
        t = _windowed(imp, n, a)
    elif op == "Einsum":
        t = _einsum(imp, n)
    elif op in ("Squeeze", "Unsqueeze") or (op == "Gather" and not is_lookup(imp, n)):
        t = _kept(imp, n)
    elif op == "Gemm":
        t = _gemm(imp, n, a)
    elif op in LAYERED or op == "Gather":
        from geon.interop.onnx_layers import emit_layer

        t = emit_layer(imp, n, a)
    elif op == "Erf":
        refuse(n, "geon has no erf kernel; Erf is imported only inside GELU, "
                   "x * 0.5 * (1 + erf(x / sqrt(2)))")  # fmt: skip
    else:  # pragma: no cover - check_ops refuses these first
        refuse(n, "is not supported")
    imp.finish(out, t, n)


def _kept(imp: _Importer, n: Any) -> Tensor:
    x = imp.atoms(n.input[0])
    g = grouped(x, counts(imp.parts[n.input[0]]))
    kept = imp.kept_dims(n)
    dout = imp.parts[n.output[0]]
    drops: dict[Any, Any] = {}
    for i in range(len(g)):
        if i in kept:
            continue
        if n.op_type == "Gather":  # a factored dim: the index of each atom
            idx = int(imp.consts[n.input[1]]) % imp.shapes[n.input[0]][i]
            at = np.unravel_index(idx, [int(r.length or 1) for r in g[i]])
            drops.update({r: int(k) for r, k in zip(g[i], at, strict=True)})
        else:
            drops[g[i][0]] = 0
    if drops:
        x = F.slice(x, drops)
    order = sorted(kept.items())
    x = conform_dims(x, [len(g[i]) for i, _ in order], [dout[j] for _, j in order])
    if len(x.axes) != len(flat(dout)):
        x = F.broadcast(x, flat(dout))
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


def _reduce(imp: _Importer, n: Any, a: dict[str, Any], fn: Any) -> Tensor:
    x = imp.atoms(n.input[0])
    g = grouped(x, counts(imp.parts[n.input[0]]))
    axes, keep = imp._reduce_axes(n, a)
    if not axes:
        return x
    if n.op_type == "ReduceSum" and imp.dtype[n.input[0]] == "boolean":
        refuse(n, "summing a boolean tensor is refused; ONNX does not define it either")
    r = fn(x, reduction_axes=[ref for i in sorted(axes) for ref in g[i]])
    if keep:
        r = F.broadcast(r, flat(imp.parts[n.output[0]]))
    return r


def _layer_norm(imp: _Importer, n: Any, a: dict[str, Any]) -> Tensor:
    x = imp.atoms(n.input[0])
    g = grouped(x, counts(imp.parts[n.input[0]]))
    axis = a.get("axis", -1) % len(g)
    norm = flat(g[axis:])
    shape = imp.shapes[n.input[0]][axis:]
    inputs: dict[str, list[Tensor]] = {"tensor": [x]}
    for key, name in zip(("scale", "bias"), n.input[1:3], strict=False):
        if not name:
            continue
        if imp.shapes[name] != shape:
            refuse(
                n,
                f'{key} "{name}" has shape {imp.shapes[name]}; geon needs exactly the '
                f"normalised shape {shape}",
            )
        inputs[key] = [conform_dims(imp.atoms(name), counts(imp.parts[name]), g[axis:])]
    eps = float(a.get("epsilon", 1e-5))
    params = {"reduction_axes": [str(r) for r in norm], "epsilon": eps}
    if len(n.output) > 1 and any(n.output[1:]):  # Mean and InvStdDev, kept dims of length 1
        mean = F.mean(x, reduction_axes=norm)
        var = F.mean(F.square(F.subtract(x, mean)), reduction_axes=norm)
        dt = imp.dtype[n.input[0]]
        inv = F.divide(_scalar(1.0, dt), F.sqrt(F.add(var, _scalar(eps, dt))))
        for name, t in zip(n.output[1:], (mean, inv), strict=False):
            if name:
                imp.finish(name, F.broadcast(t, flat(imp.parts[name])), n)
    return make_op(KERNEL_OF[n.op_type], inputs, params)


def _base(r: Ref) -> str:
    return r.axis.name if isinstance(r, AxisRef) else str(r)


def _fresh(like: Ref, taken: set[str]) -> AxisRef:
    name, k = f"{_base(like)}_k", 1
    while name in taken:
        k += 1
        name = f"{_base(like)}_k{k}"
    return AxisRef(Axis(name, like.length))


def _fresh_k(k: list[Ref], held: set[str], avoid: set[str]) -> list[Ref]:
    """The contracted atoms ``k`` of a product, renamed (avoiding ``held | avoid``) where the
    output holds the name (``held``) or the level is not 0: the sum needs an axis of its own."""
    out: list[Ref] = []
    taken = held | avoid
    for r in k:
        if _base(r) in held or r.level != 0:
            r = _fresh(r, taken)
            taken.add(_base(r))
        out.append(r)
    return out


def _matmul(imp: _Importer, n: Any) -> Tensor:
    an, bn = n.input[0], n.input[1]
    out = n.output[0]
    sa, sb, so = imp.shapes[an], imp.shapes[bn], imp.shapes[out]
    dout = imp.parts[out]
    x, y = imp.atoms(an), imp.atoms(bn)
    gx, gy = grouped(x, counts(imp.parts[an])), grouped(y, counts(imp.parts[bn]))
    k = gx[-1]
    if len(sb) <= 2 and len(so) >= 1:
        x = conform_dims(x, counts(gx), [*dout[: len(sa) - 1], k])
        want_b = [[r + 1 for r in k]] + ([dout[-1]] if len(sb) == 2 else [])
        return dot(x, conform_dims(y, counts(gy), want_b))
    # batched: multiply + sum over a contracted axis no output holds
    k = _fresh_k(k, {_base(r) for r in flat(dout)}, {_base(r) for r in x.axes})
    xa = _batched(imp, x, gx, sa, so, dout, k, left=True, other_rank=len(sb))
    yb = _batched(imp, y, gy, sb, so, dout, k, left=False, other_rank=len(sa))
    seen = {str(r) for r in xa.axes}
    # the product is meant to broadcast the two operands' free axes against each other
    both = [*xa.axes, *(r for r in yb.axes if str(r) not in seen)]
    return F.sum(F.multiply(xa, yb, axes=both), reduction_axes=k)


def _batched(
    imp: _Importer, t: Tensor, g: list[list[Ref]], s: tuple[int, ...], so: tuple[int, ...],
    dout: list[list[AxisRef]], k: list[Ref], *, left: bool, other_rank: int,
) -> Tensor:  # fmt: skip
    if len(s) == 1:
        return conform_dims(t, counts(g), [k])
    nbo = len(so) - 1 - (1 if other_rank >= 2 else 0)
    drops: dict[Any, Any] = {}
    have: list[int] = []
    want: list[list[Any]] = []
    nb = len(s) - 2
    for j in range(nb):
        i = nbo - nb + j
        if s[j] != so[i]:
            drops[g[j][0]] = 0
        else:
            have.append(len(g[j]))
            want.append(dout[i])
    have += [len(g[-2]), len(g[-1])]
    want += [dout[nbo], k] if left else [k, dout[-1]]
    if drops:
        t = F.slice(t, drops)
    return conform_dims(t, have, want)


def _gemm(imp: _Importer, n: Any, a: dict[str, Any]) -> Tensor:
    an, bn = n.input[0], n.input[1]
    out = n.output[0]
    dout = imp.parts[out]
    ta, tb = a.get("transA", 0), a.get("transB", 0)
    x, y = imp.atoms(an), imp.atoms(bn)
    gx, gy = grouped(x, counts(imp.parts[an])), grouped(y, counts(imp.parts[bn]))
    k = gx[0 if ta else 1]
    if any(r.level != 0 for r in k):
        k = _fresh_k(k, {_base(r) for r in flat(dout)}, set())
    x = conform_dims(x, counts(gx), [k, dout[0]] if ta else [dout[0], k])
    yk = [r + 1 for r in k]
    y = conform_dims(y, counts(gy), [dout[1], yk] if tb else [yk, dout[1]])
    t = dot(x, y)
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    dt = imp.dtype[out]
    if alpha != 1.0:
        t = F.multiply(t, _scalar(alpha, dt))
    if len(n.input) > 2 and n.input[2]:
        c = imp.aligned_atoms(n.input[2], out)
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
        refuse(n, f'input "{x}" has rank {rank}; geon imports 2-D {n.op_type} only (rank 4, NCHW)')
    if n.op_type == "Conv":
        if a.get("group", 1) != 1:
            refuse(n, f"group {a['group']} is not supported; geon imports group 1 only "
                       "(no grouped or depthwise convolution)")  # fmt: skip
        size = list(a.get("kernel_shape", imp.shapes[n.input[1]][2:]))
    else:
        size = list(a["kernel_shape"])
    if any(d != 1 for d in a.get("dilations", [1, 1])):
        refuse(n, f"dilations {list(a['dilations'])} are not supported; geon imports dilations 1")
    if a.get("ceil_mode", 0):
        refuse(n, f"ceil_mode {a['ceil_mode']} is not supported; geon imports ceil_mode 0 "
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
        refuse(n, f"{how} differ before and after; geon pads each spatial dim "
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
