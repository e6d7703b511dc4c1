"""The cost of a plan with pipeline stages (DESIGN.md §12, issue 33): the report of one stage's
plan (:meth:`geon.core.plans.Plan.stage_plan`, the mesh less the pipeline's axis) turned into the
pipeline's.

**Stages.** Every operation takes the virtual stage whose scopes hold its ``Group`` scope (a
training step's ``backward/…`` and ``optimizer/…`` scopes are read without that prefix, so a
layer's backward runs on its forward's stage); one under none takes the latest stage of the
operations writing what it reads (stage 0 when none does); the first stage whose scopes hold
an operation runs it, and a stage's scope that runs no operation is refused. ``"balanced"`` cuts
the top-level scopes of the forward operations (``layers.0``, ``layers.1``, …, in run order;
each weighs the seconds of every operation under it, its backward's too) into ``p·v``
contiguous stages so that the largest stage's seconds are the least (an exact linear partition,
:func:`_partition`). :func:`stage_rule` is this rule, the one the server's save
(:func:`check_stages`) and the cost read.

**Time.** A stage's forward seconds per microbatch are the sum over its forward operations of
``C(o) + M(o)`` (:func:`~geon.core.plans.cost.timing.operation_seconds` and the collectives it
consumes) divided by ``m`` (a microbatch is ``1/m`` of the batch), likewise its backward; the
optimizer's update runs once per step after the device's last backward. A tensor a stage writes
and a later stage reads is one ``send`` collective per microbatch on the pipeline axis's link
(``latency + bytes/bandwidth``, the bytes one device holds of it over ``m``), and its gradient
one back in a training step. :func:`geon.core.plans.cost.schedules.simulate` places the actions:
``time.upper`` is that step (with ``C(o) + M(o)``), ``time.lower`` the same with every collective
inside a stage overlapped (``C(o)`` alone; the sends still wait). The step includes the bubble.

**Memory** per device of stage coordinate ``r``: the stage plan's ledger, ``parameters``,
``gradients`` and ``optimizer`` times the share of the parameter bytes its stages read,
``temporaries`` and ``communication`` times its share of the compute, and ``activations`` the
activations in flight under the schedule (:func:`~geon.core.plans.cost.schedules.in_flight`)
times one microbatch's: the tensors its forward writes that are kept for the backward (in a
forward step, all it writes, one microbatch at a time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from geon.core.errors import quote
from geon.core.graph import OPERATION, Graph
from geon.core.nodes import Node, selected_tensor_ids
from geon.core.order import run_order
from geon.core.plans.cost.collectives import Collective
from geon.core.plans.cost.formulas import collective_seconds
from geon.core.plans.cost.ledger import (
    _ACTIVATIONS,
    _PARAMETERS,
    DeviceMemory,
    _role,
    group_scope,
    tensor_kinds,
)
from geon.core.plans.cost.placed import PlacedDocument
from geon.core.plans.cost.profiles import Profile
from geon.core.plans.cost.schedules import Grid, in_flight, simulate, stage_orders
from geon.core.plans.cost.timing import AllWork, DeviceTime, operation_seconds
from geon.core.plans.pipeline import Pipeline, PipelineError, scope_matches
from geon.core.plans.table import Device
from geon.core.zspace import parse_range

__all__ = [
    "StageRule",
    "check_stages",
    "operation_stages",
    "pipeline_report",
    "send_count",
    "stage_rule",
]

_GRID_LIMIT = 20_000


def _scope(node: Node, ops: Mapping[str, Node]) -> str:
    """An operation's ``Group`` scope (:func:`~geon.core.plans.cost.ledger.group_scope`: a
    contracted split's pieces read the operation they replace) without a ``backward/`` or
    ``optimizer/`` prefix."""
    scope = group_scope(node, ops)
    if scope is None:
        return ""
    scope = scope.strip("/")
    for role in ("backward", "optimizer"):
        if scope == role:
            return ""
        if scope.startswith(role + "/"):
            return scope[len(role) + 1 :]
    return scope


def _tops(scopes: list[str]) -> list[str]:
    """The distinct top-level components of ``scopes``, in order."""
    return list(dict.fromkeys(s.split("/")[0] for s in scopes if s))


def _shown(names: list[str]) -> str:
    return ", ".join(quote(t) for t in names[:8]) + (", ..." if len(names) > 8 else "")


@dataclass(frozen=True, slots=True)
class StageRule:
    """Where the pipeline's stage rule puts each of some operations (see the module docstring;
    :func:`stage_rule`)."""

    scopes: list[str]
    """Each operation's ``Group`` scope without its ``backward/`` or ``optimizer/`` prefix."""
    roles: list[str]
    """Each operation's part of a step: ``forward``, ``backward`` or ``optimizer``."""
    stage: list[int]
    """Explicit stages: each operation's stage, the first whose scopes hold its scope (-1:
    none does). ``balanced``: the index in ``units`` of its top-level scope (-1: none)."""
    units: list[str]
    """``balanced``: the top-level scopes of the forward operations, in the operations' order,
    which the cost model cuts into stages (empty for explicit stages)."""


def stage_rule(nodes: Sequence[Node], ops: Mapping[str, Node], pipeline: Pipeline) -> StageRule:
    """The stage rule of :mod:`this module <geon.core.plans.cost.pipelined>` over ``nodes``
    (operations, in run order where ``balanced`` is to be cut; ``ops`` every operation by id,
    for a contracted split's sum): the one rule the server's save
    (:func:`check_stages`) and the cost (:func:`operation_stages`) read. A
    :class:`~geon.core.plans.pipeline.PipelineError` naming the stage, its scope and the
    document's top-level scopes when ``balanced`` has fewer top-level forward scopes than
    stages, or an explicit stage's scope runs no operation (none is, or lies under, it, or every
    one that does is an earlier stage's: the first stage that holds an operation runs it).
    Linear in the operations times the scopes of a stage."""
    count = pipeline.stage_count
    scopes = [_scope(node, ops) for node in nodes]
    roles = [_role(node, ops) for node in nodes]
    if pipeline.stages is None:
        units = list(
            dict.fromkeys(
                s.split("/")[0] for s, r in zip(scopes, roles, strict=True) if s and r == "forward"
            )
        )
        if len(units) < count:
            held = (
                f"their top-level Group scopes are ({_shown(units)})"
                if units
                else "no forward operation has a Group scope: group its operations first"
            )
            raise PipelineError(
                f'pipeline stages "balanced" cut the top-level Group scopes into {count} stages '
                f"but the document has {len(units)}; expected fewer stages or an explicit list "
                f"of scopes per stage (the document's forward operations: {held})"
            )
        index = {u: k for k, u in enumerate(units)}
        return StageRule(scopes, roles, [index.get(s.split("/")[0], -1) for s in scopes], units)
    stage = [-1] * len(scopes)
    ran: set[tuple[int, str]] = set()
    held_by: set[tuple[int, str]] = set()
    for i, scope in enumerate(scopes):
        if not scope:
            continue
        for k, prefixes in enumerate(pipeline.stages):
            hits = [s for s in prefixes if scope_matches(scope, s)]
            if hits:
                held_by.update((k, s) for s in hits)
                if stage[i] < 0:
                    stage[i] = k
                    ran.update((k, s) for s in hits)
    tops = _tops(scopes)
    valid = (
        f"the document's top-level Group scopes are ({_shown(tops)})"
        if tops
        else "the document has no Group scopes: group its operations first"
    )
    for k, prefixes in enumerate(pipeline.stages):
        for s in prefixes:
            if (k, s) in ran:
                continue
            if (k, s) not in held_by:
                raise PipelineError(
                    f"pipeline stage {k} scope {quote(s)} matches no operation's Group scope; "
                    f"expected a scope that is, or lies above, one ({valid})"
                )
            raise PipelineError(
                f"pipeline stage {k} scope {quote(s)} runs no operation: every operation it "
                "holds is run by an earlier stage (the first stage whose scopes hold an "
                f"operation runs it); expected a scope no earlier stage holds whole ({valid})"
            )
    return StageRule(scopes, roles, stage, [])


def check_stages(document: Graph, pipeline: Pipeline) -> None:
    """Whether ``pipeline``'s stages fit ``document`` (a plan written into it, as the cost
    reads it): :func:`stage_rule` over its operations, before any cost is computed."""
    nodes = list(document.of_type(OPERATION))
    stage_rule(nodes, {n.id: n for n in nodes}, pipeline)


def _partition(loads: list[float], parts: int) -> list[int]:
    """The part of each load: ``parts`` non-empty contiguous runs (``len(loads) >= parts``),
    the largest run's sum the least, found exactly in O(n log W): a bisection on the largest
    run's sum ``W`` (down to adjacent doubles, ~64 steps) with a greedy check of whether runs of
    at most ``W`` number at most ``parts``; the least feasible ``W`` is then the optimum as the
    sums are computed (differences of the same prefix sums, which are monotone). Of the optimal
    cuts it takes, from the last run back, each run as long as it can be (leaving one load for
    each run before it)."""
    n = len(loads)
    prefix = [0.0]
    for x in loads:
        prefix.append(prefix[-1] + x)

    def runs(w: float) -> int:
        used, start = 1, 0
        for j in range(1, n + 1):
            if prefix[j] - prefix[start] > w:
                used, start = used + 1, j - 1
                if used > parts:
                    break
        return used

    lo, hi = max(loads, default=0.0), prefix[-1]
    if runs(lo) <= parts:
        hi = lo
    while True:  # runs(lo) > parts >= runs(hi)
        mid = lo + (hi - lo) / 2
        if mid <= lo or mid >= hi:
            break
        if runs(mid) <= parts:
            hi = mid
        else:
            lo = mid
    out = [0] * n
    j = n
    for k in range(parts, 0, -1):
        i = j - 1
        while i > k - 1 and prefix[j] - prefix[i - 1] <= hi:
            i -= 1
        out[i:j] = [k - 1] * (j - i)
        j = i
    return out


def operation_stages(doc: PlacedDocument, pipeline: Pipeline, seconds: np.ndarray) -> list[int]:
    """The virtual stage of every operation (indices of the table's ``op_ids``; see the module
    docstring): :func:`stage_rule` over the operations in run order, ``balanced`` cut by
    ``seconds``, and an operation under no stage's scope on the latest stage of the operations
    writing what it reads (stage 0 when none does)."""
    nodes = [doc.operation(op) for op in doc.order]
    rule = stage_rule(nodes, doc.table.ops, pipeline)
    if pipeline.stages is None:
        loads = [0.0] * len(rule.units)
        for op, unit in zip(doc.order, rule.stage, strict=True):
            if unit >= 0:
                loads[unit] += float(seconds[op])
        parts = _partition(loads, pipeline.stage_count)
        placed = [parts[unit] if unit >= 0 else -1 for unit in rule.stage]
    else:
        placed = list(rule.stage)
    stage = [0] * len(doc.table.op_ids)  # an operation left out of the run order: stage 0
    for op, k in zip(doc.order, _inherit(nodes, placed), strict=True):
        stage[op] = k
    return stage


def _inherit(nodes: Sequence[Node], stage: list[int]) -> list[int]:
    """``stage`` (per node of ``nodes``, in run order) with each node under no stage (-1) on
    the latest stage of the operations writing what it reads (stage 0 when none does)."""
    out = list(stage)
    writer: dict[str, int] = {}
    for i, node in enumerate(nodes):
        if out[i] < 0:
            out[i] = max(
                (writer[t] for t in selected_tensor_ids(node.body, "inputs") if t in writer),
                default=0,
            )
        for t in selected_tensor_ids(node.body, "outputs"):
            writer[t] = out[i]
    return out


def _crossings(
    nodes: Sequence[Node], roles: Sequence[str], stage: Sequence[int]
) -> dict[tuple[str, int], tuple[int, int]]:
    """The tensors a stage's forward writes and a later stage's forward reads: per (tensor,
    reading stage), the positions in ``nodes`` of its writer and first reader (a send each
    microbatch, and its gradient back in a training step)."""
    writer: dict[str, int] = {}
    for i, node in enumerate(nodes):
        if roles[i] == "forward":
            for t in selected_tensor_ids(node.body, "outputs"):
                writer[t] = i
    crossing: dict[tuple[str, int], tuple[int, int]] = {}
    for i, node in enumerate(nodes):
        if roles[i] != "forward":
            continue
        for t in selected_tensor_ids(node.body, "inputs"):
            w = writer.get(t)
            if w is not None and stage[w] < stage[i]:
                crossing.setdefault((t, stage[i]), (w, i))
    return crossing


def send_count(document: Graph, pipeline: Pipeline) -> int:
    """The ``send`` collectives the cost of ``pipeline`` on ``document`` (a plan written into
    it) lists, counted before any cost: microbatches x the tensors crossing a stage boundary
    (per reading stage) x passes (2 in a training step: the gradient goes back). For
    ``balanced`` (whose cut needs the seconds) an upper bound: every top-level scope its own
    stage, since a cut into fewer contiguous stages crosses no more. Linear in the operations;
    a :class:`~geon.core.plans.pipeline.PipelineError` as :func:`stage_rule`."""
    found = list(document.of_type(OPERATION))
    nodes, _ = run_order(found)
    rule = stage_rule(nodes, {n.id: n for n in found}, pipeline)
    crossing = _crossings(nodes, rule.roles, _inherit(nodes, rule.stage))
    passes = 2 if "backward" in rule.roles else 1
    return pipeline.microbatches * len(crossing) * passes


def _held_bytes(doc: PlacedDocument) -> np.ndarray:
    """Per tensor of the table, the most bytes one device writes of it."""
    table = doc.table
    rows = table.rows
    written = np.flatnonzero(rows.write)
    keys = table.device[rows.shard[written]].astype(np.int64) + 1
    slots = len(table.devices) + 1
    flat = rows.tensor[written].astype(np.int64) * slots + keys
    per = np.zeros(len(table.tensor_ids) * slots, dtype=np.int64)
    np.add.at(per, flat, rows.cells[written] * table.element_bytes[rows.tensor[written]])
    return per.reshape(len(table.tensor_ids), slots).max(axis=1) if len(per) else per


def pipeline_report(
    doc: PlacedDocument,
    pipeline: Pipeline,
    profile: Profile,
    mesh_axes: tuple[tuple[str, int], ...],
    work: AllWork,
    collectives: list[Collective],
    times: dict[Device, DeviceTime],
    memory: dict[Device, DeviceMemory],
) -> dict[str, Any]:
    """``{"pipeline", "sends", "time", "devices"}`` of the pipelined step (see the module
    docstring), from the stage plan's pieces."""
    table = doc.table
    p, m, v, count = pipeline.devices, pipeline.microbatches, pipeline.virtual_stages, 0
    count = pipeline.stage_count
    own = operation_seconds(doc, work)
    comm = np.zeros(len(table.op_ids))
    for c in collectives:
        comm[table.op_index[c.consumer]] += c.seconds
    stage = operation_stages(doc, pipeline, own + comm)
    roles = [_role(doc.operation(op), table.ops) for op in range(len(table.op_ids))]
    has_backward = "backward" in roles
    f_hi, b_hi, f_lo, b_lo = ([0.0] * count for _ in range(4))
    tail = [0.0] * p
    for op, (s, role) in enumerate(zip(stage, roles, strict=True)):
        if role == "optimizer":
            tail[s % p] += float(own[op] + comm[op])
        elif role == "backward":
            b_hi[s] += float(own[op] + comm[op]) / m
            b_lo[s] += float(own[op]) / m
        else:
            f_hi[s] += float(own[op] + comm[op]) / m
            f_lo[s] += float(own[op]) / m
    # the sends: tensors a stage writes and a later stage's forward reads
    held = _held_bytes(doc)
    link = profile.link(pipeline.axis)
    run = [doc.operation(op) for op in doc.order]
    crossing = {
        key: (doc.order[w], doc.order[r])
        for key, (w, r) in _crossings(
            run, [roles[op] for op in doc.order], [stage[op] for op in doc.order]
        ).items()
    }
    send = [0.0] * count
    sends: list[dict[str, Any]] = []
    n_group = max(1, len({d for d in times}))
    for (t, s_to), (w, op) in crossing.items():
        s_from = stage[w]
        ti = table.tensor_index[t]
        node = doc.graph.get(t)
        rng = parse_range(node.body.get("range")) if node is not None else None
        whole = (rng.size if rng is not None else 0) * int(table.element_bytes[ti])
        per_device = int(held[ti]) // m
        seconds = collective_seconds("send", 2, per_device, link) if p > 1 else 0.0
        send[s_to - 1] += seconds
        for direction in ("forward", "backward") if has_backward else ("forward",):
            src, dst = (s_from, s_to) if direction == "forward" else (s_to, s_from)
            for i in range(m):
                sends.append(
                    {
                        "kind": "send",
                        "tensor": t,
                        "producer": table.op_ids[w],
                        "consumer": table.op_ids[op],
                        "meshAxes": [pipeline.axis],
                        "devices": 2,
                        "bytes": whole // m,
                        "bytesPerDevice": per_device,
                        "groups": n_group,
                        "seconds": seconds,
                        "microbatch": i,
                        "stages": [src, dst],
                        "pass": direction,
                    }
                )
    orders = stage_orders(pipeline.schedule, p, m, v, backward=has_backward)
    upper = simulate(orders, f_hi, b_hi, send, tail)
    lower = simulate(orders, f_lo, b_lo, send, tail)
    devices = _devices(doc, pipeline, mesh_axes, stage, roles, orders, upper, times, memory, m)
    return {
        "pipeline": {
            "axis": pipeline.axis,
            "schedule": pipeline.schedule,
            "stages": count,
            "devices": p,
            "virtualStages": v,
            "microbatches": m,
            "bubble": upper.bubble,
            "bubbleOverBusy": upper.bubble_over_busy,
            "stageSeconds": [f + b for f, b in zip(f_hi, b_hi, strict=True)],
            "forwardSeconds": f_hi,
            "backwardSeconds": b_hi,
            "sendSeconds": send,
            "inFlight": [in_flight(o) for o in orders],
            "grid": [b.to_json() for b in upper.boxes[:_GRID_LIMIT]],
            "seconds": upper.seconds,
        },
        "sends": sends,
        "time": {"lower": lower.seconds, "upper": upper.seconds},
        "devices": devices,
    }


def _devices(
    doc: PlacedDocument,
    pipeline: Pipeline,
    mesh_axes: tuple[tuple[str, int], ...],
    stage: list[int],
    roles: list[str],
    orders: list[list[Any]],
    grid: Grid,
    times: dict[Device, DeviceTime],
    memory: dict[Device, DeviceMemory],
    m: int,
) -> list[dict[str, Any]]:
    """Per device of the whole mesh (stage coordinate first in the loop), its share of the
    stage plan's device (see the module docstring)."""
    table = doc.table
    p, count = pipeline.devices, pipeline.stage_count
    kinds = tensor_kinds(doc)
    held = _held_bytes(doc)
    training = "backward" in roles
    param_bytes = [0] * count
    act_mb = [0.0] * count
    seen: set[tuple[int, int]] = set()
    for op in range(len(table.op_ids)):
        body = doc.operation(op).body
        s = stage[op]
        for t in selected_tensor_ids(body, "inputs"):
            ti = table.tensor_index.get(t)
            if ti is not None and kinds[ti] == _PARAMETERS and (s, ti) not in seen:
                seen.add((s, ti))
                param_bytes[s] += int(held[ti]) or _whole(doc, t, ti)
        if roles[op] == "forward":
            for t in selected_tensor_ids(body, "outputs"):
                ti = table.tensor_index.get(t)
                if ti is not None and (not training or kinds[ti] == _ACTIVATIONS):
                    act_mb[s] += int(held[ti]) / m
    total_params = sum(param_bytes) or 1
    busy_total = sum(grid.busy) or 1.0
    names = [a for a, _ in mesh_axes]
    at = names.index(pipeline.axis) if pipeline.axis in names else 0
    out = []
    capacity_devices = sorted(times, key=lambda d: (d[0], d[1]))
    for r in range(p):
        mine = [s for s in range(count) if s % p == r]
        share_p = sum(param_bytes[s] for s in mine) / total_params
        share_c = grid.busy[r] / busy_total * p if busy_total else 1.0 / p
        acts = int(in_flight(orders[r], act_mb))
        for device in capacity_devices:
            dt, held_mem = times[device], memory.get(device)
            split = dict(held_mem.split) if held_mem is not None else {}
            split = {
                k: int(
                    x * share_p
                    if k in ("parameters", "gradients", "optimizer")
                    else x * min(share_c, 1.0)
                )
                for k, x in split.items()
            }
            split["activations"] = acts
            peak = sum(split.values())
            coords = list(device[1])
            coords.insert(min(at, len(coords)), r)
            out.append(
                {
                    "mesh": device[0],
                    "coords": coords,
                    "stage": r,
                    "flops": int(dt.flops * min(share_c, 1.0)),
                    "computeSeconds": grid.busy[r],
                    "commSeconds": dt.comm * min(share_c, 1.0),
                    "peakBytes": peak,
                    "memory": split,
                    "overBudget": False,
                }
            )
    return out


def _whole(doc: PlacedDocument, tid: str, ti: int) -> int:
    node = doc.graph.get(tid)
    rng = parse_range(node.body.get("range")) if node is not None else None
    return (rng.size if rng is not None else 0) * int(doc.table.element_bytes[ti])
