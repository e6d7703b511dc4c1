"""Batched products on NumPy (issue #34): small products in parts on one BLAS thread each, one
small product on one thread, large ones as NumPy runs them; each equals NumPy's own ``matmul``
(the oracle), into a given output or a new one, from the calling thread or a geon worker."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_info

from geon.execute.blas import SMALL_MACS, batched_matmul, one_blas_thread


def _blas_threads() -> int:
    return max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=1)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((7, 5, 3), (7, 3, 4)), ((5, 3), (7, 3, 4)), ((2, 9, 8), (2, 8, 6)), ((9, 8), (8, 6))],
    ids=["batch-of-7", "shared-left", "batch-of-2", "one-product"],
)
@pytest.mark.parametrize("into", [True, False], ids=["into-out", "new"])
def test_small_products_equal_numpys_matmul(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...], into: bool
) -> None:
    # given float32 operands whose products are far below SMALL_MACS
    rng = np.random.default_rng(1)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    want = np.matmul(a, b)
    before = _blas_threads()
    # when multiplied by batched_matmul
    out = np.full(want.shape, np.nan, np.float32) if into else None
    got = batched_matmul(np, a, b, out)
    # then it equals NumPy's product, written where asked, and the BLAS keeps its threads
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert got is out if into else got.shape == want.shape
    assert _blas_threads() == before


def test_a_large_product_and_a_worker_thread_run_as_numpy_does() -> None:
    # given a product of SMALL_MACS multiply-adds (256 x 256 x 256)
    assert SMALL_MACS <= 256**3
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((2, 256, 256)) for _ in range(2))
    np.testing.assert_allclose(batched_matmul(np, a, b, None), np.matmul(a, b), rtol=1e-12)
    # and small products asked from a geon worker thread (a sharded run's concurrent group)
    small_a, small_b = a[:, :4, :5], b[:, :5, :3]
    with ThreadPoolExecutor(1, thread_name_prefix="geon-shard") as pool:
        got = pool.submit(batched_matmul, np, small_a, small_b, None).result()
    np.testing.assert_allclose(got, np.matmul(small_a, small_b), rtol=1e-12)


def test_overlapping_one_thread_sections_give_the_blas_its_threads_back() -> None:
    # given the BLAS on more than one thread (a one-threaded BLAS has nothing to restore)
    before = _blas_threads()
    assert before > 1, "the BLAS runs on one thread here: set OPENBLAS_NUM_THREADS=2 or more"
    blas = ThreadpoolController()
    first, second = one_blas_thread(blas), one_blas_thread(blas)
    # when two callers' one-thread sections overlap, the first leaving while the second is
    # inside (two threads of a web process: the interleaving a race produces)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    inside = _blas_threads()
    second.__exit__(None, None, None)
    # then the BLAS stays on one thread while anyone is inside, and gets its threads back
    # when the last leaves (each saving and restoring on its own left it at one for good)
    assert (inside, _blas_threads()) == (1, before)
