"""A placed document read once for the cost model (DESIGN.md §9): its Applications as
:class:`Shard` records (device, index box, boxes read and written), its operations in run order,
its meshes, the dtype, bytes per element and rank of each tensor, and the regions of the graph
inputs a plan placed.

>>> doc = read_placed(Graph())
>>> doc.shards, doc.order, doc.meshes
([], [], {})

Boxes (regions as ``(start, end)`` tuples), devices (``(mesh id, coords)``) and the shards
themselves are :mod:`geon.core.cost`'s (:func:`geon.core.cost.read_shards`, the one reader of
placed shards): an Application counts when its ``Placement`` names a mesh and coordinates; an
operation with no placed Application runs whole, replicated: one :class:`Shard` of its own
selections on every device of the plan's mesh (:func:`geon.core.sharding.replica_devices`; one
unplaced shard, ``device`` None, when no mesh or several are used). Malformed selections (and
those whose rank is not their tensor's), placements and meshes are left out (the checker
reports them).

The **run order** is the executor's (:func:`geon.core.order.run_order`): waves of the operations
whose inputs are all written, each wave in document order; operations in a cycle are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from geon.core.cost import (
    Box,
    Device,
    Shard,
    boxes_union_size,
    placement_device,
    read_shards,
)
from geon.core.graph import Graph
from geon.core.nodes import Node
from geon.core.order import run_order
from geon.core.plans import held_regions
from geon.core.sharding import Mesh

__all__ = ["PlacedDocument", "Shard", "boxes_union_size", "read_placed"]


@dataclass(slots=True)
class PlacedDocument:
    """What the cost model reads of a document (see the module docstring)."""

    graph: Graph
    shards: list[Shard] = field(default_factory=list)
    by_op: dict[str, list[Shard]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    meshes: dict[str, Mesh] = field(default_factory=dict)
    element_bytes: dict[str, int] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    held: dict[str, list[tuple[Device, Box]]] = field(default_factory=dict)
    """Graph inputs a plan placed: the region each device holds (on one device, sharded or
    replicated: :func:`geon.core.plans.held_regions`)."""

    def operation(self, op_id: str) -> Node:
        return self.graph.node(op_id)

    def devices(self) -> list[Device]:
        """Every device of every mesh a shard is placed on (idle ones too), mesh by mesh in
        document order, coordinates in row-major order."""
        out: list[Device] = []
        for mesh in self.meshes.values():
            out.extend((mesh.id, mesh.coords(n)) for n in range(mesh.size))
        return out


def read_placed(graph: Graph) -> PlacedDocument:
    """The placed document of ``graph`` (see the module docstring): its shards as
    :func:`geon.core.cost.read_shards` reads them (each node's own reading is remembered on the
    graph's index while the node is unchanged, so costing a plan again after an edit reads only
    the nodes the edit changed), with the placed graph inputs, the meshes and the run order."""
    found = read_shards(graph)
    doc = PlacedDocument(
        graph,
        shards=found.shards,
        by_op=found.by_op,
        element_bytes=found.element_bytes,
        dtypes=found.dtypes,
        ranks=found.ranks,
    )
    meshes = found.meshes
    for tid, (mesh_id, regions) in held_regions(graph).items():
        doc.held[tid] = [
            (device, (r.start, r.end))
            for coords, r in regions
            if (device := placement_device((mesh_id, coords), meshes, graph)) is not None
        ]
    doc.meshes = {mid: m for mid, m in meshes.items() if m is not None}
    doc.order = [op.id for op in run_order(list(found.ops.values()))[0]]
    return doc
