"""What the executor's kernel modules share (:mod:`geon.execute.kernels`,
:mod:`geon.execute.pooling`): the closure type and the small array helpers.

>>> argsort([2, 0, 1]), is_identity([0, 1])
([1, 2, 0], True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from geon.execute.backend import Backend

__all__ = ["Array", "KernelFn", "Shape", "argsort", "deliver", "is_identity"]

Array = Any
Shape = tuple[int, ...]
KernelFn = Callable[[Sequence[Array], Array | None], Array]
"""A lowered kernel: ``fn(args, out)`` (see :mod:`geon.execute.kernels`)."""


def argsort(values: Sequence[int]) -> list[int]:
    """The positions of ``values`` in increasing order (the inverse of a permutation)."""
    return sorted(range(len(values)), key=values.__getitem__)


def is_identity(perm: Sequence[int]) -> bool:
    """Whether ``perm`` leaves every position where it is."""
    return all(i == p for i, p in enumerate(perm))


def deliver(be: Backend, r: Array, out: Array | None, dtype: Any) -> Array:
    """Hand a computed result back: cast to the output dtype, or assign it into ``out``."""
    if r.dtype != dtype:
        r = be.xp.astype(r, dtype)
    if out is None:
        return r
    out[...] = r
    return out
