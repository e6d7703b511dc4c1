"""Plan against plan (issue 18, "Diffs"): two placed documents, each a plan written into the same
document (:func:`geon.core.plans.apply_plan`), compared under one hardware profile.

>>> from geon import core as gc
>>> from geon.core.plans.cost import load_profile
>>> from geon.core.plans import apply_plan
>>> N, D = gc.Axis("N", 4), gc.Axis("D", 3)
>>> g = gc.graph([gc.relu(gc.placeholder(axes=[N, D], name="x"), name="h")])
>>> whole = {"name": "one", "mesh": {"name": "m", "axes": {"dp": 2}}}
>>> dp = {**whole, "name": "dp", "axisMapping": {"N": "dp"}}
>>> a, b = apply_plan(g, whole, mesh_id="m1"), apply_plan(g, dp, mesh_id="m2")
>>> diff = plan_diff(a, b, load_profile("cpu-host"), base_mesh="m1", target_mesh="m2")
>>> [(p["operationLabel"], p["before"]["split"], p["after"]["split"]) for p in diff["placements"]]
[('op:relu → h', {}, {'N': 2})]
>>> [d["device"] for d in diff["devices"]]
['device 0', 'device 1']

Nodes are matched by id (a plan's partial products have ids made from their dot's id, so two
plans that both split a contracted axis make the same ones):

- ``placements``: every operation of either document placed differently, as
  ``{"operation", "operationLabel", "before", "after"}`` (the label: its name and what it
  writes, ``op:dot → q``); a side is ``{"split": {index axis:
  parts}, "meshAxes": {index axis: mesh axis}, "mesh": mesh name or None, "devices": [coords]}``
  (:func:`placement_of`), or None where that plan's document has no such operation;
- ``collectives``: matched by kind, edge (tensor, producer, consumer) and mesh axes; ``added``
  and ``removed`` are collectives (the cost model's JSON with ``tensorLabel``, ``producerLabel``
  and ``consumerLabel``), ``changed`` are ``{"before", "after", "bytesDelta", "secondsDelta"}``
  whose bytes, seconds or devices differ;
- ``devices``: every device of either plan, ``{"device", "before", "after", "peakBytesDelta",
  "secondsDelta"}``, a side being ``{"mesh", "coords", "peakBytes", "computeSeconds",
  "commSeconds", "seconds"}`` (``seconds``: compute and communication) or None where that plan
  does not use it (a missing side counts as 0 in the deltas). A plan's own mesh (``base_mesh``,
  ``target_mesh``: two plans have two Mesh nodes) is the same devices in both: its devices are
  matched by their row-major number, ``device 0`` ...; any other mesh's devices by mesh and
  number (``"<mesh name> device 0"``);
- ``time``: the step time interval (seconds) ``{"before", "after", "delta"}``, each
  ``{"lower", "upper"}``.

Deltas are ``after - before``.

**Pipelined plans** (issue 33, DESIGN.md §12): given the plans themselves (``base_plan``,
``target_plan``), a side whose plan has pipeline stages is costed as ``geon cost`` costs it
(:func:`geon.core.plans.cost.cost_report` with ``plan``: one implementation,
:mod:`geon.core.plans.cost.pipelined`): its ``time`` includes the bubble, its collectives the
``send`` of each microbatch between stages (matched by microbatch, pass and stages as well, so
two schedules' sends pair up one by one), and its devices are the whole mesh's (numbered
row-major over the plan's mesh, the pipeline's axis included). The answer then gains
``pipeline``: ``{"a", "b", "changed", "bubbleDelta"}``, ``a`` (before) and ``b`` (after) each
``{"axis", "schedule", "stages" (their count), "devices", "virtualStages", "microbatches",
"bubble", "balanced"}`` or None for a plan without stages, ``changed`` the names of the fields
that differ (every field of the one side when the other has none), ``bubbleDelta`` the bubble's
change (a side without stages idles 0). Where neither plan has stages there is no ``pipeline``
and the answer is as before. The sides are ``a`` and ``b`` as the REST path names the plans
(``plans/<a>/diff/<b>``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from geon.core.graph import Graph
from geon.core.nodes import INDEX_AXES, Node, selected_tensor_ids
from geon.core.plans.cost import Profile, cost_report
from geon.core.plans.model import Plan
from geon.core.plans.shards import Mesh
from geon.core.plans.table import UNPLACED, Box, Device, ShardTable, read_table

__all__ = ["named_collective", "operation_placements", "placement_of", "plan_diff"]

_FIGURES = ("bytes", "seconds", "devices")
"""What makes a matched collective changed."""


def plan_diff(
    base: Graph,
    target: Graph,
    profile: Profile,
    *,
    base_mesh: str | None = None,
    target_mesh: str | None = None,
    base_plan: Plan | None = None,
    target_plan: Plan | None = None,
) -> dict[str, Any]:
    """Placed document ``base`` (before) against ``target`` (after) under ``profile`` (see the
    module docstring); ``base_mesh`` and ``target_mesh`` are the ids of the plans' own meshes,
    ``base_plan`` and ``target_plan`` the plans written into them (read for their pipeline
    stages; None: a document placed by hand, or a plan without stages)."""
    old, new = read_table(base), read_table(target)  # each read once, for cost and placements
    before = cost_report(base, profile, old, plan=base_plan)
    after = cost_report(target, profile, new, plan=target_plan)
    out: dict[str, Any] = {
        "placements": _placements(base, target, old, new),
        "collectives": _collectives(
            [named_collective(base, c) for c in before["collectives"]],
            [named_collective(target, c) for c in after["collectives"]],
        ),
        "devices": _devices(
            _device_rows(base, before["devices"], base_mesh, base_plan),
            _device_rows(target, after["devices"], target_mesh, target_plan),
        ),
        "time": {
            "before": before["time"],
            "after": after["time"],
            "delta": {k: after["time"][k] - before["time"][k] for k in ("lower", "upper")},
        },
    }
    if "pipeline" in before or "pipeline" in after:
        out["pipeline"] = _pipelines(
            _pipeline_side(base_plan, before.get("pipeline")),
            _pipeline_side(target_plan, after.get("pipeline")),
        )
    return out


def named_collective(graph: Graph, collective: dict[str, Any]) -> dict[str, Any]:
    """A collective of ``graph``'s cost with the names a person reads beside its ids: its
    tensor's, producer's and consumer's (:attr:`Node.name`; the id of a node not in ``graph``)."""

    def name(node_id: str) -> str:
        node = graph.get(node_id)
        return node.name if node is not None else node_id

    return {
        **collective,
        "tensorLabel": name(collective["tensor"]),
        "producerLabel": name(collective["producer"]),
        "consumerLabel": name(collective["consumer"]),
    }


# -- placements -------------------------------------------------------------------------------


def _index_names(op: Node, rank: int) -> list[str]:
    """The names of an operation's index dims: its ``IndexAxes``, else ``dim 0``, ``dim 1``..."""
    tag = op.tags.get(INDEX_AXES) if op.tags else None
    axes = tag.get("axes") if isinstance(tag, dict) else None
    if isinstance(axes, list) and len(axes) == rank and all(isinstance(a, str) for a in axes):
        return list(axes)
    return [f"dim {d}" for d in range(rank)]


def _mesh_axis_of(placed: list[tuple[Device, Box]], dim: int, mesh: Mesh) -> str | None:
    """The mesh axis whose coordinate alone decides which part of ``dim`` a shard runs, when
    one does."""
    for k, (axis, size) in enumerate(mesh.axes):
        if size < 2:
            continue
        parts: dict[int, set[tuple[int, int]]] = defaultdict(set)
        for (_, coords), (start, end) in placed:
            parts[coords[k]].add((start[dim], end[dim]))
        if all(len(p) == 1 for p in parts.values()) and len(set().union(*parts.values())) > 1:
            return axis
    return None


def placement_of(
    op: Node, placed: list[tuple[Device, Box]], meshes: dict[str, Mesh | None]
) -> dict[str, Any]:
    """How an operation runs, from the device and ``IPFIndex`` of each of its placed shards
    (:func:`geon.core.plans.table.read_table`): the parts of each index dim it is cut into
    (dims cut in one part left out), the mesh axis each cut dim is spread over (when one mesh
    axis decides it), its mesh's name and the coordinates of its devices. An operation run whole
    is replicated: no split, on every device of the plan's mesh
    (:func:`geon.core.plans.shards.replica_devices`); unplaced, with no mesh and no devices, when
    the document uses no mesh or several."""
    if not placed:
        return {"split": {}, "meshAxes": {}, "mesh": None, "devices": []}
    rank = len(placed[0][1][0])
    names = _index_names(op, rank)
    mesh_ids = {mesh_id for (mesh_id, _), _ in placed}
    mesh = meshes.get(next(iter(mesh_ids))) if len(mesh_ids) == 1 else None
    split: dict[str, int] = {}
    mesh_axes: dict[str, str] = {}
    for d in range(rank):
        cuts = {(start[d], end[d]) for _, (start, end) in placed}
        if len(cuts) < 2:
            continue
        split[names[d]] = len(cuts)
        axis = _mesh_axis_of(placed, d, mesh) if mesh is not None else None
        if axis is not None:
            mesh_axes[names[d]] = axis
    shown = {m.name or m.id for mid in mesh_ids if (m := meshes.get(mid)) is not None}
    return {
        "split": split,
        "meshAxes": mesh_axes,
        "mesh": ", ".join(sorted(shown)) or None,
        "devices": [list(coords) for _, coords in sorted({device for device, _ in placed})],
    }


def _placed_by_op(table: ShardTable) -> dict[str, list[tuple[Device, Box]]]:
    """Per operation, the device and ``IPFIndex`` of each of its placed shards (those with a
    well-formed ``IPFIndex``)."""
    found: dict[str, list[tuple[Device, Box]]] = {op_id: [] for op_id in table.op_ids}
    for n in np.flatnonzero(table.placed).tolist():
        box = table.index_box(n)
        if box is not None and table.devices[table.device[n]] != UNPLACED:  # no plan: unplaced
            found[table.op_ids[table.op[n]]].append((table.devices[table.device[n]], box))
    return found


def operation_placements(graph: Graph, table: ShardTable) -> list[dict[str, Any]]:
    """How each operation of a placed document runs (issue 35: Compare reads a plan made by axis
    mapping, which names no operation, from what it places), in document order, each
    ``{"operation", "label", "split", "over", "parts"}``: ``split`` the parts of each index dim
    cut in more than one, ``over`` the mesh axis each cut dim is spread over (where one mesh axis
    decides it; None for an operation run whole), ``parts`` the pieces it runs in (1: whole).
    The same reading as ``plan_diff``'s placements (:func:`placement_of`); ``table`` is
    ``read_table(graph)``."""
    placed = _placed_by_op(table)
    out = []
    for op_id, op in table.ops.items():
        found = placement_of(op, placed[op_id], table.meshes)
        split: dict[str, int] = found["split"]
        parts = 1
        for n in split.values():
            parts *= n
        out.append(
            {
                "operation": op_id,
                "label": _operation_label(graph, op),
                "split": split,
                "over": (found["meshAxes"] or None) if split else None,
                "parts": parts,
            }
        )
    return out


def _placements(
    base: Graph, target: Graph, old: ShardTable, new: ShardTable
) -> list[dict[str, Any]]:
    """The operations of either document (``old`` and ``new``: their shards) placed
    differently, in the target's document order, then those only the base has."""
    old_placed, new_placed = _placed_by_op(old), _placed_by_op(new)
    out = []
    for op_id in [*new.ops, *(i for i in old.ops if i not in new.ops)]:
        op = new.ops.get(op_id) or old.ops[op_id]
        # each side names the dims by its own operation: a contracted split's parts axis is
        # named after the plan's mesh axis (F_over_tp)
        before = (
            placement_of(old.ops[op_id], old_placed[op_id], old.meshes)
            if op_id in old.ops
            else None
        )
        after = placement_of(op, new_placed[op_id], new.meshes) if op_id in new.ops else None
        if before != after:
            label = _operation_label(target if op_id in new.ops else base, op)
            out.append(
                {"operation": op_id, "operationLabel": label, "before": before, "after": after}
            )
    return out


def _operation_label(graph: Graph, op: Node) -> str:
    """An operation as people read it in a table: its name and what it writes (``op:dot → q``),
    as the editor's plan comparison shows it."""
    outs = [
        node.name if (node := graph.get(tid)) is not None else tid
        for tid in selected_tensor_ids(op.body, "outputs")
    ]
    return f"{op.name} → {', '.join(outs)}" if outs else op.name


# -- pipeline stages --------------------------------------------------------------------------

_PIPELINE_FIGURES = (
    "axis",
    "schedule",
    "stages",
    "devices",
    "virtualStages",
    "microbatches",
    "bubble",
    "balanced",
)
"""A pipeline side's fields, in the order ``changed`` lists them."""


def _pipeline_side(plan: Plan | None, costed: dict[str, Any] | None) -> dict[str, Any] | None:
    """One side of ``pipeline``: the cost's ``pipeline`` section (``costed``) less its
    per-stage figures and grid, and whether the plan's stages were ``balanced``."""
    if costed is None:
        return None
    balanced = plan is not None and plan.pipeline is not None and plan.pipeline.stages is None
    side = {k: costed[k] for k in _PIPELINE_FIGURES if k != "balanced"}
    return {**side, "balanced": balanced}


def _pipelines(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any]:
    """``{"a", "b", "changed", "bubbleDelta"}`` (see the module docstring)."""
    if a is None or b is None:
        changed = list(_PIPELINE_FIGURES)
    else:
        changed = [k for k in _PIPELINE_FIGURES if a[k] != b[k]]
    bubble = {
        side: 0.0 if found is None else found["bubble"] for side, found in (("a", a), ("b", b))
    }
    return {"a": a, "b": b, "changed": changed, "bubbleDelta": bubble["b"] - bubble["a"]}


# -- collectives ------------------------------------------------------------------------------


def _key(collective: dict[str, Any]) -> tuple[Any, ...]:
    """What matches a collective with the other plan's: kind, edge and mesh axes, and for a
    pipeline's ``send`` its microbatch, pass and stages (absent elsewhere)."""
    c = collective
    return (
        c["kind"],
        c["tensor"],
        c["producer"],
        c["consumer"],
        tuple(c["meshAxes"]),
        c.get("microbatch"),
        c.get("pass"),
        tuple(c.get("stages") or ()),
    )


def _collectives(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Added (in the after's order), removed (in the before's) and changed collectives; two
    collectives with one key (never on one edge today) are matched in order."""
    waiting: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for c in before:
        waiting[_key(c)].append(c)
    added, changed = [], []
    for c in after:
        olds = waiting[_key(c)]
        if not olds:
            added.append(c)
            continue
        old = olds.pop(0)
        if any(old[f] != c[f] for f in _FIGURES):
            changed.append(
                {
                    "before": old,
                    "after": c,
                    "bytesDelta": c["bytes"] - old["bytes"],
                    "secondsDelta": c["seconds"] - old["seconds"],
                }
            )
    removed = [c for olds in waiting.values() for c in olds]
    order = {id(c): n for n, c in enumerate(before)}
    removed.sort(key=lambda c: order[id(c)])
    return {"added": added, "removed": removed, "changed": changed}


# -- devices ----------------------------------------------------------------------------------


def _number(coords: Iterable[int], sizes: Iterable[int]) -> int:
    """A device's row-major number on a mesh of axes of ``sizes``."""
    n = 0
    for c, size in zip(coords, sizes, strict=True):
        n = n * size + c
    return n


def _sizes(mesh: Mesh, device: dict[str, Any], plan: Plan | None) -> list[int]:
    """The axis sizes ``device`` (a cost report's) of ``mesh`` is numbered over: its mesh's, and
    for a pipeline stage's device (on the plan's mesh written less the pipeline's axis) the
    pipeline's devices where the cost puts its coordinate
    (:func:`geon.core.plans.cost.pipelined.pipeline_report`: at the axis's place in the plan's
    mesh)."""
    sizes = [size for _, size in mesh.axes]
    if plan is None or plan.pipeline is None or "stage" not in device:
        return sizes
    names = [a for a, _ in plan.mesh_axes]
    at = names.index(plan.pipeline.axis) if plan.pipeline.axis in names else 0
    sizes.insert(min(at, len(sizes)), plan.pipeline.devices)
    return sizes


def _device_rows(
    graph: Graph, ledger: list[dict[str, Any]], plan_mesh: str | None, plan: Plan | None = None
) -> dict[tuple[str | None, int], tuple[str, dict[str, Any]]]:
    """The cost report's devices by their key (None for the plan's own mesh, else the mesh id;
    and the device's number), each with its name and its side of the diff. A document no plan
    placed runs on one device (:data:`~geon.core.plans.table.UNPLACED`): it stands beside the
    other side's device 0, its mesh named ``unplaced``. A pipelined ``plan``'s devices are the
    whole mesh's (:func:`_sizes`)."""
    meshes = {n.id: Mesh.from_node(n) for n in graph.nodes if n.id in {d["mesh"] for d in ledger}}
    rows = {}
    for d in ledger:
        mesh = meshes.get(d["mesh"])
        unplaced = mesh is None and (d["mesh"], tuple(d["coords"])) == UNPLACED
        if mesh is None and not unplaced:
            continue  # a device of no mesh of the document: the cost model names none such
        sizes = [] if mesh is None else _sizes(mesh, d, plan)
        number = 0 if mesh is None else _number(d["coords"], sizes)
        own = unplaced or d["mesh"] == plan_mesh
        where = "unplaced" if mesh is None else mesh.name or mesh.id
        name = f"device {number}" if own else f"{where} device {number}"
        rows[(None if own else d["mesh"], number)] = (
            name,
            {
                "mesh": where,
                "coords": d["coords"],
                "peakBytes": d["peakBytes"],
                "computeSeconds": d["computeSeconds"],
                "commSeconds": d["commSeconds"],
                "seconds": d["computeSeconds"] + d["commSeconds"],
            },
        )
    return rows


def _devices(
    before: dict[tuple[str | None, int], tuple[str, dict[str, Any]]],
    after: dict[tuple[str | None, int], tuple[str, dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Every device of either plan: the plans' own meshes first, by number, then the others."""
    keys = sorted(before.keys() | after.keys(), key=lambda k: (k[0] is not None, k[0] or "", k[1]))
    out = []
    for key in keys:
        old = before[key][1] if key in before else None
        new = after[key][1] if key in after else None
        name = (after.get(key) or before[key])[0]
        zero = {"peakBytes": 0, "seconds": 0.0}
        out.append(
            {
                "device": name,
                "before": old,
                "after": new,
                "peakBytesDelta": (new or zero)["peakBytes"] - (old or zero)["peakBytes"],
                "secondsDelta": (new or zero)["seconds"] - (old or zero)["seconds"],
            }
        )
    return out
