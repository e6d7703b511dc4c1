"""The gallery's transformer block (issue #16 item 8) and the shard plans shipped with it.

>>> g = transformer_block()
>>> g.check()
[]
>>> [p["name"] for p in PLANS]
['Data parallel', 'Megatron tensor parallel', 'Model axis split (worse on purpose)']

A pre-norm block on ``x (B, N, D)``: layer norm over the model axis ``D``; multi-head attention
(Q, K, V projections to heads ``H`` of width ``E``, softmax over the keys' token axis ``Nk``,
output projection back to ``D``); a residual add; layer norm; an MLP ``D -> F -> D`` with GELU;
a residual add. Weights are small fixed constants so a run is reproducible; ``x`` is fed.

Why elementwise multiply + sum for attention: ``dot`` pairs an axis with its dual and may not
see the same axis at the same level in both operands (DESIGN.md §2), so it cannot carry the
batch axes ``B`` and ``H`` through a product of queries and keys. ``multiply`` matches by axis
name, so ``q (B, N, H, E) * k (B, Nk, H, E)`` lines up batch and heads, broadcasts over the two
token axes, and ``sum`` over ``E`` gives the scores ``(B, N, H, Nk)``. The keys' token axis is
cast to ``Nk`` (no data moves) so that it stays a separate axis from the queries' ``N``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geon import core as gc
from geon.core.builder import gelu, layer_norm, softmax
from geon.core.graph import Graph

__all__ = ["DESCRIPTION", "PLANS", "SIZES", "TITLE", "block", "transformer_block"]

SIZES = {"B": 2, "N": 4, "D": 8, "H": 2, "E": 4, "F": 16}
"""Axis lengths: batch, tokens, model width, heads, head width, MLP hidden width."""

TITLE = "Transformer block, with three shard plans"

DESCRIPTION = """\
A pre-norm transformer block on **x (B, N, D)**: batch B, tokens N, model width D.

1. `ln1` = layer_norm over D; `q`, `k`, `v` = ln1 · W (D+1, H, E): H heads of width E.
2. Keys and values get their token axis cast to **Nk**, so queries (N) and keys (Nk) are
   different axes. `dot` cannot carry the batch axes B and H through the product (the same axis
   in both operands is an error), so scores = sum over E of q * k, matched by axis name:
   (B, N, H, Nk), scaled by 1/√E; `softmax` over Nk; the context = sum over Nk of p * v.
3. Output projection: context · Wo (H+1, E+1, D) contracts heads and head width back to D;
   residual add.
4. `ln2`, then the MLP: · W1 (D+1, F), `gelu`, · W2 (F+1, D); residual add.

Open the **Plans** panel to compare the three saved plans (mesh of 2 devices each):

- **Data parallel** maps the batch B to mesh axis `dp`. Each device holds the whole weights and
  runs the whole block on its half of the batch; nothing in the forward pass crosses devices.
- **Megatron tensor parallel** maps heads H and MLP width F to `tp`: Q, K, V and W1 are split by
  columns (each device computes its heads and its half of F with no communication); the output
  projection and W2 contract the split axis (row-parallel), so each device holds a partial sum
  and one **all-reduce** per layer — after attention's output projection and after the MLP —
  adds them. Two all-reduces of a (B, N, D) activation per block. The weights are placed split
  the same way (`inputs`), so each device stores half of every weight matrix.
- **Model axis split (worse on purpose)** maps the model width D to `tp`. Layer norm needs all
  of D, so it cannot split at all and runs whole; and Q, K, V and W1 all *contract* D, so each
  of them ends in partial sums and an all-reduce: four all-reduces instead of two, the one
  after W1 twice as large (F is twice D), and the block costs more time than Megatron.
  Split the axes a layer *produces* (heads, F), not the one it *contracts* first.
"""

_D = "D"


def transformer_block(seed: int = 16) -> Graph:
    """Build the transformer block (a fresh graph with new ids each call)."""
    return gc.graph([block(seed)])


def block(seed: int = 16, *, trainable: bool = False) -> gc.Tensor:
    """The block's output ``y (B, N, D)`` as a builder handle (weights drawn from ``seed``);
    ``trainable``: the weights and layer norms' scales and biases are variables (DESIGN.md §11),
    initialised by rule (normal, scaled by 1/√fan-in; ones; zeros) instead of constants."""
    s = SIZES
    B, N, D = gc.Axis("B", s["B"], batch=True), gc.Axis("N", s["N"]), gc.Axis(_D, s["D"])
    H, E, F = gc.Axis("H", s["H"]), gc.Axis("E", s["E"]), gc.Axis("F", s["F"])
    Nk = gc.Axis("Nk", s["N"], doc="the keys' token axis")
    rng = np.random.default_rng(seed)

    def weight(name: str, axes: list[Any], fan_in: int) -> gc.Tensor:
        # every axis here is bound: its length is one of SIZES, found by its name
        shape = tuple(s[(a if isinstance(a, gc.Axis) else a.axis).name] for a in axes)
        values = (rng.normal(size=shape) / np.sqrt(fan_in)).round(3)
        if trainable:
            rule = {"kind": "normal", "scale": round(float(1 / np.sqrt(fan_in)), 6)}
            return gc.variable(axes, name=name, init=rule)
        return gc.constant(values, axes=axes, name=name)

    def norm(name: str, value: float) -> gc.Tensor:
        if trainable:
            return gc.variable([D], name=name, init="ones" if value else "zeros")
        return gc.constant(np.full(s["D"], value), axes=[D], name=name)

    x = gc.placeholder(axes=[B, N, D], name="x")
    ln1 = layer_norm(
        x,
        [D],
        scale=norm("ln1 scale", 1.0),
        bias=norm("ln1 bias", 0.0),
        name="ln1",
    )
    q = gc.dot(ln1, weight("Wq", [D + 1, H, E], s["D"]), name="q")
    k = gc.dot(ln1, weight("Wk", [D + 1, H, E], s["D"]), name="k")
    v = gc.dot(ln1, weight("Wv", [D + 1, H, E], s["D"]), name="v")
    keys = gc.cast_axes(k, [B, Nk, H, E], name="keys")
    values = gc.cast_axes(v, [B, Nk, H, E], name="values")
    raw = gc.sum(gc.multiply(q, keys, name="q*k"), reduction_axes=[E], name="q·k")
    scale = gc.constant(1.0 / np.sqrt(s["E"]), axes=[], name="1/√E")
    scores = gc.multiply(raw, scale, name="scores")
    p = softmax(scores, [Nk], name="attention")
    ctx = gc.sum(gc.multiply(p, values, name="p*v"), reduction_axes=[Nk], name="context")
    attn = gc.dot(ctx, weight("Wo", [H + 1, E + 1, D], s["H"] * s["E"]), name="attn out")
    h1 = gc.add(x, attn, name="h1")
    ln2 = layer_norm(
        h1,
        [D],
        scale=norm("ln2 scale", 1.0),
        bias=norm("ln2 bias", 0.0),
        name="ln2",
    )
    up = gelu(gc.dot(ln2, weight("W1", [D + 1, F], s["D"]), name="up"), name="gelu")
    down = gc.dot(up, weight("W2", [F + 1, D], s["F"]), name="mlp out")
    return gc.add(h1, down, name="y")


PLANS: list[dict[str, Any]] = [
    {
        "name": "Data parallel",
        "mesh": {"name": "dp mesh", "axes": {"dp": 2}},
        "axisMapping": {"B": "dp"},
        "inputs": {"x": {"over": {"B": "dp"}}},
    },
    {
        "name": "Megatron tensor parallel",
        "mesh": {"name": "tp mesh", "axes": {"tp": 2}},
        "axisMapping": {"H": "tp", "F": "tp"},
        # each device holds its heads' columns of Wq, Wk, Wv and rows of Wo, and its half of F
        # in W1 (columns) and W2 (rows): the weights are sharded, not replicated
        "inputs": {
            **{w: {"over": {"H": "tp"}} for w in ("Wq", "Wk", "Wv", "Wo")},
            **{w: {"over": {"F": "tp"}} for w in ("W1", "W2")},
        },
    },
    {
        "name": "Model axis split (worse on purpose)",
        "mesh": {"name": "tp mesh", "axes": {"tp": 2}},
        "axisMapping": {"D": "tp"},
        "inputs": {"x": {"over": {"D": "tp"}}},
    },
]
"""The plans the gallery saves with the block (the REST ShardPlan shape, docs/cost-model.md)."""
