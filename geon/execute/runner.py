"""Logical and sharded runs of a document: inputs, limits, timings, results and the diff.

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> result = run(Graph.from_json(json.loads(text)), seed=0, sharded=True)
>>> result.max_abs_diff
{'z': 0.0}

:func:`run` compiles the graph (:func:`geon.execute.plan.compile_graph`), resolves its inputs
(arrays keyed by tensor id or unique label, and/or a seeded generator for the rest), runs it
logically and, with ``sharded=True``, again Application by Application, and returns a
:class:`RunResult`: host copies of the outputs (every tensor no operation reads), seconds per
operation and per Application, the memory plan's figures and, for sharded runs, the max abs
difference per output. :meth:`RunResult.summary` is JSON for the Celery task.

:func:`evaluate_graph` has the contract of :func:`geon.core.reference.evaluate_graph` (every
tensor's value by id) and is what ``gc.evaluate`` calls.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geon.core.dtypes import DTYPE_BYTES, numpy_dtype
from geon.core.errors import ExecutionError, GeonError, LimitError, ShapeError, quote
from geon.core.graph import Graph
from geon.core.nodes import PLACEMENT
from geon.core.plans.cost.cells import Box, boxes_union_size, contains, intersect
from geon.core.variables import initial_value
from geon.core.zspace import ZRange
from geon.execute.backend import Backend, select_backend
from geon.execute.limits import Limits, format_bytes
from geon.execute.plan import Plan, compile_graph
from geon.execute.program import Progress, Step
from geon.execute.regions import TensorInfo, read_of

__all__ = [
    "Moved",
    "RunResult",
    "evaluate_graph",
    "generate_input",
    "max_abs_diff",
    "measure_moves",
    "resolve_inputs",
    "run",
    "run_compiled",
    "tensor_keys",
]

HostArray = np.ndarray[Any, Any]


def tensor_keys(tensors: Sequence[TensorInfo]) -> dict[int, str]:
    """The ``.npz`` key of every tensor: its label, or its id where the label is missing or not
    unique (DESIGN.md §8)."""
    counts: dict[str, int] = {}
    for t in tensors:
        if t.label:
            counts[t.label] = counts.get(t.label, 0) + 1
    return {t.index: t.label if t.label and counts[t.label] == 1 else t.id for t in tensors}


def generate_input(info: TensorInfo, rng: np.random.Generator) -> HostArray:
    """A seeded input: standard normal floats, integers in [0, 10), random booleans."""
    dt = numpy_dtype(info.dtype)
    if dt.kind == "f":
        return rng.standard_normal(info.shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(info.shape) + 1j * rng.standard_normal(info.shape)).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, size=info.shape).astype(dt)
    return rng.integers(0, 10, size=info.shape).astype(dt)


def resolve_inputs(
    plan: Plan, inputs: Mapping[str, Any] | None, seed: int | None
) -> dict[int, HostArray]:
    """Host arrays for every input tensor of ``plan``: from ``inputs`` (keyed by tensor id,
    unique label or ``.npz`` key), the rest from ``np.random.default_rng(seed)`` in document
    order. Refuses unknown keys, computed tensors, wrong shapes and unsafe dtype casts."""
    tensors = plan.tensors
    by_key: dict[str, int] = {}
    labels: dict[str, list[int]] = {}
    for tensor in tensors:
        by_key[tensor.id] = tensor.index
        if tensor.label:
            labels.setdefault(tensor.label, []).append(tensor.index)
    for label, found in labels.items():
        if len(found) == 1:
            by_key.setdefault(label, found[0])
    wanted = set(plan.inputs)
    out: dict[int, HostArray] = {}
    for key, value in (inputs or {}).items():
        t = by_key.get(key)
        if t is None:
            raise ExecutionError(
                f"input {quote(key)} names no single tensor; expected a tensor id or a unique label"
            )
        info = tensors[t]
        if t not in wanted:
            raise ExecutionError(
                f"input {quote(key)} is tensor {quote(info.name)}, which "
                + ("is a constant" if t in plan.constants else "an operation computes")
                + "; feed only the graph's inputs"
            )
        arr = np.asarray(value)
        if arr.shape != info.shape:
            raise ShapeError(
                f"input for tensor {quote(info.name)} has shape {arr.shape}; expected {info.shape}"
            )
        dt = numpy_dtype(info.dtype)
        if arr.dtype != dt and not np.can_cast(arr.dtype, dt, "same_kind"):
            raise ExecutionError(
                f"input {quote(key)} has dtype {arr.dtype}; expected {info.dtype} or a dtype that "
                "casts to it without changing kind"
            )
        out[t] = arr.astype(dt, copy=False)
    for t in plan.inputs:
        rule = plan.initial.get(t)
        if t not in out and rule is not None:  # a variable with an init rule, not fed
            info = tensors[t]
            out[t] = initial_value(rule, info.shape, info.dtype, seed=seed or 0, index=t)
    missing = [t for t in plan.inputs if t not in out]
    if missing and seed is None:
        info = tensors[missing[0]]
        axes = f" (axes {info.axes})" if info.axes is not None else ""
        raise ExecutionError(
            f"placeholder {quote(info.name)} has no value; feed an array of shape "
            f"{info.shape}{axes}"
        )
    if missing:
        rng = np.random.default_rng(seed)
        for t in missing:
            out[t] = generate_input(tensors[t], rng)
    return out


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a run gives back: host copies of the outputs by tensor id, their keys (labels),
    timings, memory figures and, for sharded runs, the max abs difference per output key and
    ``measured``: what moved between devices per edge (:func:`measure_moves`)."""

    outputs: dict[str, HostArray]
    keys: dict[str, str]
    backend: str
    sharded: bool
    timings: dict[str, Any]
    memory: dict[str, int]
    max_abs_diff: dict[str, float] | None = None
    logical: dict[str, HostArray] | None = field(default=None, repr=False)
    measured: dict[tuple[str, str, str], Moved] | None = None

    def by_key(self) -> dict[str, HostArray]:
        """The outputs keyed as in ``.npz`` files (labels, ids where not unique)."""
        return {self.keys[tid]: a for tid, a in self.outputs.items()}

    def summary(self) -> dict[str, Any]:
        """JSON-serialisable summary (the Celery task stores it as the run's result)."""
        outs = []
        for tid, a in self.outputs.items():
            entry: dict[str, Any] = {
                "id": tid,
                "label": self.keys[tid],
                "shape": list(a.shape),
                "dtype": str(a.dtype),
            }
            if a.size and a.dtype.kind in "biuf":
                entry["sum"] = _json_number(a.sum())
                entry["min"] = _json_number(a.min())
                entry["max"] = _json_number(a.max())
            outs.append(entry)
        out: dict[str, Any] = {
            "backend": self.backend,
            "mode": "sharded" if self.sharded else "logical",
            "outputs": outs,
            "timings": self.timings,
            "memory": self.memory,
        }
        if self.max_abs_diff is not None:
            out["max_abs_diff"] = self.max_abs_diff
        return out


def _json_number(v: Any) -> float | int | str:
    x: Any = v.item()
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, float) and not np.isfinite(x):
        return "NaN" if np.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def max_abs_diff(a: HostArray, b: HostArray) -> float:
    """``max |a - b|`` as a float (0.0 for empty arrays; NaN in the same place counts as equal)."""
    if a.size == 0:
        return 0.0
    if a.dtype.kind == "b":
        return float(np.count_nonzero(a != b) > 0)
    if a.dtype.kind in "iu":
        d = np.abs(a.astype(np.int64) - b.astype(np.int64))
        return float(d.max())
    both_nan = np.isnan(a) & np.isnan(b)
    d = np.abs(a - b)
    d = np.where(both_nan, 0, d)
    return float(np.nanmax(d)) if not np.all(np.isnan(d)) else float("nan")


def run(
    graph: Graph,
    inputs: Mapping[str, Any] | None = None,
    *,
    seed: int | None = None,
    sharded: bool = False,
    backend: str | Backend | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    limits: Limits | None = None,
    outputs: Sequence[str] | None = None,
) -> RunResult:
    """Run ``graph`` logically, or with ``sharded=True`` also Application by Application, and
    compare the two.

    ``inputs`` are arrays keyed by tensor id or unique label (an ``.npz`` file's contents work);
    inputs not given come from ``np.random.default_rng(seed)`` when ``seed`` is set.
    ``on_progress`` gets a :class:`~geon.execute.program.Progress` after every operation (and every
    Application of a sharded run, which reports the logical phase first; ``done``/``total``
    count over both phases). ``limits``
    default to :meth:`Limits.from_env`; they are checked before anything is allocated.
    ``outputs`` (tensor ids) default to every tensor no operation reads.
    """
    logical, shard_plan = compile_run(
        graph, sharded=sharded, backend=backend, limits=limits, outputs=outputs
    )
    result = run_compiled(logical, shard_plan, inputs, seed=seed, on_progress=on_progress)
    if shard_plan is None:
        return result
    return dataclasses.replace(result, measured=measure_moves(graph, shard_plan))


def compile_run(
    graph: Graph,
    *,
    sharded: bool = False,
    backend: str | Backend | None = None,
    limits: Limits | None = None,
    outputs: Sequence[str] | None = None,
) -> tuple[Plan, Plan | None]:
    """The plans :func:`run` executes: the logical plan and, with ``sharded=True``, the sharded
    plan checked against it. Every limit, including the bytes both plans need together, is
    checked here, before anything is allocated, so a server can refuse a run before queueing it.
    """
    be = select_backend(backend)
    lim = limits if limits is not None else Limits.from_env()
    logical = compile_graph(graph, backend=be, limits=lim, keep=outputs)
    if not sharded:
        return logical, None
    shard_plan = compile_graph(graph, sharded=True, backend=be, limits=lim, keep=outputs)
    total = logical.memory.planned_peak_bytes + shard_plan.planned_bytes
    if total > lim.max_bytes:
        raise LimitError(
            f"the sharded run and the logical run it is checked against need "
            f"{format_bytes(total)}; the limit is {format_bytes(lim.max_bytes)} (GEON_MAX_BYTES)"
        )
    return logical, shard_plan


def run_compiled(
    logical: Plan,
    shard_plan: Plan | None = None,
    inputs: Mapping[str, Any] | None = None,
    *,
    seed: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunResult:
    """:func:`run` on plans compiled once (:func:`~geon.execute.plan.compile_graph`) and reused
    run after run: the logical plan, and the sharded plan of the same graph to check against it.

    >>> import json
    >>> from importlib import resources
    >>> from geon.core.graph import Graph
    >>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
    >>> g = Graph.from_json(json.loads(text))
    >>> plans = compile_graph(g), compile_graph(g, sharded=True)
    >>> [run_compiled(*plans, seed=s).max_abs_diff for s in (1, 2)]
    [{'z': 0.0}, {'z': 0.0}]
    """
    be = logical.backend
    lim = logical.limits
    host = resolve_inputs(logical, inputs, seed)
    device = {t: be.asarray(a) for t, a in host.items()}
    keys = tensor_keys(logical.tensors)
    callback = on_progress
    if on_progress is not None and shard_plan is not None:
        # One count over both phases, so ``fraction`` grows from 0 to 1 once.
        first, grand = len(logical.steps), len(logical.steps) + len(shard_plan.steps)

        def callback(p: Progress) -> None:
            assert on_progress is not None
            done = p.done + (first if p.phase == "sharded" else 0)
            on_progress(dataclasses.replace(p, done=done, total=grand))

    began = time.perf_counter()
    deadline = began + lim.max_seconds
    timings: dict[str, Any] = {}
    logical_t: dict[str, dict[str, float]] = {}
    try:
        values = logical.execute(
            device, on_progress=callback, phase="logical", timings=logical_t, deadline=deadline
        )
    except GeonError:
        raise
    except Exception as exc:  # a kernel failing inside the array library
        raise ExecutionError(f"the logical run failed: {type(exc).__name__}: {exc}") from None
    result = {logical.tensors[t].id: be.to_host(v) for t, v in values.items()}
    timings["logical"] = time.perf_counter() - began
    timings["operations"] = _rounded(logical_t.get("operations", {}))
    if shard_plan is None:
        timings["total"] = timings["logical"]
        return RunResult(
            result,
            {tid: keys[logical.tensor(tid).index] for tid in result},
            be.name,
            False,
            _round_all(timings),
            logical.memory.to_json(),
        )
    began_s = time.perf_counter()
    shard_t: dict[str, dict[str, float]] = {}
    try:
        svalues = shard_plan.execute(
            device, on_progress=callback, phase="sharded", timings=shard_t, deadline=deadline
        )
    except GeonError:
        raise
    except Exception as exc:
        raise ExecutionError(f"the sharded run failed: {type(exc).__name__}: {exc}") from None
    sresult = {shard_plan.tensors[t].id: be.to_host(v) for t, v in svalues.items()}
    timings["sharded"] = time.perf_counter() - began_s
    timings["total"] = time.perf_counter() - began
    timings["sharded_operations"] = _rounded(shard_t.get("operations", {}))
    timings["applications"] = _rounded(shard_t.get("applications", {}))
    out_keys = {tid: keys[logical.tensor(tid).index] for tid in sresult}
    diff = {out_keys[tid]: max_abs_diff(sresult[tid], result[tid]) for tid in sresult}
    return RunResult(
        sresult,
        out_keys,
        be.name,
        True,
        _round_all(timings),
        shard_plan.memory.to_json(),
        diff,
        result,
    )


def _rounded(d: Mapping[str, float]) -> dict[str, float]:
    return {k: round(v, 9) for k, v in d.items()}


def _round_all(t: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 9) if isinstance(v, float) else v for k, v in t.items()}


def evaluate_graph(
    graph: Graph,
    inputs: Mapping[str, Any],
    outputs: Sequence[str] | None = None,
    *,
    backend: str | Backend | None = None,
) -> dict[str, HostArray]:
    """Every tensor's value by id (or only ``outputs``), as host arrays: the contract of
    :func:`geon.core.reference.evaluate_graph`, run by this executor (what ``gc.evaluate``
    calls). Inputs are keyed by tensor id or unique label."""
    be = select_backend(backend)
    keep = outputs if outputs is not None else [n.id for n in _tensor_nodes(graph)]
    plan = compile_graph(graph, backend=be, keep=keep)
    host = resolve_inputs(plan, inputs, None)
    values = plan.execute({t: be.asarray(a) for t, a in host.items()})
    return {plan.tensors[t].id: be.to_host(v) for t, v in values.items()}


def _tensor_nodes(graph: Graph) -> list[Any]:
    from geon.core.graph import TENSOR

    return graph.of_type(TENSOR)


@dataclass(frozen=True, slots=True)
class Moved:
    """What one edge (tensor, producer, consumer) of a sharded run moved between devices, in
    bytes, measured three ways from the run's own steps (geon/execute/README.md): ``moved``, the
    union of the regions the consumer's Applications read that an Application of the producer
    wrote on another device; ``read``, the union of every region the consumer's Applications
    read of the tensor (what a gather or an all-to-all delivers); ``reduced``, the union of the
    regions the consumer's Applications write (what a reduction of partial sums produces)."""

    moved: int
    read: int
    reduced: int

    def payload(self, kind: str) -> int:
        """The measure comparable with a collective's predicted ``bytes`` (docs/cost-model.md):
        ``reduced`` for an all-reduce or a reduce-scatter, ``read`` for an all-gather or an
        all-to-all, ``moved`` for a permute or a send."""
        if kind in ("all-reduce", "reduce-scatter"):
            return self.reduced
        if kind in ("all-gather", "all-to-all"):
            return self.read
        return self.moved

    def to_json(self) -> dict[str, int]:
        """The three measures by name."""
        return {"moved": self.moved, "read": self.read, "reduced": self.reduced}


Device = tuple[str, tuple[int, ...]]


def measure_moves(graph: Graph, plan: Plan) -> dict[tuple[str, str, str], Moved]:
    """Per edge ``(tensor id, producer id, consumer id)``, the bytes a sharded ``plan`` of
    ``graph`` moved between devices (:class:`Moved`), from the regions its steps read and
    write and the device (Placement coords) of each step's Application; a step of an operation
    that runs whole runs on every device its operation is replicated on
    (:func:`geon.core.plans.shards.replica_devices`, as the cost model reads it). A graph input a
    plan placed counts as written where it is held (:func:`geon.core.plans.held_regions`), by the
    input tensor itself; other inputs are replicated and move nothing. A region read moves
    unless one step on the reader's device wrote all of it; then each overlap with a region
    another device wrote (by another operation) moves."""
    from geon.core.plans import held_regions
    from geon.core.plans.shards import Mesh, replica_devices

    def device(app_id: str | None) -> Device | None:
        node = graph.get(app_id) if app_id is not None else None
        where = node.tags.get(PLACEMENT) if node is not None and node.tags else None
        if not isinstance(where, dict) or not isinstance(where.get("coords"), list):
            return None
        return str(where.get("mesh")), tuple(int(c) for c in where["coords"])

    def box(region: ZRange) -> Box:
        return tuple(region.start), tuple(region.end)

    by_id = {t.id: t for t in plan.tensors}
    written: dict[int, list[tuple[str, Device, Box]]] = {}
    for tid, (mesh_id, held) in held_regions(graph).items():
        if tid in by_id:
            index = by_id[tid].index
            written[index] = [(tid, (mesh_id, tuple(c)), box(r)) for c, r in held]
    placed = [(st, device(st.application_id)) for st in plan.steps]
    used = {dev[0] for _, dev in placed if dev is not None}
    meshes = {m: Mesh.from_node(node) if (node := graph.get(m)) else None for m in used}
    whole = {st.operation_id for st, dev in placed if dev is None}
    replicas = replica_devices(used, meshes, len(whole))
    steps = [(st, [dev] if dev is not None else replicas) for st, dev in placed]
    for st, devices in steps:
        region = _written(plan.tensors[st.out], st.out_index)
        for dev in devices:
            written.setdefault(st.out, []).append((st.operation_id, dev, region))
    moved: dict[tuple[str, str, str], list[Box]] = {}
    for st, devices in steps:
        consumer_id = st.reads_for or st.operation_id  # a contraction reads for its multiply
        for r in st.reads:
            read = read_of(r)
            if read is None or read.tensor not in written:
                continue
            wanted = box(read.inside)
            found = written[read.tensor]
            for dev in devices:
                if any(d == dev and contains(b, wanted) for _, d, b in found):
                    continue
                for producer, d, b in found:
                    if d != dev and producer != consumer_id:
                        common = intersect(b, wanted)
                        if common is not None:
                            key = (plan.tensors[read.tensor].id, producer, consumer_id)
                            moved.setdefault(key, []).append(common)
    by_op: dict[str, list[Step]] = {}
    for st, devices in steps:
        if devices:
            by_op.setdefault(st.reads_for or st.operation_id, []).append(st)
    out: dict[tuple[str, str, str], Moved] = {}
    for key, boxes in moved.items():
        tensor = by_id[key[0]]
        consumer = by_op[key[2]]
        reads = [
            box(found.inside)
            for st in consumer
            for found in map(read_of, st.reads)
            if found is not None and found.tensor == tensor.index
        ]
        results = [(plan.tensors[st.out], st) for st in consumer]
        made = [_written(info, st.out_index) for info, st in results]
        out_bytes = max((DTYPE_BYTES[info.dtype] for info, _ in results), default=0)
        eb = DTYPE_BYTES[tensor.dtype]
        out[key] = Moved(
            boxes_union_size(boxes) * eb,
            boxes_union_size(reads) * eb,
            boxes_union_size(made) * out_bytes,
        )
    return out


def _written(info: TensorInfo, index: tuple[slice, ...] | None) -> Box:
    """The absolute region a step writes: its slices of the tensor's array, or all of it."""
    if index is None:
        return tuple(info.range.start), tuple(info.range.end)
    return (
        tuple(int(s.start) + a for s, a in zip(index, info.start, strict=True)),
        tuple(int(s.stop) + a for s, a in zip(index, info.start, strict=True)),
    )
