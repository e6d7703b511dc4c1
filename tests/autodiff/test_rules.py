"""Every kernel's vector-Jacobian rule against PyTorch's autograd on small float64 cases.

Each case builds a geon graph over variables, takes the loss ``sum(out·r)`` with a fixed random
``r`` and compares each variable's gradient (:func:`gradient_document`, run on the executor)
with ``torch.autograd`` of the same function written with torch's operations (atol 1e-6: GELU's
Φ comes from Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from geon import core as gc
from geon.core.autodiff import gradient_document
from geon.execute import run

N, H, W, K = gc.Axis("N", 2), gc.Axis("H", 3), gc.Axis("W", 4), gc.Axis("K", 5)
H2 = gc.Axis("H2", 2)
C = gc.Axis("C", 2, roles="Channel")
Y = gc.Axis("Y", 6, roles="Height")
X = gc.Axis("X", 5, roles="Width")
FY, FX = gc.Axis("FY", 3, roles="Height"), gc.Axis("FX", 3, roles="Width")
CO = gc.Axis("O", 3, roles="Channelout")
OY, OX = gc.Axis("OY", 3, roles="Height"), gc.Axis("OX", 3, roles="Width")
PY, PX = gc.Axis("PY", 3, roles="Height"), gc.Axis("PX", 2, roles="Width")
Y4, X4 = gc.Axis("Y4", 4, roles="Height"), gc.Axis("X4", 4, roles="Width")
P2Y, P2X = gc.Axis("P2Y", 2, roles="Height"), gc.Axis("P2X", 2, roles="Width")
HW = gc.Axis("HW", 7)
W3 = gc.Axis("W3", 3)

Case = tuple[dict[str, list[Any]], Callable[..., Any], Callable[..., Any]]


CASES: dict[str, Case] = {
    "add broadcast": ({"a": [N, H], "b": [H]}, lambda a, b: a + b, lambda a, b: a + b),
    "subtract": ({"a": [N, H], "b": [N, H]}, lambda a, b: a - b, lambda a, b: a - b),
    "multiply 3": (
        {"a": [N, H], "b": [H], "c": [N, H]},
        lambda a, b, c: gc.multiply(a, b, c),
        lambda a, b, c: a * b * c,
    ),
    "divide": ({"a": [N, H], "b": [H]}, lambda a, b: a / (gc.exp(b)), lambda a, b: a / b.exp()),
    "power": (
        {"a": [H], "b": [H]},
        lambda a, b: gc.power(gc.exp(a), b),
        lambda a, b: torch.pow(a.exp(), b),
    ),
    "maximum": ({"a": [N, H], "b": [N, H]}, gc.maximum, torch.maximum),
    "minimum": ({"a": [N, H], "b": [H]}, gc.minimum, lambda a, b: torch.minimum(a, b)),
    "unaries": (
        {"a": [N, H]},
        lambda a: gc.add(
            -a,
            abs(a),
            gc.tanh(a),
            gc.sigmoid(a),
            gc.relu(a),
            gc.square(a),
            gc.sqrt(gc.exp(a)),
            gc.log(gc.exp(a) + 1.0),
        ),
        lambda a: (
            -a
            + a.abs()
            + a.tanh()
            + a.sigmoid()
            + a.relu()
            + a**2
            + a.exp().sqrt()
            + (a.exp() + 1).log()
        ),
    ),
    "gelu": ({"a": [N, K]}, gc.gelu, TF.gelu),
    "gelu tanh": (
        {"a": [N, K]},
        lambda a: gc.gelu(a, approximate="tanh"),
        lambda a: TF.gelu(a, approximate="tanh"),
    ),
    "dot": ({"a": [N, H - 1], "b": [H, K]}, gc.dot, lambda a, b: a @ b),
    "dot lower in y": ({"a": [H, K], "b": [N, H - 1]}, gc.dot, lambda a, b: b @ a),
    "dot same axis twice": (
        {"a": [H, H - 1], "b": [H, K]},
        gc.dot,
        lambda a, b: a @ b,
    ),
    "sum mean": (
        {"a": [N, H, K]},
        lambda a: gc.sum(a, reduction_axes=[H]) + gc.mean(a, reduction_axes=[H]),
        lambda a: a.sum(1) + a.mean(1),
    ),
    "max min prod": (
        {"a": [N, H]},
        lambda a: (
            gc.max(a, reduction_axes=[H])
            + gc.min(a, reduction_axes=[H])
            + gc.prod(a, reduction_axes=[H])
        ),
        lambda a: a.amax(1) + a.amin(1) + a.prod(1),
    ),
    "softmax": ({"a": [N, K]}, lambda a: gc.softmax(a, [K]), lambda a: a.softmax(1)),
    "layer norm": (
        {"a": [N, K], "s": [K], "b": [K]},
        lambda a, s, b: gc.layer_norm(a, [K], scale=s, bias=b),
        lambda a, s, b: TF.layer_norm(a, (5,), s, b),
    ),
    "views": (
        {"a": [N, H]},
        lambda a: gc.dimshuffle(gc.broadcast(a, [K, N, H]), [N, H, K]),
        lambda a: a[:, :, None].expand(2, 3, 5),
    ),
    "cast transpose": (
        {"a": [N, H]},
        lambda a: gc.cast_axes(a.T, [H, N]),
        lambda a: a.T,
    ),
    "slices": (
        {"a": [K, H]},
        lambda a: gc.add(
            gc.slice(a, {K: slice(1, 3)}, axes={K: H2}),
            gc.slice(a, {K: slice(0, 4, 3)}, axes={K: H2}),
            gc.broadcast(gc.slice(a, {K: 4}), [H2, H]),
        ),
        lambda a: a[1:3] + a[0:4:3] + a[4][None, :],
    ),
    "pad": (
        {"a": [K, H]},
        lambda a: gc.pad(a, {H: (1, 3)}, axes={H: HW}),
        lambda a: TF.pad(a, (1, 3)),
    ),
    "flatten unflatten": (
        {"a": [N, H, K]},
        lambda a: gc.unflatten(gc.flatten(a, [H, K]) * 2.0),
        lambda a: a * 2,
    ),
    "concat": (
        {"a": [N, H], "b": [N, W]},
        lambda a, b: gc.concat([a, b], [H, W], HW),
        lambda a, b: torch.cat([a, b], 1),
    ),
    "where": (
        {"a": [N, H], "b": [H]},
        lambda a, b: gc.where(gc.constant(np.array([[True, False, True]] * 2), [N, H]), a, b),
        lambda a, b: torch.where(torch.tensor([[True, False, True]] * 2), a, b),
    ),
    "gather": (
        {"t": [K, H]},
        lambda t: gc.gather(t, gc.constant(np.array([[4, 0, 4], [1, 1, 2]]), [N, W3]), K),
        lambda t: t[torch.tensor([[4, 0, 4], [1, 1, 2]])],
    ),
    "conv2d stride 2 padded": (
        {"x": [N, C, Y, X], "f": [CO, C - 1, FY, FX]},
        lambda x, f: gc.conv2d(x, f, [N, CO, OY, OX], stride=2, padding=1),
        lambda x, f: TF.conv2d(x, f, stride=2, padding=1),
    ),
    "conv2d": (
        {"x": [N, C, Y, X], "f": [CO, C - 1, FY, FX]},
        lambda x, f: gc.conv2d(x, f, [N, CO, Y4, gc.Axis("X3", 3, roles="Width")]),
        lambda x, f: TF.conv2d(x, f),
    ),
    "pools": (
        {"x": [N, C, Y4, X4]},
        lambda x: gc.max_pool2d(x, [N, C, P2Y, P2X], 2) + gc.avg_pool2d(x, [N, C, P2Y, P2X], 2),
        lambda x: TF.max_pool2d(x, 2) + TF.avg_pool2d(x, 2),
    ),
    "pools overlapping padded": (
        {"x": [N, C, Y, X]},
        lambda x: (
            gc.max_pool2d(x, [N, C, OY, OX], 3, stride=2, padding=1)
            + gc.avg_pool2d(x, [N, C, OY, OX], 3, stride=2, padding=1, count_include_pad=False)
            + gc.avg_pool2d(x, [N, C, OY, OX], 3, stride=2, padding=1)
        ),
        lambda x: (
            TF.max_pool2d(x, 3, 2, 1)
            + TF.avg_pool2d(x, 3, 2, 1, count_include_pad=False)
            + TF.avg_pool2d(x, 3, 2, 1)
        ),
    ),
    "pools stride 1": (
        {"x": [N, C, Y4, X4]},
        lambda x: gc.max_pool2d(x, [N, C, OY, OX], 2, stride=1),
        lambda x: TF.max_pool2d(x, 2, 1),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_equals_torch_autograd(name: str) -> None:
    axes, build, reference = CASES[name]
    rng = np.random.default_rng(7)
    values = {k: rng.standard_normal([a.length for a in ax]) for k, ax in axes.items()}
    handles = {k: gc.variable(ax, name=k) for k, ax in axes.items()}
    out = build(*handles.values())
    r = rng.standard_normal(out.shape)
    loss = gc.sum(gc.multiply(out, gc.constant(r, list(out.axes))), name="loss")
    doc = gradient_document(gc.graph([loss]))
    assert [i for i in doc.check() if i.severity == "error"] == []
    got = run(doc, values).by_key()
    ts = {k: torch.tensor(v, requires_grad=True) for k, v in values.items()}
    want = reference(*ts.values())
    (want * torch.tensor(r)).sum().backward()
    np.testing.assert_allclose(got["loss"], (want * torch.tensor(r)).sum().item(), rtol=1e-9)
    for k, t in ts.items():
        assert t.grad is not None
        np.testing.assert_allclose(got[f"{k}.grad"], t.grad.numpy(), atol=1e-6, err_msg=k)
