"""Kernels of the combining family (:mod:`geon.core.ops.combine`): ``op:concat``, ``op:gather``
and ``op:where``, against the array API standard like every kernel of :mod:`geon.execute.kernels`.

>>> import numpy as np
>>> from geon.core.axes import Axes, Axis
>>> from geon.core.ops import infer
>>> from geon.execute.backend import select_backend
>>> N, A, B, C = Axis("N", 2), Axis("A", 1), Axis("B", 2), Axis("C", 3)
>>> inf = infer("op:concat", {"tensors": [Axes.of([N, A]), Axes.of([B, N])]},
...             {"along": ["A", "B"], "axis": "C"}, {"C": C})
>>> be = select_backend("numpy")
>>> f = lower_concat(be, inf, lambda a: None, be.dtype("int64"))
>>> f([np.array([[0], [1]]), np.array([[2, 3], [4, 5]])], None).tolist()
[[0, 2, 4], [1, 3, 5]]

A shard of a concat holds every operand's joined dim whole (they are not index axes), so the
whole and the sharded runs call the same closure, on smaller regions of the other axes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from geon.core.errors import ExecutionError
from geon.core.ops import Inference
from geon.execute.backend import Backend
from geon.execute.kernel_parts import Array, KernelFn, Shape
from geon.execute.kernel_parts import argsort as _argsort
from geon.execute.kernel_parts import deliver as _deliver
from geon.execute.kernel_parts import is_identity as _is_identity


def lower_concat(
    be: Backend, inf: Inference, cast: Callable[[list[Array]], None], dtype: Any
) -> KernelFn:
    """``concat`` of the operands, each first put in the result's dim order."""
    xp = be.xp
    axis = int(inf.plan["dim"])
    perms = [None if _is_identity(p) else [int(d) for d in p] for p in inf.plan["perm"]]

    def concat(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        cast(a)
        parts = [t if p is None else xp.permute_dims(t, p) for t, p in zip(a, perms, strict=True)]
        return _deliver(be, xp.concat(parts, axis=axis), out, dtype)

    return concat


def lower_where(
    be: Backend,
    inf: Inference,
    shapes: Sequence[Shape],
    out_shape: Shape,
    dtype: Any,
) -> KernelFn:
    """``where(condition, x, y)`` with the operands aligned to the result's dims (as an
    elementwise op aligns them); ``x`` and ``y`` cast to the result's dtype."""
    xp = be.xp
    rank = len(out_shape)
    aligners = []
    for m, shape in zip(inf.plan["align"], shapes, strict=True):
        perm = _argsort(m)
        target = [1] * rank
        for d in perm:
            target[m[d]] = shape[d]
        aligners.append((None if _is_identity(perm) else perm, tuple(target)))
    kinds = [be.dtype("boolean") if i == 2 else dtype for i in range(3)]

    def where(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        for i, (perm, target) in enumerate(aligners):
            if a[i].dtype != kinds[i]:
                a[i] = xp.astype(a[i], kinds[i])
            if perm is not None:
                a[i] = xp.permute_dims(a[i], perm)
            if a[i].shape != target:
                a[i] = xp.reshape(a[i], target)
        r = xp.where(a[2], a[0], a[1])
        if r.shape != out_shape:
            r = xp.broadcast_to(r, out_shape)
        return _deliver(be, r, out, dtype)

    return where


def lower_gather(be: Backend, inf: Inference, shapes: Sequence[Shape], dtype: Any) -> KernelFn:
    """``take`` along the table's indexed dim with the indices flattened (the standard's
    ``take`` wants one dim of indices), reshaped to the result; negative indices count from
    the end as in ONNX, and one outside the table is an :class:`ExecutionError`."""
    xp = be.xp
    axis = int(inf.plan["axis"])
    table, idx = shapes
    n = table[axis]
    out_shape = (*table[:axis], *idx, *table[axis + 1 :])
    index_type = be.dtype("int64")

    def gather(args: Sequence[Array], out: Array | None) -> Array:
        t, i = args
        if t.dtype != dtype:
            t = xp.astype(t, dtype)
        if i.dtype != index_type:
            i = xp.astype(i, index_type)
        if bool(xp.any(i >= n)) or bool(xp.any(i < -n)):
            raise ExecutionError(
                f"op:gather indices reach outside [-{n}, {n}), the length of table axis "
                f'"{inf.params["axis"]}"; every index must lie inside'
            )
        i = xp.where(i < 0, i + n, i)
        r = xp.take(t, xp.reshape(i, (-1,)), axis=axis)
        return _deliver(be, xp.reshape(r, out_shape), out, dtype)

    return gather
