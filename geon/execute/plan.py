"""Compiling a graph into a plan: the schedule, the lowered kernels and the memory plan.

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> plan = compile_graph(Graph.from_json(json.loads(text)), sharded=True)
>>> [(s.kernel, s.application_id is not None) for s in plan.steps]
[('op:add', True), ('op:add', True)]

:func:`compile_graph` does every piece of bookkeeping once per graph:

- the **schedule**: operations in topological order (an operation runs after every operation
  writing a tensor it reads; document order breaks ties); in a sharded plan an operation with
  Applications contributes one step per Application, in document order;
- the **regions** each step reads and writes. A tensor is stored as an array of its range's shape,
  so a selection ``[205:210, 50:55]`` of a tensor at ``[200:210, 50:55]`` is the slice
  ``[5:10, 0:5]`` of its array. A named operation's regions are the projections of its index
  range (the whole range in a logical run, the Application's ``IPFIndex`` in a sharded one)
  through the projections :func:`geon.core.ops.infer` derives from the axes; regions of pad and
  conv2d may extend past the tensor and read zeros there (their padding), which is how a conv
  shard reads its halo. Positional (loom) operations read and write their selections;
- the **kernel** of every step (:mod:`geon.execute.kernels`), lowered for the step's shapes;
- the **storage** of every computed tensor: a zero-copy *view* of its operand (cast_axes,
  broadcast, dimshuffle, transpose, slice, flatten, unflatten, in a logical run) or a slot of the
  arena planned by :func:`geon.execute.memory.plan_memory` (in place where an elementwise op
  reads an operand for the last time with the result's layout and dtype);
- the **limits**: every tensor's element count and the planned bytes, before anything is
  allocated.

A :class:`Plan` is run with :meth:`Plan.execute` as many times as wanted; its arena is allocated on
the first run and reused (results leave as copies). A plan is not thread-safe.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from geon.core.axes import Axes, Axis, Ref
from geon.core.constraints import parse_range
from geon.core.errors import ExecutionError, GeonError, LimitError
from geon.core.graph import (
    AXIS,
    IPF_INDEX,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    Graph,
    Node,
    iter_selections,
)
from geon.core.limits import show_int
from geon.core.ops import CATALOGUE, Dim, Inference, infer
from geon.core.sharding import DTYPE_BYTES
from geon.execute.backend import Backend, select_backend
from geon.execute.kernels import ELEMENTWISE_FAMILIES, KernelFn, lower_named, lower_positional
from geon.execute.limits import Limits, format_bytes
from geon.execute.memory import Buffer, MemoryPlan, plan_memory

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["Plan", "Progress", "Step", "TensorInfo", "compile_graph", "shard_workers"]

Array = Any
Box = tuple[tuple[int, ...], tuple[int, ...]]  # (start, end), absolute
_VIEW_KERNELS = (
    "op:cast_axes",
    "op:broadcast",
    "op:dimshuffle",
    "op:transpose",
    "op:slice",
    "op:flatten",
    "op:unflatten",
)
_ZERO_FILL = ("op:pad", "op:conv2d")


def shard_workers() -> int:
    """How many threads run the Applications of one operation concurrently in a sharded run:
    ``GEON_SHARD_WORKERS`` (1 runs them one after another), default ``os.cpu_count()``."""
    raw = os.environ.get("GEON_SHARD_WORKERS")
    if raw is None or not raw.strip():
        return max(1, os.cpu_count() or 1)
    try:
        n = int(raw)
    except ValueError:
        raise ExecutionError(
            f"GEON_SHARD_WORKERS is {_q(raw)}; expected a whole number of threads >= 1"
        ) from None
    if n < 1:
        raise ExecutionError(f"GEON_SHARD_WORKERS is {n}; expected a whole number >= 1")
    return n


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
_BLAS: list[Any] = []


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
    with _POOLS_LOCK:
        if not _BLAS:
            from threadpoolctl import ThreadpoolController

            _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


def _q(value: Any) -> str:
    return f'"{value}"'


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """A Tensor node as the executor sees it."""

    index: int
    id: str
    label: str | None
    dtype: str
    start: tuple[int, ...]
    shape: tuple[int, ...]
    axes: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        """How messages name it: the label, else the id."""
        return self.label or self.id

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * DTYPE_BYTES[self.dtype]

    @property
    def box(self) -> Box:
        """The tensor's own range."""
        return self.start, tuple(s + n for s, n in zip(self.start, self.shape, strict=True))

    def local(self, box: Box) -> tuple[slice, ...]:
        """The slices of this tensor's array that hold the absolute region ``box``."""
        return tuple(
            slice(a - s, b - s) for a, b, s in zip(box[0], box[1], self.start, strict=True)
        )

    def covers(self, box: Box) -> bool:
        return all(
            s <= a and b <= s + n
            for a, b, s, n in zip(box[0], box[1], self.start, self.shape, strict=True)
        )


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


Reader = Callable[[list[Any]], Array]


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


@dataclass(slots=True)
class _Unit:
    op: Node
    app: Node | None
    kernel: str
    inf: Inference | None
    index: tuple[tuple[int, ...], tuple[int, ...]] | None
    reads: list[tuple[str, int, Box]]  # (io key, tensor index, absolute region)
    out: tuple[int, Box]
    local: dict[str, Any] = field(default_factory=dict)


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
    _bound: list[Array] | None = None

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
        raise ExecutionError(f"tensor {_q(tensor_id)} is not in the plan")

    def _bind(self) -> list[Array]:
        """The arena's slots and a view of its slot for every arena tensor (first run only)."""
        if self._bound is None:
            be = self.backend
            slots = [be.empty(s.size, be.dtype(s.dtype)) for s in self.memory.slots]
            bound: list[Array] = [None] * len(self.tensors)
            for t, s in self.arena_tensors:
                info = self.tensors[t]
                bound[t] = be.xp.reshape(slots[s][: info.size], info.shape)
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
        # CuPy queues every kernel on one stream: threads would only interleave the launches.
        workers = shard_workers() if self.groups and self.backend.name != "cupy" else 1
        groups = dict(self.groups) if workers > 1 else {}

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
                tooks = self._concurrent(n, stop, values, strict, min(workers, stop - n))
            if per_op is not None:
                op = self.steps[n].operation_id
                per_op[op] = per_op.get(op, 0.0) + (tooks[0] if stop == n + 1 else clock() - began)
            for k, took in enumerate(tooks):
                finished(n + k + 1, self.steps[n + k], took)
            n = stop
            if deadline is not None and clock() > deadline:
                st = self.steps[n - 1]
                what = (
                    f"application {_q(st.application_id)} of operation {_q(st.operation_id)}"
                    if st.application_id
                    else f"operation {_q(st.operation_id)}"
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


# ------------------------------------------------------------------------------------------
# Compiling


def compile_graph(
    graph: Graph,
    *,
    sharded: bool = False,
    backend: str | Backend | None = None,
    limits: Limits | None = None,
    keep: Sequence[str] | None = None,
) -> Plan:
    """Compile ``graph`` for logical or sharded runs on ``backend``.

    ``keep`` names the tensors (ids) a run returns; default every tensor that no operation reads.
    Raises :class:`ExecutionError` for graphs that cannot run and :class:`LimitError`, before
    anything is allocated, for runs over ``limits`` (default :meth:`Limits.from_env`)."""
    be = select_backend(backend)
    lim = limits if limits is not None else Limits.from_env()
    return _Compiler(graph, be, lim, sharded).compile(keep)


class _Compiler:
    def __init__(self, graph: Graph, be: Backend, limits: Limits, sharded: bool) -> None:
        self.graph = graph
        self.be = be
        self.limits = limits
        self.sharded = sharded
        self.tensors: list[TensorInfo] = []
        self.by_id: dict[str, TensorInfo] = {}
        self.nodes: dict[str, Node] = {}
        self.declared: dict[str, Axis] = {}
        self.bound: dict[str, int] = {}
        self._axes_memo: dict[int, Axes | None] = {}

    # --- tensors and axes -----------------------------------------------------------------

    def _load_tensors(self) -> None:
        for node in self.graph.of_type(TENSOR):
            dtype = node.body.get("dtype")
            if dtype not in DTYPE_BYTES:
                raise ExecutionError(
                    f"tensor {_q(node.label or node.id)} has dtype {_q(dtype)}; expected one of "
                    f"({', '.join(_q(d) for d in DTYPE_BYTES)})"
                )
            r = parse_range(node.body.get("range"))
            if r is None:
                raise ExecutionError(
                    f"tensor {_q(node.label or node.id)} has no valid range; expected "
                    '{"start": [...], "end": [...]} with start <= end'
                )
            names = self._axis_names(node)
            info = TensorInfo(
                len(self.tensors),
                node.id,
                node.label,
                str(dtype),
                r.start,
                tuple(r.shape),
                tuple(names) if names is not None else None,
            )
            if info.size > self.limits.max_elements:
                raise LimitError(
                    f"tensor {_q(info.name)} has {show_int(info.size)} elements; the limit is "
                    f"{self.limits.max_elements} elements per tensor (GEON_MAX_ELEMENTS)"
                )
            self.tensors.append(info)
            self.by_id[node.id] = info
            self.nodes[node.id] = node
        for node in self.graph.of_type(AXIS):
            try:
                axis = Axis.from_json(node.body)
            except GeonError as exc:
                raise ExecutionError(f"axis node {_q(node.id)} is invalid: {exc}") from None
            self.declared[axis.name] = axis
        for info in self.tensors:
            names = self._axis_names(self.nodes[info.id])
            if names is not None and len(names) == len(info.shape):
                for name, n in zip(names, info.shape, strict=True):
                    self.bound.setdefault(name, n)

    @staticmethod
    def _axis_names(node: Node) -> list[str] | None:
        tag = node.tags.get(TENSOR_AXES) if node.tags else None
        axes = tag.get("axes") if isinstance(tag, dict) else None
        return [str(a) for a in axes] if isinstance(axes, list) else None

    def _axes(self, info: TensorInfo) -> Axes | None:
        if info.index in self._axes_memo:
            return self._axes_memo[info.index]
        names = self._axis_names(self.nodes[info.id])
        found = None
        if names is not None:
            try:
                found = Axes.parse(names, self.declared)
            except GeonError as exc:
                raise ExecutionError(
                    f"tensor {_q(info.name)} has invalid TensorAxes: {exc}"
                ) from None
        self._axes_memo[info.index] = found
        return found

    def _length(self, ref: Ref) -> int:
        if ref.length is not None:
            return ref.length
        found = self.bound.get(str(ref))
        if found is None:
            raise ExecutionError(
                f'axis "{ref}" has no length and no tensor binds it; declare its length'
            )
        return found

    # --- schedule -------------------------------------------------------------------------

    def _schedule(self, ops: list[Node]) -> list[Node]:
        writers: dict[str, list[int]] = {}
        for n, op in enumerate(ops):
            for sel in iter_selections(op.body, ("outputs",)):
                writers.setdefault(str(sel.tensor_id), []).append(n)
        after: list[set[int]] = [set() for _ in ops]
        for n, op in enumerate(ops):
            for sel in iter_selections(op.body, ("inputs",)):
                after[n].update(w for w in writers.get(str(sel.tensor_id), ()) if w != n)
            for sel in iter_selections(op.body, ("inputs",)):
                if sel.tensor_id in writers and n in writers[str(sel.tensor_id)]:
                    raise ExecutionError(
                        f"operation {_q(op.id)} reads tensor {_q(sel.tensor_id)} that it writes; "
                        "write the result to a new tensor"
                    )
        order: list[int] = []
        done: set[int] = set()
        while len(order) < len(ops):
            ready = [n for n in range(len(ops)) if n not in done and after[n] <= done]
            if not ready:
                stuck = [ops[n].id for n in range(len(ops)) if n not in done]
                raise ExecutionError(
                    f"operations ({', '.join(_q(i) for i in stuck)}) wait on each other (a "
                    "cycle); remove the cycle (geon check reports NoTensorOperationCycles)"
                )
            for n in ready:
                order.append(n)
                done.add(n)
        return [ops[n] for n in order]

    # --- units ----------------------------------------------------------------------------

    def _tensor(self, tid: Any, op: Node, where: str) -> TensorInfo:
        info = self.by_id.get(tid) if isinstance(tid, str) else None
        if info is None:
            raise ExecutionError(
                f"operation {_q(op.id)} {where} references tensor {_q(tid)}, which does not "
                "exist; expected the id of a Tensor node"
            )
        return info

    def _units(self, op: Node) -> list[_Unit]:
        kname = op.body.get("kernel")
        if not isinstance(kname, str) or kname not in CATALOGUE:
            raise ExecutionError(
                f"operation {_q(op.id)} has kernel {_q(kname)}, which the executor does not "
                'implement; expected a catalogue kernel such as "op:add"'
            )
        apps = self.graph.index.applications_of(op.id) if self.sharded else []
        ins = list(iter_selections(op.body, ("inputs",)))
        outs = list(iter_selections(op.body, ("outputs",)))
        if len(outs) != 1 or outs[0].key != "result":
            raise ExecutionError(
                f"operation {_q(op.id)} writes {len(outs)} selections; expected exactly one, "
                '"result"'
            )
        in_infos = [self._tensor(s.tensor_id, op, f"input {_q(s.key)}") for s in ins]
        out_info = self._tensor(outs[0].tensor_id, op, 'output "result"')
        axes = [self._axes(i) for i in in_infos]
        out_axes = self._axes(out_info)
        named = CATALOGUE[kname].named and all(a is not None for a in axes)
        positional = not named
        if named and out_axes is None:
            positional = True
        if positional:
            return self._positional_units(op, kname, ins, outs[0], in_infos, out_info, apps)
        grouped: dict[str, list[Axes]] = {}
        for s, a in zip(ins, axes, strict=True):
            assert a is not None
            grouped.setdefault(s.key, []).append(a)
        try:
            inf = infer(kname, grouped, op.body.get("params"), self.declared)
        except GeonError as exc:
            raise ExecutionError(f"operation {_q(op.id)} ({kname}): {exc}") from None
        if out_axes is not None and set(out_axes) != set(inf.result):
            raise ExecutionError(
                f"operation {_q(op.id)} ({kname}) writes tensor {_q(out_info.name)} with axes "
                f"{out_axes}; the kernel infers {inf.result} (geon check reports "
                "OperationAxesInference)"
            )
        if out_axes is not None and list(out_axes) != list(inf.result):
            raise ExecutionError(
                f"operation {_q(op.id)} ({kname}) writes tensor {_q(out_info.name)} with axes "
                f"{out_axes} in another order than the inferred {inf.result}; add a dimshuffle"
            )
        full = tuple(self._length(r) for r in inf.index)
        ranges: list[tuple[Node | None, tuple[tuple[int, ...], tuple[int, ...]]]] = []
        if apps:
            for app in apps:
                r = parse_range(app.tags.get(IPF_INDEX) if app.tags else None)
                if r is None or r.rank != len(full):
                    raise ExecutionError(
                        f"application {_q(app.id)} of operation {_q(op.id)} has no valid "
                        f"IPFIndex of rank {len(full)}; shard the operation again"
                    )
                ranges.append((app, (r.start, r.end)))
        else:
            ranges.append((None, ((0,) * len(full), full)))
        units = []
        keys = [s.key for s in ins]
        for unit_app, index in ranges:
            reads: list[tuple[str, int, Box]] = []
            pos: dict[str, int] = {}
            for key, info in zip(keys, in_infos, strict=True):
                p = pos.get(key, 0)
                pos[key] = p + 1
                box = self._project(inf.operand_dims(key, p), info, index)
                reads.append((key, info.index, box))
            out_box = self._project(inf.operand_dims("result"), out_info, index)
            unit = _Unit(op, unit_app, kname, inf, index, reads, (out_info.index, out_box))
            if kname == "op:slice":
                unit.local["slices"] = self._local_slices(inf, index, reads[0][2], in_infos[0])
            units.append(unit)
        return units

    def _project(self, dims: Sequence[Dim], info: TensorInfo, index: Box) -> Box:
        """The absolute region a tensor's dims read for the index range ``index``."""
        a, b = index
        start: list[int] = []
        end: list[int] = []
        for d, dim in enumerate(dims):
            lo = hi = info.start[d] + dim.offset
            terms = list(dim.terms)
            stride = 1
            for col, part in reversed(dim.merged):
                terms.append((col, stride))
                stride *= self._length(part)
            for col, coef in terms:
                if b[col] <= a[col]:
                    continue
                lo += min(coef * a[col], coef * (b[col] - 1))
                hi += max(coef * a[col], coef * (b[col] - 1))
            if terms:
                ext = dim.extent if isinstance(dim.extent, int) else self._length(dim.extent)
            else:
                ext = dim.extent if isinstance(dim.extent, int) else info.shape[d]
            start.append(lo)
            end.append(hi + ext)
        return tuple(start), tuple(end)

    def _local_slices(
        self, inf: Inference, index: Box, region: Box, info: TensorInfo
    ) -> list[int | slice]:
        """A slice's index within the region it reads for ``index``."""
        a, b = index
        out: list[int | slice] = []
        for d, dim in enumerate(inf.operand_dims("tensor")):
            if not dim.terms:
                out.append(0)
                continue
            col, coef = dim.terms[0]
            n = b[col] - a[col]
            first = info.start[d] + dim.offset + coef * a[col] - region[0][d]
            stop = first + coef * (n - 1) + (1 if coef > 0 else -1)
            out.append(slice(first, stop if stop >= 0 else None, coef))
        return out

    def _positional_units(
        self,
        op: Node,
        kname: str,
        ins: list[Any],
        out_sel: Any,
        in_infos: list[TensorInfo],
        out_info: TensorInfo,
        apps: list[Node],
    ) -> list[_Unit]:
        if CATALOGUE[kname].named and CATALOGUE[kname].family not in ELEMENTWISE_FAMILIES:
            missing = [i.name for i in (*in_infos, out_info) if self._axes(i) is None]
            raise ExecutionError(
                f"operation {_q(op.id)} ({kname}) needs named axes, but tensor {_q(missing[0])} "
                "has no TensorAxes; tag every tensor it reads and writes with its axes"
            )
        sources: list[tuple[Node | None, Any]] = [(a, a.body) for a in apps] or [(None, op.body)]
        units = []
        for app, body in sources:
            reads: list[tuple[str, int, Box]] = []
            sels = list(iter_selections(body, ("inputs",)))
            if len(sels) != len(ins):
                raise ExecutionError(
                    f"application {_q(app.id if app else op.id)} reads {len(sels)} selections; "
                    f"its operation reads {len(ins)}"
                )
            for s in sels:
                info = self._tensor(s.tensor_id, op, f"input {_q(s.key)}")
                reads.append((s.key, info.index, self._box(s.range, info, op)))
            outs = list(iter_selections(body, ("outputs",)))
            if len(outs) != 1:
                raise ExecutionError(
                    f"application {_q(app.id if app else op.id)} writes {len(outs)} selections; "
                    "expected exactly one"
                )
            info = self._tensor(outs[0].tensor_id, op, 'output "result"')
            units.append(
                _Unit(
                    op,
                    app,
                    kname,
                    None,
                    None,
                    reads,
                    (info.index, self._box(outs[0].range, info, op)),
                )
            )
        return units

    @staticmethod
    def _box(data: Any, info: TensorInfo, op: Node) -> Box:
        r = parse_range(data)
        if r is None or r.rank != len(info.shape):
            raise ExecutionError(
                f"operation {_q(op.id)} selects {_q(data)} of tensor {_q(info.name)}; expected a "
                f"range of rank {len(info.shape)}"
            )
        return r.start, r.end

    # --- lowering -------------------------------------------------------------------------

    def _reader(self, unit: _Unit, key: str, t: int, box: Box) -> Reader:
        info = self.tensors[t]
        shape = tuple(b - a for a, b in zip(box[0], box[1], strict=True))
        if info.covers(box):
            if shape == info.shape:
                return lambda values: values[t]
            idx = info.local(box)
            return lambda values: values[t][idx]
        if unit.kernel not in _ZERO_FILL:
            raise ExecutionError(
                f"{self._who(unit)} reads {_fmt(box)} of tensor {_q(info.name)}, which lies at "
                f"{_fmt(info.box)}; expected a region inside the tensor"
            )
        inner_lo = tuple(max(a, s) for a, s in zip(box[0], info.start, strict=True))
        inner_hi = tuple(
            max(lo, min(b, s + n))
            for lo, b, s, n in zip(inner_lo, box[1], info.start, info.shape, strict=True)
        )
        src = info.local((inner_lo, inner_hi))
        dst = tuple(
            slice(lo - a, hi - a) for lo, hi, a in zip(inner_lo, inner_hi, box[0], strict=True)
        )
        xp = self.be.xp
        dtype = self.be.dtype(info.dtype)

        def padded(values: list[Any]) -> Array:
            z = xp.zeros(shape, dtype=dtype)
            z[dst] = values[t][src]
            return z

        return padded

    @staticmethod
    def _who(unit: _Unit) -> str:
        if unit.app is not None:
            return f"application {_q(unit.app.id)} of operation {_q(unit.op.id)}"
        return f"operation {_q(unit.op.id)}"

    def _lower(self, unit: _Unit) -> KernelFn:
        shapes = [
            tuple(b - a for a, b in zip(box[0], box[1], strict=True)) for _, _, box in unit.reads
        ]
        t, box = unit.out
        out_shape = tuple(b - a for a, b in zip(box[0], box[1], strict=True))
        out_dtype = self.tensors[t].dtype
        in_dtypes = [self.tensors[i].dtype for _, i, _ in unit.reads]
        try:
            if unit.inf is not None:
                return lower_named(
                    self.be, unit.inf, shapes, out_shape, out_dtype, in_dtypes, unit.local
                )
            grouped: dict[str, list[tuple[int, ...]]] = {}
            for (key, _, _), shape in zip(unit.reads, shapes, strict=True):
                grouped.setdefault(key, []).append(shape)
            return lower_positional(self.be, unit.kernel, grouped, out_shape, out_dtype, in_dtypes)
        except ExecutionError as exc:
            raise ExecutionError(f"{self._who(unit)}: {exc}") from None

    # --- the whole plan -------------------------------------------------------------------

    def compile(self, keep_ids: Sequence[str] | None) -> Plan:
        self._load_tensors()
        ops = self._schedule(self.graph.of_type(OPERATION))
        units_by_op = [self._units(op) for op in ops]
        units = [u for us in units_by_op for u in us]
        written: dict[int, list[int]] = {}
        read_at: dict[int, list[int]] = {}
        for n, u in enumerate(units):
            written.setdefault(u.out[0], []).append(n)
            for _, t, _ in u.reads:
                read_at.setdefault(t, []).append(n)
        for u in units:
            info = self.tensors[u.out[0]]
            if not info.covers(u.out[1]):
                raise ExecutionError(
                    f"{self._who(u)} writes {_fmt(u.out[1])} of tensor {_q(info.name)}, which "
                    "lies outside the tensor's range; expected a region inside it"
                )
        from geon.core.builder import CONSTANT, decode_constant, numpy_dtype

        inputs: list[int] = []
        constants: dict[int, Any] = {}
        for info in self.tensors:
            if info.index in written:
                continue
            node = self.nodes[info.id]
            if node.tags and node.tags.get(CONSTANT) is not None:
                try:
                    host = decode_constant(node.tags[CONSTANT], info.dtype, info.shape)
                except GeonError as exc:
                    raise ExecutionError(f"constant {_q(info.name)}: {exc}") from None
                constants[info.index] = self.be.asarray(host.astype(numpy_dtype(info.dtype)))
            else:
                inputs.append(info.index)
        if keep_ids is None:
            keep = [i.index for i in self.tensors if i.index not in read_at]
        else:
            keep = []
            for tid in keep_ids:
                if tid not in self.by_id:
                    raise ExecutionError(f"output {_q(tid)} is not a tensor of the graph")
                keep.append(self.by_id[tid].index)
        end = len(units)
        # Storage: aliases (zero-copy views) and arena buffers.
        alias_of: dict[int, int] = {}
        zero_at: dict[int, list[int]] = {}
        whole: set[int] = set()
        for t, ns in written.items():
            info = self.tensors[t]
            single = len(ns) == 1 and units[ns[0]].out[1] == (
                info.start,
                tuple(s + n for s, n in zip(info.start, info.shape, strict=True)),
            )
            if single:
                whole.add(t)
                u = units[ns[0]]
                src = u.reads[0][1] if u.reads else None
                if (
                    u.kernel in _VIEW_KERNELS
                    and src is not None
                    and src not in constants
                    and self.tensors[src].dtype == info.dtype
                    and self.tensors[src].covers(u.reads[0][2])
                ):
                    alias_of[t] = src
            elif not _tiles([units[n].out[1] for n in ns], info):
                zero_at.setdefault(ns[0], []).append(t)

        def root(t: int) -> int:
            while t in alias_of:
                t = alias_of[t]
            return t

        last: dict[int, int] = {}
        for t in range(len(self.tensors)):
            if t not in written:
                continue
            ends = [*read_at.get(t, ()), *written[t]]
            stop = end if t in keep else max(ends)
            r = root(t)
            last[r] = max(last.get(r, -1), stop)
        outside = {*inputs, *constants}
        groups = _groups(units) if self.sharded else []
        span: dict[int, tuple[int, int]] = {}
        for a, b in groups:
            for k in range(a, b):
                span[k] = (a, b - 1)
        buffers: list[Buffer] = []
        for t in written:
            if t in alias_of:
                continue
            info = self.tensors[t]
            first = written[t][0]
            inplace = self._inplace(units[first], first, t, whole, alias_of, last, outside)
            buffers.append(
                Buffer(
                    str(t),
                    info.dtype,
                    info.size,
                    DTYPE_BYTES[info.dtype],
                    # Steps of a group run at once: a buffer live at one is live at all of
                    # them, so no two concurrent Applications share a slot.
                    span.get(first, (first, first))[0],
                    span.get(last[t], (last[t], last[t]))[1],
                    str(inplace) if inplace is not None else None,
                )
            )
        memory = plan_memory(buffers)
        plan_bytes = memory.planned_peak_bytes + sum(
            self.tensors[i].nbytes for i in (*inputs, *constants)
        )
        if plan_bytes > self.limits.max_bytes:
            largest = max(self.tensors, key=lambda i: i.nbytes)
            raise LimitError(
                f"the run needs {format_bytes(plan_bytes)} (planned arena "
                f"{format_bytes(memory.planned_peak_bytes)} plus inputs); the limit is "
                f"{format_bytes(self.limits.max_bytes)} (GEON_MAX_BYTES); the largest tensor is "
                f"{_q(largest.name)} ({format_bytes(largest.nbytes)})"
            )
        steps = []
        for n, u in enumerate(units):
            t, box = u.out
            reads = tuple(self._reader(u, key, i, b) for key, i, b in u.reads)
            steps.append(
                Step(
                    u.op.id,
                    u.app.id if u.app is not None else None,
                    u.kernel,
                    self._lower(u),
                    reads,
                    t,
                    None if t in whole else self.tensors[t].local(box),
                    t in alias_of,
                    tuple(zero_at.get(n, ())),
                    tuple(i for _, i, _ in u.reads),
                )
            )
        arena = tuple((int(b.key), memory.slot_of(b.key)) for b in buffers)
        return Plan(
            self.graph.id,
            self.sharded,
            self.be,
            tuple(self.tensors),
            tuple(steps),
            tuple(inputs),
            constants,
            tuple(keep),
            arena,
            tuple(buffers),
            alias_of,
            memory,
            self.limits,
            tuple(groups),
        )

    def _inplace(
        self,
        unit: _Unit,
        step: int,
        t: int,
        whole: set[int],
        alias_of: Mapping[int, int],
        last: Mapping[int, int],
        outside: set[int],
    ) -> int | None:
        """An operand whose storage the unit may overwrite with its result, or None: an
        elementwise op reading, for the last time, a whole arena tensor with the result's dtype,
        shape and layout (operand 0 only when more than two operands are folded)."""
        if t not in whole or t in alias_of:
            return None
        family = CATALOGUE[unit.kernel].family
        if family not in ELEMENTWISE_FAMILIES:
            return None
        info = self.tensors[t]
        for n, (_, src, box) in enumerate(unit.reads):
            if n > 0 and len(unit.reads) > 2:
                break
            s = self.tensors[src]
            if (
                src in alias_of
                or src in outside
                or s.dtype != info.dtype
                or s.shape != info.shape
                or box != (s.start, tuple(a + k for a, k in zip(s.start, s.shape, strict=True)))
                or sum(1 for _, i, _ in unit.reads if i == src) != 1
                or any(src == alias_of.get(o) for o in alias_of)
            ):
                continue
            aligned = unit.inf is None or family == "unary"
            if not aligned and unit.inf is not None:
                aligned = list(unit.inf.plan["align"][n]) == list(range(len(info.shape)))
            if not aligned:
                continue
            if last.get(src) == step:
                return src
        return None


def _groups(units: Sequence[_Unit]) -> list[tuple[int, int]]:
    """The ``[first, stop)`` runs of two or more consecutive Applications of one operation
    whose output regions are pairwise disjoint: they may run concurrently. (A graph whose
    Applications overlap has error issues and is refused before it runs; were one to get here,
    its Applications would run one after another.)"""
    out: list[tuple[int, int]] = []
    n = 0
    while n < len(units):
        u = units[n]
        stop = n + 1
        while (
            u.app is not None
            and stop < len(units)
            and units[stop].op is u.op
            and units[stop].app is not None
        ):
            stop += 1
        if stop - n > 1 and _disjoint([units[k].out[1] for k in range(n, stop)]):
            out.append((n, stop))
        n = stop
    return out


def _disjoint(boxes: Sequence[Box]) -> bool:
    return not any(
        all(a < d and c < b for a, b, c, d in zip(lo, hi, lo2, hi2, strict=True))
        for n, (lo, hi) in enumerate(boxes)
        for lo2, hi2 in boxes[:n]
    )


def _tiles(boxes: Sequence[Box], info: TensorInfo) -> bool:
    """Whether ``boxes`` cover the tensor exactly (pairwise disjoint, sizes summing to it), so
    the writes leave no cell unwritten and the storage needs no zeroing first."""
    total = 0
    for n, (lo, hi) in enumerate(boxes):
        total += math.prod(b - a for a, b in zip(lo, hi, strict=True))
        for lo2, hi2 in boxes[:n]:
            if all(a < d and c < b for a, b, c, d in zip(lo, hi, lo2, hi2, strict=True)):
                return False
    return total == info.size and all(info.covers(b) for b in boxes)


def _fmt(box: Box) -> str:
    return "[" + ", ".join(f"{a}:{b}" for a, b in zip(box[0], box[1], strict=True)) + "]"
