"""Batched products on NumPy with the BLAS's threads where they pay (issue #34).

A batched ``matmul`` on NumPy is one BLAS call per product of the batch; OpenBLAS splits each
product over its threads and joins them before the next. For the small products of a batch (a
conv's 32 images, attention's 64 heads x batch) the joins cost more than the products, and on a
shared machine each join waits for a thread the OS has descheduled: the benchmark CNN ran in
~70-100 ms (wall) with two-threaded BLAS against ~10 ms with one thread, under a load of 10 on 2
cores. Here a batch of products below :data:`SMALL_MACS` multiply-adds each runs with BLAS on
one thread, its batch cut into one contiguous part per core, each part one ``matmul`` call on
its own thread (NumPy releases the GIL in BLAS): one join per step instead of one per product;
a single small product (the CNN's classifier, 32x4096 @ 4096x10) runs on one thread, no join.
Large products keep the BLAS's own threads; CuPy and ``array_api_strict`` never come here.

>>> import numpy as np
>>> a, b = np.ones((6, 2, 3), np.float32), np.ones((6, 3, 4), np.float32)
>>> r = batched_matmul(np, a, b, None)
>>> r.shape, float(r[5, 1, 3])
((6, 2, 4), 3.0)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

__all__ = [
    "SMALL_MACS",
    "batched_matmul",
    "blas_controller",
    "blas_threads",
    "in_parts",
    "one_blas_thread",
]

Array = Any

SMALL_MACS = 2**24
"""Multiply-adds of one product of a batch below which the batch runs on one BLAS thread per
part (a 64x288 @ 288x256 conv image is 4.7M; the encoder's 1024x256 @ 256x1024 is 268M)."""

_CORES = max(1, os.cpu_count() or 1)
_LOCK = threading.Lock()
_CONTROLLER: list[Any] = []
_POOL: list[ThreadPoolExecutor | None] = []


def blas_controller() -> Any:
    """The process's ``threadpoolctl`` controller (made once: finding the libraries is slow),
    shared by the batched products here and a sharded run's groups
    (:mod:`~geon.execute.program`)."""
    with _LOCK:
        if not _CONTROLLER:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def blas_threads() -> int:
    """The most threads a loaded BLAS runs one call on (1 where none is loaded)."""
    libs = blas_controller().select(user_api="blas").lib_controllers
    return max((int(lib.num_threads or 1) for lib in libs), default=1)


def _parts_pool() -> ThreadPoolExecutor | None:
    """A pool for the parts of a batch past the first (made once; None on one core)."""
    with _LOCK:
        if not _POOL:
            _POOL.append(
                ThreadPoolExecutor(_CORES - 1, thread_name_prefix="geon-batch")
                if _CORES > 1
                else None
            )
    return _POOL[0]


_LIMIT: dict[str, Any] = {"holders": 0, "limiter": None}


@contextmanager
def one_blas_thread(blas: Any) -> Iterator[None]:
    """BLAS on one thread while any caller is inside: the limit is the whole process's, so
    the first caller in sets it and the last one out restores it (two threads that each saved
    and restored it could leave BLAS on one thread for good). Every part of the executor shares
    this section (a sharded run's concurrent groups too), so that overlapping sections, from any
    thread, restore the BLAS's threads once."""
    with _LOCK:
        if _LIMIT["holders"] == 0:
            _LIMIT["limiter"] = blas.limit(limits=1, user_api="blas")
        _LIMIT["holders"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _LIMIT["holders"] -= 1
            if _LIMIT["holders"] == 0:
                _LIMIT["limiter"].restore_original_limits()
                _LIMIT["limiter"] = None


def in_parts(nat: Any, n: int, work: Callable[[int, int], None], macs: int) -> None:
    """``work(lo, hi)`` over ``[0, n)`` (a batch of ``n`` items of ``macs`` multiply-adds
    each, whose BLAS calls write disjoint outputs): when the items are small
    (:data:`SMALL_MACS`) and the BLAS has more than one thread, cut into one contiguous part per
    core, each on its own thread with BLAS on one thread (one join for the batch); otherwise one
    part on the calling thread, BLAS as it is (inside a sharded run's concurrent group BLAS has
    one thread already)."""
    if (
        nat.__name__ != "numpy"
        or macs >= SMALL_MACS
        or n < 1
        or threading.current_thread().name.startswith("geon-")
    ):
        work(0, n)
        return
    blas = blas_controller()
    if blas_threads() <= 1:
        work(0, n)
        return
    parts = min(_CORES, n)
    cuts = [n * i // parts for i in range(parts + 1)]
    pool = _parts_pool()  # None on one core, where there is one part
    with one_blas_thread(blas):
        futures = [pool.submit(work, cuts[i], cuts[i + 1]) for i in range(1, parts)] if pool else []
        work(cuts[0], cuts[1])
        for f in futures:
            f.result()


def batched_matmul(nat: Any, a: Array, b: Array, out: Array | None) -> Array:
    """``nat.matmul(a, b, out=out)`` for ``a`` of shape ``(batch, m, k)`` or ``(m, k)`` and
    ``b`` of ``(batch, k, n)`` or ``(k, n)`` (NumPy): small products (:data:`SMALL_MACS`) by
    :func:`in_parts` (a single one on one BLAS thread, without a join)."""
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    if nat.__name__ != "numpy" or m * k * n >= SMALL_MACS:
        return nat.matmul(a, b, out=out)
    if b.ndim < 3:
        result: list[Array] = []
        in_parts(nat, 1, lambda lo, hi: result.append(nat.matmul(a, b, out=out)), m * k * n)
        return result[0]
    nb = b.shape[0]
    if out is None:
        out = nat.empty((nb, m, n), dtype=nat.result_type(a, b))
    target = out

    def part(lo: int, hi: int) -> None:
        nat.matmul(a[lo:hi] if a.ndim == 3 else a, b[lo:hi], out=target[lo:hi])

    in_parts(nat, nb, part, m * k * n)
    return out
