"""The cost of a plan with pipeline stages (DESIGN.md §12, issue 33): the report of one stage's
plan (:meth:`geon.core.plans.Plan.stage_plan`, the mesh less the pipeline's axis) turned into the
pipeline's.

**Stages.** Every operation takes the virtual stage whose scopes hold its ``Group`` scope (a
training step's ``backward/…`` and ``optimizer/…`` scopes are read without that prefix, so a
layer's backward runs on its forward's stage); one under none takes the latest stage of the
operations writing what it reads (stage 0 when none does). ``"balanced"`` cuts the top-level
scopes (``layers.0``, ``layers.1``, …, in run order) into ``p·v`` contiguous stages so that the
largest stage's seconds are the least (an exact linear partition).

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

from typing import Any

import numpy as np

from geon.core.errors import GeonError, quote
from geon.core.nodes import Node, selected_tensor_ids
from geon.core.plans.cost.collectives import Collective
from geon.core.plans.cost.formulas import collective_seconds
from geon.core.plans.cost.ledger import _ACTIVATIONS, _PARAMETERS, DeviceMemory, _role, tensor_kinds
from geon.core.plans.cost.placed import PlacedDocument
from geon.core.plans.cost.profiles import Profile
from geon.core.plans.cost.schedules import Grid, in_flight, simulate, stage_orders
from geon.core.plans.cost.timing import AllWork, DeviceTime, operation_seconds
from geon.core.plans.pipeline import Pipeline, scope_matches
from geon.core.plans.table import Device
from geon.core.zspace import parse_range

__all__ = ["operation_stages", "pipeline_report"]

_GROUP = "urn:geon:2026-11:tag_types.jsd#/tags/Group"
_CONTRACTED_SPLIT = "urn:geon:2026-11:tag_types.jsd#/tags/ContractedSplit"
_GRID_LIMIT = 20_000


def _scope(node: Node, ops: dict[str, Node]) -> str:
    """An operation's ``Group`` scope without a ``backward/`` or ``optimizer/`` prefix (a
    contracted split's pieces read the operation they replace)."""
    tags = node.tags or {}
    split = tags.get(_CONTRACTED_SPLIT)
    if isinstance(split, dict):
        if isinstance(split.get("original"), dict):
            tags = split["original"].get("tags") or {}
        elif isinstance(split.get("sum"), str) and split["sum"] in ops:
            return _scope(ops[split["sum"]], ops)
    group = tags.get(_GROUP)
    scope = group.get("scope") if isinstance(group, dict) else None
    if not isinstance(scope, str):
        return ""
    scope = scope.strip("/")
    for role in ("backward", "optimizer"):
        if scope == role:
            return ""
        if scope.startswith(role + "/"):
            return scope[len(role) + 1 :]
    return scope


def _partition(loads: list[float], parts: int) -> list[int]:
    """The part of each load: ``parts`` contiguous runs, the largest run's sum the least."""
    n = len(loads)
    prefix = [0.0]
    for x in loads:
        prefix.append(prefix[-1] + x)
    inf = float("inf")
    best = [[inf] * (n + 1) for _ in range(parts + 1)]
    cut = [[0] * (n + 1) for _ in range(parts + 1)]
    best[0][0] = 0.0
    for k in range(1, parts + 1):
        for j in range(k, n - (parts - k) + 1):
            for i in range(k - 1, j):
                worst = max(best[k - 1][i], prefix[j] - prefix[i])
                if worst < best[k][j]:
                    best[k][j], cut[k][j] = worst, i
    out = [0] * n
    j = n
    for k in range(parts, 0, -1):
        i = cut[k][j]
        out[i:j] = [k - 1] * (j - i)
        j = i
    return out


def operation_stages(doc: PlacedDocument, pipeline: Pipeline, seconds: np.ndarray) -> list[int]:
    """The virtual stage of every operation (indices of the table's ``op_ids``; see the module
    docstring); :class:`GeonError` when a stage holds no operation or ``balanced`` has fewer
    top-level scopes than stages."""
    table = doc.table
    ops = table.ops
    count = pipeline.stage_count
    scopes = [_scope(doc.operation(op), ops) for op in range(len(table.op_ids))]
    stage = [-1] * len(table.op_ids)
    if pipeline.stages is None:
        units: dict[str, float] = {}
        for op in doc.order:
            top = scopes[op].split("/")[0]
            if top and (top in units or _role(doc.operation(op), ops) == "forward"):
                units[top] = units.get(top, 0.0) + float(seconds[op])
        if len(units) < count:
            raise GeonError(
                f'pipeline stages "balanced" cut the top-level Group scopes into {count} stages; '
                f"the document has {len(units)} ({', '.join(quote(u) for u in list(units)[:8])})"
                "; expected fewer stages or an explicit list of scopes per stage"
            )
        parts = dict(zip(units, _partition(list(units.values()), count), strict=True))
        for op in range(len(stage)):
            stage[op] = parts.get(scopes[op].split("/")[0], -1)
    else:
        for op in range(len(stage)):
            if scopes[op]:
                stage[op] = next(
                    (
                        k
                        for k, prefixes in enumerate(pipeline.stages)
                        if any(scope_matches(scopes[op], s) for s in prefixes)
                    ),
                    -1,
                )
        empty = sorted(set(range(count)) - set(stage))
        if empty:
            raise GeonError(
                f"pipeline stage {empty[0]} {quote(list(pipeline.stages[empty[0]]))} holds no "
                "operation (no Group scope is or lies under its scopes); expected the scopes of "
                'the document\'s layers, like "layers.0"'
            )
    writer: dict[str, int] = {}
    for op in doc.order:
        body = doc.operation(op).body
        if stage[op] < 0:
            stage[op] = max(
                (writer[t] for t in selected_tensor_ids(body, "inputs") if t in writer), default=0
            )
        for t in selected_tensor_ids(body, "outputs"):
            writer[t] = stage[op]
    return stage


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
    writer: dict[str, int] = {}
    for op in doc.order:
        if roles[op] == "forward":
            for t in selected_tensor_ids(doc.operation(op).body, "outputs"):
                writer[t] = op
    crossing: dict[tuple[str, int], tuple[int, int]] = {}
    for op in doc.order:
        if roles[op] != "forward":
            continue
        for t in selected_tensor_ids(doc.operation(op).body, "inputs"):
            w = writer.get(t)
            if w is not None and stage[w] < stage[op]:
                crossing.setdefault((t, stage[op]), (w, op))
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
