"""Saved activations of the gallery transformer block's training step next to Korthikanti et al.
2022, "Reducing Activation Recomputation in Large Transformer Models", table 2 (docs/cost-model.md,
"Activation memory"): per layer at 16-bit, no parallelism ``s·b·h·(34 + 5·a·s/h)`` bytes; tensor
parallel over ``t`` devices ``s·b·h·(10 + 24/t + 5·a·s/(h·t))``.

geon's block has no dropout: the three dropout masks (``s·b·h`` after attention's output
projection, ``s·b·h`` after the MLP, ``a·s²·b`` after the softmax) are not there, and the softmax
output that attention reads over V is the tensor the softmax's backward reads (the paper counts a
dropout output of ``2·a·s²·b`` beside it). So geon's count is the paper's less ``2·s·b·h`` and
``3·a·s²·b``: ``s·b·h·(32 + 2·a·s/h)``, and ``s·b·h·(8 + 24/t + 2·a·s/(h·t))`` tensor parallel."""

from __future__ import annotations

from typing import Any

import pytest

from geon import core as gc
from geon.core.autodiff import training_step
from geon.core.graph import Graph
from geon.core.plans import apply_plan
from geon.core.plans.cost.ledger import UNPLACED, saved_activations
from geon.core.plans.cost.placed import read_placed
from geon.examples import transformer

CASES = [(4, 2, 8, 2), (8, 1, 16, 4), (6, 3, 8, 4)]  # (s, b, h, a)


def _step(s: int, b: int, h: int, a: int, monkeypatch: Any) -> Graph:
    for key, value in {"B": b, "N": s, "D": h, "H": a, "E": h // a, "F": 4 * h}.items():
        monkeypatch.setitem(transformer.SIZES, key, value)
    y = transformer.block(trainable=True)
    # the loss is a sum of y: its backward reads nothing of the forward, so every saved
    # activation is the layer's
    loss = gc.sum(y, name="loss")
    return training_step(gc.graph([loss]), optimizer="sgd", lr=0.1)


def paper(s: int, b: int, h: int, a: int, t: int = 1) -> float:
    """Table 2's bytes per layer, 16-bit: no parallelism (t = 1) or tensor parallel over t."""
    if t == 1:
        return s * b * h * (34 + 5 * a * s / h)
    return s * b * h * (10 + 24 / t + 5 * a * s / (h * t))


def geon_expected(s: int, b: int, h: int, a: int, t: int = 1) -> float:
    """The paper's count less the dropout terms (see the module docstring)."""
    return s * b * h * (8 + 24 / t + 2 * a * s / (h * t))


@pytest.mark.parametrize(("s", "b", "h", "a"), CASES)
def test_saved_activations_are_table_2_less_the_dropout_terms(
    s: int, b: int, h: int, a: int, monkeypatch: Any
) -> None:
    step = _step(s, b, h, a, monkeypatch)
    found = saved_activations(read_placed(step), element_bytes=2)
    assert found == {UNPLACED: geon_expected(s, b, h, a)}
    # the difference from the paper: two s·b·h masks, a·s²·b of softmax mask, and the dropout
    # output's 2·a·s²·b
    assert paper(s, b, h, a) - found[UNPLACED] == 2 * s * b * h + 3 * a * s * s * b


@pytest.mark.parametrize(("s", "b", "h", "a"), CASES)
def test_megatron_tensor_parallel_saves_table_2s_tensor_parallel_row_less_dropout(
    s: int, b: int, h: int, a: int, monkeypatch: Any
) -> None:
    t = 2
    step = _step(s, b, h, a, monkeypatch)
    megatron = {**transformer.PLANS[1], "mesh": {"name": "tp mesh", "axes": {"tp": t}}}
    found = saved_activations(read_placed(apply_plan(step, megatron)), element_bytes=2)
    assert set(found.values()) == {geon_expected(s, b, h, a, t)}
    assert len(found) == t
    assert (
        paper(s, b, h, a, t) - geon_expected(s, b, h, a, t) == 2 * s * b * h + 3 * a * s * s * b / t
    )
