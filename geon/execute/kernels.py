"""Kernels for the whole catalogue, written once against the array API standard.

>>> import numpy as np
>>> from geon.execute.backend import select_backend
>>> be = select_backend("numpy")
>>> f = lower_positional(be, "op:add", {"tensors": [(2, 1), (3,)]}, (2, 3), "int32", ["int32"] * 2)
>>> f([np.array([[1], [2]], np.int32), np.array([10, 20, 30], np.int32)], None).tolist()
[[11, 21, 31], [12, 22, 32]]

Each ``lower_*`` function runs once per unit of work when a plan is compiled (an operation, or
one of its Applications) and returns a :data:`KernelFn` closure ``fn(args, out)``: ``args`` are the
operand arrays (the regions the unit reads, flattened in IO-key order), ``out`` is the destination
(the region of the output tensor it writes) or None (return a new array, or a zero-copy view for
view kernels). Everything that depends only on shapes — permutations, the 2-D shapes of a dot,
the alignment of elementwise operands, conv windows — is computed at lowering time, so a run
does no bookkeeping.

Only ``be.xp`` (the array API namespace) is used here; writing into ``out`` with the library's own
``out=`` is :class:`~geon.execute.backend.Backend`'s business. The suite runs every kernel under
``array_api_strict``, which refuses anything outside the standard.

Named ops follow :func:`geon.core.ops.infer`: the executor passes the :class:`Inference` and the
kernel reads its ``plan`` facts (``align``, ``pairs``, ``reduced``, conv roles) and operand
:class:`~geon.core.ops.Dim` columns. Operands are cast to the output tensor's dtype first, which
gives NumPy's promotion results (:func:`geon.core.dtypes.compute_dtype`; the builder derives
output dtypes with the same rules) and keeps the strict namespace, which refuses mixed kinds, happy.
``op:gelu``, ``op:softmax`` and ``op:layer_norm`` compute in a floating dtype (float64 for
integer operands); their formulas are in docs/kernels.md. The standard has no ``erf``, so the
exact GELU evaluates ``erfc`` from two Chebyshev interpolants (:func:`_erfc`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from geon.core.dtypes import compute_dtype
from geon.core.errors import ExecutionError
from geon.core.ops import CATALOGUE, Inference
from geon.core.ops.positional import broadcast_shape
from geon.execute.backend import Backend
from geon.execute.blas import batched_matmul, in_parts
from geon.execute.kernel_parts import Array, KernelFn, Shape
from geon.execute.kernel_parts import argsort as _argsort
from geon.execute.kernel_parts import deliver as _deliver
from geon.execute.kernel_parts import is_identity as _is_identity

__all__ = [
    "ELEMENTWISE_FAMILIES",
    "KernelFn",
    "lower_positional",
]

ELEMENTWISE_FAMILIES = ("nary", "binary", "unary")
_FLOATS = ("float16", "float32", "float64")


def _float(work: str) -> str:
    """The dtype a kernel defined on reals computes in: ``work`` if it is floating, else
    float64."""
    return work if work in _FLOATS else "float64"


def _caster(
    be: Backend, in_dtypes: Sequence[str], target_name: str
) -> Callable[[list[Array]], None]:
    """Casts (in place in the argument list) the operands whose dtype differs from the dtype the
    kernel computes in."""
    target = be.dtype(target_name)
    which = [i for i, d in enumerate(in_dtypes) if d != target_name]
    xp = be.xp

    def cast(args: list[Array]) -> None:
        for i in which:
            args[i] = xp.astype(args[i], target)

    return cast


def _lower_dot(
    be: Backend,
    inf: Inference,
    shapes: Sequence[Shape],
    out_shape: Shape,
    cast: Callable[[list[Array]], None],
    recast: Any,
) -> KernelFn:
    """Named dot as one matmul: free dims of the first operand to rows, the contracted dims to
    the shared inner dim, the other operand's free dims to columns."""
    xp = be.xp
    pairs = [(int(i), int(j)) for i, j in inf.plan["pairs"]]
    x_free = _free(inf, "x")
    y_free = _free(inf, "y")
    if inf.plan["lower"] == "y":
        first, a_free, a_con = 1, y_free, [j for _, j in pairs]
        b_free, b_con = x_free, [i for i, _ in pairs]
    else:
        first, a_free, a_con = 0, x_free, [i for i, _ in pairs]
        b_free, b_con = y_free, [j for _, j in pairs]
    sa, sb = shapes[first], shapes[1 - first]
    perm_a = a_free + a_con
    perm_b = b_con + b_free
    m = math.prod(sa[d] for d in a_free)
    kk = math.prod(sa[d] for d in a_con)
    n = math.prod(sb[d] for d in b_free)
    pa = None if _is_identity(perm_a) else perm_a
    pb = None if _is_identity(perm_b) else perm_b
    # the matmul writes the first operand's free columns, then the other's; params.axes may ask
    # for another order of the result, which a permutation of that product gives
    columns = [_column(inf, "xy"[first], d) for d in a_free] + [
        _column(inf, "xy"[1 - first], d) for d in b_free
    ]
    reorder = None if _is_identity(columns) else [columns.index(c) for c in range(len(columns))]
    made_shape = tuple(out_shape[c] for c in columns)

    def dot(args: Sequence[Array], out: Array | None) -> Array:
        ops = list(args)
        cast(ops)
        a, b = ops[first], ops[1 - first]
        if pa is not None:
            a = xp.permute_dims(a, pa)
        if pb is not None:
            b = xp.permute_dims(b, pb)
        if a.shape != (m, kk):
            a = xp.reshape(a, (m, kk))
        if b.shape != (kk, n):
            b = xp.reshape(b, (kk, n))
        if reorder is not None:
            made = xp.permute_dims(be.matmul(a, b, None, made_shape), reorder)
            return _deliver(be, made, out, recast if recast is not None else made.dtype)
        if recast is not None:
            return _deliver(be, xp.astype(be.matmul(a, b, None, out_shape), recast), out, recast)
        return be.matmul(a, b, out, out_shape)

    return dot


def _column(inf: Inference, key: str, dim: int) -> int:
    """The result column an operand's free dim becomes."""
    column = inf.operand_dims(key)[dim].column
    assert column is not None
    return column


def _free(inf: Inference, key: str) -> list[int]:
    """An operand's free dims in the order of the result columns they become."""
    split = inf.plan.get("parts", {}).get(key)
    cols = [
        (d.column, i)
        for i, d in enumerate(inf.operand_dims(key))
        if d.column is not None and i != split
    ]
    return [i for _, i in sorted(cols)]


def _lower_dot_partial(
    be: Backend,
    inf: Inference,
    shapes: Sequence[Shape],
    out_shape: Shape,
    cast: Callable[[list[Array]], None],
    dtype: Any,
) -> KernelFn:
    """``op:dot_partial`` as one batched matmul: the split contracted dim of each operand is
    cut into (parts, chunk), the parts become the batch and lead the result. Works on any
    application's region: its parts count is the region's first dim."""
    xp = be.xp
    parts = inf.plan["parts"]
    chunk = int(parts["chunk"])
    pairs = [(int(i), int(j)) for i, j in inf.plan["pairs"]]
    pairs.sort(key=lambda ij: ij[0] != parts["x"])  # the split pair first
    x_free, y_free = _free(inf, "x"), _free(inf, "y")
    y_first = inf.plan["lower"] == "y"
    a_key = 1 if y_first else 0
    a_free, a_con = (y_free, [j for _, j in pairs]) if y_first else (x_free, [i for i, _ in pairs])
    b_free, b_con = (x_free, [i for i, _ in pairs]) if y_first else (y_free, [j for _, j in pairs])
    sa, sb = shapes[a_key], shapes[1 - a_key]
    q = out_shape[0]
    if sa[a_con[0]] != q * chunk:
        raise ExecutionError(
            f"op:dot_partial reads {sa[a_con[0]]} elements of the split axis for {q} parts of "
            f"{chunk}; expected {q * chunk}"
        )
    m = math.prod(sa[d] for d in a_free)
    n = math.prod(sb[d] for d in b_free)
    rest = math.prod(sa[d] for d in a_con) // (q or 1)
    perm_a, perm_b = a_free + a_con, b_con + b_free

    def dot_partial(args: Sequence[Array], out: Array | None) -> Array:
        ops = list(args)
        cast(ops)
        a = xp.permute_dims(ops[a_key], perm_a)
        b = xp.permute_dims(ops[1 - a_key], perm_b)
        a = xp.permute_dims(xp.reshape(a, (m, q, rest)), (1, 0, 2))
        b = xp.reshape(b, (q, rest, n))
        r = xp.reshape(xp.matmul(a, b), tuple(out_shape))
        return _deliver(be, r, out, dtype)

    return dot_partial


def _lower_reduction(
    be: Backend, inf: Inference, shape: Shape, cast: Callable[[list[Array]], None], dtype: Any
) -> KernelFn:
    """A reduction over its reduced dims. A partial one (``plan.parts``, a split of a reduced
    axis) first cuts that dim of the region into (parts, chunk): the chunk is reduced, the parts
    lead the result, as many as the region holds."""
    xp = be.xp
    reduced = [int(i) for i in inf.plan["reduced"]]
    dims = inf.operand_dims("tensor")
    columns = [dims[i].column or 0 for i in range(len(dims))]
    split = inf.plan.get("parts")
    cut: tuple[int, ...] | None = None
    if split is not None:
        d, chunk = int(split["dim"]), int(split["chunk"])
        cut = (*shape[:d], shape[d] // chunk, chunk, *shape[d + 1 :])
        reduced = [i + (i >= d) for i in reduced]  # the chunk is at d + 1; the parts stay at d
        columns = [*columns[:d], 0, 0, *columns[d + 1 :]]
    kept = [i for i in range(len(columns)) if i not in reduced]
    order = _argsort([columns[i] for i in kept])
    perm = None if _is_identity(order) else order
    axes = tuple(reduced)
    f = getattr(xp, inf.kernel.removeprefix("op:"))

    def reduction(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        cast(a)
        x = a[0] if cut is None else xp.reshape(a[0], cut)
        r = f(x, axis=axes) if axes else x
        if perm is not None:
            r = xp.permute_dims(r, perm)
        return _deliver(be, r, out, dtype)

    return reduction


def _lower_normalization(
    be: Backend, inf: Inference, shape: Shape, cast: Callable[[list[Array]], None], dtype: Any
) -> KernelFn:
    """softmax ``exp(x - max) / sum(exp(x - max))`` and layer norm ``(x - mean) / sqrt(var +
    epsilon) * scale + bias`` (biased variance) over the normalised dims, which every region
    holds whole; scale and bias are aligned to the operand's dims once, here. On NumPy and CuPy
    both run in their output's storage (``out=`` ufuncs): softmax in four passes (max, subtract,
    exp, sum and divide), layer norm with one temporary (the squares)."""
    xp = be.xp
    nat = be.native
    axes = tuple(int(i) for i in inf.plan["reduced"])

    def target_of(x: Array, out: Array | None) -> Array:
        """Where a native kernel writes: ``out`` when it has the result's dtype, else new."""
        if out is not None and out.dtype == dtype:
            return out
        return nat.empty(x.shape, dtype=dtype)

    if inf.kernel == "op:softmax":

        def softmax(args: Sequence[Array], out: Array | None) -> Array:
            a = list(args)
            cast(a)
            if nat is not None and a[0].dtype == dtype:
                r = target_of(a[0], out)
                nat.subtract(a[0], nat.max(a[0], axis=axes, keepdims=True), out=r)
                nat.exp(r, out=r)
                nat.divide(r, nat.sum(r, axis=axes, keepdims=True), out=r)
                return _deliver(be, r, out, dtype)
            e = xp.exp(a[0] - xp.max(a[0], axis=axes, keepdims=True))
            return _deliver(be, e / xp.sum(e, axis=axes, keepdims=True), out, dtype)

        return softmax
    epsilon = float(inf.params["epsilon"])
    affine = []
    for key in ("scale", "bias"):
        if key in inf.plan:
            dims = [int(d) for d in inf.plan[key]]
            perm = _argsort(dims)
            target = tuple(shape[d] if d in dims else 1 for d in range(len(shape)))
            affine.append((key == "scale", None if _is_identity(perm) else perm, target))

    def layer_norm(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        cast(a)
        if nat is not None and a[0].dtype == dtype:
            r = target_of(a[0], out)
            nat.subtract(a[0], nat.mean(a[0], axis=axes, keepdims=True), out=r)
            var = nat.mean(nat.square(r), axis=axes, keepdims=True)
            nat.multiply(r, 1 / nat.sqrt(var + epsilon), out=r)
            for (scale, perm, target), w in zip(affine, a[1:], strict=True):
                if perm is not None:
                    w = xp.permute_dims(w, perm)
                w = xp.reshape(w, target)
                (nat.multiply if scale else nat.add)(r, w, out=r)
            return _deliver(be, r, out, dtype)
        centred = a[0] - xp.mean(a[0], axis=axes, keepdims=True)
        y = centred / xp.sqrt(xp.mean(centred * centred, axis=axes, keepdims=True) + epsilon)
        for (scale, perm, target), w in zip(affine, a[1:], strict=True):
            if perm is not None:
                w = xp.permute_dims(w, perm)
            w = xp.reshape(w, target)
            y = y * w if scale else y + w
        return _deliver(be, y, out, dtype)

    return layer_norm


def _lower_gelu(
    be: Backend, approximate: str, cast: Callable[[list[Array]], None], dtype: Any
) -> KernelFn:
    """GELU (Hendrycks & Gimpel, arXiv:1606.08415): ``x·Φ(x)`` with the normal CDF
    ``Φ(x) = erfc(-x/√2)/2``, or with ``approximate="tanh"``
    ``x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))``."""
    xp = be.xp
    root = math.sqrt(2 / math.pi)
    series = _erfc_coefficients()

    def gelu(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        cast(a)
        x = a[0]
        if approximate == "tanh":
            y = 0.5 * x * (1 + xp.tanh(root * (x + 0.044715 * x * x * x)))
        else:
            tail = 0.5 * _erfc(xp, xp.abs(x) / math.sqrt(2), series)
            y = x * xp.where(x >= 0, 1 - tail, tail)
        return _deliver(be, y, out, dtype)

    return gelu


_ERFC_SPLIT = 2.0
"""Where :func:`_erfc` changes from its near interpolant to its far one."""

_ERFC_DEGREE = 20
"""The interpolants' degree: both reach about 1e-14 relative (measured against ``math.erfc``
on 20,000 points of [0, 26])."""


@functools.cache
def _erfc_coefficients() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Chebyshev coefficients, interpolated at the Chebyshev points from ``math.erfc``, of
    ``erfcx(u) = exp(u²)·erfc(u)`` on [0, 2] (in ``t = u - 1``) and of ``√π·u·erfcx(u)`` on
    [2, ∞) (in ``t = 4/u - 1``, from erfc's continued fraction, which needs no ``exp``). Both are
    smooth and slowly varying, which erfc itself is not."""

    def near(t: Any) -> Any:
        return np.array([math.erfc(u) * math.exp(u * u) for u in (t + 1) * _ERFC_SPLIT / 2])

    def far(t: Any) -> Any:
        values = []
        for u in 2 * _ERFC_SPLIT / (t + 1):
            f = u
            for k in range(200, 0, -1):  # erfc(u) = exp(-u²)/√π / (u + (1/2)/(u + 1/(u + ...)))
                f = u + (k / 2) / f
            values.append(u / f)
        return np.array(values)

    cheb = np.polynomial.chebyshev
    return (
        tuple(float(c) for c in cheb.chebinterpolate(near, _ERFC_DEGREE)),
        tuple(float(c) for c in cheb.chebinterpolate(far, _ERFC_DEGREE)),
    )


def _clenshaw(xp: Any, coefficients: Sequence[float], t: Array) -> Array:
    """The Chebyshev series ``Σ c_k·T_k(t)`` by Clenshaw's recurrence."""
    t2 = 2 * t
    b1 = xp.zeros_like(t) + coefficients[-1]
    b2 = xp.zeros_like(t)
    for c in coefficients[-2:0:-1]:
        b1, b2 = t2 * b1 - b2 + c, b1
    return t * b1 - b2 + coefficients[0]


def _erfc(xp: Any, u: Array, series: tuple[Sequence[float], Sequence[float]]) -> Array:
    """``erfc(u)`` for ``u >= 0`` with array API functions only (the standard has no erf):
    ``erfcx`` from the interpolant of ``u``'s side of the split, times ``exp(-u²)``. Each side
    sees ``u`` clamped to its interval, so the side not taken computes nothing infinite, and the
    far side is skipped when no ``u`` reaches it. ``series``: :func:`_erfc_coefficients`,
    fetched when the kernel is lowered."""
    near_c, far_c = series
    near = _clenshaw(xp, near_c, xp.minimum(u, _ERFC_SPLIT) / (_ERFC_SPLIT / 2) - 1)
    if not bool(xp.any(u >= _ERFC_SPLIT)):  # the common case (|x| < 2√2 in GELU): no far side
        return near * xp.exp(-u * u)
    far_u = xp.maximum(u, _ERFC_SPLIT)
    far = _clenshaw(xp, far_c, (2 * _ERFC_SPLIT) / far_u - 1) / (math.sqrt(math.pi) * far_u)
    return xp.where(u < _ERFC_SPLIT, near, far) * xp.exp(-u * u)


def _lower_view(
    be: Backend,
    inf: Inference,
    shape: Shape,
    out_shape: Shape,
    cast: Callable[[list[Array]], None],
    dtype: Any,
    local: Mapping[str, Any],
) -> KernelFn:
    xp = be.xp
    name = inf.kernel
    transform: Callable[[Array], Array]
    if name in ("op:cast_axes", "op:pad"):
        # cast_axes relabels; pad reads a zero-filled region that already is the padded result.
        def transform(a: Array) -> Array:
            return a

    elif name == "op:broadcast":
        cols = [d.column for d in inf.operand_dims("tensor")]
        perm = _argsort([c or 0 for c in cols])
        target = [1] * len(out_shape)
        for d in perm:
            target[cols[d] or 0] = shape[d]
        bperm = None if _is_identity(perm) else perm
        aligned = tuple(target)

        def transform(a: Array) -> Array:
            if bperm is not None:
                a = xp.permute_dims(a, bperm)
            return xp.broadcast_to(xp.reshape(a, aligned), out_shape)

    elif name == "op:dimshuffle":
        dperm = _argsort([d.column or 0 for d in inf.operand_dims("tensor")])

        def transform(a: Array) -> Array:
            return xp.permute_dims(a, dperm)

    elif name == "op:transpose":
        tperm = list(reversed(range(len(shape))))

        def transform(a: Array) -> Array:
            return xp.permute_dims(a, tperm)

    elif name == "op:slice":
        index = tuple(local["slices"])

        def transform(a: Array) -> Array:
            return a[index]

    elif name in ("op:flatten", "op:unflatten"):
        if math.prod(shape) != math.prod(out_shape):
            raise ExecutionError(
                f"{name} cannot reshape a region of shape {shape} into {out_shape}; shard it "
                "along its outermost axis only"
            )

        def transform(a: Array) -> Array:
            return xp.reshape(a, out_shape)

    else:  # pragma: no cover - the catalogue has no other view kernels
        raise ExecutionError(f'kernel "{name}" has no executor implementation')

    def view(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        cast(a)
        return _deliver(be, transform(a[0]), out, dtype)

    return view


def _lower_conv(
    be: Backend,
    inf: Inference,
    shapes: Sequence[Shape],
    out_shape: Shape,
    cast: Callable[[list[Array]], None],
    dtype: Any,
) -> KernelFn:
    """conv2d as im2col + matmul: the R*S window offsets are stacked (a loop over window
    offsets, never over elements) behind the channels, so the columns ``(C·R·S, P·Q)`` of an
    image are the stack itself with no transpose, and the filter ``(K, C·R·S)`` times them is
    already ``(K, P, Q)`` (NCHW, ONNX's and PyTorch's layout: no permutation after). On NumPy,
    writing a contiguous NCHW output, each image's columns are made and multiplied in turn
    (they stay in the cache; the batch split over the cores by ``in_parts``); otherwise the
    whole batch's columns are stacked and multiplied in one batched matmul. The region read
    already holds any zero padding, so the kernel runs unpadded."""
    xp = be.xp
    px, pf, po = inf.plan["x"], inf.plan["filter"], inf.plan["out"]
    xb = [int(i) for i in inf.plan["batch"]]
    nb = len(xb)
    x_perm = [*xb, px["channel"], px["height"], px["width"]]
    f_perm = [pf["channelout"], pf["channel"], pf["height"], pf["width"]]
    sh, sw = (int(v) for v in inf.params["stride"])
    sx, sf = shapes
    k, c, r, s = (sf[i] for i in f_perm)
    p, q = out_shape[po["height"]], out_shape[po["width"]]
    batch = [sx[i] for i in xb]
    nbatch = math.prod(batch)
    windows = [
        (..., slice(i, i + sh * (p - 1) + 1, sh), slice(j, j + sw * (q - 1) + 1, sw))
        for i in range(r)
        for j in range(s)
    ]
    current = [*po["batch"], po["channelout"], po["height"], po["width"]]
    o_perm = _argsort(current)
    final = None if _is_identity(o_perm) else o_perm
    x_id = _is_identity(x_perm)
    nat = be.native
    per_image = final is None and be.name == "numpy"

    def conv(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        cast(a)
        xt = a[0] if x_id else xp.permute_dims(a[0], x_perm)
        ft = xp.reshape(xp.permute_dims(a[1], f_perm), (k, c * r * s))
        fits = (
            nat is not None and out is not None and be.is_contiguous(out) and out.dtype == xt.dtype
        )
        if per_image and fits:
            images = xp.reshape(xt, (nbatch, c, *xt.shape[-2:]))
            written = xp.reshape(out, (nbatch, k, p * q))

            def part(lo: int, hi: int) -> None:
                # one image's columns (C, R·S, P, Q) at a time: they stay in the cache for
                # its product, where the whole batch's (the CNN's second conv: 9.4 MB) did not
                cols = nat.empty((c, r * s, p, q), dtype=xt.dtype)
                flat = xp.reshape(cols, (c * r * s, p * q))
                for i in range(lo, hi):
                    image = images[i]
                    for n, w in enumerate(windows):
                        cols[:, n] = image[w]
                    nat.matmul(ft, flat, out=written[i])

            in_parts(nat, nbatch, part, k * c * r * s * p * q)
            return out
        cols = xp.stack([xt[w] for w in windows], axis=nb + 1)  # (batch, C, R·S, P, Q)
        cols = xp.reshape(cols, (nbatch, c * r * s, p * q))
        if final is None and fits:
            batched_matmul(nat, ft, cols, xp.reshape(out, (nbatch, k, p * q)))
            return out
        res = xp.reshape(be.products(ft, cols), (*batch, k, p, q))
        if final is not None:
            res = xp.permute_dims(res, final)
        return _deliver(be, res, out, dtype)

    return conv


def lower_positional(
    be: Backend,
    kernel: str,
    shapes: Mapping[str, Sequence[Shape]],
    out_shape: Shape,
    out_dtype: str,
    in_dtypes: Sequence[str],
) -> KernelFn:
    """The closure of a positional kernel: catalogue elementwise ops with array broadcasting,
    ``op:linear`` (``x·A + b``), ``matmul`` and ``row_sum`` (sum over the last dim)."""
    xp = be.xp
    dtype = be.dtype(out_dtype)
    work = compute_dtype(kernel, in_dtypes)
    cast = _caster(be, in_dtypes, work)
    flat = [s for key in CATALOGUE[kernel].inputs for s in shapes.get(key, ())]
    size = math.prod(out_shape)

    def fit(r: Array) -> Array:
        if r.shape == out_shape:
            return r
        if math.prod(r.shape) == size:
            return xp.reshape(r, out_shape)
        return xp.broadcast_to(r, out_shape)

    family = CATALOGUE[kernel].family
    if family in ELEMENTWISE_FAMILIES:
        shape = broadcast_shape(flat)
        if shape is None:
            raise ExecutionError(
                f"{kernel} cannot broadcast operand shapes {tuple(flat)} together; expected "
                "shapes that agree or are 1 from the right"
            )
        if shape != out_shape and math.prod(shape) != size:
            raise ExecutionError(
                f"{kernel} on operand shapes {tuple(flat)} gives shape {shape}, but it writes a "
                f"selection of shape {out_shape}"
            )
        direct = shape == out_shape and work == out_dtype
        if kernel == "op:gelu":  # a positional operation has no params: the exact form
            return _lower_gelu(be, "none", _caster(be, in_dtypes, _float(work)), dtype)

        def elementwise(args: Sequence[Array], out: Array | None) -> Array:
            a = list(args)
            cast(a)
            if direct:
                return be.elementwise(kernel, a, out)
            return _deliver(be, fit(be.elementwise(kernel, a, None)), out, dtype)

        return elementwise
    if kernel in ("op:linear", "matmul"):
        has_bias = kernel == "op:linear" and len(shapes.get("b", ())) > 0

        def linear(args: Sequence[Array], out: Array | None) -> Array:
            a = list(args)
            cast(a)
            r = xp.matmul(a[0], a[1])
            if has_bias:
                r = r + a[2]
            return _deliver(be, fit(r), out, dtype)

        return linear
    if kernel == "row_sum":

        def row_sum(args: Sequence[Array], out: Array | None) -> Array:
            a = list(args)
            cast(a)
            return _deliver(be, fit(xp.sum(a[0], axis=-1)), out, dtype)

        return row_sum
    raise ExecutionError(
        f'kernel "{kernel}" needs named axes; give every tensor it reads a TensorAxes tag'
    )
