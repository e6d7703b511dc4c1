"""Compiling a graph into a :class:`~geon.execute.program.Plan` (DESIGN.md §7): every piece of
bookkeeping once per graph, before anything is allocated.

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> plan = compile_graph(Graph.from_json(json.loads(text)), sharded=True)
>>> [(s.kernel, s.application_id is not None) for s in plan.steps]
[('op:add', True), ('op:add', True)]

:func:`compile_graph` reads the tensors and their axes, then derives

- the **schedule** (:mod:`geon.execute.schedule`): operations in topological order; in a sharded
  plan an operation with Applications contributes one step per Application;
- the **regions** each step reads and writes (:mod:`geon.execute.regions`): projections of the
  step's index range through each operand's IPF, or a positional operation's selections;
- the **kernel** of every step (:mod:`geon.execute.kernels`), lowered for the step's shapes;
- the **storage** of every computed tensor (:mod:`geon.execute.storage`): a zero-copy view or an
  arena slot;
- the **limits**: every tensor's element count and the planned bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from geon.core.axes import Axes, Axis, Ref
from geon.core.constants import CONSTANT, decode_constant
from geon.core.dtypes import DTYPE_BYTES, numpy_dtype
from geon.core.errors import ExecutionError, GeonError, LimitError, quote
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
from geon.core.ops import CATALOGUE, Inference, infer
from geon.core.variables import VARIABLE, check_init
from geon.core.zspace import ZRange, parse_range, selection_of
from geon.execute.backend import Backend, select_backend
from geon.execute.contract import fuse_contractions, lower_contraction
from geon.execute.kernels import ELEMENTWISE_FAMILIES, KernelFn, lower_positional
from geon.execute.limits import Limits, format_bytes
from geon.execute.lowering import lower_named
from geon.execute.program import Plan, Step
from geon.execute.regions import (
    Operand,
    Read,
    TensorInfo,
    Unit,
    describe,
    local_slices,
    operands_of,
    reader,
)
from geon.execute.schedule import concurrent_groups, topological
from geon.execute.storage import Storage, Uses, choose_layouts, plan_storage, uses_of

__all__ = ["Plan", "compile_graph"]


def _named(op: Node) -> str:
    """An operation as a refusal names it (:attr:`Node.name`), quoted."""
    return quote(op.name)


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
    """One compilation: the graph's tensors and axes as read so far, and the steps of the plan."""

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
        self._operands: dict[Any, dict[str, list[Operand]]] = {}
        self.initial: dict[int, dict[str, Any]] = {}

    # --- tensors and axes -----------------------------------------------------------------

    def _load_tensors(self) -> None:
        for node in self.graph.of_type(TENSOR):
            dtype = node.body.get("dtype")
            if dtype not in DTYPE_BYTES:
                raise ExecutionError(
                    f"tensor {quote(node.label or node.id)} has dtype {quote(dtype)}; expected "
                    f"one of ({', '.join(quote(d) for d in DTYPE_BYTES)})"
                )
            r = parse_range(node.body.get("range"))
            if r is None:
                raise ExecutionError(
                    f"tensor {quote(node.label or node.id)} has no valid range; expected "
                    '{"start": [...], "end": [...]} with start <= end'
                )
            names = self._axis_names(node)
            info = TensorInfo(
                len(self.tensors),
                node.id,
                node.label,
                str(dtype),
                r,
                tuple(names) if names is not None else None,
            )
            if info.size > self.limits.max_elements:
                raise LimitError(
                    f"tensor {quote(info.name)} has {show_int(info.size)} elements; the limit is "
                    f"{self.limits.max_elements} elements per tensor (GEON_MAX_ELEMENTS)"
                )
            self.tensors.append(info)
            self.by_id[node.id] = info
            self.nodes[node.id] = node
        for node in self.graph.of_type(AXIS):
            try:
                axis = Axis.from_json(node.body)
            except GeonError as exc:
                raise ExecutionError(f"axis node {quote(node.id)} is invalid: {exc}") from None
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
                    f"tensor {quote(info.name)} has invalid TensorAxes: {exc}"
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

    # --- the whole plan -------------------------------------------------------------------

    def compile(self, keep_ids: Sequence[str] | None) -> Plan:
        self._load_tensors()
        ops = topological(self.graph.of_type(OPERATION))
        units = [u for op in ops for u in self._units(op)]
        for u in units:
            info = self.tensors[u.out[0]]
            if not info.covers(u.out[1]):
                raise ExecutionError(
                    f"{describe(u)} writes {u.out[1]} of tensor {quote(info.name)}, which "
                    "lies outside the tensor's range; expected a region inside it"
                )
        keep = self._keep(keep_ids, uses_of(units))
        units, gone = fuse_contractions(units, set(keep), lambda t: self.tensors[t].dtype)
        uses = uses_of(units)
        inputs, constants = self._sources(uses, gone)
        groups = concurrent_groups(units) if self.sharded else []
        # a tensor stored in another order of its dims is a strided view of its slot: only
        # NumPy/CuPy, whose ufuncs write through strides (array_api_strict keeps the plain form)
        layouts = (
            choose_layouts(units, uses, self.tensors, keep) if self.be.native is not None else {}
        )
        storage = plan_storage(units, uses, self.tensors, keep, constants, groups, layouts)
        self._check_bytes(storage, [*inputs, *constants])
        steps = tuple(self._step(n, u, storage) for n, u in enumerate(units))
        arena = tuple((int(b.key), storage.memory.slot_of(b.key)) for b in storage.buffers)
        return Plan(
            self.graph.id,
            self.sharded,
            self.be,
            tuple(self.tensors),
            steps,
            tuple(inputs),
            constants,
            tuple(keep),
            arena,
            storage.buffers,
            storage.alias_of,
            storage.memory,
            self.limits,
            tuple(groups),
            initial=self.initial,
            layouts=layouts,
        )

    def _sources(self, uses: Uses, gone: set[int]) -> tuple[list[int], dict[int, Any]]:
        """The tensors no operation writes: inputs (fed to each run) and constants (decoded
        once, here, onto the backend); ``gone``: products a contraction no longer computes."""
        inputs: list[int] = []
        constants: dict[int, Any] = {}
        for info in self.tensors:
            if info.index in uses.written or info.index in gone:
                continue
            node = self.nodes[info.id]
            if node.tags and node.tags.get(CONSTANT) is not None:
                try:
                    host = decode_constant(node.tags[CONSTANT], info.dtype, info.shape)
                except GeonError as exc:
                    raise ExecutionError(f"constant {quote(info.name)}: {exc}") from None
                constants[info.index] = self.be.asarray(host.astype(numpy_dtype(info.dtype)))
            else:
                inputs.append(info.index)
                rule = (node.tags or {}).get(VARIABLE)
                if isinstance(rule, dict) and rule.get("init") is not None:
                    try:
                        self.initial[info.index] = check_init(rule["init"])
                    except GeonError as exc:
                        raise ExecutionError(f"variable {quote(info.name)}: {exc}") from None
        return inputs, constants

    def _keep(self, keep_ids: Sequence[str] | None, uses: Uses) -> list[int]:
        """The tensors a run returns: ``keep_ids``, default every tensor no operation reads."""
        if keep_ids is None:
            return [i.index for i in self.tensors if i.index not in uses.read_at]
        keep = []
        for tid in keep_ids:
            if tid not in self.by_id:
                raise ExecutionError(f"output {quote(tid)} is not a tensor of the graph")
            keep.append(self.by_id[tid].index)
        return keep

    def _check_bytes(self, storage: Storage, sources: Sequence[int]) -> None:
        """Refuse, before anything is allocated, a run whose arena plus inputs and constants
        pass ``GEON_MAX_BYTES``."""
        arena = storage.memory.planned_peak_bytes
        planned = arena + sum(self.tensors[i].nbytes for i in sources)
        if planned > self.limits.max_bytes:
            largest = max(self.tensors, key=lambda i: i.nbytes)
            raise LimitError(
                f"the run needs {format_bytes(planned)} (planned arena "
                f"{format_bytes(arena)} plus inputs); the limit is "
                f"{format_bytes(self.limits.max_bytes)} (GEON_MAX_BYTES); the largest tensor is "
                f"{quote(largest.name)} ({format_bytes(largest.nbytes)})"
            )

    def _step(self, n: int, unit: Unit, storage: Storage) -> Step:
        """Unit ``n`` lowered: its readers, its kernel and where it writes."""
        t, region = unit.out
        readers = tuple(reader(unit, r, self.tensors[r.tensor], self.be) for r in unit.reads)
        return Step(
            unit.op.id,
            unit.app.id if unit.app is not None else None,
            unit.kernel,
            self._lower(unit),
            readers,
            t,
            None if t in storage.whole else self.tensors[t].local(region),
            t in storage.alias_of,
            tuple(storage.zero_at.get(n, ())),
            tuple(r.tensor for r in unit.reads),
            unit.local.get("reads_for"),
        )

    # --- units ----------------------------------------------------------------------------

    def _tensor(self, tid: Any, op: Node, where: str) -> TensorInfo:
        info = self.by_id.get(tid) if isinstance(tid, str) else None
        if info is None:
            raise ExecutionError(
                f"operation {_named(op)} {where} references tensor {quote(tid)}, which does not "
                "exist; expected the id of a Tensor node"
            )
        return info

    def _units(self, op: Node) -> list[Unit]:
        kname = op.body.get("kernel")
        if not isinstance(kname, str) or kname not in CATALOGUE:
            raise ExecutionError(
                f"operation {_named(op)} has kernel {quote(kname)}, which the executor does not "
                'implement; expected a catalogue kernel such as "op:add"'
            )
        apps = self.graph.index.applications_of(op.id) if self.sharded else []
        ins = list(iter_selections(op.body, ("inputs",)))
        outs = list(iter_selections(op.body, ("outputs",)))
        if len(outs) != 1 or outs[0].key != "result":
            keys = ", ".join(quote(s.key) for s in outs) or "nothing"
            raise ExecutionError(
                f"operation {_named(op)} ({kname}) writes {len(outs)} selection(s), as {keys}; "
                'the executor runs it writing exactly one, as "result"'
            )
        in_infos = [self._tensor(s.tensor_id, op, f"input {quote(s.key)}") for s in ins]
        out_info = self._tensor(outs[0].tensor_id, op, 'output "result"')
        axes = [self._axes(i) for i in in_infos]
        out_axes = self._axes(out_info)
        named = CATALOGUE[kname].named and all(a is not None for a in axes)
        if not named or out_axes is None:
            return self._positional_units(op, kname, ins, outs[0], in_infos, out_info, apps)
        grouped: dict[str, list[Axes]] = {}
        for s, a in zip(ins, axes, strict=True):
            assert a is not None
            grouped.setdefault(s.key, []).append(a)
        try:
            inf = infer(kname, grouped, op.body.get("params"), self.declared)
        except GeonError as exc:
            raise ExecutionError(f"operation {_named(op)} ({kname}): {exc}") from None
        if out_axes is not None and set(out_axes) != set(inf.result):
            raise ExecutionError(
                f"operation {_named(op)} ({kname}) writes tensor {quote(out_info.name)} "
                f"with axes {out_axes}; the kernel infers {inf.result} (geon check reports "
                "OperationAxesInference)"
            )
        if out_axes is not None and list(out_axes) != list(inf.result):
            raise ExecutionError(
                f"operation {_named(op)} ({kname}) writes tensor {quote(out_info.name)} "
                f"with axes {out_axes} in another order than the inferred {inf.result}; add a "
                "dimshuffle"
            )
        return self._named_units(op, inf, [s.key for s in ins], in_infos, out_info, apps)

    def _index_ranges(
        self, op: Node, inf: Inference, apps: list[Node]
    ) -> list[tuple[Node | None, ZRange]]:
        """The index range of each unit of a named operation: every Application's ``IPFIndex``,
        or the whole index space."""
        full = tuple(self._length(r) for r in inf.index)
        if not apps:
            return [(None, ZRange.from_shape(full))]
        ranges: list[tuple[Node | None, ZRange]] = []
        for app in apps:
            r = parse_range(app.tags.get(IPF_INDEX) if app.tags else None)
            if r is None or r.rank != len(full):
                raise ExecutionError(
                    f"application {quote(app.id)} of operation {_named(op)} has no valid "
                    f"IPFIndex of rank {len(full)}; shard the operation again"
                )
            ranges.append((app, r))
        return ranges

    def _named_units(
        self,
        op: Node,
        inf: Inference,
        keys: list[str],
        in_infos: list[TensorInfo],
        out_info: TensorInfo,
        apps: list[Node],
    ) -> list[Unit]:
        """One unit per index range, reading and writing the projections of its range through
        the operands' IPFs (built once per operation); reads are clipped to their tensors."""
        operands: dict[str, list[TensorInfo]] = {"result": [out_info]}
        positions: list[tuple[str, int, TensorInfo]] = []  # in the operation's order
        for key, info in zip(keys, in_infos, strict=True):
            group = operands.setdefault(key, [])
            positions.append((key, len(group), info))
            group.append(info)
        projections = operands_of(inf, operands, self._length, self._operands)
        kname = inf.kernel
        units = []
        for app, index in self._index_ranges(op, inf, apps):
            reads: list[Read] = []
            for key, pos, info in positions:
                operand = projections[key][pos]
                region = operand.region(index)
                inside = (
                    region  # the clip of a region inside its tensor is the region
                    if info.covers(region)
                    else selection_of(operand.ipf, index, info.range, read=True)
                )
                reads.append(Read(key, info.index, region, inside))
            out = projections["result"][0].region(index)
            unit = Unit(op, app, kname, inf, reads, (out_info.index, out))
            if kname == "op:slice":
                dims = inf.operand_dims("tensor")
                ipf = projections["tensor"][0].ipf
                unit.local["slices"] = local_slices(ipf, dims, index, reads[0].region)
            elif kname in ("op:max_pool2d", "op:avg_pool2d"):
                # where the region read holds the tensor's cells (the rest is padding)
                r = reads[0]
                unit.local["inside"] = [
                    (lo - a, hi - a)
                    for lo, hi, a in zip(r.inside.start, r.inside.end, r.region.start, strict=True)
                ]
            units.append(unit)
        return units

    def _positional_units(
        self,
        op: Node,
        kname: str,
        ins: list[Any],
        out_sel: Any,
        in_infos: list[TensorInfo],
        out_info: TensorInfo,
        apps: list[Node],
    ) -> list[Unit]:
        if CATALOGUE[kname].named and CATALOGUE[kname].family not in ELEMENTWISE_FAMILIES:
            missing = [i.name for i in (*in_infos, out_info) if self._axes(i) is None]
            raise ExecutionError(
                f"operation {_named(op)} ({kname}) needs named axes, but tensor "
                f"{quote(missing[0])} has no TensorAxes; tag every tensor it reads and writes "
                "with its axes"
            )
        sources: list[tuple[Node | None, Any]] = [(a, a.body) for a in apps] or [(None, op.body)]
        units = []
        for app, body in sources:
            reads: list[Read] = []
            sels = list(iter_selections(body, ("inputs",)))
            if len(sels) != len(ins):
                raise ExecutionError(
                    f"application {quote(app.id if app else op.id)} reads {len(sels)} selections; "
                    f"its operation reads {len(ins)}"
                )
            for s in sels:
                info = self._tensor(s.tensor_id, op, f"input {quote(s.key)}")
                region = self._region(s.range, info, op)
                reads.append(Read(s.key, info.index, region, region.clip(info.range)))
            outs = list(iter_selections(body, ("outputs",)))
            if len(outs) != 1:
                raise ExecutionError(
                    f"application {quote(app.id if app else op.id)} writes {len(outs)} selections; "
                    "expected exactly one"
                )
            info = self._tensor(outs[0].tensor_id, op, 'output "result"')
            units.append(
                Unit(
                    op, app, kname, None, reads, (info.index, self._region(outs[0].range, info, op))
                )
            )
        return units

    @staticmethod
    def _region(data: Any, info: TensorInfo, op: Node) -> ZRange:
        r = parse_range(data)
        if r is None or r.rank != len(info.shape):
            raise ExecutionError(
                f"operation {_named(op)} selects {quote(data)} of tensor {quote(info.name)}; "
                f"expected a range of rank {len(info.shape)}"
            )
        return r

    def _lower(self, unit: Unit) -> KernelFn:
        shapes = [r.region.shape for r in unit.reads]
        t, region = unit.out
        out_dtype = self.tensors[t].dtype
        in_dtypes = [self.tensors[r.tensor].dtype for r in unit.reads]
        try:
            if "contract" in unit.local:
                return lower_contraction(self.be, unit.local["contract"], shapes)
            if unit.inf is not None:
                return lower_named(
                    self.be, unit.inf, shapes, region.shape, out_dtype, in_dtypes, unit.local
                )
            grouped: dict[str, list[tuple[int, ...]]] = {}
            for r, shape in zip(unit.reads, shapes, strict=True):
                grouped.setdefault(r.key, []).append(shape)
            return lower_positional(
                self.be, unit.kernel, grouped, region.shape, out_dtype, in_dtypes
            )
        except ExecutionError as exc:
            raise ExecutionError(f"{describe(unit)}: {exc}") from None
