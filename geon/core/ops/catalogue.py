"""The kernel catalogue: every kernel's name, family and IO keys (DESIGN.md §4).

>>> kernel("op:dot").inputs, kernel("op:sum").family
(('x', 'y'), 'reduction')

A kernel's IO keys are checked by :func:`check_io`; :func:`catalogue_json` is what the editor's
palette reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from geon.core.axes import quote_axes
from geon.core.errors import KernelError

Family = Literal[
    "nary",
    "binary",
    "unary",
    "dot",
    "reduction",
    "normalization",
    "view",
    "conv",
    "pool",
    "concat",
    "where",
    "gather",
    "positional",
]


@dataclass(frozen=True, slots=True)
class Kernel:
    """A catalogue entry: the kernel's name, family and IO keys.

    >>> kernel("op:add").inputs, kernel("op:add").variadic
    (('tensors',), True)
    """

    name: str
    family: Family
    inputs: tuple[str, ...]
    variadic: bool = False
    optional: tuple[str, ...] = ()
    named: bool = True
    doc: str = ""

    @property
    def outputs(self) -> tuple[str, ...]:
        return ("result",)


NARY = ("op:add", "op:multiply", "op:maximum", "op:minimum")
BINARY = ("op:subtract", "op:divide", "op:power")
UNARY = (
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
)
REDUCTIONS = ("op:sum", "op:prod", "op:max", "op:min", "op:mean")
NORMALIZATIONS = ("op:softmax", "op:layer_norm")
VIEWS = (
    "op:cast_axes",
    "op:broadcast",
    "op:dimshuffle",
    "op:transpose",
    "op:slice",
    "op:pad",
    "op:flatten",
    "op:unflatten",
)
POOLS = ("op:max_pool2d", "op:avg_pool2d")
POSITIONAL = ("op:linear", "matmul", "row_sum")


def _catalogue() -> dict[str, Kernel]:
    out: dict[str, Kernel] = {}
    for name in NARY:
        out[name] = Kernel(name, "nary", ("tensors",), variadic=True, doc="elementwise, n-ary")
    for name in BINARY:
        out[name] = Kernel(name, "binary", ("x", "y"), doc="elementwise, binary")
    for name in UNARY:
        out[name] = Kernel(name, "unary", ("tensor",), doc="elementwise, unary")
    out["op:dot"] = Kernel("op:dot", "dot", ("x", "y"), doc="dual-axis contraction")
    out["op:dot_partial"] = Kernel(
        "op:dot_partial",
        "dot",
        ("x", "y"),
        doc="a dot's partial products over equal parts of one contracted axis (summed after)",
    )
    for name in REDUCTIONS:
        out[name] = Kernel(name, "reduction", ("tensor",), doc="reduction over named axes")
    out["op:softmax"] = Kernel(
        "op:softmax",
        "normalization",
        ("tensor",),
        doc="softmax over named axes: exp(x - max) / sum",
    )
    out["op:layer_norm"] = Kernel(
        "op:layer_norm",
        "normalization",
        ("tensor", "scale", "bias"),
        optional=("scale", "bias"),
        doc="layer norm over named axes: (x - mean) / sqrt(var + epsilon) * scale + bias",
    )
    for name in VIEWS:
        out[name] = Kernel(name, "view", ("tensor",), doc="view or relabelling")
    out["op:conv2d"] = Kernel("op:conv2d", "conv", ("x", "filter"), doc="2-D convolution")
    out["op:max_pool2d"] = Kernel(
        "op:max_pool2d", "pool", ("tensor",), doc="2-D max pooling over Height and Width"
    )
    out["op:avg_pool2d"] = Kernel(
        "op:avg_pool2d", "pool", ("tensor",), doc="2-D average pooling over Height and Width"
    )
    out["op:concat"] = Kernel(
        "op:concat",
        "concat",
        ("tensors",),
        variadic=True,
        doc="join operands along one axis each into a new axis of the summed length",
    )
    out["op:where"] = Kernel(
        "op:where",
        "where",
        ("x", "y", "condition"),
        doc="elementwise select: x where condition holds, else y (broadcasting)",
    )
    out["op:gather"] = Kernel(
        "op:gather",
        "gather",
        ("table", "indices"),
        doc="look up entries of a table along one axis by integer indices (embedding lookup)",
    )
    out["op:linear"] = Kernel(
        "op:linear",
        "positional",
        ("x", "A", "b"),
        optional=("b",),
        named=False,
        doc="loom: x[*batch, features]·A[features, out] + b[out]",
    )
    out["matmul"] = Kernel("matmul", "positional", ("x", "y"), named=False, doc="loom: matmul")
    out["row_sum"] = Kernel("row_sum", "positional", ("tensor",), named=False, doc="loom: row sum")
    return out


CATALOGUE: dict[str, Kernel] = _catalogue()
"""Every known kernel by name (DESIGN.md §4)."""


def catalogue_json() -> list[dict[str, Any]]:
    """The catalogue as JSON data (the editor's palette and IO keys come from it).

    >>> entry = catalogue_json()[0]
    >>> entry["name"], entry["family"], entry["inputs"], entry["outputs"], entry["variadic"]
    ('op:add', 'nary', ['tensors'], ['result'], True)
    """
    return [
        {
            "name": k.name,
            "family": k.family,
            "inputs": list(k.inputs),
            "outputs": list(k.outputs),
            "variadic": k.variadic,
            "optional": list(k.optional),
            "named": k.named,
            "doc": k.doc,
        }
        for k in CATALOGUE.values()
    ]


def kernel(name: str) -> Kernel:
    """The catalogue entry of ``name``; :class:`KernelError` when it is not in the catalogue.

    >>> kernel("op:frobnicate")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geon.core.errors.KernelError: kernel "op:frobnicate" is not in the catalogue; expected ...
    """
    found = CATALOGUE.get(name) if isinstance(name, str) else None
    if found is None:
        first = ", ".join(f'"{k}"' for k in list(CATALOGUE)[:2])
        raise KernelError(
            f'kernel "{name}" is not in the catalogue; expected one of ({first}, ...), '
            "or a custom kernel with an edited IPFSignature"
        )
    return found


def check_io(k: Kernel, inputs: Mapping[str, Sequence[Any]]) -> None:
    """Refuse missing, unexpected or wrongly counted input keys (:class:`KernelError`)."""
    for key in inputs:
        if key not in k.inputs:
            raise KernelError(f'{k.name} has no input "{key}"; expected {quote_axes(k.inputs)}')
    for key in k.inputs:
        items = inputs.get(key)
        if items is None or len(items) == 0:
            if key in k.optional:
                continue
            raise KernelError(f'{k.name} needs input "{key}"; expected {quote_axes(k.inputs)}')
        if not k.variadic and len(items) != 1:
            raise KernelError(
                f'{k.name} input "{key}" has {len(items)} tensors; expected exactly one'
            )
