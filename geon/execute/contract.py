"""Contractions lowered as contractions (issue #34): a ``multiply`` whose product only a ``sum``
reads is one batched ``matmul``, chosen when the plan is compiled.

A document says a batched product-then-sum the way the catalogue can (the ONNX importer's batched
MatMul and Einsum are ``op:multiply`` then ``op:sum``, since ``op:dot`` has no shared batch axes).
Run as written, the product is materialised whole: attention's ``(batch, heads, S, S', Dh)``
product is 134 MB at d_model 256, sequence 128, batch 8. :func:`fuse_contractions` finds such
pairs among the units of work and :func:`lower_contraction` runs them as one ``matmul`` with
batch dimensions (the standard's ``matmul``: one BLAS call per batch on NumPy, a batched GEMM on
CuPy): letters in both operands and the result are batch dims, in both and summed the
contracted dim, in one operand and the result its free dims; a letter summed that only one
operand holds is summed out of that operand first. Every permutation and shape is computed here,
once.

>>> import numpy as np
>>> from geon.execute.backend import select_backend
>>> f = lower_contraction(select_backend("numpy"), ([[0, 1, 2], [0, 2, 3]], 4, [2], [0, 1, 3]),
...                       [(2, 3, 4), (2, 4, 5)])
>>> a, b = np.ones((2, 3, 4)), np.ones((2, 4, 5))
>>> f([a, b], None).shape, float(f([a, b], None)[0, 0, 0])
((2, 3, 5), 4.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from geon.execute.backend import Backend
from geon.execute.blas import batched_matmul
from geon.execute.kernel_parts import Array, KernelFn, Shape, argsort, deliver, is_identity
from geon.execute.regions import Unit

__all__ = ["Contraction", "fuse_contractions", "lower_contraction"]

Contraction = tuple[list[list[int]], int, list[int], list[int]]
"""``(operand dims -> product dims per operand, product rank, summed dims, result order)``: the
result holds the kept product dims in ``result order``."""

FLOATS = ("float16", "float32", "float64")


def _contraction(mul: Unit, red: Unit, dtypes: Sequence[str]) -> Contraction | None:
    """The contraction ``red`` (a sum) of ``mul`` (a product) computes, or None when the pair is
    not one this lowering runs exactly as the two kernels would."""
    if mul.inf is None or red.inf is None or len(mul.reads) != 2 or len(red.reads) != 1:
        return None
    if red.inf.plan.get("parts") is not None or len(set(dtypes)) != 1 or dtypes[0] not in FLOATS:
        return None
    product = mul.out[1].shape
    if red.reads[0].region != mul.out[1] or red.reads[0].inside != mul.out[1]:
        return None
    maps = [[int(d) for d in m] for m in mul.inf.plan["align"]]
    for m, r in zip(maps, mul.reads, strict=True):
        if r.inside != r.region or len(m) != len(r.region.shape):
            return None
        if any(r.region.shape[d] != product[m[d]] for d in range(len(m))):
            return None  # a broadcast length-1 dim: leave it to the elementwise kernel
    if sorted({p for m in maps for p in m}) != list(range(len(product))):
        return None
    reduced = [int(i) for i in red.inf.plan["reduced"]]
    dims = red.inf.operand_dims("tensor")
    kept = [i for i in range(len(product)) if i not in reduced]
    order = argsort([dims[i].column or 0 for i in kept])
    return maps, len(product), reduced, [kept[j] for j in order]


def fuse_contractions(
    units: list[Unit], keep: set[int], dtype_of: Any
) -> tuple[list[Unit], set[int]]:
    """``units`` with every product only a sum reads (exactly, unit for unit, and not kept)
    folded into that sum's unit, and the products no longer computed."""
    writers: dict[int, list[int]] = {}
    readers: dict[int, list[int]] = {}
    for n, u in enumerate(units):
        writers.setdefault(u.out[0], []).append(n)
        for read in u.reads:
            readers.setdefault(read.tensor, []).append(n)
    dropped: set[int] = set()
    gone: set[int] = set()
    for t, ws in writers.items():
        rs = readers.get(t, [])
        if t in keep or len(rs) != len(ws):
            continue
        if any(units[w].kernel != "op:multiply" for w in ws):
            continue
        if any(units[r].kernel != "op:sum" or len(units[r].reads) != 1 for r in rs):
            continue
        by_region = {units[w].out[1]: w for w in ws}
        pairs = [(by_region.get(units[r].reads[0].region), r) for r in rs]
        if len(by_region) != len(ws) or any(w is None for w, _ in pairs):
            continue
        found = []
        for w, r in pairs:
            assert w is not None
            mul, red = units[w], units[r]
            dtypes = [dtype_of(x.tensor) for x in mul.reads] + [dtype_of(t), dtype_of(red.out[0])]
            c = _contraction(mul, red, dtypes)
            if c is None or r < w or (mul.app is None) != (red.app is None):
                break
            found.append((w, r, c))
        else:
            for w, r, c in found:
                units[r].reads = list(units[w].reads)
                units[r].local["contract"] = c
                units[r].local["reads_for"] = units[w].op.id  # measured moves keep their edge
                dropped.add(w)
            gone.add(t)
    return [u for n, u in enumerate(units) if n not in dropped], gone


def lower_contraction(be: Backend, c: Contraction, shapes: Sequence[Shape]) -> KernelFn:
    """The closure of a contraction on operands of ``shapes`` (see :data:`Contraction`)."""
    xp = be.xp
    maps, rank, reduced, order = c
    length = [1] * rank
    for m, s in zip(maps, shapes, strict=True):
        for d, p in enumerate(m):
            length[p] = s[d]
    sa, sb = set(maps[0]), set(maps[1])
    batch = [p for p in order if p in sa and p in sb]
    a_free = [p for p in order if p in sa and p not in sb]
    b_free = [p for p in order if p in sb and p not in sa]
    con = [p for p in reduced if p in sa and p in sb]
    pre = [
        tuple(d for d, p in enumerate(m) if p in reduced and p not in other)
        for m, other in ((maps[0], sb), (maps[1], sa))
    ]
    left = [[p for p in m if not (p in reduced and p not in other)] for m, other in
            ((maps[0], sb), (maps[1], sa))]  # fmt: skip

    def perm(dims: list[int], want: list[int]) -> list[int] | None:
        p = [dims.index(w) for w in want]
        return None if is_identity(p) else p

    pa = perm(left[0], batch + a_free + con)
    pb = perm(left[1], batch + con + b_free)
    nb = math.prod(length[p] for p in batch)
    m_, k_, n_ = (math.prod(length[p] for p in g) for g in (a_free, con, b_free))
    made = batch + a_free + b_free
    made_shape = tuple(length[p] for p in made)
    reorder = perm(made, order)
    nat = be.native

    def direct(out: Array | None, a: Array) -> bool:
        """Whether the product may be written straight into ``out`` (NumPy/CuPy)."""
        return (
            reorder is None and out is not None and be.is_contiguous(out) and out.dtype == a.dtype
        )

    def contraction(args: Sequence[Array], out: Array | None) -> Array:
        a, b = args
        if pre[0]:
            a = xp.sum(a, axis=pre[0])
        if pre[1]:
            b = xp.sum(b, axis=pre[1])
        if pa is not None:
            a = xp.permute_dims(a, pa)
        if pb is not None:
            b = xp.permute_dims(b, pb)
        a, b = xp.reshape(a, (nb, m_, k_)), xp.reshape(b, (nb, k_, n_))
        if nat is not None and direct(out, a):
            batched_matmul(nat, a, b, nat.reshape(out, (nb, m_, n_)))
            return out
        r = xp.reshape(be.products(a, b), made_shape)
        if reorder is not None:
            r = xp.permute_dims(r, reorder)
        return deliver(be, r, out, r.dtype)

    return contraction
