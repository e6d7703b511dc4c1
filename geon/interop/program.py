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

import keyword
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geon.core.axes import AXIS_NAME, parse_ref_string
from geon.core.constants import CONSTANT, decode_constant
from geon.core.dtypes import DTYPES
from geon.core.errors import AxisError, GeonError, quote
from geon.core.graph import Graph
from geon.core.nodes import AXIS, OPERATION, TENSOR, TENSOR_AXES, Node, shown_text
from geon.core.ops import CATALOGUE
from geon.core.order import run_order

KNOWN = tuple(k.name for k in CATALOGUE.values() if k.numpy and k.onnx_writer)
"""The kernels the exports read: those whose entry in the kernel table
(:mod:`geon.core.ops.catalogue`) names a NumPy and an ONNX writer."""


class ExportError(GeonError):
    """A document geon cannot export; the message names the node and what is missing."""


@dataclass
class Tensor:
    """One tensor of the document: its variable name, label, dtype, axes and shape; ``name``
    is how messages name it, ``key`` how the NumPy script's inputs and outputs do (its label
    where no other tensor has it, else its id)."""

    id: str
    var: str
    label: str | None
    dtype: str
    axes: list[str]
    shape: list[int]
    value: np.ndarray[Any, Any] | None = None
    name: str = ""
    key: str = ""


@dataclass
class Op:
    """One whole-tensor operation: kernel, params, input tensors by key, result tensor."""

    id: str
    kernel: str
    params: dict[str, Any]
    inputs: dict[str, list[Tensor]]
    result: Tensor
    named: str = '""'


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
    if not re.match(r"[A-Za-z_]", base) or keyword.iskeyword(base):
        base = f"t_{base}"
    k = tried.get(base, 1)
    name = base if k == 1 else f"{base}_{k}"
    while name in taken or name in _RESERVED:
        k += 1
        name = f"{base}_{k}"
    tried[base] = k
    taken.add(name)
    return name


#: Names the exported scripts define or import, which no tensor's variable may take.
_RESERVED = frozenset(
    ("np", "math", "align", "inputs", "main", "model", "argparse", "windows", "conv2d",
     "pool2d", "gc", "make_op", "AX", "R", "build", "graph", "einsum", "_erf", "_x", "_m",
     "parser", "args", "data", "jnp", "jax", "wsc", "onp", "P", "lax", "os", "sys")
)  # fmt: skip

#: The params of an operation whose strings (lists of strings, or keys) are axis references.
_REF_LISTS = ("reduction_axes", "out_axes", "axes", "along")
_REF_KEYS = ("slices", "pad")


def named(node: Node) -> str:
    """How an export's message names ``node``: its label (or name, else id) in quotes, with any
    control character written as an escape."""
    return shown_text(node.name)


def shown(value: Any) -> str:
    """Document text (or JSON) quoted for a message, control characters escaped."""
    return shown_text(value) if isinstance(value, str) else quote(value)


def canonical_ref(ref: Any, where: str) -> str:
    """An axis reference parsed and written again (``" W - 1 "`` -> ``"W-1"``): the only form of
    a reference an export writes. :class:`ExportError` naming ``where`` when it does not parse.

    >>> canonical_ref(" H * W + 1", "x")
    'H*W+1'
    """
    try:
        parts = parse_ref_string(ref)
    except AxisError:
        raise ExportError(
            f"{where} has axis reference {shown(ref)}, which does not parse; expected a name "
            'with an optional dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"'
        ) from None
    return "*".join(name + ("" if level == 0 else f"{level:+d}") for name, level in parts)


def _canonical_params(params: dict[str, Any], where: str) -> dict[str, Any]:
    out = dict(params)
    for key in _REF_LISTS:
        value = out.get(key)
        if isinstance(value, list):
            out[key] = [canonical_ref(r, where) if isinstance(r, str) else r for r in value]
    if isinstance(out.get("axis"), str):
        out["axis"] = canonical_ref(out["axis"], where)
    for key in _REF_KEYS:
        value = out.get(key)
        if isinstance(value, dict):
            out[key] = {canonical_ref(k, where): v for k, v in value.items()}
    return out


def _axis_declaration(node: Node) -> dict[str, Any]:
    body = dict(node.body) if isinstance(node.body, dict) else {}
    name, length = body.get("name"), body.get("length")
    if not isinstance(name, str) or not AXIS_NAME.match(name):
        raise ExportError(
            f"axis {shown(name)} has a name that is not one; expected a letter or _ then letters, "
            "digits or _ (the name an axis reference uses)"
        )
    if isinstance(length, bool) or not isinstance(length, int):
        raise ExportError(f'axis "{name}" has length {quote(length)}; expected an integer')
    return body


def _tensor(node: Node, i: int, taken: set[str], tried: dict[str, int]) -> Tensor:
    where = f"tensor {named(node)}"
    tag = node.tags.get(TENSOR_AXES)
    if not isinstance(tag, dict) or not isinstance(tag.get("axes"), list):
        raise ExportError(f"{where} has no TensorAxes; export needs names")
    axes = [canonical_ref(a, where) for a in tag["axes"]]
    dtype = node.body.get("dtype")
    if dtype not in DTYPES:
        raise ExportError(f"{where} has dtype {shown(dtype)}; export knows {', '.join(DTYPES)}")
    r: Any = node.body.get("range")
    try:
        shape = [int(e) - int(s) for s, e in zip(r["start"], r["end"], strict=True)]
    except (KeyError, TypeError, ValueError):
        raise ExportError(
            f"{where} has no valid range; expected start and end of one length"
        ) from None
    if len(shape) != len(axes):
        raise ExportError(
            f"{where} has {len(axes)} axes and a range of {len(shape)} dimensions; expected one "
            "axis per dimension"
        )
    t = Tensor(node.id, _var(node.label, i, taken, tried), node.label, dtype, axes, shape,
               name=node.name)  # fmt: skip
    if CONSTANT in node.tags:
        try:
            t.value = decode_constant(node.tags[CONSTANT], t.dtype, shape)
        except GeonError as error:
            raise ExportError(f"{where}: {error}") from None
    return t


def _selected(node: Node, side: Any, tensors: dict[str, Tensor], where: str) -> list[Tensor]:
    if not isinstance(side, list):
        raise ExportError(f"{where} has a selection that is not a list; expected [{{tensorId}}]")
    found = []
    for s in side:
        tid = s.get("tensorId") if isinstance(s, dict) else None
        if not isinstance(tid, str) or tid not in tensors:
            raise ExportError(f"{where} reads or writes a tensor the document does not have")
        found.append(tensors[tid])
    return found


def read(graph: Graph, known: tuple[str, ...] = KNOWN) -> Program:
    """The program of ``graph``; :class:`ExportError` for what cannot be exported: a kernel the
    exporter does not know (``known``: the JAX export also knows a plan's partial products), an
    axis reference that does not parse, a malformed node (each named
    by its label). Every axis reference is canonical (parsed and written again)."""
    axes = [_axis_declaration(n) for n in graph.nodes if n.type == AXIS]
    tensors: dict[str, Tensor] = {}
    taken: set[str] = set()
    tried: dict[str, int] = {}
    for i, n in enumerate(graph.nodes):
        if n.type == TENSOR:
            tensors[n.id] = _tensor(n, i, taken, tried)
    op_nodes = [n for n in graph.nodes if n.type == OPERATION]
    order, stuck = run_order(op_nodes)
    if stuck:
        raise ExportError(f"operation {named(stuck[0])} is in a cycle")
    ops: list[Op] = []
    written: set[str] = set()
    read_ids: set[str] = set()
    for n in order:
        body = n.body
        where = f"operation {named(n)}"
        if body.get("kernel") not in known:
            raise ExportError(
                f"{where} uses kernel {shown(body.get('kernel'))}; export knows {', '.join(known)}"
            )
        inputs, outputs = body.get("inputs", {}), body.get("outputs", {})
        params = body.get("params") or {}
        if not isinstance(inputs, dict) or not isinstance(outputs, dict):
            raise ExportError(f"{where} has inputs or outputs that are not objects")
        if not isinstance(params, dict):
            raise ExportError(f"{where} has params {shown(params)}; expected an object")
        ins = {k: _selected(n, v, tensors, where) for k, v in inputs.items()}
        result = _selected(n, outputs.get("result"), tensors, where)
        if len(result) != 1:
            raise ExportError(f"{where} has {len(result)} results; expected one")
        out = result[0]
        op = Op(n.id, body["kernel"], _canonical_params(params, where), ins, out, named(n))
        ops.append(op)
        written.add(out.id)
        read_ids.update(t.id for ts in ins.values() for t in ts)
    labels = Counter(t.label for t in tensors.values())
    for t in tensors.values():  # the key of an input or output: its label where it is unique
        t.key = t.label if t.label and labels[t.label] == 1 else t.id
    leaves = [t for t in tensors.values() if t.id not in written]
    outputs_ = [
        t
        for t in tensors.values()
        if t.id not in read_ids and (t.id in written or t.value is not None)
    ]
    return Program(axes, tensors, leaves, ops, outputs_)


def _level(ref: str) -> tuple[str, int]:
    m = re.match(r"^(.*?)([+-][0-9]+)?$", ref)
    assert m is not None
    return m.group(1), int(m.group(2) or 0)


class Letters:
    """Einsum letters for operation ``op``: called with a key (an axis reference), the key's
    letter, a new one for each new key in order; past 52 an :class:`ExportError` naming the
    operation. ``of`` maps the keys given so far to their letters."""

    POOL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def __init__(self, op: Op) -> None:
        self.op = op
        self.of: dict[str, str] = {}
        self._pool = iter(self.POOL)

    def __call__(self, key: str) -> str:
        if key not in self.of:
            found = next(self._pool, None)
            if found is None:
                raise ExportError(f"operation {self.op.named} has more than 52 axes for einsum")
            self.of[key] = found
        return self.of[key]


def einsum_of(p: Program, op: Op) -> str:
    """The einsum string of a ``dot`` (one letter per axis; paired duals share one)."""
    x, y = op.inputs["x"][0], op.inputs["y"][0]
    letter = Letters(op)
    letters = letter.of

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


#: What a malformed operation (a param missing or of the wrong kind, an operand missing) raises
#: while an exporter writes it; the exporters answer each as an :class:`ExportError`.
MALFORMED = (KeyError, IndexError, ValueError, TypeError, StopIteration, AttributeError)


def malformed(op: Op, error: Exception) -> ExportError:
    """The refusal of an operation the exporter could not read (``error``), naming it."""
    detail = shown_text(str(error), limit=60)
    return ExportError(
        f"operation {op.named} ({op.kernel}) has params or operands the export cannot read "
        f"({type(error).__name__} {detail}); the checker's issues on it say what to fix"
    )
