"""The pooling kernels ``op:max_pool2d`` and ``op:avg_pool2d`` on the array API (the rest of the
catalogue is in :mod:`geon.execute.kernels`; docs/kernels.md has the formulas).

>>> import numpy as np
>>> from geon import core as gc
>>> from geon.execute import run
>>> H, W = gc.Axis("H", 3, roles="Height"), gc.Axis("W", 3, roles="Width")
>>> P, Q = gc.Axis("P", 2, roles="Height"), gc.Axis("Q", 2, roles="Width")
>>> x = gc.placeholder(axes=[H, W], name="x")
>>> y = gc.avg_pool2d(x, [P, Q], 2, stride=2, padding=1, count_include_pad=False, name="y")
>>> run(gc.graph([y]), {"x": np.arange(9.0).reshape(3, 3)}).by_key()["y"].tolist()
[[0.0, 1.5], [4.5, 6.0]]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from geon.core.ops import Inference
from geon.execute.backend import Backend
from geon.execute.kernel_parts import KernelFn, Shape, deliver, is_identity
from geon.execute.kernel_parts import argsort as _argsort

__all__ = ["lower_pool"]

Array = Any


def lower_pool(
    be: Backend,
    inf: Inference,
    shape: Shape,
    out_shape: Shape,
    work: str,
    cast: Callable[[list[Array]], None],
    dtype: Any,
    local: Mapping[str, Any],
) -> KernelFn:
    """max_pool2d / avg_pool2d as a loop over the kh*kw window offsets (never over elements):
    each offset is one strided slice of the region, folded with ``maximum`` or summed, on
    NumPy/CuPy straight into the output (``out=``, no temporary per offset).

    One reduction over a window view (``sliding_window_view`` or a reshape to ``(..., P, kh, Q,
    kw)``, then ``max`` over the window dims) was measured and not taken: NumPy reduces such
    short inner dims element by element, 16 ms for the benchmark CNN's first pool
    (32x32x32x32, 2x2 stride 2) against 0.7 ms for the four strided slices folded in place.

    The region read holds zeros where it reaches past the tensor (padding, or a shard's edge
    that is padding); ``local["inside"]`` (per region dim, the ``[lo, hi)`` of the tensor's cells)
    says where: max reads -inf there (the dtype's least value for integers), and an average
    without ``count_include_pad`` divides each window by the number of tensor cells it covers."""
    xp = be.xp
    plan = inf.plan
    dh, dw = int(plan["height"]), int(plan["width"])
    kept = [d for d in range(len(shape)) if d not in (dh, dw)]
    x_perm = [*kept, dh, dw]
    kh, kw = (int(v) for v in inf.params["kernel_size"])
    sh, sw = (int(v) for v in inf.params["stride"])
    p, q = out_shape[plan["out_height"]], out_shape[plan["out_width"]]
    windows = [
        (..., slice(i, i + sh * (p - 1) + 1, sh), slice(j, j + sw * (q - 1) + 1, sw))
        for i in range(kh)
        for j in range(kw)
    ]
    current = [*plan["out"], plan["out_height"], plan["out_width"]]
    o_perm = _argsort(current)
    final = None if is_identity(o_perm) else o_perm
    unfinal = None if final is None else _argsort(final)
    nat = be.native

    def target_of(out: Array | None, like: Array) -> Array | None:
        """Where a native fold writes: ``out`` seen in the windows' order, when it has the
        windows' dtype (NumPy/CuPy: ufuncs with ``out=``, no temporary per window)."""
        if nat is None or out is None or out.dtype != like.dtype or len(windows) < 2:
            return None
        return out if unfinal is None else nat.transpose(out, unfinal)

    inside = local.get("inside")
    (lo_h, hi_h), (lo_w, hi_w) = (
        inside[dh] if inside else (0, shape[dh]),
        inside[dw] if inside else (0, shape[dw]),
    )
    padded = (lo_h, hi_h, lo_w, hi_w) != (0, shape[dh], 0, shape[dw])
    rows = (np.arange(shape[dh]) >= lo_h) & (np.arange(shape[dh]) < hi_h)
    cols = (np.arange(shape[dw]) >= lo_w) & (np.arange(shape[dw]) < hi_w)
    if inf.kernel == "op:max_pool2d":
        mask = xp.asarray(rows[:, None] & cols[None, :]) if padded else None
        np_work = np.dtype(work if work != "boolean" else "bool")
        least = (
            -math.inf
            if np_work.kind in "fc"
            else (False if np_work.kind == "b" else int(np.iinfo(np_work).min))
        )

        def max_pool(args: Sequence[Array], out: Array | None) -> Array:
            a = list(args)
            cast(a)
            xt = xp.permute_dims(a[0], x_perm)
            if mask is not None:
                xt = xp.where(mask, xt, xp.full((), least, dtype=xt.dtype))
            target = target_of(out, xt)
            if target is not None:
                nat.maximum(xt[windows[0]], xt[windows[1]], out=target)
                for w in windows[2:]:
                    nat.maximum(target, xt[w], out=target)
                return out
            r = xt[windows[0]]
            for w in windows[1:]:
                r = xp.maximum(r, xt[w])
            if final is not None:
                r = xp.permute_dims(r, final)
            return deliver(be, r, out, dtype)

        return max_pool

    divisor: Any = float(kh * kw)
    if padded and not inf.params["count_include_pad"]:
        count_h = np.array([rows[i * sh : i * sh + kh].sum() for i in range(p)], dtype=work)
        count_w = np.array([cols[j * sw : j * sw + kw].sum() for j in range(q)], dtype=work)
        divisor = xp.asarray(count_h[:, None] * count_w[None, :])

    def avg_pool(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        cast(a)
        xt = xp.permute_dims(a[0], x_perm)
        target = target_of(out, xt)
        if target is not None:
            nat.add(xt[windows[0]], xt[windows[1]], out=target)
            for w in windows[2:]:
                nat.add(target, xt[w], out=target)
            nat.divide(target, divisor, out=target)
            return out
        r = xt[windows[0]]
        for w in windows[1:]:
            r = r + xt[w]
        r = r / divisor
        if final is not None:
            r = xp.permute_dims(r, final)
        return deliver(be, r, out, dtype)

    return avg_pool
