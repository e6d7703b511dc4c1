"""Shard plans as real parallelism strategies (DESIGN.md §4, §9; issue 16 item 2): a mesh, an
axis mapping from logical axes to mesh axes, where the graph inputs live, and per-operation
overrides — checked, resolved against a document and written into it. One implementation for
the CLI (``python -m geon plan``), the server (``geon.graphs.services.plans``) and the cost model.

>>> from geon import core as gc
>>> N, D = gc.Axis("N", 4), gc.Axis("D", 3)
>>> g = gc.graph([gc.relu(gc.placeholder(axes=[N, D], name="x"), name="h")])
>>> plan = read_plan({"name": "dp", "mesh": {"axes": {"dp": 2}}, "axisMapping": {"N": "dp"},
...     "inputs": {"x": {"over": {"N": "dp"}}}})
>>> placed = apply_plan(g, plan)
>>> [p.layout.to_json() for p in input_placements(placed).values()]
[{'over': {'N': 'dp'}}]

- :mod:`.model`: the plan's JSON shape, :func:`read_plan` -> :class:`Plan`;
- :mod:`.mapping`: which operations the axis mapping splits, and which it leaves whole
  (:func:`plan_splits`, :class:`NotSplit`);
- :mod:`.inputs`: where graph inputs live, the :data:`INPUT_PLACEMENT` tag and its readers
  :func:`input_placements` and :func:`held_regions` (the region each device holds);
- :mod:`.write`: :func:`plan_ops` and :func:`apply_plan`;
- :mod:`.contract`: splits of a dot's contracted axis (partial products and a sum), also for
  the ``shard`` edit (:func:`shard_op_edits`, which the server's edits call).
"""

from geon.core.plans.contract import shard_op_edits
from geon.core.plans.inputs import (
    INPUT_PLACEMENT,
    InputPlacement,
    graph_inputs,
    held_regions,
    input_placements,
)
from geon.core.plans.mapping import NotSplit, PlanSplits, plan_splits
from geon.core.plans.model import InputLayout, Plan, PlanError, ShardSpec, parse_mesh, read_plan
from geon.core.plans.write import apply_plan, default_mesh_id, plan_ops

__all__ = [
    "INPUT_PLACEMENT",
    "InputLayout",
    "InputPlacement",
    "NotSplit",
    "Plan",
    "PlanError",
    "PlanSplits",
    "ShardSpec",
    "apply_plan",
    "default_mesh_id",
    "graph_inputs",
    "held_regions",
    "input_placements",
    "parse_mesh",
    "plan_ops",
    "plan_splits",
    "read_plan",
    "shard_op_edits",
]
