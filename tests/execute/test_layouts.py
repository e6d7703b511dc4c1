"""Arena tensors stored in another order of their dims (issue #34): an elementwise result that only
a dimshuffle or transpose reads is stored in the order that view reads it, so the view is
contiguous, and the elementwise op may then run in place of an operand laid out the same way.
The case is the ONNX importer's ``Add(bias, MatMul(...))``, whose named broadcast puts the bias's
axis first; PyTorch (``torch.nn.functional.gelu``) is the oracle."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from geon import core as gc
from geon.execute import compile_graph, run


def _bias_first_then_shuffled() -> tuple[gc.Graph, gc.Tensor, gc.Tensor]:
    B, S, F = gc.Axis("B", 3), gc.Axis("S", 5), gc.Axis("F", 8)
    h = gc.placeholder(axes=[B, S, F], name="h", dtype="float32")
    bias = gc.placeholder(axes=[F], name="bias", dtype="float32")
    summed = gc.add(bias, gc.exp(h), name="summed")  # axes [F, B, S]: the bias's first
    y = gc.gelu(gc.dimshuffle(summed, [B, S, F]), name="y")
    return gc.graph([y]), summed, y


def test_a_bias_add_read_only_through_a_shuffle_is_stored_in_the_shuffles_order() -> None:
    # given bias + exp(h) (axes F, B, S), shuffled back to (B, S, F) and read by a GELU
    g, summed, _ = _bias_first_then_shuffled()
    # when compiled for NumPy
    plan = compile_graph(g)
    index = plan.tensor(summed.id).index
    # then the sum is stored as (B, S, F): its dims 1, 2, 0
    assert plan.layouts == {index: (1, 2, 0)}
    bound = plan._bind()
    assert bound[index].shape == (8, 3, 5)
    assert np.transpose(bound[index], (1, 2, 0)).flags.c_contiguous
    # and the add runs in place of exp(h), which has that layout
    assert str(index) in plan.memory.inplace


@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_a_tensor_stored_in_another_order_computes_what_pytorch_does(backend: str) -> None:
    # given the same graph and float32 inputs
    g, _, _ = _bias_first_then_shuffled()
    rng = np.random.default_rng(3)
    h = rng.standard_normal((3, 5, 8)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    # when run twice (the arena is reused)
    plan_runs = [run(g, {"h": h, "bias": bias}, backend=backend) for _ in range(2)]
    # then both equal PyTorch's GELU of exp(h) + bias, in the logical order
    want = torch.nn.functional.gelu(torch.exp(torch.from_numpy(h)) + torch.from_numpy(bias))
    for result in plan_runs:
        got = result.by_key()["y"]
        assert got.shape == (3, 5, 8)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)


def test_a_kept_tensor_keeps_its_order() -> None:
    # given the same graph with the bias add also returned
    g, summed, y = _bias_first_then_shuffled()
    plan = compile_graph(g, keep=[summed.id, y.id])
    # then nothing is stored in another order, and the add comes back as (F, B, S)
    assert plan.layouts == {}
    h = np.ones((3, 5, 8), np.float32)
    got = run(g, {"h": h, "bias": np.arange(8, dtype=np.float32)}, outputs=[summed.id, y.id])
    np.testing.assert_allclose(
        got.outputs[summed.id], np.broadcast_to(np.e + np.arange(8.0)[:, None, None], (8, 3, 5)),
        rtol=1e-6,
    )  # fmt: skip
