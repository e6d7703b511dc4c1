"""Gradients and optimizer steps against PyTorch (issue 32, "checked against what no one here
wrote"): the imported MLP, CNN and encoder layer (tests/interop/models, exported by
scripts/export_models.py with torch.manual_seed(0)) get the loss ``sum(y·r)``; geon's gradient
of every variable equals torch.autograd's, and one SGD, momentum and Adam step equals
torch.optim's, within float32 tolerance (rtol 1e-4, atol 1e-5 on values of order 1).

torch is installed from local disk (``pip install torch==2.13.0``, the CPU build)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from torch import nn

from geon import core as gc
from geon.core.autodiff import Forward, gradient_document, merge, training_step
from geon.core.graph import Graph
from geon.execute import run
from geon.interop.onnx_import import import_onnx

MODELS = Path(__file__).parents[1] / "interop" / "models"
RTOL, ATOL = 1e-4, 1e-5


def _with_loss(name: str, batch: int) -> tuple[Any, Graph, tuple[int, ...]]:
    imp = import_onnx(MODELS / f"{name}.onnx", dims={"batch": batch})
    y = Forward(imp.graph).by_label("y")
    r = gc.placeholder(list(y.axes), name="r", dtype="float32")
    doc = merge(imp.graph, [gc.sum(gc.multiply(y, r), name="loss")], {})
    return imp, doc, y.shape


def _geon_grads(name: str, shape: tuple[int, ...]) -> tuple[Any, dict[str, Any], Any, Any]:
    imp, doc, yshape = _with_loss(name, shape[0])
    step = gradient_document(doc)
    assert [i for i in step.check() if i.severity == "error"] == []
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    r = rng.standard_normal(yshape).astype(np.float32)
    return imp, run(step, {"x": x, "r": r, **imp.weights}).by_key(), x, r


def _reading(w: np.ndarray, p: torch.Tensor) -> str | None:
    """How torch parameter ``p`` reads as geon weight ``w`` (flattened into the atoms' shape):
    ``"same"``, ``"T"`` (transposed: a MatMul's weight) or None when the values differ."""
    a = p.detach().numpy()
    if a.size == w.size and np.array_equal(a.reshape(w.shape), w):
        return "same"
    if a.ndim == 2 and a.size == w.size and np.array_equal(a.T.reshape(w.shape), w):
        return "T"
    return None


def _compare_by_values(imp: Any, out: dict[str, Any], model: nn.Module) -> None:
    """Each geon weight's gradient equals the summed gradients of the torch parameters holding
    the same values (the ONNX exporter stores equal initializers once, so one geon variable
    can stand for several parameters: the two layer norms' weights, the zero biases)."""
    params = list(model.named_parameters())
    for name, w in imp.weights.items():
        want = np.zeros(w.shape, np.float32)
        found = []
        for pname, p in params:
            how = _reading(w, p)
            if how is None:
                continue
            assert p.grad is not None
            g = p.grad.numpy()
            want += (g if how == "same" else g.T).reshape(w.shape)
            found.append(pname)
        assert found, name
        assert np.abs(want).max() > 0, name  # a gradient that is all zeros would prove little
        np.testing.assert_allclose(out[f"{name}.grad"], want, rtol=RTOL, atol=ATOL, err_msg=name)


def test_mlp_gradients_equal_torch_autograd() -> None:
    imp, out, x, r = _geon_grads("mlp", (4, 16))
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 8))
    loss = (m(torch.from_numpy(x)) * torch.from_numpy(r)).sum()
    loss.backward()
    np.testing.assert_allclose(out["loss"], loss.item(), rtol=RTOL)
    _compare_by_values(imp, out, m)


class _Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, activation="gelu",
            batch_first=True,
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x, is_causal=False)


def test_encoder_layer_gradients_equal_torch_autograd() -> None:
    imp, out, x, r = _geon_grads("encoder", (2, 10, 32))
    torch.manual_seed(0)
    m = _Encoder()
    m.eval()
    loss = (m(torch.from_numpy(x)) * torch.from_numpy(r)).sum()
    loss.backward()
    np.testing.assert_allclose(out["loss"], loss.item(), rtol=RTOL)
    _compare_by_values(imp, out, m)


def test_cnn_gradients_equal_torch_autograd() -> None:
    # BatchNorm is folded into the first conv by the exporter, so torch runs the imported
    # weights functionally: conv, relu, max pool, conv, relu, avg pool, flatten, linear
    imp, out, x, r = _geon_grads("cnn", (2, 3, 16, 16))
    wts = imp.weights
    shapes = {"onnx::Conv_22": (8, 3, 3, 3), "onnx::Conv_23": (8,), "4.weight": (16, 8, 3, 3),
              "4.bias": (16,), "8.weight": (10, 256), "8.bias": (10,)}  # fmt: skip
    t = {k: torch.tensor(wts[k].reshape(s), requires_grad=True) for k, s in shapes.items()}
    h = TF.relu(TF.conv2d(torch.from_numpy(x), t["onnx::Conv_22"], t["onnx::Conv_23"], padding=1))
    h = TF.max_pool2d(h, 2)
    h = TF.avg_pool2d(TF.relu(TF.conv2d(h, t["4.weight"], t["4.bias"], padding=1)), 2)
    y = TF.linear(h.flatten(1), t["8.weight"], t["8.bias"])
    loss = (y * torch.from_numpy(r)).sum()
    loss.backward()
    np.testing.assert_allclose(out["loss"], loss.item(), rtol=RTOL)
    for k, v in t.items():
        assert v.grad is not None
        got = out[f"{k}.grad"].reshape(v.shape)
        np.testing.assert_allclose(got, v.grad.numpy(), rtol=RTOL, atol=ATOL, err_msg=k)


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
def test_two_optimizer_steps_equal_torch_optim(optimizer: str) -> None:
    # given the MLP's training step, run twice with the state fed back
    imp, doc, yshape = _with_loss("mlp", 4)
    lr = 0.05
    step = training_step(doc, optimizer=optimizer, lr=lr)
    assert [i for i in step.check() if i.severity == "error"] == []
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    r = rng.standard_normal(yshape).astype(np.float32)
    state: dict[str, Any] = dict(imp.weights)
    for name, w in imp.weights.items():
        if optimizer != "sgd":
            state[f"{name}.m"] = np.zeros_like(w)
        if optimizer == "adam":
            state[f"{name}.v"] = np.zeros_like(w)
    if optimizer == "adam":
        state["step"] = np.float32(1)
    losses = []
    for _ in range(2):
        out = run(step, {"x": x, "r": r, **state}).by_key()
        losses.append(float(out["loss"]))
        state = {k[: -len(".next")]: v for k, v in out.items() if k.endswith(".next")}
    # and torch.optim on the same model, loss and data
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 8))
    opt = {
        "sgd": lambda ps: torch.optim.SGD(ps, lr=lr),
        "momentum": lambda ps: torch.optim.SGD(ps, lr=lr, momentum=0.9),
        "adam": lambda ps: torch.optim.Adam(ps, lr=lr),
    }[optimizer](m.parameters())
    want_losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = (m(torch.from_numpy(x)) * torch.from_numpy(r)).sum()
        want_losses.append(loss.item())
        loss.backward()
        opt.step()
    # then the losses and every weight after two steps agree
    np.testing.assert_allclose(losses, want_losses, rtol=RTOL)
    for name, w in imp.weights.items():
        p = dict(m.named_parameters())[name]
        a = p.detach().numpy()
        np.testing.assert_allclose(state[name], a.reshape(w.shape), rtol=RTOL, atol=ATOL)
        assert not np.allclose(state[name], w)  # the step moved it
