"""The executor's side of the kernel table: which lowering of :mod:`geon.execute.kernels` (or
of :mod:`~geon.execute.combine`, :mod:`~geon.execute.pooling`, :mod:`~geon.execute.fast`) runs a
named op, by the name its kernel's entry gives in ``executor`` (:mod:`geon.core.ops.catalogue`,
docs/kernels.md).

>>> from geon.core.ops import CATALOGUE
>>> sorted({k.executor for k in CATALOGUE.values() if k.named} - set(LOWERINGS))
[]

:func:`lower_named` reads the entry once per unit of work when a plan is compiled: the lowering
it names, and whether the kernel computes in a floating dtype (``floating``); the closures it
returns are the kernels' own (``fn(args, out)``, :data:`~geon.execute.kernel_parts.KernelFn`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from geon.core.dtypes import compute_dtype
from geon.core.errors import ExecutionError
from geon.core.ops import CATALOGUE, Inference
from geon.execute.backend import Backend
from geon.execute.combine import lower_concat, lower_gather, lower_where
from geon.execute.fast import gelu_float32, is_float32_native
from geon.execute.kernel_parts import Array, KernelFn, Shape
from geon.execute.kernel_parts import argsort as _argsort
from geon.execute.kernel_parts import deliver as _deliver
from geon.execute.kernel_parts import is_identity as _is_identity
from geon.execute.kernels import (
    _caster,
    _float,
    _lower_conv,
    _lower_dot,
    _lower_dot_partial,
    _lower_gelu,
    _lower_normalization,
    _lower_reduction,
    _lower_view,
)
from geon.execute.pooling import lower_pool

__all__ = ["LOWERINGS", "lower_named"]


@dataclass(frozen=True, slots=True)
class _Unit:
    """A unit of work as a lowering reads it: ``work`` is the dtype it computes in, ``direct``
    whether that is the output's."""

    be: Backend
    inf: Inference
    shapes: Sequence[Shape]
    out_shape: Shape
    dtype: Any
    cast: Callable[[list[Array]], None]
    work: str
    direct: bool
    float32: bool
    local: Mapping[str, Any]


def lower_named(
    be: Backend,
    inf: Inference,
    shapes: Sequence[Shape],
    out_shape: Shape,
    out_dtype: str,
    in_dtypes: Sequence[str],
    local: Mapping[str, Any] | None = None,
) -> KernelFn:
    """The closure of a named op on operand regions of ``shapes`` writing ``out_shape``, by
    the lowering its kernel's entry names (``executor``, :data:`LOWERINGS`).

    ``local`` holds what the unit's regions change in the params: ``slices`` (the local index
    of a slice), and pad/conv read zero-filled regions, so they run with no padding."""
    k = CATALOGUE[inf.kernel]
    lowering = LOWERINGS.get(k.executor) if k.named else None
    if lowering is None:
        msg = f'its entry names "{k.executor}"; expected one of {sorted(LOWERINGS)}'
        raise ExecutionError(f'kernel "{k.name}" has no named-axes lowering: {msg}')
    work = compute_dtype(inf.kernel, in_dtypes) if k.family != "view" else in_dtypes[0]
    if k.floating:
        work = _float(work)
    float32 = is_float32_native(be, [*in_dtypes, out_dtype])
    unit = _Unit(be, inf, shapes, out_shape, be.dtype(out_dtype), _caster(be, in_dtypes, work),
                 work, work == out_dtype, float32, local or {})  # fmt: skip
    return lowering(unit)


def _lower_elementwise(u: _Unit) -> KernelFn:
    be, inf, out_shape, cast, dtype, direct = u.be, u.inf, u.out_shape, u.cast, u.dtype, u.direct
    xp = be.xp
    rank = len(out_shape)
    aligners = []
    maps = inf.plan["align"] if CATALOGUE[inf.kernel].family != "unary" else [list(range(rank))]
    for m, shape in zip(maps, u.shapes, strict=True):
        perm = _argsort(m)
        target = [1] * rank
        for d in perm:
            target[m[d]] = shape[d]
        aligners.append((None if _is_identity(perm) else perm, tuple(target)))
    name = inf.kernel

    def elementwise(args: Sequence[Array], out: Array | None) -> Array:
        a = list(args)
        cast(a)
        for i, (perm, target) in enumerate(aligners):
            if perm is not None:
                a[i] = xp.permute_dims(a[i], perm)
            if a[i].shape != target:
                a[i] = xp.reshape(a[i], target)
        if direct:
            r = be.elementwise(name, a, out)
            if out is None and r.shape != out_shape:
                r = xp.broadcast_to(r, out_shape)
            return r
        r = be.elementwise(name, a, None)
        if r.shape != out_shape:
            r = xp.broadcast_to(r, out_shape)
        return _deliver(be, xp.astype(r, dtype), out, dtype)

    return elementwise


def _lower_gelu_unit(u: _Unit) -> KernelFn:
    if u.inf.params["approximate"] == "none" and u.float32:
        return gelu_float32(u.be)
    return _lower_gelu(u.be, u.inf.params["approximate"], u.cast, u.dtype)


LOWERINGS: dict[str, Callable[[_Unit], KernelFn]] = {
    "elementwise": _lower_elementwise,
    "gelu": _lower_gelu_unit,
    "normalization": lambda u: _lower_normalization(u.be, u.inf, u.shapes[0], u.cast, u.dtype),
    "concat": lambda u: lower_concat(u.be, u.inf, u.cast, u.dtype),
    "where": lambda u: lower_where(u.be, u.inf, u.shapes, u.out_shape, u.dtype),
    "gather": lambda u: lower_gather(u.be, u.inf, u.shapes, u.dtype),
    "dot_partial": lambda u: _lower_dot_partial(u.be, u.inf, u.shapes, u.out_shape, u.cast,
                                                u.dtype),
    "dot": lambda u: _lower_dot(u.be, u.inf, u.shapes, u.out_shape, u.cast,
                                None if u.direct else u.dtype),
    "reduction": lambda u: _lower_reduction(u.be, u.inf, u.shapes[0], u.cast, u.dtype),
    "conv": lambda u: _lower_conv(u.be, u.inf, u.shapes, u.out_shape, u.cast, u.dtype),
    "pool": lambda u: lower_pool(u.be, u.inf, u.shapes[0], u.out_shape, u.work, u.cast, u.dtype,
                                 u.local),
    "view": lambda u: _lower_view(u.be, u.inf, u.shapes[0], u.out_shape, u.cast, u.dtype,
                                  u.local),
}  # fmt: skip
"""The executor's lowerings of named ops, by the name a kernel's entry gives in ``executor``
(:mod:`geon.core.ops.catalogue`); loom's positional kernels are :func:`lower_positional`'s."""
