"""A placed document read once for the cost model (DESIGN.md §9): its shards as columns
(:class:`~geon.core.plans.table.ShardTable`: device, index box, regions read and written), its
operations in run order, its meshes, and the regions of the graph inputs a plan placed.

>>> doc = read_placed(Graph())
>>> doc.table.ids, doc.order, doc.meshes
([], [], {})

Boxes (regions as ``(start, end)`` tuples), devices (``(mesh id, coords)``) and the shards
themselves are :mod:`geon.core.plans.table`'s (:func:`~geon.core.plans.table.read_table`, the
one reader of placed shards): an Application counts when its ``Placement`` names a mesh and
coordinates; an operation with no placed Application runs whole, replicated: one shard of its own
selections on every device of the plan's mesh (:func:`geon.core.plans.shards.replica_devices`; one
unplaced shard, device ``-1``, when no mesh or several are used). Malformed selections (and
those whose rank is not their tensor's), placements and meshes are left out (the checker
reports them).

The **run order** is the executor's (:func:`geon.core.order.run_order`): waves of the operations
whose inputs are all written, each wave in document order; operations in a cycle are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from geon.core.graph import Graph
from geon.core.nodes import Node
from geon.core.order import run_order
from geon.core.plans.cost.cells import boxes_union_size
from geon.core.plans.inputs import held_regions
from geon.core.plans.shards import Mesh
from geon.core.plans.table import Box, ShardTable, placement_device, read_table

__all__ = ["PlacedDocument", "boxes_union_size", "read_placed"]


@dataclass(slots=True)
class PlacedDocument:
    """What the cost model reads of a document (see the module docstring)."""

    graph: Graph
    table: ShardTable
    order: list[int] = field(default_factory=list)
    """The operations (indices of the table's ``op_ids``) in run order."""
    meshes: dict[str, Mesh] = field(default_factory=dict)
    held: list[tuple[int, int, Box]] = field(default_factory=list)
    """Graph inputs a plan placed: ``(tensor, device, box)``, the region each device holds (on
    one device, sharded or replicated: :func:`geon.core.plans.held_regions`), as indices of the
    table's tensors and devices."""

    def operation(self, op: int) -> Node:
        return self.table.ops[self.table.op_ids[op]]

    def shards_of(self, op_id: str) -> np.ndarray:
        """The shards of one operation, in order."""
        return np.flatnonzero(self.table.op == self.table.op_index[op_id])

    def devices(self) -> list[int]:
        """Every device of every mesh a shard is placed on (idle ones too), mesh by mesh in
        document order, coordinates in row-major order, as indices of the table's devices."""
        number = self.table.device_number
        return [
            number((mesh.id, mesh.coords(n)))
            for mesh in self.meshes.values()
            for n in range(mesh.size)
        ]


def read_placed(graph: Graph, table: ShardTable | None = None) -> PlacedDocument:
    """The placed document of ``graph`` (see the module docstring): its shards as
    :func:`geon.core.plans.table.read_table` reads them (``table``, when already read), with
    the placed graph inputs, the meshes and the run order."""
    table = read_table(graph) if table is None else table
    doc = PlacedDocument(graph, table)
    meshes = table.meshes
    for tid, (mesh_id, regions) in held_regions(graph).items():
        for coords, r in regions:
            device = placement_device({"mesh": mesh_id, "coords": list(coords)}, meshes, graph)
            if device is not None and tid in table.tensor_index:
                doc.held.append(
                    (table.tensor_index[tid], table.device_number(device), (r.start, r.end))
                )
    doc.meshes = {mid: m for mid, m in meshes.items() if m is not None}
    ordered = run_order(list(table.ops.values()))[0]
    doc.order = [table.op_index[op.id] for op in ordered]
    return doc
