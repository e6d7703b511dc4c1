"""A document read for export (:mod:`geon.interop.export`): its leaves, its operations in run
order, each tensor's axes, and each ``dot``'s einsum string.

Only whole-tensor operations are exported (Applications are a plan's business, not the model's);
kernels the exporters do not know are refused with :class:`ExportError` naming them.

>>> from geon import core as gc
>>> H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
>>> x = gc.placeholder(axes=[H, W], name="x")
>>> y = gc.placeholder(axes=[W + 1, N], name="y")
>>> p = read(gc.graph([gc.dot(x, y)]))
>>> [einsum_of(p, op) for op in p.ops]
['ab,bc->ac']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geon.core.constants import CONSTANT, decode_constant
from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.nodes import AXIS, OPERATION, TENSOR, TENSOR_AXES
from geon.core.order import run_order

KNOWN = (
    "op:add",
    "op:multiply",
    "op:maximum",
    "op:minimum",
    "op:subtract",
    "op:divide",
    "op:power",
    "op:negative",
    "op:abs",
    "op:exp",
    "op:log",
    "op:sqrt",
    "op:square",
    "op:tanh",
    "op:sigmoid",
    "op:relu",
    "op:gelu",
    "op:dot",
    "op:sum",
    "op:prod",
    "op:max",
    "op:min",
    "op:mean",
    "op:softmax",
    "op:layer_norm",
    "op:cast_axes",
    "op:broadcast",
    "op:dimshuffle",
    "op:transpose",
    "op:slice",
    "op:flatten",
    "op:unflatten",
    "op:conv2d",
    "op:max_pool2d",
    "op:avg_pool2d",
    "op:concat",
    "op:where",
    "op:gather",
)


class ExportError(GeonError):
    """A document geon cannot export; the message names the node and what is missing."""


@dataclass
class Tensor:
    """One tensor of the document: its variable name, label, dtype, axes and shape."""

    id: str
    var: str
    label: str | None
    dtype: str
    axes: list[str]
    shape: list[int]
    value: np.ndarray[Any, Any] | None = None


@dataclass
class Op:
    """One whole-tensor operation: kernel, params, input tensors by key, result tensor."""

    id: str
    kernel: str
    params: dict[str, Any]
    inputs: dict[str, list[Tensor]]
    result: Tensor


@dataclass
class Program:
    """The document as the exporters read it."""

    axes: list[dict[str, Any]]
    tensors: dict[str, Tensor]
    leaves: list[Tensor]
    ops: list[Op]
    outputs: list[Tensor] = field(default_factory=list)


def _var(label: str | None, n: int, taken: set[str], tried: dict[str, int]) -> str:
    """A fresh variable name for a tensor; ``tried`` remembers the last suffix tried per base,
    so that many tensors with one label take linear time, not quadratic."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", label or "") or f"t{n}"
    if not re.match(r"[A-Za-z_]", base):
        base = f"t_{base}"
    k = tried.get(base, 1)
    name = base if k == 1 else f"{base}_{k}"
    while name in taken or name in ("np", "math", "align", "inputs", "main", "model"):
        k += 1
        name = f"{base}_{k}"
    tried[base] = k
    taken.add(name)
    return name


def read(graph: Graph) -> Program:
    """The program of ``graph``; :class:`ExportError` for what cannot be exported."""
    axes = [dict(n.body) for n in graph.nodes if n.type == AXIS]
    tensors: dict[str, Tensor] = {}
    taken: set[str] = set()
    tried: dict[str, int] = {}
    for i, n in enumerate(graph.nodes):
        if n.type != TENSOR:
            continue
        tag = n.tags.get(TENSOR_AXES)
        if not isinstance(tag, dict):
            raise ExportError(f'tensor "{n.label or n.id}" has no TensorAxes; export needs names')
        r = n.body["range"]
        shape = [e - s for s, e in zip(r["start"], r["end"], strict=True)]
        var = _var(n.label, i, taken, tried)
        t = Tensor(n.id, var, n.label, n.body["dtype"], list(tag["axes"]), shape)
        if CONSTANT in n.tags:
            t.value = decode_constant(n.tags[CONSTANT], t.dtype, shape)
        tensors[n.id] = t
    op_nodes = [n for n in graph.nodes if n.type == OPERATION]
    order, stuck = run_order(op_nodes)
    if stuck:
        raise ExportError(f'operation "{stuck[0].label or stuck[0].id}" is in a cycle')
    ops: list[Op] = []
    written: set[str] = set()
    read_ids: set[str] = set()
    for n in order:
        body = n.body
        if body.get("kernel") not in KNOWN:
            raise ExportError(
                f'operation "{n.label or n.id}" uses kernel "{body.get("kernel")}"; export '
                f"knows {', '.join(KNOWN)}"
            )
        ins = {k: [tensors[s["tensorId"]] for s in v] for k, v in body.get("inputs", {}).items()}
        out = tensors[body["outputs"]["result"][0]["tensorId"]]
        ops.append(Op(n.id, body["kernel"], dict(body.get("params") or {}), ins, out))
        written.add(out.id)
        read_ids.update(t.id for ts in ins.values() for t in ts)
    leaves = [t for t in tensors.values() if t.id not in written]
    outputs = [
        t
        for t in tensors.values()
        if t.id not in read_ids and (t.id in written or t.value is not None)
    ]
    return Program(axes, tensors, leaves, ops, outputs)


def _level(ref: str) -> tuple[str, int]:
    m = re.match(r"^(.*?)([+-][0-9]+)?$", ref)
    assert m is not None
    return m.group(1), int(m.group(2) or 0)


def einsum_of(p: Program, op: Op) -> str:
    """The einsum string of a ``dot`` (one letter per axis; paired duals share one)."""
    x, y = op.inputs["x"][0], op.inputs["y"][0]
    letters: dict[str, str] = {}
    pool = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    def letter(ref: str) -> str:
        if ref not in letters:
            letter = next(pool, None)
            if letter is None:
                raise ExportError(f'"{op.result.label or op.id}" has more than 52 axes for einsum')
            letters[ref] = letter
        return letters[ref]

    ys = {_level(r): r for r in y.axes}
    xs = "".join(letter(r) for r in x.axes)
    for r in x.axes:
        name, k = _level(r)
        for other in ((name, k + 1), (name, k - 1)):
            if other in ys:
                letters[ys[other]] = letters[r]
    ys_s = "".join(letter(r) for r in y.axes)
    out = "".join(letter(r) for r in op.result.axes)
    return f"{xs},{ys_s}->{out}"


def axis_name(ref: str) -> str:
    """The axis a reference names: ``"C+1"`` -> ``"C"``."""
    return _level(ref)[0]


def with_role(p: Program, axes: list[str], role: str, skip: tuple[str, ...] = ()) -> str:
    """The one axis of ``axes`` (not in ``skip``) whose declaration carries ``role`` (conv2d's
    and the pooling kernels' Channel, Height, Width, Channelout)."""
    roles = {a.get("name"): a.get("roles") or [] for a in p.axes}
    found = [r for r in axes if r not in skip and role in roles.get(_level(r)[0], [])]
    if len(found) != 1:
        raise ExportError(f'axes {axes} have {len(found)} axes with role "{role}"; expected one')
    return found[0]


def reduced(op: Op) -> list[str]:
    """The axes a reduction or normalisation works over (in the input's order)."""
    x = (op.inputs.get("tensor") or op.inputs.get("x") or [])[0]
    if "reduction_axes" in op.params:
        red = set(op.params["reduction_axes"])
    elif "out_axes" in op.params:
        red = set(x.axes) - set(op.params["out_axes"])
    else:
        red = set(x.axes)
    return [a for a in x.axes if a in red]
