"""Vector-Jacobian rules, one per kernel, written with named axes as geon operations.

:func:`vjp` takes a forward operation and the gradient ``g`` of its result (``g`` has the
result's axes) and gives each differentiable operand's gradient contribution, with the operand's
axes in the operand's order:

- elementwise ops: the local derivative times ``g``, summed over the axes the operand was
  broadcast along (``unbroadcast``);
- ``dot``: dots pairing the duals. ``x·y -> z`` gives ``dx = g·y'`` where ``y'`` is ``y``
  relabelled so that its free axes pair with ``g``'s (one level up) and its contracted axes read as
  ``x``'s; likewise ``dy = g·x'``. Where that relabelling would pair or collide other axes (``x``
  holding ``W`` and ``W-1``), fresh axes stand in and are cast back after;
- reductions: a broadcast (``sum``, ``mean``), times the arg-max mask for ``max``/``min``
  (``1 ± sign(x - max)``), times ``y / x`` for ``prod``;
- views: their inverses (a ``cast_axes`` back, a ``sum`` for a ``broadcast``, a ``pad`` for a
  unit-step ``slice`` and a one-hot ``dot`` otherwise, a ``slice`` for a ``pad``, ``unflatten`` for
  ``flatten``);
- ``softmax``: ``y·(g - Σ g·y)``; ``layer_norm``: the usual three-term rule, the statistics
  recomputed from ``x``; ``gelu``: ``Φ(x) + x·φ(x)`` with ``Φ`` from Abramowitz & Stegun 7.1.26
  (|error| <= 1.5e-7: there is no ``erf`` kernel) or the tanh form's derivative;
- ``concat``: a slice per operand; ``where``: ``g`` where the condition holds, else 0;
  ``gather``: the table's gradient is a dot of ``g`` with the indices' one-hot (``where`` of the
  integer difference ``indices - arange``);
- ``conv2d``: a dot per window offset (the filter's gradient pairs ``g`` with the strided input
  slice; the input's gradient pairs ``g`` with the filter's tap and is padded back to its place);
  ``max_pool2d``/``avg_pool2d``: windows that tile the input (stride = kernel size, no padding)
  as an upsampling by broadcast and flatten, times the arg-max mask for max pooling; any other
  window (overlapping, padded, ``count_include_pad`` false) tap by tap, as conv2d's input.

``sign(x)`` is ``x / maximum(|x|, tiny)`` (exact for every normal number; there is no sign
kernel), so ``relu``'s derivative is ``relu(sign(x))`` and ``abs``'s is ``sign(x)``. Ties of
``maximum``/``max`` give every tied operand the whole gradient (PyTorch splits it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from geon.core.autodiff.forward import AutodiffError, ForwardOp
from geon.core.axes import Axes, Axis, AxisRef, CompositeRef, Ref
from geon.core.builder import functions as F
from geon.core.builder.combine import where
from geon.core.builder.tensor import Tensor, constant, dot, transpose
from geon.core.dtypes import numpy_dtype

Rule = Callable[[ForwardOp, Tensor, "Fresh"], list[tuple[Tensor, Tensor]]]

A_S = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)  # A&S 7.1.26
A_S_P = 0.3275911


class Fresh:
    """Names for axes the backward graph declares (pads, renamed dot axes), unique in the
    document."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.count = itertools.count()

    def axis(self, like: Ref, length: int | None = None, roles: Sequence[str] = ()) -> Axis:
        base = like.name.replace("*", "_").replace("+", "p").replace("-", "m")
        while True:
            name = f"{base}_bw{next(self.count)}"
            if name not in self.taken:
                self.taken.add(name)
                return Axis(name, length if length is not None else like.length, roles=roles)


# -- helpers -----------------------------------------------------------------------------------


def scalar(value: float, like: Tensor) -> Tensor:
    """A constant in ``like``'s dtype (so a float32 graph stays float32)."""
    return constant(np.asarray(value, dtype=numpy_dtype(like.dtype)), axes=[])


def base(r: Ref) -> Ref:
    return r.shift(-r.level)


def conform(t: Tensor, axes: Axes) -> Tensor:
    """``t`` with exactly ``axes``, in that order."""
    if list(t.axes) == list(axes):
        return t
    if set(t.axes) == set(axes) and len(t.axes) == len(axes):
        return F.dimshuffle(t, list(axes))
    raise AutodiffError(
        f"a gradient has axes {t.axes} where {axes} were expected; the operation's axes "
        "matched by class, which the backward pass does not follow"
    )


def unbroadcast(g: Tensor, x: Tensor) -> Tensor:
    """``g`` summed over the axes ``x`` lacks, in ``x``'s order."""
    extra = [r for r in g.axes if r not in x.axes]
    if extra:
        g = F.sum(g, reduction_axes=extra)
    return conform(g, x.axes)


def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 (exact for normal numbers)."""
    tiny = float(np.finfo(numpy_dtype(x.dtype)).tiny)
    return F.divide(x, F.maximum(F.abs(x), scalar(tiny, x)))


def is_float(t: Tensor) -> bool:
    return numpy_dtype(t.dtype).kind == "f"


# -- elementwise -----------------------------------------------------------------------------


def _nary(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    xs = dict(op.inputs)["tensors"]
    y = op.output
    out: list[tuple[Tensor, Tensor]] = []
    for i, x in enumerate(xs):
        if op.kernel == "op:add":
            local = g
        elif op.kernel == "op:multiply":
            others = [o for j, o in enumerate(xs) if j != i]
            local = F.multiply(g, *others) if others else g
        else:  # maximum / minimum: the operands equal to the result
            s = sign(F.subtract(x, y))
            one = scalar(1.0, g)
            mask = F.add(one, s) if op.kernel == "op:maximum" else F.subtract(one, s)
            local = F.multiply(g, mask)
        out.append((x, unbroadcast(local, x)))
    return out


def _binary(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    ins = dict(op.inputs)
    x, y, z = ins["x"][0], ins["y"][0], op.output
    if op.kernel == "op:subtract":
        gx, gy = g, F.negative(g)
    elif op.kernel == "op:divide":
        gx = F.divide(g, y)
        gy = F.negative(F.divide(F.multiply(g, z), y))
    else:  # power
        gx = F.multiply(g, y, F.power(x, F.subtract(y, scalar(1.0, y))))
        gy = F.multiply(g, z, F.log(x))
    return [(x, unbroadcast(gx, x)), (y, unbroadcast(gy, y))]


def _phi_cdf(x: Tensor) -> Tensor:
    """Φ(x) = (1 + erf(x/√2)) / 2 with erf from Abramowitz & Stegun 7.1.26."""
    z = F.multiply(x, scalar(1.0 / math.sqrt(2.0), x))
    az = F.abs(z)
    t = F.divide(scalar(1.0, x), F.add(scalar(1.0, x), F.multiply(az, scalar(A_S_P, x))))
    poly = scalar(A_S[-1], x)
    for a in reversed(A_S[:-1]):
        poly = F.add(F.multiply(poly, t), scalar(a, x))
    poly = F.multiply(poly, t)
    erf_abs = F.subtract(scalar(1.0, x), F.multiply(poly, F.exp(F.negative(F.square(z)))))
    erf = F.multiply(sign(z), erf_abs)
    return F.multiply(F.add(scalar(1.0, x), erf), scalar(0.5, x))


def _gelu_grad(x: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        c = math.sqrt(2.0 / math.pi)
        x3 = F.multiply(F.square(x), x)
        u = F.multiply(F.add(x, F.multiply(x3, scalar(0.044715, x))), scalar(c, x))
        th = F.tanh(u)
        du = F.multiply(
            F.add(scalar(1.0, x), F.multiply(F.square(x), scalar(3 * 0.044715, x))), scalar(c, x)
        )
        left = F.multiply(F.add(scalar(1.0, x), th), scalar(0.5, x))
        right = F.multiply(x, F.subtract(scalar(1.0, x), F.square(th)), du, scalar(0.5, x))
        return F.add(left, right)
    pdf = F.multiply(
        F.exp(F.multiply(F.square(x), scalar(-0.5, x))), scalar(1.0 / math.sqrt(2 * math.pi), x)
    )
    return F.add(_phi_cdf(x), F.multiply(x, pdf))


def _unary(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    x, y, k = dict(op.inputs)["tensor"][0], op.output, op.kernel
    if k == "op:negative":
        gx = F.negative(g)
    elif k == "op:abs":
        gx = F.multiply(g, sign(x))
    elif k == "op:exp":
        gx = F.multiply(g, y)
    elif k == "op:log":
        gx = F.divide(g, x)
    elif k == "op:sqrt":
        gx = F.divide(F.multiply(g, scalar(0.5, g)), y)
    elif k == "op:square":
        gx = F.multiply(g, x, scalar(2.0, g))
    elif k == "op:tanh":
        gx = F.multiply(g, F.subtract(scalar(1.0, y), F.square(y)))
    elif k == "op:sigmoid":
        gx = F.multiply(g, y, F.subtract(scalar(1.0, y), y))
    elif k == "op:relu":
        gx = F.multiply(g, F.relu(sign(x)))
    elif k == "op:gelu":
        gx = F.multiply(g, _gelu_grad(x, str(op.params.get("approximate", "none"))))
    else:
        raise AutodiffError(f'kernel "{k}" has no backward rule')
    return [(x, conform(gx, x.axes))]


# -- dot ----------------------------------------------------------------------------------------


def _clashes(a: Axes, b: Axes, pairs: set[tuple[Ref, Ref]]) -> bool:
    """Whether ``dot(a, b)`` would pair or collide anything beyond ``pairs``."""
    for r in a:
        for s in b:
            if base(r) != base(s):
                continue
            if abs(r.level - s.level) > 1:
                continue
            if (r, s) not in pairs:
                return True
    return False


def _dot_grad(g: Tensor, other: Tensor, keep: dict[Ref, Ref], free: list[Ref], fresh: Fresh,
              target: Axes) -> Tensor:  # fmt: skip
    """``Σ g·other`` over ``free`` (axes of both ``g`` and ``other``), ``other``'s axes in
    ``keep`` read as the operand's axes they pair with; the result in ``target``'s order.

    The summed axes keep their names where they can (a plan maps them: the batch of a weight
    gradient is what data parallelism splits); fresh axes stand in first for the kept ones,
    then for the summed ones too, only where the relabelling would pair or collide others."""
    for rename_kept, rename_summed in ((False, False), (True, False), (True, True)):
        summed = {r: fresh.axis(r).ref for r in free} if rename_summed else {}
        kept = {r: fresh.axis(keep[r]).ref for r in other.axes if r in keep} if rename_kept else {}
        g_axes = [summed.get(r, r) for r in g.axes]
        o_axes = [
            (kept.get(r, keep[r]) if r in keep else summed.get(r, r).shift(1) if r in summed
             else r.shift(1))
            for r in other.axes
        ]  # fmt: skip
        wanted = {(summed.get(r, r), summed.get(r, r).shift(1)) for r in free}
        if not _clashes(Axes(tuple(g_axes)), Axes(tuple(o_axes)), wanted):
            break
    else:  # pragma: no cover - fresh names cannot clash
        raise AutodiffError(f"cannot pair {g.axes} with {other.axes} for a dot's gradient")
    g2 = F.cast_axes(g, g_axes) if g_axes != list(g.axes) else g
    o2 = F.cast_axes(other, o_axes) if o_axes != list(other.axes) else other
    back: dict[Ref, Ref] = {kept[r]: keep[r] for r in kept}
    d = dot(g2, o2)
    if back:
        d = F.cast_axes(d, [back.get(r, r) for r in d.axes])
    return conform(d, target)


def _dot(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    if op.kernel != "op:dot":
        raise AutodiffError(
            f'kernel "{op.kernel}" is a placed dot; derive the step of the unplaced document'
        )
    ins = dict(op.inputs)
    x, y = ins["x"][0], ins["y"][0]
    pairs = [(x.axes[int(i)], y.axes[int(j)]) for i, j in op.inference.plan["pairs"]]
    cx = {a for a, _ in pairs}
    cy = {b for _, b in pairs}
    fx = [r for r in x.axes if r not in cx]
    fy = [r for r in y.axes if r not in cy]
    gx = _dot_grad(g, y, {b: a for a, b in pairs}, fy, fresh, x.axes)
    gy = _dot_grad(g, x, {a: b for a, b in pairs}, fx, fresh, y.axes)
    return [(x, gx), (y, gy)]


# -- reductions and normalisations -----------------------------------------------------------


def _reduction(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    x, y = dict(op.inputs)["tensor"][0], op.output
    wide = F.broadcast(g, list(x.axes)) if list(g.axes) != list(x.axes) else g
    k = op.kernel
    if k == "op:sum":
        gx = wide
    elif k == "op:mean":
        n = math.prod(int(r.length or 1) for r in x.axes if r not in y.axes)
        gx = F.divide(wide, scalar(float(n), g))
    elif k in ("op:max", "op:min"):
        yw = F.broadcast(y, list(x.axes)) if list(y.axes) != list(x.axes) else y
        s = sign(F.subtract(x, yw))
        one = scalar(1.0, g)
        gx = F.multiply(wide, F.add(one, s) if k == "op:max" else F.subtract(one, s))
    else:  # prod
        yw = F.broadcast(y, list(x.axes)) if list(y.axes) != list(x.axes) else y
        gx = F.divide(F.multiply(wide, yw), x)
    return [(x, conform(gx, x.axes))]


def _softmax(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    x, y = dict(op.inputs)["tensor"][0], op.output
    red = [r for r in y.axes if str(r) in op.params["reduction_axes"]]
    gy = F.multiply(g, y)
    s = F.broadcast(F.sum(gy, reduction_axes=red), list(y.axes))
    return [(x, conform(F.subtract(gy, F.multiply(y, s)), x.axes))]


def _layer_norm(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    ins = dict(op.inputs)
    x = ins["tensor"][0]
    red = [r for r in x.axes if str(r) in op.params["reduction_axes"]]
    rest = [r for r in x.axes if r not in red]
    eps = float(op.params.get("epsilon", 1e-5))

    def wide(t: Tensor) -> Tensor:
        return F.broadcast(t, list(x.axes))

    xc = F.subtract(x, wide(F.mean(x, reduction_axes=red)))
    var = F.mean(F.square(xc), reduction_axes=red)
    rstd = F.divide(scalar(1.0, x), F.sqrt(F.add(var, scalar(eps, x))))
    xhat = F.multiply(xc, wide(rstd))
    out: list[tuple[Tensor, Tensor]] = []
    gxhat = g
    if "scale" in ins:
        scale = ins["scale"][0]
        gxhat = F.multiply(g, scale)
        gs = F.sum(F.multiply(g, xhat), reduction_axes=rest) if rest else F.multiply(g, xhat)
        out.append((scale, conform(gs, scale.axes)))
    if "bias" in ins:
        bias = ins["bias"][0]
        out.append((bias, conform(F.sum(g, reduction_axes=rest) if rest else g, bias.axes)))
    gxhat = conform(gxhat, x.axes)
    m1 = wide(F.mean(gxhat, reduction_axes=red))
    m2 = wide(F.mean(F.multiply(gxhat, xhat), reduction_axes=red))
    gx = F.multiply(wide(rstd), F.subtract(F.subtract(gxhat, m1), F.multiply(xhat, m2)))
    out.append((x, conform(gx, x.axes)))
    return out


# -- views ------------------------------------------------------------------------------------


def _one_hot(axis: Ref, index: int, like: Tensor) -> Tensor:
    e = np.zeros(int(axis.length or 1), dtype=numpy_dtype(like.dtype))
    e[index] = 1
    return constant(e, axes=[axis])


def _slice(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    x, y = dict(op.inputs)["tensor"][0], op.output
    g = conform(g, y.axes)
    col = 0
    cur = g
    for r, spec in zip(x.axes, op.inference.plan["slices"], strict=True):
        if spec is None:
            col += 1
            continue
        n = int(r.length or 1)
        if isinstance(spec, int):  # the axis was dropped: an outer product with a one-hot
            cur = dot(cur, _one_hot(r, spec, g))
            continue
        new = y.axes[col]
        col += 1
        start, _, step = spec
        m = int(new.length or 1)
        if step == 1:
            cur = F.pad(cur, {new: (start, n - start - m)}, axes={new: r})
        else:  # a selection matrix: new+1 pairs with the sliced axis of the gradient
            sel = np.zeros((m, n), dtype=numpy_dtype(g.dtype))
            for j in range(m):
                sel[j, start + j * step] = 1
            cur = dot(cur, constant(sel, axes=[new.shift(1), r]))
    return [(x, conform(cur, x.axes))]


def _view(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    x, y, k = dict(op.inputs)["tensor"][0], op.output, op.kernel
    g = conform(g, y.axes)
    if k == "op:cast_axes":
        gx = F.cast_axes(g, list(x.axes))
    elif k == "op:broadcast":
        gx = F.sum(g, reduction_axes=[r for r in y.axes if r not in x.axes])
    elif k == "op:dimshuffle":
        gx = g
    elif k == "op:transpose":
        gx = transpose(g)
    elif k == "op:slice":
        return _slice(op, g, fresh)
    elif k == "op:pad":
        slices: dict[Any, Any] = {}
        renames: dict[Any, Any] = {}
        for r, (before, _), new in zip(x.axes, op.inference.plan["pad"], y.axes, strict=True):
            if new != r or before:
                slices[new] = slice(before, before + int(r.length or 1))
                if new != r:
                    renames[new] = r
        gx = F.slice(g, slices, axes=renames) if slices else g
    elif k == "op:flatten":
        gx = F.unflatten(g, [r for r in y.axes if isinstance(r, CompositeRef)])
    elif k == "op:unflatten":
        gx = g
        for r in x.axes:
            if isinstance(r, CompositeRef) and r not in gx.axes:
                order = [a for a in gx.axes if a not in r.parts]
                first = min(gx.axes.index(p) for p in r.parts)
                lined = [*order[:first], *r.parts, *order[first:]]
                if lined != list(gx.axes):
                    gx = F.dimshuffle(gx, lined)
                gx = F.flatten(gx, list(r.parts))
    else:
        raise AutodiffError(f'kernel "{k}" has no backward rule')
    return [(x, conform(gx, x.axes))]


# -- concat, where, conv and pooling ----------------------------------------------------------


def _concat(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    xs = dict(op.inputs)["tensors"]
    axis = op.inference.result[[str(r) for r in op.inference.result].index(op.params["axis"])]
    along = op.params["along"]
    out: list[tuple[Tensor, Tensor]] = []
    offset = 0
    for x, name in zip(xs, along, strict=True):
        r = x.axes[[str(a) for a in x.axes].index(name)]
        n = int(r.length or 1)
        piece = F.slice(g, {axis: slice(offset, offset + n)}, axes={axis: r} if n > 0 else None)
        offset += n
        out.append((x, conform(piece, x.axes)))
    return out


def _where(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    ins = dict(op.inputs)
    c, x, y = ins["condition"][0], ins["x"][0], ins["y"][0]
    zero = scalar(0.0, g)
    return [
        (x, unbroadcast(where(c, g, zero), x)),
        (y, unbroadcast(where(c, zero, g), y)),
    ]


def _gather(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    """The table's gradient: ``Σ_I onehot[I, A]·g[..., I, ...]``, the one-hot of the indices
    along the table's axis ``A`` built as ``where(indices - arange(A), 0, 1)`` (an integer
    difference read as a condition: exact, no comparison kernel needed); the indices get none."""
    ins = dict(op.inputs)
    table, indices = ins["table"][0], ins["indices"][0]
    g = conform(g, op.output.axes)
    axis = table.axes[int(op.inference.plan["axis"])]
    n = int(axis.length or 1)
    positions = constant(np.arange(n, dtype=numpy_dtype(indices.dtype)), axes=[axis])
    hot = where(F.subtract(indices, positions), scalar(0.0, g), scalar(1.0, g))
    lowered = F.cast_axes(hot, [r.shift(-1) if r in indices.axes else r for r in hot.axes])
    return [(table, conform(dot(lowered, g), table.axes))]


def _roles(a: Axes, role: str) -> Ref:
    return next(r for r in a if isinstance(r, AxisRef) and role in r.roles)


def _place(
    part: Tensor,
    outs: tuple[Ref, Ref],
    into: tuple[Ref, Ref],
    at: tuple[int, int],
    stride: tuple[int, int],
) -> Tensor:
    """``part`` (read at window tap ``at`` over the output positions ``outs``) put back where
    that tap reads the (padded) input ``into``: a pad for unit strides, else a one-hot dot."""
    (oh, ow), (hp, wp), (i, j), (sh, sw) = outs, into, at, stride
    nh, nw = int(oh.length or 1), int(ow.length or 1)
    if sh == 1 and sw == 1:
        hpad = (i, int(hp.length or 1) - i - nh)
        wpad = (j, int(wp.length or 1) - j - nw)
        return F.pad(part, {oh: hpad, ow: wpad}, axes={oh: hp, ow: wp})
    for new, old, n, start, step in ((oh, hp, nh, i, sh), (ow, wp, nw, j, sw)):
        sel = np.zeros((n, int(old.length or 1)), dtype=numpy_dtype(part.dtype))
        for q in range(n):
            sel[q, start + q * step] = 1
        part = dot(part, constant(sel, axes=[new.shift(1), old]))
    return part


def _padded(x: Tensor, h: Ref, w: Ref, ph: int, pw: int, fresh: Fresh) -> tuple[Tensor, Ref, Ref]:
    """``x`` zero-padded along ``h`` and ``w`` into fresh axes (itself when no padding)."""
    hp = fresh.axis(h, int(h.length or 1) + 2 * ph).ref if ph else h
    wp = fresh.axis(w, int(w.length or 1) + 2 * pw).ref if pw else w
    widths: dict[Any, tuple[int, int]] = {}
    renames: dict[Any, Any] = {}
    if ph:
        widths[h], renames[h] = (ph, ph), hp
    if pw:
        widths[w], renames[w] = (pw, pw), wp
    return (F.pad(x, widths, axes=renames) if widths else x), hp, wp


def _unpadded(t: Tensor, h: Ref, w: Ref, hp: Ref, wp: Ref, ph: int, pw: int) -> Tensor:
    """The inverse of :func:`_padded`: the input's own cells."""
    cut: dict[Any, Any] = {}
    back: dict[Any, Any] = {}
    if ph:
        cut[hp], back[hp] = slice(ph, ph + int(h.length or 1)), h
    if pw:
        cut[wp], back[wp] = slice(pw, pw + int(w.length or 1)), w
    return F.slice(t, cut, axes=back) if cut else t


def _conv2d(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    ins = dict(op.inputs)
    x, f, y = ins["x"][0], ins["filter"][0], op.output
    g = conform(g, y.axes)
    stride = op.params.get("stride", [1, 1])
    padding = op.params.get("padding", [0, 0])
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    c, h, w = (_roles(x.axes, role) for role in ("Channel", "Height", "Width"))
    fc = next(r for r in f.axes if base(r) == base(c) and r != c)
    fh, fw = _roles(f.axes, "Height"), _roles(f.axes, "Width")
    fk = _roles(f.axes, "Channelout")
    rest = Axes(tuple(r for r in y.axes if r not in x.axes and r != fk))
    oh, ow = _roles(rest, "Height"), _roles(rest, "Width")
    kh, kw = int(fh.length or 1), int(fw.length or 1)
    nh, nw = int(oh.length or 1), int(ow.length or 1)
    xp, hp, wp = _padded(x, h, w, ph, pw, fresh)
    df_terms: list[Tensor] = []
    dx_terms: list[Tensor] = []
    # g's batch and output positions pair with the input slice one level up; its Channelout
    # pairs with the filter tap's
    for i in range(kh):
        for j in range(kw):
            window: dict[Any, slice] = {
                hp: slice(i, i + sh * (nh - 1) + 1, sh),
                wp: slice(j, j + sw * (nw - 1) + 1, sw),
            }
            xs = F.slice(xp, window, axes={hp: oh, wp: ow})
            xs = F.cast_axes(
                xs, [fc if r == c else r.shift(1) for r in xs.axes]
            )  # (batch+1, fc, oh+1, ow+1)
            tap = dot(g, xs)  # (fk, fc)
            df_terms.append(dot(dot(tap, _one_hot(fh, i, g)), _one_hot(fw, j, g)))
            ft = F.slice(f, {fh: i, fw: j})  # (fk, fc)
            ft = F.cast_axes(ft, [fk.shift(1) if r == fk else c for r in ft.axes])
            part = dot(g, ft)  # (batch, oh, ow, c)
            dx_terms.append(_place(part, (oh, ow), (hp, wp), (i, j), (sh, sw)))
    df = conform(F.add(*df_terms) if len(df_terms) > 1 else df_terms[0], f.axes)
    dxp = F.add(*dx_terms) if len(dx_terms) > 1 else dx_terms[0]
    dxp = _unpadded(dxp, h, w, hp, wp, ph, pw)
    return [(x, conform(dxp, x.axes)), (f, df)]


def _pool(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    x, y = dict(op.inputs)["tensor"][0], op.output
    g = conform(g, y.axes)
    ks, st, pd = op.params["kernel_size"], op.params["stride"], op.params.get("padding", [0, 0])
    h, w = _roles(x.axes, "Height"), _roles(x.axes, "Width")
    rest = Axes(tuple(r for r in y.axes if r not in x.axes))
    oh, ow = _roles(rest, "Height"), _roles(rest, "Width")
    if (
        list(ks) != list(st)
        or any(pd)
        or ks[0] * int(oh.length or 1) != int(h.length or 1)
        or (ks[1] * int(ow.length or 1) != int(w.length or 1))
    ):
        return _pool_by_taps(op, x, y, g, fresh, (h, w), (oh, ow))
    kh_axis, kw_axis = fresh.axis(h, ks[0]), fresh.axis(w, ks[1])

    def up(t: Tensor) -> Tensor:
        order = []
        for r in x.axes:
            if r == h:
                order += [oh, kh_axis.ref]
            elif r == w:
                order += [ow, kw_axis.ref]
            else:
                order.append(r)
        wide = F.broadcast(conform(t, y.axes), order)
        wide = F.flatten(wide, [oh, kh_axis.ref])
        wide = F.flatten(wide, [ow, kw_axis.ref])
        return F.cast_axes(wide, list(x.axes))

    if op.kernel == "op:avg_pool2d":
        gx = F.divide(up(g), scalar(float(ks[0] * ks[1]), g))
    else:
        mask = F.add(scalar(1.0, g), sign(F.subtract(x, up(y))))
        gx = F.multiply(up(g), mask)
    return [(x, conform(gx, x.axes))]


def _pool_by_taps(
    op: ForwardOp,
    x: Tensor,
    y: Tensor,
    g: Tensor,
    fresh: Fresh,
    hw: tuple[Ref, Ref],
    out: tuple[Ref, Ref],
) -> list[tuple[Tensor, Tensor]]:
    """Any pooling window: per tap, the gradient of the cells it reads (``g`` where the tap
    holds the window's maximum; ``g`` over the window's count for an average) put back in place,
    summed over the taps. The input is zero-padded: a padded cell's gradient is cut off after."""
    (h, w), (oh, ow) = hw, out
    (kh, kw), (sh, sw) = op.params["kernel_size"], op.params["stride"]
    ph, pw = op.params.get("padding", [0, 0])
    nh, nw = int(oh.length or 1), int(ow.length or 1)
    xp, hp, wp = _padded(x, h, w, ph, pw, fresh)
    share = g
    if op.kernel == "op:avg_pool2d":
        counts = np.full((nh, nw), float(kh * kw), dtype=numpy_dtype(g.dtype))
        if not op.params.get("count_include_pad", True) and (ph or pw):
            for a in range(nh):
                for b in range(nw):
                    rows = range(a * sh - ph, a * sh - ph + kh)
                    cols = range(b * sw - pw, b * sw - pw + kw)
                    inside_h = sum(1 for r in rows if 0 <= r < int(h.length or 1))
                    inside_w = sum(1 for c in cols if 0 <= c < int(w.length or 1))
                    counts[a, b] = inside_h * inside_w
        share = F.divide(g, constant(counts, axes=[oh, ow]))
    terms: list[Tensor] = []
    for i in range(kh):
        for j in range(kw):
            part = share
            if op.kernel == "op:max_pool2d":
                window: dict[Any, slice] = {
                    hp: slice(i, i + sh * (nh - 1) + 1, sh),
                    wp: slice(j, j + sw * (nw - 1) + 1, sw),
                }
                xs = F.slice(xp, window, axes={hp: oh, wp: ow})
                part = F.multiply(g, F.add(scalar(1.0, g), sign(F.subtract(xs, y))))
            terms.append(_place(part, (oh, ow), (hp, wp), (i, j), (sh, sw)))
    total = F.add(*terms) if len(terms) > 1 else terms[0]
    return [(x, conform(_unpadded(total, h, w, hp, wp, ph, pw), x.axes))]


RULES: dict[str, Rule] = {
    "nary": _nary,
    "binary": _binary,
    "unary": _unary,
    "dot": _dot,
    "reduction": _reduction,
    "view": _view,
    "concat": _concat,
    "where": _where,
    "gather": _gather,
    "conv": _conv2d,
    "pool": _pool,
}


def vjp(op: ForwardOp, g: Tensor, fresh: Fresh) -> list[tuple[Tensor, Tensor]]:
    """Each differentiable operand of ``op`` and its gradient contribution (see the module
    docstring); ``g`` is the gradient of ``op``'s result."""
    from geon.core.ops import CATALOGUE

    family = CATALOGUE[op.kernel].family
    if op.kernel == "op:softmax":
        return _softmax(op, g, fresh)
    if op.kernel == "op:layer_norm":
        return _layer_norm(op, g, fresh)
    rule = RULES.get(family)
    if rule is None:
        raise AutodiffError(
            f'operation {op.node.label or op.node.id!r} runs "{op.kernel}", which has no '
            "backward rule"
        )
    return rule(op, g, fresh)
