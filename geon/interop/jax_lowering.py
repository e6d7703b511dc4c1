"""A placed document as JAX shardings (DESIGN.md §10, issue 31): the mesh, and the
``PartitionSpec`` of every tensor that a plan places, read from the document's placed shards.

>>> from geon import core as gc
>>> from geon.core.plans import apply_plan
>>> N, D = gc.Axis("N", 4), gc.Axis("D", 3)
>>> g = gc.graph([gc.relu(gc.placeholder(axes=[N, D], name="x"), name="h")])
>>> placed = apply_plan(g, {"name": "dp", "mesh": {"axes": {"dp": 2}}, "axisMapping": {"N": "dp"},
...     "inputs": {"x": {"over": {"N": "dp"}}}})
>>> lowering = lower_shardings(placed)
>>> lowering.mesh_axes, sorted(lowering.specs.values())
((('dp', 2),), [('dp', None), ('dp', None)])

The rule (DESIGN.md §10): a logical axis mapped to a mesh axis fills that dimension's
``PartitionSpec`` slot. geon reads it back from the regions each device writes (an operation's
Applications) or holds (a graph input a plan placed, :func:`geon.core.plans.held_regions`), so
that overrides and contracted splits lower as they were placed, not as the mapping says:

- a tensor dim is split over the mesh axes whose coordinate picks its block: the blocks must be
  equal and contiguous, numbered row-major over those mesh axes in the mesh's order (what
  ``NamedSharding`` means by ``P(("dp", "tp"))``); a dim nobody splits is ``None``;
- a contracted split is the partial products' parts axis split over the mesh axis, and a sum
  over it: XLA's partitioner turns that sum into the all-reduce (or reduce-scatter) geon
  predicts, so nothing here needs XLA's "unreduced" state;
- an operation that runs whole (no Applications) is replicated on the plan's mesh: ``P()``;
- what ``NamedSharding`` cannot say (uneven blocks, a tensor on some devices only, such as an
  input placed on one device) gets no constraint: XLA chooses, and ``geon verify`` names the
  rule (``unexpressible-placement`` in docs/engines.md).

One mesh per program: a document placed on several meshes is refused naming them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.plans import held_regions
from geon.core.plans.shards import Mesh
from geon.core.plans.table import Box, read_table

__all__ = ["Lowering", "Spec", "lower_shardings", "spec_of"]

Spec = tuple[str | tuple[str, ...] | None, ...]
"""A ``PartitionSpec`` as a tuple: per tensor dim, a mesh axis, several (major first) or None."""


@dataclass(slots=True)
class Lowering:
    """The mesh (``()`` when nothing is placed) and the spec of every tensor a plan placed, by
    tensor id; ``unexpressible``: tensors whose placement no spec says (left unconstrained)."""

    mesh_axes: tuple[tuple[str, int], ...] = ()
    specs: dict[str, Spec] = field(default_factory=dict)
    unexpressible: list[str] = field(default_factory=list)
    placed_ops: set[str] = field(default_factory=set)

    @property
    def devices(self) -> int:
        n = 1
        for _, size in self.mesh_axes:
            n *= size
        return n


def spec_of(
    entries: list[tuple[tuple[int, ...], Box]], mesh: Mesh, shape: tuple[int, ...]
) -> Spec | None:
    """The spec of a tensor of ``shape`` whose blocks sit on the devices of ``mesh`` as
    ``entries`` (coordinates, region) say, or None when no ``PartitionSpec`` says it (see the
    module docstring).

    >>> m = Mesh("m", "", (("dp", 2), ("tp", 2)))
    >>> whole = ((0, 0), (4, 6))
    >>> spec_of([((i, j), whole) for i in range(2) for j in range(2)], m, (4, 6))
    (None, None)
    >>> rows = [((i, j), ((2 * i, 0), (2 * i + 2, 6))) for i in range(2) for j in range(2)]
    >>> spec_of(rows, m, (4, 6))
    ('dp', None)
    >>> spec_of([((0, 0), whole)], m, (4, 6)) is None
    True
    """
    by_device: dict[tuple[int, ...], Box] = {}
    for coords, box in entries:
        if coords in by_device and by_device[coords] != box:
            return None
        by_device[coords] = box
    if len(by_device) != mesh.size:
        return None
    names = mesh.axis_names()
    sizes = [s for _, s in mesh.axes]
    rank = len(shape)
    if any(len(box[0]) != rank for box in by_device.values()):
        return None
    origin = [min(box[0][d] for box in by_device.values()) for d in range(rank)]
    used: set[int] = set()
    spec: list[str | tuple[str, ...] | None] = []
    for d in range(rank):
        spans = {c: (box[0][d] - origin[d], box[1][d] - origin[d]) for c, box in by_device.items()}
        distinct = sorted(set(spans.values()))
        if len(distinct) == 1:
            if distinct[0] != (0, shape[d]):
                return None
            spec.append(None)
            continue
        k = len(distinct)
        if shape[d] % k or any(b - a != shape[d] // k for a, b in distinct):
            return None
        block = {c: a // (shape[d] // k) for c, (a, _) in spans.items()}
        axes = [
            m
            for m in range(len(names))
            if any(block[c] != block[_moved(c, m)] for c in block if _moved(c, m) in block)
        ]
        if used & set(axes) or int(np.prod([sizes[m] for m in axes])) != k:
            return None
        for c, b in block.items():
            index = 0
            for m in axes:
                index = index * sizes[m] + c[m]
            if index != b:
                return None
        used.update(axes)
        spec.append(names[axes[0]] if len(axes) == 1 else tuple(names[m] for m in axes))
    return tuple(spec)


def _moved(coords: tuple[int, ...], m: int) -> tuple[int, ...]:
    """``coords`` one step along mesh axis ``m`` (to 0 from the last coordinate)."""
    out = list(coords)
    out[m] = out[m] + 1
    return tuple(out)


def lower_shardings(graph: Graph, shapes: dict[str, tuple[int, ...]] | None = None) -> Lowering:
    """The mesh and per-tensor specs of ``graph``'s placed plan (see the module docstring);
    ``shapes``: each tensor's shape by id (read from the table's regions when not given)."""
    table = read_table(graph)
    meshes = {mid: m for mid, m in table.meshes.items() if m is not None}
    used = {table.devices[d][0] for d in table.device[table.device >= 0].tolist()}
    held = held_regions(graph)
    used |= {mesh_id for mesh_id, _ in held.values()}
    used &= set(meshes)
    if len(used) > 1:
        names = ", ".join(sorted(repr(meshes[m].name or m) for m in used))
        raise GeonError(
            f"the document is placed on {len(used)} meshes ({names}); a JAX program has one "
            "mesh: place every operation on one of them"
        )
    if not used:
        return Lowering()
    mesh = meshes[used.pop()]
    out = Lowering(mesh_axes=mesh.axes)
    shapes = shapes or {}
    rows = table.rows
    writes: dict[int, dict[int, list[tuple[tuple[int, ...], Box]]]] = {}
    for r in np.flatnonzero(rows.write).tolist():
        shard = int(rows.shard[r])
        device = int(table.device[shard])
        if device < 0:
            continue
        op = int(table.op[shard])
        tensor = int(rows.tensor[r])
        writes.setdefault(tensor, {}).setdefault(op, []).append(
            (table.devices[device][1], table.box(r))
        )
    for tensor, by_op in writes.items():
        tid = table.tensor_ids[tensor]
        entries = [e for es in by_op.values() for e in es]
        shape = shapes.get(tid) or _extent(entries)
        spec = spec_of(entries, mesh, shape)
        if spec is None:
            out.unexpressible.append(tid)
        else:
            out.specs[tid] = spec
        for op in by_op:
            op_id = table.op_ids[op]
            if any(table.device[s] >= 0 for s in np.flatnonzero(table.op == op).tolist()):
                out.placed_ops.add(op_id)
    for tid, (_, regions) in held.items():
        entries = [(coords, (r.start, r.end)) for coords, r in regions]
        shape = shapes.get(tid) or _extent(entries)
        spec = spec_of(entries, mesh, shape)
        if spec is None:
            out.unexpressible.append(tid)
        else:
            out.specs[tid] = spec
    return out


def _extent(entries: list[tuple[tuple[int, ...], Box]]) -> tuple[int, ...]:
    """The shape of the union of ``entries``' boxes (a tensor its shards cover)."""
    rank = len(entries[0][1][0])
    return tuple(
        max(b[1][d] for _, b in entries) - min(b[0][d] for _, b in entries) for d in range(rank)
    )
