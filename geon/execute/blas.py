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
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

__all__ = ["SMALL_MACS", "batched_matmul", "blas_controller", "blas_threads", "one_blas_thread"]

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


def batched_matmul(nat: Any, a: Array, b: Array, out: Array | None) -> Array:
    """``nat.matmul(a, b, out=out)`` for ``a`` of shape ``(batch, m, k)`` or ``(m, k)`` and
    ``b`` of ``(batch, k, n)`` or ``(k, n)`` (NumPy): when the products are small
    (:data:`SMALL_MACS`) and the BLAS has more than one thread, a batch in parts on one BLAS
    thread each, a single product on one thread (inside a sharded run's concurrent group BLAS
    has one already: the product runs as is)."""
    nb = b.shape[0] if b.ndim == 3 else 1
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    if nat.__name__ != "numpy" or m * k * n >= SMALL_MACS:
        return nat.matmul(a, b, out=out)
    blas = blas_controller()
    if blas_threads() <= 1 or threading.current_thread().name.startswith("geon-"):
        return nat.matmul(a, b, out=out)
    if nb < 2:  # one small product: one thread does it, without a join
        with one_blas_thread(blas):
            return nat.matmul(a, b, out=out)
    if out is None:
        out = nat.empty((nb, m, n), dtype=nat.result_type(a, b))
    parts = min(_CORES, nb)
    cuts = [nb * i // parts for i in range(parts + 1)]

    def part(i: int) -> None:
        s, e = cuts[i], cuts[i + 1]
        nat.matmul(a[s:e] if a.ndim == 3 else a, b[s:e], out=out[s:e])

    with one_blas_thread(blas):
        pool = _parts_pool()
        futures = [pool.submit(part, i) for i in range(1, parts)] if pool is not None else []
        part(0)
        for f in futures:
            f.result()
    return out
