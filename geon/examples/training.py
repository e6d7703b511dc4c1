"""The gallery's training step (issue 32): the transformer block of
:mod:`geon.examples.transformer` with trainable weights, a mean-squared-error loss, and its Adam
training step as one document, with three shard plans to compare: data parallel, Megatron tensor
parallel and fully sharded data parallel.

>>> doc, plans = training_example()
>>> [i for i in doc.check() if i.severity == "error"], [p["name"] for p in plans]
([], ['Data parallel', 'Megatron tensor parallel', 'Fully sharded data parallel'])
"""

from __future__ import annotations

from typing import Any

from geon import core as gc
from geon.core.autodiff import training_step
from geon.core.graph import INDEX_AXES, OPERATION, Graph
from geon.core.nodes import GROUP, split_level
from geon.examples import transformer

__all__ = ["DESCRIPTION", "TITLE", "WEIGHT_AXIS", "fsdp_plan", "training_example"]

TITLE = "Training step of the transformer block, under three plans"


WEIGHT_AXIS = {
    "Wq": "D", "Wk": "D", "Wv": "D", "Wo": "D", "W1": "F", "W2": "F",
    "ln1 scale": "D", "ln1 bias": "D", "ln2 scale": "D", "ln2 bias": "D",
}  # fmt: skip
"""The axis fully sharded data parallelism cuts each variable (and its Adam state) along."""

DESCRIPTION = """\
The transformer block's **training step**: the block with its weights as **variables**
(`Wq`, `Wk`, `Wv`, `Wo`, `W1`, `W2` and the layer norms' scales and biases), the loss
`mean((y - target)²)`, the **backward** pass (operations scoped `backward/...`: each kernel's
gradient written with named axes, a dot's gradients are dots pairing the duals) and **Adam**'s
update (`optimizer/...`): every variable `w` has its state `w.m`, `w.v` and the outputs
`w.next`, `w.m.next`, `w.v.next`; `step` counts the steps. Made with `geon train` (or the
editor's "Make training step").

Compare the three saved plans in the **Plans** panel (2 devices each, `h100-sxm-8`):

- **Data parallel** splits the batch B. Each weight's gradient contracts B, so each device holds
  a partial sum and the cost model puts an **all-reduce** on every weight gradient (10) plus one
  for the loss: 11 all-reduces, where the forward pass alone had one. Every device holds all the
  weights and all of Adam's state.
- **Megatron tensor parallel** splits heads H and the MLP width F, as the forward block's plan:
  the weights' gradients are split the same way and need no reduction; what remains are the
  row-parallel layers' all-reduces, forward and backward, and the small weights (layer norms,
  `Wo`'s and `W2`'s D side) reduced whole: 6 all-reduces.
- **Fully sharded data parallel** splits the batch like data parallel, but stores every weight
  and its Adam state **sharded** over the same mesh axis (`inputs`) and runs each weight's update
  on its own shard (`spec` on the optimizer's operations): each weight is **all-gathered** before
  it is read whole (forward, and backward where a dot's input gradient reads it again), and the
  devices hold half the parameters and half the optimizer state of data parallelism. Each
  weight's gradient is **reduce-scattered**: the sum of the partial products is split like the
  update that reads it, so each device receives only its half (10 reduce-scatters, and the
  loss's all-reduce).

Open the ledger of each plan: the peak per device split into parameters, gradients, optimizer
state, activations (saved for the backward pass), temporaries and communication buffers.
"""


def fsdp_plan(step: Graph, devices: int = 2) -> dict[str, Any]:
    """Fully sharded data parallelism for the block's step: the batch over ``dp``; each variable
    and its Adam state stored over ``dp`` along :data:`WEIGHT_AXIS`; each variable's update split
    the same way (``spec`` on the operations scoped ``optimizer/<name>``)."""
    labels = {n.label for n in step.nodes if n.label}
    inputs: dict[str, Any] = {"x": {"over": {"B": "dp"}}, "target": {"over": {"B": "dp"}}}
    for name, axis in WEIGHT_AXIS.items():
        for suffix in ("", ".m", ".v"):
            if name + suffix in labels:
                inputs[name + suffix] = {"over": {axis: "dp"}}
    spec: dict[str, Any] = {}
    for node in step.of_type(OPERATION):
        scope = str(((node.tags or {}).get(GROUP) or {}).get("scope", ""))
        if not scope.startswith("optimizer/"):
            continue
        found = WEIGHT_AXIS.get(scope.removeprefix("optimizer/"))
        index = (node.tags or {}).get(INDEX_AXES, {}).get("axes", [])
        # the update's index axis is the weight's own reference (W2's F is "F+1")
        refs = [a for a in index if found is not None and split_level(a)[0] == found]
        if refs:
            spec[node.id] = {"over": {refs[0]: "dp"}}
    return {
        "name": "Fully sharded data parallel",
        "mesh": {"name": "dp mesh", "axes": {"dp": devices}},
        "axisMapping": {"B": "dp"},
        "inputs": inputs,
        "spec": spec,
    }


def training_example(seed: int = 16) -> tuple[Graph, list[dict[str, Any]]]:
    """The step's document (new ids each call) and its three plans (the REST ShardPlan shape)."""
    y = transformer.block(seed, trainable=True)
    target = gc.placeholder(list(y.axes), name="target")
    loss = gc.mean(gc.square(gc.subtract(y, target)), name="loss")
    step = training_step(gc.graph([loss]), optimizer="adam", lr=1e-3)
    data_parallel = {
        "name": "Data parallel",
        "mesh": {"name": "dp mesh", "axes": {"dp": 2}},
        "axisMapping": {"B": "dp"},
        "inputs": {"x": {"over": {"B": "dp"}}, "target": {"over": {"B": "dp"}}},
    }
    megatron = dict(transformer.PLANS[1])
    return step, [data_parallel, megatron, fsdp_plan(step)]
