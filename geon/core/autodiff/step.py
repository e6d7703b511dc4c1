"""Reverse mode over a document and the optimizers: :func:`training_step` (DESIGN.md §11).

The step is the forward document with, added to it:

- the backward graph: from the loss (a scalar, seeded with 1), each operation in reverse run
  order hands its result's gradient to its operands through :func:`geon.core.autodiff.rules.vjp`;
  an operand reached more than once sums its contributions with one n-ary ``add``. Only tensors
  that depend on a variable get a gradient. Every backward operation carries the ``Group``
  scope ``backward/<the forward operation's scope or label>``;
- the optimizer's update, per variable ``w`` with gradient ``g`` (scope ``optimizer/<w>``), as
  PyTorch's ``torch.optim`` computes it:

  - ``sgd``: ``w.next = w - lr·g``;
  - ``momentum``: ``w.m.next = μ·w.m + g``, ``w.next = w - lr·w.m.next`` (μ = 0.9);
  - ``adam``: ``w.m.next = β1·w.m + (1-β1)·g``, ``w.v.next = β2·w.v + (1-β2)·g²``,
    ``w.next = w - step_size·w.m.next / (sqrt(w.v.next) / sqrt(1-β2^t) + ε)`` with
    ``step_size = lr / (1-β1^t)`` (PyTorch's own arrangement of the bias corrections),
    β1 = 0.9, β2 = 0.999, ε = 1e-8 and ``t`` the input ``step`` (1 for the first step;
    ``step.next`` = t + 1). The scalars ``step_size`` and ``sqrt(1-β2^t)`` depend on ``t``
    alone, so they are computed once per step (scope ``optimizer/step``) and read by every
    variable's update: 13 operations a variable, not 20.

Optimizer state (``w.m``, ``w.v``, ``step``) are plain inputs of the step (fed zeros, and 1,
at the first step) and outputs (``.next``): the step is a pure function, so a plan shards the
state like any tensor. The outputs are ``loss`` (the forward loss tensor, relabelled) and every
``.next``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geon.core.autodiff.forward import AutodiffError, Forward, merge
from geon.core.autodiff.rules import Fresh, conform, is_float, scalar, vjp
from geon.core.builder import functions as F
from geon.core.builder.tensor import Tensor, constant, placeholder
from geon.core.collector import collector_paused
from geon.core.dtypes import numpy_dtype
from geon.core.graph import Graph

OPTIMIZERS = ("sgd", "momentum", "adam")
MOMENTUM = 0.9
BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8
MAX_LR = 1e6


@dataclass
class Gradients:
    """What reverse mode built: the gradient handle of each variable (by tensor id), and the
    Group scope of every backward operation (by its result's tensor id)."""

    forward: Forward
    loss: Tensor
    grads: dict[str, Tensor]
    groups: dict[str, str] = field(default_factory=dict)


def _depends_on_variables(fw: Forward) -> set[str]:
    live = {v.id for v in fw.variables}
    for op in fw.ops:
        if any(t.id in live for _, ts in op.inputs for t in ts):
            live.add(op.output.id)
    return live


def _new_since(outputs: Sequence[Tensor], floor: int, known: set[str]) -> list[Tensor]:
    out: list[Tensor] = []
    seen: set[int] = set()
    stack = list(outputs)
    while stack:
        t = stack.pop()
        if id(t) in seen or t.id in known or t.seq < floor:
            continue
        seen.add(id(t))
        out.append(t)
        for _, ts in t.inputs:
            stack.extend(ts)
    return out


def gradients(doc: Graph, loss: str = "loss") -> Gradients:
    """Reverse mode over ``doc``: the gradient of the tensor labelled ``loss`` (a scalar) with
    respect to every variable."""
    fw = Forward(doc)
    y = fw.by_label(loss)
    if len(y.axes) != 0:
        raise AutodiffError(
            f'the loss "{loss}" has axes {y.axes}; expected a scalar (reduce it, e.g. with sum '
            "or mean over every axis)"
        )
    if not is_float(y):
        raise AutodiffError(f'the loss "{loss}" has dtype {y.dtype}; expected a float dtype')
    if not fw.variables:
        raise AutodiffError(
            "the document has no variables; mark the trainable tensors with the Variable tag "
            "(gc.variable, or an ONNX import's initializers)"
        )
    live = _depends_on_variables(fw)
    if y.id not in live:
        raise AutodiffError(f'the loss "{loss}" does not depend on any variable')
    fresh = Fresh(set(fw.axes))
    known = set(fw.tensors)
    parts: dict[str, list[Tensor]] = {y.id: [constant(np.asarray(1.0, numpy_dtype(y.dtype)))]}
    totals: dict[str, Tensor] = {}
    groups: dict[str, str] = {}

    def total(t: Tensor) -> Tensor:
        if t.id not in totals:
            ps = parts[t.id]
            totals[t.id] = ps[0] if len(ps) == 1 else F.add(*ps)
        return totals[t.id]

    for op in reversed(fw.ops):
        if op.output.id not in parts or op.output.id not in live:
            continue
        floor = _next_seq()
        g = total(op.output)
        wanted = [t for _, ts in op.inputs for t in ts if t.id in live and is_float(t)]
        if not wanted:
            continue
        produced: list[Tensor] = []
        for t, contribution in vjp(op, g, fresh):
            if t.id in live and is_float(t):
                produced.append(_same_dtype(contribution, t))
                parts.setdefault(t.id, []).append(produced[-1])
        scope = "backward/" + op.scope
        for t in _new_since(produced, floor, known):
            groups.setdefault(t.id, scope)
        for t in _new_since([g], floor, known):
            groups.setdefault(t.id, scope)
    grads: dict[str, Tensor] = {}
    for v in fw.variables:
        if v.id in parts:
            floor = _next_seq()
            grads[v.id] = conform(total(v), v.axes)
            for t in _new_since([grads[v.id]], floor, known):
                groups.setdefault(t.id, f"backward/{v.name or v.id}")
    return Gradients(fw, y, grads, groups)


@collector_paused()
def gradient_document(doc: Graph, loss: str = "loss") -> Graph:
    """``doc`` with the backward graph added and each variable's gradient an output labelled
    ``<name>.grad`` (what the tests compare with PyTorch's autograd)."""
    grads = gradients(doc, loss)
    outs: list[Tensor] = []
    groups = dict(grads.groups)
    for v in grads.forward.variables:
        g = grads.grads.get(v.id)
        if g is None:
            continue
        # a view nothing reads, labelled: the gradient itself may feed another gradient
        g = _output(g, list(g.axes), f"{v.name or v.id}.grad")
        groups[g.id] = f"backward/{v.name or v.id}"
        outs.append(g)
    return merge(doc, outs, groups)


def _next_seq() -> int:
    return placeholder([]).seq + 1


def _same_dtype(g: Tensor, like: Tensor) -> Tensor:
    if g.dtype != like.dtype:
        raise AutodiffError(
            f"the gradient of {like.name or like.id!r} has dtype {g.dtype}, the tensor "
            f"{like.dtype}; mixed float dtypes are not differentiated"
        )
    return g


def check_options(optimizer: str, lr: Any) -> float:
    if optimizer not in OPTIMIZERS:
        raise AutodiffError(
            f'optimizer "{optimizer}" is unknown; expected one of '
            + ", ".join(f'"{o}"' for o in OPTIMIZERS)
        )
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr <= MAX_LR:
        raise AutodiffError(
            f'learning rate "{lr!r}" is invalid; expected a number in (0, {MAX_LR:g}]'
        )
    return float(lr)


@collector_paused()  # a burst of new objects; the collector runs again after (geon.core.collector)
def training_step(
    doc: Graph,
    *,
    optimizer: str = "sgd",
    lr: float = 0.01,
    loss: str = "loss",
) -> Graph:
    """The training step of ``doc`` as an ordinary document (see the module docstring).

    >>> import numpy as np
    >>> from geon import core as gc
    >>> from geon.execute import run
    >>> H = gc.Axis("H", 2)
    >>> w = gc.variable([H], name="w", dtype="float32")
    >>> x = gc.placeholder([H], name="x", dtype="float32")
    >>> step = training_step(gc.graph([gc.sum(gc.square(w - x), name="loss")]), lr=0.25)
    >>> out = run(step, {"w": np.float32([1, 2]), "x": np.float32([0, 0])}).by_key()
    >>> float(out["loss"]), out["w.next"].tolist()
    (5.0, [0.5, 1.0])
    """
    rate = check_options(optimizer, lr)
    grads = gradients(doc, loss)
    fw = grads.forward
    outs: list[Tensor] = []
    groups = dict(grads.groups)
    taken = {t.name for t in fw.tensors.values() if t.name}
    corrections: BiasCorrections | None = None
    if optimizer == "adam" and fw.variables:
        floor = _next_seq()
        corrections = BiasCorrections(
            placeholder([], name=_free_label("step", taken), dtype=fw.variables[0].dtype), rate
        )
        outs.append(corrections.step_next)
        made = [corrections.step_next]
        for v in {v.dtype: v for v in fw.variables}.values():  # one variable per dtype
            made.extend(corrections.for_dtype(v))
        for t in _new_since(made, floor, set(fw.tensors)):
            groups.setdefault(t.id, "optimizer/step")
    for v in fw.variables:
        g = grads.grads.get(v.id)
        if g is None:
            continue
        name = v.name or v.id
        floor = _next_seq()
        made = _update(v, g, name, optimizer, rate, corrections, taken)
        outs.extend(made)
        for t in _new_since(made, floor, set(fw.tensors)):
            groups.setdefault(t.id, f"optimizer/{name}")
    merged = merge(doc, outs, groups)
    loss_node = merged.node(grads.loss.id)
    if loss_node.label != "loss" and "loss" not in taken:
        merged.update_node(loss_node.id, label="loss")
    return merged


def _free_label(label: str, taken: set[str]) -> str:
    if label in taken:
        raise AutodiffError(
            f'the document already has a tensor labelled "{label}"; the optimizer state needs '
            "that label (rename the tensor)"
        )
    taken.add(label)
    return label


class BiasCorrections:
    """Adam's scalars that depend on the step ``t`` alone, made once per step and per dtype:
    ``step_size`` = lr / (1-β1^t) and ``root`` = sqrt(1-β2^t) (as ``torch.optim.Adam`` computes
    them). :func:`training_step` makes them for every variable's dtype before any update, in
    the scope ``optimizer/step``; the updates only read them."""

    def __init__(self, step: Tensor, lr: float) -> None:
        self.step = step
        self.lr = lr
        self.step_next = F.add(step, scalar(1.0, step), name=f"{step.name}.next")
        self._made: dict[str, tuple[Tensor, Tensor]] = {}

    def for_dtype(self, like: Tensor) -> tuple[Tensor, Tensor]:
        """``(step_size, root)`` in ``like``'s dtype."""
        if like.dtype not in self._made:
            c1 = F.subtract(scalar(1.0, like), F.power(scalar(BETA1, like), self.step))
            c2 = F.subtract(scalar(1.0, like), F.power(scalar(BETA2, like), self.step))
            self._made[like.dtype] = (F.divide(scalar(self.lr, like), c1), F.sqrt(c2))
        return self._made[like.dtype]


def _update(
    v: Tensor,
    g: Tensor,
    name: str,
    optimizer: str,
    lr: float,
    corrections: BiasCorrections | None,
    taken: set[str],
) -> list[Tensor]:
    axes = list(v.axes)
    if optimizer == "sgd":
        return [F.subtract(v, F.multiply(g, scalar(lr, v)), name=f"{name}.next")]
    m = placeholder(axes, name=_free_label(f"{name}.m", taken), dtype=v.dtype)
    if optimizer == "momentum":
        m_next = F.add(F.multiply(m, scalar(MOMENTUM, v)), g)
        w_next = F.subtract(v, F.multiply(m_next, scalar(lr, v)), name=f"{name}.next")
        return [conform_named(w_next, axes), _output(m_next, axes, f"{name}.m.next")]
    assert corrections is not None
    step_size, root = corrections.for_dtype(v)
    s = placeholder(axes, name=_free_label(f"{name}.v", taken), dtype=v.dtype)
    m_next = F.add(F.multiply(m, scalar(BETA1, v)), F.multiply(g, scalar(1 - BETA1, v)))
    v_next = F.add(F.multiply(s, scalar(BETA2, v)), F.multiply(F.square(g), scalar(1 - BETA2, v)))
    denom = F.add(F.divide(F.sqrt(v_next), root), scalar(EPSILON, v))
    w_next = F.subtract(v, F.multiply(F.divide(m_next, denom), step_size), name=f"{name}.next")
    return [
        conform_named(w_next, axes),
        _output(m_next, axes, f"{name}.m.next"),
        _output(v_next, axes, f"{name}.v.next"),
    ]


def _output(t: Tensor, axes: list[Any], label: str) -> Tensor:
    """A state's next value as an output: a view (``cast_axes`` to the same axes) that nothing
    reads, since the update reads the value itself and a run returns the tensors no operation
    reads."""
    return F.cast_axes(t, axes, name=label)


def conform_named(t: Tensor, axes: list[Any]) -> Tensor:
    if list(t.axes) == axes:
        return t
    name = t.name
    t.name = None
    return F.dimshuffle(t, axes, name=name)
