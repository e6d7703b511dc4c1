"""A compiled plan and its run loop: the records :func:`geon.execute.plan.compile_graph`
produces (:class:`Step`, :class:`Plan`), the :class:`Progress` a run reports, and how
:meth:`Plan.execute` runs them, one step after another or, for the Applications of one
operation, concurrently on the threads their work pays for (:func:`threads_for_group`, the
rule and the measurements behind it; DESIGN.md §7: logical and sharded runs).

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> from geon.execute.plan import compile_graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> plan = compile_graph(Graph.from_json(json.loads(text)), sharded=True)
>>> plan.groups  # its two Applications write disjoint halves: they may run at once
((0, 2),)

A :class:`Plan` is run with :meth:`Plan.execute` as many times as wanted; its arena is allocated on
the first run and reused (results leave as copies). A plan is not thread-safe.
"""

from __future__ import annotations

import functools
import math
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from geon.core.errors import ExecutionError, LimitError, quote
from geon.core.ops import CATALOGUE
from geon.execute.backend import Backend
from geon.execute.blas import blas_controller, blas_threads, one_blas_thread
from geon.execute.kernel_parts import argsort
from geon.execute.kernels import KernelFn
from geon.execute.limits import Limits
from geon.execute.memory import Buffer, MemoryPlan
from geon.execute.regions import Reader, TensorInfo

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["THREADED_MACS", "Plan", "Progress", "Step", "shard_workers", "threads_for_group"]

Array = Any


def shard_workers() -> int:
    """The most threads that run the Applications of one operation concurrently in a sharded
    run: ``GEON_SHARD_WORKERS`` (1 runs them one after another), default ``os.cpu_count()``.
    How many a group actually gets is :meth:`Plan.group_workers`."""
    return _workers_from_env() or max(1, os.cpu_count() or 1)


def _workers_from_env() -> int | None:
    """``GEON_SHARD_WORKERS`` as a thread count, or None where it is unset or blank."""
    raw = os.environ.get("GEON_SHARD_WORKERS")
    if raw is None or not raw.strip():
        return None
    try:
        n = int(raw)
    except ValueError:
        raise ExecutionError(
            f"GEON_SHARD_WORKERS is {quote(raw)}; expected a whole number of threads >= 1"
        ) from None
    if n < 1:
        raise ExecutionError(f"GEON_SHARD_WORKERS is {n}; expected a whole number >= 1")
    return n


THREADED_MACS = 2**22
"""Multiply-adds per Application below which a group runs on the calling thread whatever the
BLAS (:func:`threads_for_group`)."""


def threads_for_group(*, macs: int, applications: int, cores: int, blas_threads: int) -> int:
    """How many threads pay for a group of ``applications`` concurrent Applications, each
    doing at least ``macs`` multiply-adds (0 for kernels that are not matmuls), on ``cores``
    cores where BLAS runs a call on ``blas_threads`` threads.

    Threads pay only for matmuls large enough to amortise the hand-off, and only where BLAS
    is not already using the cores: then the group runs on ``min(cores, applications)``
    threads, BLAS limited to one thread each; otherwise on the calling thread.

    >>> threads_for_group(macs=0, applications=8, cores=2, blas_threads=1)  # elementwise
    1
    >>> threads_for_group(macs=2**28, applications=8, cores=2, blas_threads=1)
    2
    >>> threads_for_group(macs=2**28, applications=8, cores=2, blas_threads=2)  # BLAS has them
    1

    Measured on the shared 2-core machine (AMD EPYC, OpenBLAS 0.3.31 on 2 threads, float32;
    groups of 8 Applications; best of 5-30, interleaved; ``benchmarks/bench_sharded.py``):

    - handing a group to the pool costs about 100 us (8 empty tasks, ~12 us a task): 8 tiny
      elementwise Applications ran 2.5x-6x slower on 2 threads (64 to 8k elements each), and
      matmuls below :data:`THREADED_MACS` (a few hundred microseconds of single-threaded GEMM)
      stay on one thread for the same reason;
    - elementwise kernels are memory-bound and gained nothing from a second core at any size:
      2 threads / 1 thread = 1.28x, 1.09x, 1.03x, 1.01x at 64k, 262k, 1M, 4M elements an
      Application;
    - the 8-way MLP's 64-row GEMMs (268M-1G multiply-adds an Application), in a quiet moment
      (logical run 146 ms): one after another on two-threaded BLAS 1.19x and 1.24x the logical
      run, the same as hand-written 8-block NumPy (1.19x, 1.23x); as single-threaded GEMMs on
      2 threads 1.44x and 1.47x. With BLAS already on every core, a second level of threads
      only splits the cache and packs the weight twice at once. Under heavy load (5 on 2
      cores) the order flips (threads 0.59x-1.16x, sequential 1.5x-4.3x: a two-threaded GEMM
      waits on its slower thread); a rule from the work cannot see the load, and
      ``GEON_SHARD_WORKERS`` forces a count.
    """
    if macs < THREADED_MACS or blas_threads >= cores:
        return 1
    return min(cores, applications)


_POSITIONAL_MATMULS = ("op:linear", "matmul")  # x[..., K] @ y[K, N]: K is x's last dim


def _compute_bound(kernel_name: str) -> bool:
    """Whether a kernel is a matmul (named dot, conv2d's im2col, the loom matmuls): work that
    grows faster than the bytes it touches, so a second core pays."""
    if kernel_name in _POSITIONAL_MATMULS:
        return True
    found = CATALOGUE.get(kernel_name)
    return found is not None and found.family in ("dot", "conv")


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(size: int) -> ThreadPoolExecutor:
    """A process-wide pool of ``size`` threads (made once, reused by every plan)."""
    from concurrent.futures import ThreadPoolExecutor

    with _POOLS_LOCK:
        pool = _POOLS.get(size)
        if pool is None:
            pool = _POOLS[size] = ThreadPoolExecutor(size, thread_name_prefix="geon-shard")
        return pool


def _one_blas_thread() -> Any:
    """A context that limits BLAS to one thread while a group of Applications runs (each
    Application is one thread's work; nested BLAS threads would oversubscribe the cores)."""
    return one_blas_thread(blas_controller())


@dataclass(frozen=True, slots=True)
class Progress:
    """One finished step, as passed to ``on_progress`` (the Celery task forwards it live)."""

    done: int
    total: int
    phase: str
    operation_id: str
    application_id: str | None
    kernel: str
    seconds: float

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "done": self.done,
            "total": self.total,
            "fraction": round(self.fraction, 6),
            "phase": self.phase,
            "operationId": self.operation_id,
            "applicationId": self.application_id,
            "kernel": self.kernel,
            "seconds": self.seconds,
        }


@dataclass(frozen=True, slots=True)
class Step:
    """One unit of work: an operation, or one Application of it in a sharded plan."""

    operation_id: str
    application_id: str | None
    kernel: str
    fn: KernelFn
    reads: tuple[Reader, ...]
    out: int
    out_index: tuple[slice, ...] | None  # None: the whole tensor
    alias: bool
    zero: tuple[int, ...] = ()
    read_tensors: tuple[int, ...] = ()
    reads_for: str | None = None  # the operation whose reads these are (a contraction's multiply)


@dataclass
class Plan:
    """A compiled graph: run it with :meth:`execute`."""

    graph_id: str
    sharded: bool
    backend: Backend
    tensors: tuple[TensorInfo, ...]
    steps: tuple[Step, ...]
    inputs: tuple[int, ...]
    constants: dict[int, Any]
    keep: tuple[int, ...]
    arena_tensors: tuple[tuple[int, int], ...]  # (tensor index, slot index)
    buffers: tuple[Buffer, ...]  # what the memory planner was given (keys: tensor indexes)
    alias_of: dict[int, int]  # view tensor -> the tensor it views
    memory: MemoryPlan
    limits: Limits
    groups: tuple[tuple[int, int], ...] = ()  # [first, stop) step ranges that may run together
    initial: dict[int, dict[str, Any]] = field(default_factory=dict)  # variable -> its init rule
    # arena tensors stored in another order of their dims: storage dim i is the tensor's dim
    # order[i] (storage.choose_layouts); the tensor is a strided view of its slot
    layouts: dict[int, tuple[int, ...]] = field(default_factory=dict)
    _bound: list[Array] | None = None
    _group_macs: dict[tuple[int, int], int] = field(default_factory=dict)

    @property
    def input_bytes(self) -> int:
        return sum(self.tensors[i].nbytes for i in (*self.inputs, *self.constants))

    @property
    def planned_bytes(self) -> int:
        """Arena plus inputs and constants: what a run holds at its peak."""
        return self.memory.planned_peak_bytes + self.input_bytes

    def tensor(self, tensor_id: str) -> TensorInfo:
        """The tensor with id ``tensor_id``."""
        for t in self.tensors:
            if t.id == tensor_id:
                return t
        raise ExecutionError(f"tensor {quote(tensor_id)} is not in the plan")

    def group_workers(self, first: int, stop: int) -> int:
        """How many threads run the group of Applications ``[first, stop)``:
        ``GEON_SHARD_WORKERS`` where it is set (capped by the group's size); one on CuPy (every
        kernel goes to one stream); otherwise :func:`threads_for_group` of the group's smallest
        :meth:`step_macs`, the CPU count and the BLAS's threads."""
        return self._threads(first, stop, _workers_from_env(), blas_threads)

    def _threads_of_groups(self) -> dict[int, int]:
        """:meth:`group_workers` of every group, by its first step, reading the environment and
        asking the BLAS once for the run."""
        forced = _workers_from_env()
        blas = functools.cache(blas_threads)
        return {first: self._threads(first, stop, forced, blas) for first, stop in self.groups}

    def _threads(
        self, first: int, stop: int, forced: int | None, blas_threads: Callable[[], int]
    ) -> int:
        apps = stop - first
        if self.backend.name == "cupy":
            return 1
        if forced is not None:
            return min(forced, apps)
        macs = self._group_macs.get((first, stop))
        if macs is None:  # a fact of the compiled plan: counted once
            macs = min(self.step_macs(st) for st in self.steps[first:stop])
            self._group_macs[(first, stop)] = macs
        return threads_for_group(
            macs=macs, applications=apps, cores=shard_workers(), blas_threads=blas_threads()
        )

    def step_macs(self, st: Step) -> int:
        """The multiply-adds of a matmul step (elements it writes x the contraction's length);
        0 for every other kernel, whose work is memory-bound."""
        if not _compute_bound(st.kernel) or not st.read_tensors:
            return 0
        out = self.tensors[st.out]
        written = (
            out.size if st.out_index is None else math.prod(s.stop - s.start for s in st.out_index)
        )
        return written * self._contraction(st)

    def _contraction(self, st: Step) -> int:
        """The length of a matmul step's contraction: a loom matmul's first operand's last dim;
        for a named dot or conv2d, the sizes of the last operand's axes that the output lacks
        (the paired axes of a dot, a filter's channel and window axes)."""
        if st.kernel in _POSITIONAL_MATMULS:
            shape = self.tensors[st.read_tensors[0]].shape
            return shape[-1] if shape else 1
        out, last = self.tensors[st.out], self.tensors[st.read_tensors[-1]]
        kept = set(out.axes or ())
        return math.prod(
            n for a, n in zip(last.axes or (), last.shape, strict=False) if a not in kept
        )

    def _bind(self) -> list[Array]:
        """The arena's slots and a view of its slot for every arena tensor (first run only)."""
        if self._bound is None:
            be = self.backend
            slots = [be.empty(s.size, be.dtype(s.dtype)) for s in self.memory.slots]
            bound: list[Array] = [None] * len(self.tensors)
            for t, s in self.arena_tensors:
                info = self.tensors[t]
                order = self.layouts.get(t)
                if order is None:
                    bound[t] = be.xp.reshape(slots[s][: info.size], info.shape)
                else:
                    stored = be.xp.reshape(slots[s][: info.size], [info.shape[d] for d in order])
                    bound[t] = be.xp.permute_dims(stored, argsort(order))
            self._bound = bound
        return list(self._bound)

    def execute(
        self,
        inputs: Mapping[int, Array],
        *,
        on_progress: Callable[[Progress], None] | None = None,
        phase: str = "logical",
        timings: dict[str, dict[str, float]] | None = None,
        deadline: float | None = None,
    ) -> dict[int, Array]:
        """Run once on backend arrays (by tensor index; every input must be there) and return
        the kept tensors, still on the backend (the caller copies them to the host).

        ``timings`` collects seconds per operation (``"operations"``) and per Application
        (``"applications"``); ``deadline`` is a ``time.perf_counter()`` value after which the
        run stops with :class:`LimitError`."""
        values = self._bind()
        for t, v in inputs.items():
            values[t] = v
        for t, v in self.constants.items():
            values[t] = v
        strict = self.backend.native is None
        per_op = timings.setdefault("operations", {}) if timings is not None else None
        per_app = timings.setdefault("applications", {}) if timings is not None else None
        with np.errstate(all="ignore"):
            self._loop(values, strict, per_op, per_app, on_progress, phase, deadline)
        return {t: values[t] for t in self.keep}

    def _loop(
        self,
        values: list[Array],
        strict: bool,
        per_op: dict[str, float] | None,
        per_app: dict[str, float] | None,
        on_progress: Callable[[Progress], None] | None,
        phase: str,
        deadline: float | None,
    ) -> None:
        total = len(self.steps)
        clock = time.perf_counter
        workers = self._threads_of_groups()
        groups = {first: stop for first, stop in self.groups if workers[first] > 1}

        def finished(n: int, st: Step, took: float) -> None:
            if per_app is not None and st.application_id is not None:
                per_app[st.application_id] = took
            if on_progress is not None:
                on_progress(
                    Progress(n, total, phase, st.operation_id, st.application_id, st.kernel, took)
                )

        n = 0
        while n < total:
            stop = groups.get(n, n + 1)
            began = clock()
            if stop == n + 1:
                st = self.steps[n]
                _apply(st, values, strict, zero=True)
                tooks = [clock() - began]
            else:
                tooks = self._concurrent(n, stop, values, strict, workers[n])
            if per_op is not None:
                op = self.steps[n].operation_id
                per_op[op] = per_op.get(op, 0.0) + (tooks[0] if stop == n + 1 else clock() - began)
            for k, took in enumerate(tooks):
                finished(n + k + 1, self.steps[n + k], took)
            n = stop
            if deadline is not None and clock() > deadline:
                st = self.steps[n - 1]
                what = (
                    f"application {quote(st.application_id)} of operation {quote(st.operation_id)}"
                    if st.application_id
                    else f"operation {quote(st.operation_id)}"
                )
                raise LimitError(
                    f"the run passed its time limit of {self.limits.max_seconds:g} s after "
                    f"{what} (step {n} of {total}); raise GEON_MAX_SECONDS to allow longer runs"
                )

    def _concurrent(
        self, first: int, stop: int, values: list[Array], strict: bool, workers: int
    ) -> list[float]:
        """Run steps ``[first, stop)`` (the Applications of one operation, writing disjoint
        regions of one tensor) on ``workers`` threads, BLAS limited to one thread meanwhile;
        returns each step's seconds, measured in its thread. Zeroing happens first, here."""
        from concurrent.futures import wait

        steps = self.steps[first:stop]
        for st in steps:
            for z in st.zero:
                values[z][...] = 0

        def timed(st: Step) -> float:
            began = time.perf_counter()
            with np.errstate(all="ignore"):
                _apply(st, values, strict, zero=False)
            return time.perf_counter() - began

        pool = _pool(workers)
        with _one_blas_thread():
            futures = [pool.submit(timed, st) for st in steps]
            wait(futures)
        return [f.result() for f in futures]  # the first failure, in step order, raises


def _apply(st: Step, values: list[Array], strict: bool, *, zero: bool) -> None:
    """One step: zero what it asks, read its regions, run its kernel into its output region."""
    if zero:
        for z in st.zero:
            values[z][...] = 0
    args = [r(values) for r in st.reads]
    if st.alias:
        values[st.out] = st.fn(args, None)
    elif st.out_index is None:
        st.fn(args, values[st.out])
    elif strict:
        values[st.out][st.out_index] = st.fn(args, None)
    else:
        st.fn(args, values[st.out][st.out_index])
