"""The kernel table: one entry per kernel, holding everything geon knows about it by name
(DESIGN.md §4, issue 37; docs/kernels.md, "The kernel table").

>>> kernel("op:dot").inputs, kernel("op:sum").family
(('x', 'y'), 'reduction')
>>> g = kernel("op:gelu")
>>> g.params, g.onnx, g.onnx_writer, g.numpy, g.executor, g.floating
(('approximate',), 'Gelu', 'gelu', 'gelu', 'gelu', True)

An entry (:class:`Kernel`) holds the kernel's name, family, ports (IO keys), the params it
accepts, its ONNX mapping in one direction-neutral form, its NumPy-export writer and the
executor lowering that runs it. The consumers derive their tables from it and keep no list of
kernel names of their own:

- **ONNX import** (:mod:`geon.interop.onnx_common`) maps each ``onnx`` operator (and each
  ``onnx_aliases`` one) to the kernel; **ONNX export** (:mod:`geon.interop.onnx_export`) writes
  the kernel with the writer named ``onnx_writer``: ``"node"`` is one node of the ``onnx``
  operator, the others (``"gelu"``, ``"softmax"``, ...) write it out at opset 18;
- **NumPy export** (:mod:`geon.interop.export`) writes it with the writer named ``numpy``, which
  fills in ``numpy_expr`` (``{x}`` for the operand of a unary kernel);
- the **executor** (:mod:`geon.execute.kernels`) lowers it with the lowering named ``executor``
  and computes it in a floating dtype when ``floating`` holds.

Names, not functions, link the entry to the other layers, because ``geon.core`` imports none
of them; ``tests/interop/test_kernel_table.py`` checks that every name resolves. A kernel's IO
keys are checked by :func:`check_io`; :func:`catalogue_json` is what the editor's palette reads.
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
    """One kernel's entry in the table.

    >>> kernel("op:add").inputs, kernel("op:add").variadic, kernel("op:add").onnx_aliases
    (('tensors',), True, ('Sum',))

    ``onnx`` is the ONNX operator (default domain) the kernel is in both directions: an import
    reads that operator as this kernel (``onnx_aliases``: further operators it reads as this
    kernel), an export writes this kernel with the writer ``onnx_writer`` (``"node"``: one
    ``onnx`` node; ``""``: no ONNX form). ``numpy`` names the NumPy-export writer (``""``: none)
    and ``numpy_expr`` what it fills in; ``executor`` names the executor's lowering, and
    ``array_api`` the array API standard function an elementwise kernel is (``""``: composed).
    """

    name: str
    family: Family
    inputs: tuple[str, ...]
    variadic: bool = False
    optional: tuple[str, ...] = ()
    named: bool = True
    doc: str = ""
    params: tuple[str, ...] = ()
    onnx: str | None = None
    onnx_aliases: tuple[str, ...] = ()
    onnx_writer: str = ""
    numpy: str = ""
    numpy_expr: str = ""
    executor: str = ""
    floating: bool = False
    array_api: str = ""

    @property
    def outputs(self) -> tuple[str, ...]:
        return ("result",)


def _nary(name: str, onnx: str, np_fn: str, *, binary: bool = False, aliases: tuple[str, ...] = (),
          xp: str = "") -> Kernel:  # fmt: skip
    return Kernel(
        name, "binary" if binary else "nary", ("x", "y") if binary else ("tensors",),
        variadic=not binary, doc="elementwise, binary" if binary else "elementwise, n-ary",
        params=("axes",), onnx=onnx, onnx_aliases=aliases, onnx_writer="nary", numpy="nary",
        numpy_expr=np_fn, executor="elementwise", array_api=xp or name.removeprefix("op:"),
    )  # fmt: skip


def _unary(name: str, onnx: str | None, np_expr: str, *, writer: str = "node",
           composed: bool = False) -> Kernel:  # fmt: skip
    return Kernel(
        name, "unary", ("tensor",), doc="elementwise, unary", onnx=onnx, onnx_writer=writer,
        numpy="unary", numpy_expr=np_expr, executor="elementwise",
        array_api="" if composed else name.removeprefix("op:"),
    )  # fmt: skip


def _reduction(name: str, onnx: str, np_fn: str) -> Kernel:
    return Kernel(
        name, "reduction", ("tensor",), doc="reduction over named axes",
        params=("reduction_axes", "out_axes", "parts"), onnx=onnx, onnx_writer="reduce",
        numpy="reduce", numpy_expr=np_fn, executor="reduction",
    )  # fmt: skip


def _view(name: str, params: tuple[str, ...], onnx: str | None, writer: str, numpy: str,
          doc: str = "view or relabelling") -> Kernel:  # fmt: skip
    return Kernel(
        name, "view", ("tensor",), doc=doc, params=params, onnx=onnx, onnx_writer=writer,
        numpy=numpy, executor="view",
    )  # fmt: skip


POOL_PARAMS = ("out_axes", "kernel_size", "stride", "padding", "dilation", "ceil_mode")
"""The params of both 2-D pools (``op:avg_pool2d`` adds ``count_include_pad``)."""

_ENTRIES: tuple[Kernel, ...] = (
    _nary("op:add", "Add", "np.add", aliases=("Sum",)),
    _nary("op:multiply", "Mul", "np.multiply"),
    _nary("op:maximum", "Max", "np.maximum"),
    _nary("op:minimum", "Min", "np.minimum"),
    _nary("op:subtract", "Sub", "np.subtract", binary=True),
    _nary("op:divide", "Div", "np.divide", binary=True),
    _nary("op:power", "Pow", "np.power", binary=True, xp="pow"),
    _unary("op:negative", "Neg", "np.negative({x})"),
    _unary("op:abs", "Abs", "np.abs({x})"),
    _unary("op:exp", "Exp", "np.exp({x})"),
    _unary("op:log", "Log", "np.log({x})"),
    _unary("op:sqrt", "Sqrt", "np.sqrt({x})"),
    _unary("op:square", None, "np.square({x})", writer="square"),  # ONNX has no Square: x·x
    _unary("op:tanh", "Tanh", "np.tanh({x})"),
    _unary("op:sigmoid", "Sigmoid", "1.0 / (1.0 + np.exp(-{x}))", composed=True),
    _unary("op:relu", "Relu", "np.maximum({x}, 0)", composed=True),
    Kernel(
        "op:gelu",
        "unary",
        ("tensor",),
        doc="elementwise, unary",
        params=("approximate",),
        onnx="Gelu",
        onnx_writer="gelu",
        numpy="gelu",
        executor="gelu",
        floating=True,
    ),  # ONNX Gelu is opset 20; the export (opset 18) writes the erf or tanh form out
    Kernel(
        "op:dot",
        "dot",
        ("x", "y"),
        doc="dual-axis contraction",
        params=("axes",),
        onnx="Einsum",
        onnx_writer="einsum",
        numpy="einsum",
        executor="dot",
    ),
    Kernel(
        "op:dot_partial",
        "dot",
        ("x", "y"),
        params=("parts",),
        executor="dot_partial",
        doc="a dot's partial products over equal parts of one contracted axis (summed after)",
    ),  # a plan's rewrite (DESIGN.md §9), never imported or exported
    _reduction("op:sum", "ReduceSum", "sum"),
    _reduction("op:prod", "ReduceProd", "prod"),
    _reduction("op:max", "ReduceMax", "max"),
    _reduction("op:min", "ReduceMin", "min"),
    _reduction("op:mean", "ReduceMean", "mean"),
    Kernel(
        "op:softmax",
        "normalization",
        ("tensor",),
        params=("reduction_axes",),
        onnx="Softmax",
        onnx_writer="softmax",
        numpy="softmax",
        executor="normalization",
        floating=True,
        doc="softmax over named axes: exp(x - max) / sum",
    ),  # written out on export: ONNX Softmax normalises over one axis, geon's over several
    Kernel(
        "op:layer_norm",
        "normalization",
        ("tensor", "scale", "bias"),
        optional=("scale", "bias"),
        params=("reduction_axes", "epsilon"),
        onnx="LayerNormalization",
        onnx_writer="layer_norm",
        numpy="layer_norm",
        executor="normalization",
        floating=True,
        doc="layer norm over named axes: (x - mean) / sqrt(var + epsilon) * scale + bias",
    ),  # written out on export: ONNX normalises trailing dims only, geon any named axes
    # Views: ONNX's Reshape, Squeeze, Unsqueeze and Flatten import as whichever views fit
    # (geon.interop.onnx_atoms); only Transpose is one view (a dimshuffle).
    _view("op:cast_axes", ("axes",), None, "reshape", "reshape"),
    _view("op:broadcast", ("axes",), None, "expand", "broadcast"),
    _view("op:dimshuffle", ("axes",), "Transpose", "dimshuffle", "dimshuffle"),
    _view("op:transpose", (), None, "transpose", "transpose"),
    _view("op:slice", ("slices", "axes"), None, "slice", "slice"),
    _view("op:pad", ("pad", "axes"), None, "", ""),
    _view("op:flatten", ("axes",), None, "reshape", "reshape"),
    _view("op:unflatten", ("axes",), None, "reshape", "reshape"),
    Kernel(
        "op:conv2d",
        "conv",
        ("x", "filter"),
        doc="2-D convolution",
        params=("out_axes", "stride", "padding"),
        onnx="Conv",
        onnx_writer="windowed",
        numpy="windowed",
        executor="conv",
    ),
    Kernel(
        "op:max_pool2d",
        "pool",
        ("tensor",),
        doc="2-D max pooling over Height and Width",
        params=POOL_PARAMS,
        onnx="MaxPool",
        onnx_writer="windowed",
        numpy="windowed",
        executor="pool",
    ),
    Kernel(
        "op:avg_pool2d",
        "pool",
        ("tensor",),
        doc="2-D average pooling over Height and Width",
        params=(*POOL_PARAMS, "count_include_pad"),
        onnx="AveragePool",
        onnx_writer="windowed",
        numpy="windowed",
        executor="pool",
        floating=True,
    ),
    Kernel(
        "op:concat",
        "concat",
        ("tensors",),
        variadic=True,
        params=("along", "axis"),
        onnx="Concat",
        onnx_writer="concat",
        numpy="concat",
        executor="concat",
        doc="join operands along one axis each into a new axis of the summed length",
    ),
    Kernel(
        "op:where",
        "where",
        ("x", "y", "condition"),
        params=("axes",),
        onnx="Where",
        onnx_writer="where",
        numpy="where",
        executor="where",
        doc="elementwise select: x where condition holds, else y (broadcasting)",
    ),
    Kernel(
        "op:gather",
        "gather",
        ("table", "indices"),
        params=("axis",),
        onnx="Gather",
        onnx_writer="gather",
        numpy="gather",
        executor="gather",
        doc="look up entries of a table along one axis by integer indices (embedding lookup)",
    ),
    # loom's positional kernels: no params, no ONNX or NumPy form
    Kernel(
        "op:linear",
        "positional",
        ("x", "A", "b"),
        optional=("b",),
        named=False,
        executor="positional",
        doc="loom: x[*batch, features]·A[features, out] + b[out]",
    ),
    Kernel(
        "matmul", "positional", ("x", "y"), named=False, executor="positional", doc="loom: matmul"
    ),
    Kernel(
        "row_sum",
        "positional",
        ("tensor",),
        named=False,
        executor="positional",
        doc="loom: row sum",
    ),
)

CATALOGUE: dict[str, Kernel] = {k.name: k for k in _ENTRIES}
"""Every known kernel by name (DESIGN.md §4): the kernel table."""


def _family(family: Family) -> tuple[str, ...]:
    return tuple(k.name for k in _ENTRIES if k.family == family)


NARY = _family("nary")
BINARY = _family("binary")
UNARY = _family("unary")
REDUCTIONS = _family("reduction")
NORMALIZATIONS = _family("normalization")
VIEWS = _family("view")
POOLS = _family("pool")
POSITIONAL = _family("positional")


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
