"""The kernel catalogue: IO keys, axis inference and derived index projections (DESIGN.md §2, §4).

>>> from geon.core.axes import Axes, Axis
>>> H, W, N = Axis("H", 2), Axis("W", 3), Axis("N", 4)
>>> inf = infer("op:dot", {"x": [Axes.of([H, W - 1])], "y": [Axes.of([W, N])]})
>>> str(inf.result), str(inf.index)
('(H, N)', '(H, N)')
>>> inf.signature()["inputs"]["x"][0]
{'affineMap': {'projection': [[1, 0], [0, 0]], 'offset': [0, 0]}, 'shape': [1, 3]}

One function, :func:`infer`, serves every consumer:

- the **builder** turns a Python call into canonical JSON ``params`` and calls :func:`infer`, so
  what it writes into a document is exactly what the checker re-derives;
- the **checker** (:mod:`geon.core.axis_checks`) re-runs :func:`infer` on the axes it reads from a
  stored document and reports any :class:`~geon.core.errors.GeonError` as an issue;
- the **executor** reads an :class:`Inference`: the result axes, the canonical params and, per
  operand, one :class:`Dim` per tensor dim saying which index axis (column) it follows, with what
  step and offset, or that it is contracted/reduced (no column; ``extent`` = its full length);
  ``plan`` adds kernel-specific facts (``pairs`` for dot, ``reduced`` for reductions, ...);
- the **editor** mirrors :func:`infer` in TypeScript and runs the same table of cases
  (``tests/core/axis_cases.json``, built by :func:`run_case`).

Params (JSON, as stored in ``Operation.body.params``; axis references are strings):

=====================  ===========================================================================
kernel                 params
=====================  ===========================================================================
n-ary / binary         ``{"axes"?: [ref...]}`` — another order of the inferred result axes
reductions             ``{"reduction_axes"?: [ref...], "out_axes"?: [ref...]}`` — neither = all
cast_axes, broadcast,  ``{"axes": [ref...]}``
dimshuffle
slice                  ``{"slices": {ref: {"start", "stop", "step"} | int}, "axes"?: {ref: ref}}``
pad                    ``{"pad": {ref: [before, after]}, "axes"?: {ref: ref}}``
flatten                ``{"axes": [ref...]}`` — adjacent axes, merged into ``"A*B"``
unflatten              ``{"axes"?: ["A*B", ...]}`` — default every composite axis
conv2d                 ``{"out_axes": [ref...], "stride"?: n | [sh, sw], "padding"?: n | [ph, pw]}``
=====================  ===========================================================================

``Inference.plan`` (kernel facts for the executor; dims are positions in the operand):

- n-ary / binary: ``align`` — per operand, the result position of each of its dims;
- dot: ``pairs`` — ``[x dim, y dim]`` per contracted pair; ``lower`` — ``"x"`` or ``"y"``;
- reductions: ``reduced`` — the input dims reduced (the rest keep their order via ``dims``);
- slice: ``slices`` — per input dim ``None`` (kept), an int (dropped at that index) or
  ``(start, stop, step)`` as ``slice.indices`` gives them;
- pad: ``pad`` — per input dim ``[before, after]``;
- flatten: ``first``, ``count`` — the merged group;
- conv2d: ``x`` / ``filter`` / ``out`` — the dims with each role, ``batch`` — x's batch dims.

Index space. For a named op it is the result axes (``IndexAxes``), with one exception written
down here: ``op:flatten``'s index space is its *input* axes, because the composite output dim is
an affine function of them (``H*W`` = ``W·h + w``) while the inverse is not; so a flatten can be
sharded over its outer axis and its output projection is the row-major merge.

Derived projections (DESIGN.md §4): an operand dim that follows index axis ``i`` has its
coefficient (1, a slice step, a conv stride) in column ``i``; a contracted or reduced dim is a
zero row whose ``shape`` entry is its full length; an index axis an operand lacks (broadcast) is a
zero column; the offset is the selection's ``range.start`` plus slice starts, minus pad widths
(and conv padding); a conv window has ``shape`` = window length and the stride in the projection,
so shards of a conv over height read overlapping rows (halos).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from geon.core.axes import (
    Axes,
    Axis,
    AxisRef,
    CompositeRef,
    Ref,
    format_axes,
    quote_axes,
)
from geon.core.errors import AxisError, KernelError, ShapeError

__all__ = [
    "BINARY",
    "CATALOGUE",
    "NARY",
    "POSITIONAL",
    "REDUCTIONS",
    "UNARY",
    "VIEWS",
    "Dim",
    "Family",
    "Inference",
    "Kernel",
    "catalogue_json",
    "check_io",
    "infer",
    "infer_positional",
    "kernel",
    "run_case",
]

Family = Literal["nary", "binary", "unary", "dot", "reduction", "view", "conv", "positional"]


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
)
REDUCTIONS = ("op:sum", "op:prod", "op:max", "op:min", "op:mean")
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
    for name in REDUCTIONS:
        out[name] = Kernel(name, "reduction", ("tensor",), doc="reduction over named axes")
    for name in VIEWS:
        out[name] = Kernel(name, "view", ("tensor",), doc="view or relabelling")
    out["op:conv2d"] = Kernel("op:conv2d", "conv", ("x", "filter"), doc="2-D convolution")
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


# ------------------------------------------------------------------------------------------
# Inference results


@dataclass(frozen=True, slots=True)
class Dim:
    """How one operand dim reads the op's index space.

    ``terms``: ``(index column, coefficient)``; ``merged``: a composite dim, ``(column, part)``
    merged row-major (coefficients are the products of the later parts' lengths); ``offset``
    relative to the selection start; ``extent`` the ``shape`` entry: an int or a reference whose
    length it is (a contracted or reduced dim, or a conv window).

    >>> Dim(terms=((0, 1),)).column
    0
    """

    terms: tuple[tuple[int, int], ...] = ()
    merged: tuple[tuple[int, Ref], ...] = ()
    offset: int = 0
    extent: int | Ref = 1

    @property
    def column(self) -> int | None:
        """The index column this dim follows one to one, or None."""
        if len(self.terms) == 1 and not self.merged and self.terms[0][1] == 1:
            return self.terms[0][0]
        return None


Lengths = Callable[[Ref], int]


def _identity_dims(n: int) -> tuple[Dim, ...]:
    return tuple(Dim(terms=((i, 1),)) for i in range(n))


@dataclass(frozen=True, slots=True)
class Inference:
    """What :func:`infer` derives for one op.

    ``inputs`` are the operands' axes by IO key; ``result`` the output axes; ``index`` the index
    axes (= ``result`` except for flatten); ``params`` the canonical params JSON; ``dims`` one
    :class:`Dim` tuple per operand, by IO key (``"result"`` for the output); ``plan`` kernel facts
    for the executor.
    """

    kernel: str
    inputs: tuple[tuple[str, tuple[Axes, ...]], ...]
    result: Axes
    index: Axes
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    dims: tuple[tuple[str, tuple[tuple[Dim, ...], ...]], ...] = field(default=(), hash=False)
    plan: dict[str, Any] = field(default_factory=dict, hash=False)

    def operand(self, key: str, position: int = 0) -> Axes:
        """The axes of input ``key`` number ``position``."""
        return dict(self.inputs)[key][position]

    def operand_dims(self, key: str, position: int = 0) -> tuple[Dim, ...]:
        """The dims of input ``key`` (or ``"result"``) number ``position``."""
        return dict(self.dims)[key][position]

    def signature(
        self,
        starts: Mapping[str, Sequence[Sequence[int]]] | None = None,
        lengths: Lengths | None = None,
    ) -> dict[str, Any]:
        """The derived ``IPFSignature`` tag value.

        ``starts`` are the operand *tensors'* range starts by IO key (``"result"`` for the
        output; zeros when absent): params such as slice starts count from the tensor's origin.
        ``lengths`` binds axes that have no declared length."""
        size = lengths or _declared_length
        sig: dict[str, Any] = {"inputs": {}, "outputs": {}}
        rank = len(self.index)
        for key, operands in self.dims:
            side = "outputs" if key == "result" else "inputs"
            entries = []
            for pos, dims in enumerate(operands):
                start = _start(starts, key, pos, len(dims))
                entries.append(_access_json(dims, start, rank, size))
            sig[side][key] = entries
        return sig

    def selections(
        self,
        ranges: Mapping[str, Sequence[tuple[Sequence[int], Sequence[int]]]],
        lengths: Lengths | None = None,
    ) -> dict[str, list[dict[str, list[int]]]]:
        """The region each operand reads or writes: the projection of the whole index range,
        clipped to the operand tensor's range (``ranges``: ``(start, end)`` per operand by IO
        key). This is the selection the builder writes; for most kernels it is the whole
        tensor, for a slice the sliced window, and for pad the whole (smaller) input.

        >>> from geon.core.axes import Axis
        >>> H, H2 = Axis("H", 4), Axis("H2", 2)
        >>> inf = infer("op:slice", {"tensor": [Axes.of([H])]},
        ...             {"slices": {"H": {"start": 1, "stop": 3}}, "axes": {"H": "H2"}}, {"H2": H2})
        >>> inf.selections({"tensor": [([0], [4])], "result": [([0], [2])]})["tensor"]
        [{'start': [1], 'end': [3]}]
        """
        size = lengths or _declared_length
        extent = [size(r) for r in self.index]
        starts = {key: [r[0] for r in group] for key, group in ranges.items()}
        sig = self.signature(starts, size)
        out: dict[str, list[dict[str, list[int]]]] = {}
        for side in ("inputs", "outputs"):
            for key, entries in sig[side].items():
                found = []
                for pos, entry in enumerate(entries):
                    lo_t, hi_t = ranges[key][pos]
                    start, end = _project(entry, extent)
                    start = [max(a, b) for a, b in zip(start, lo_t, strict=True)]
                    end = [min(a, b) for a, b in zip(end, hi_t, strict=True)]
                    end = [max(a, b) for a, b in zip(start, end, strict=True)]
                    found.append({"start": start, "end": end})
                out[key] = found
        return out

    def index_range(self, lengths: Lengths | None = None) -> dict[str, list[int]]:
        """The op's ``IPFIndex``: ``[0, length)`` per index axis."""
        size = lengths or _declared_length
        return {"start": [0] * len(self.index), "end": [size(r) for r in self.index]}

    def index_json(self) -> dict[str, list[str]]:
        """The op's ``IndexAxes`` tag value."""
        return {"axes": list(self.index.names)}


def _project(entry: Mapping[str, Any], extent: Sequence[int]) -> tuple[list[int], list[int]]:
    """The range ``[0, extent)`` of the index space maps to under one IPF (every corner)."""
    proj = entry["affineMap"]["projection"]
    offset = entry["affineMap"]["offset"]
    start: list[int] = []
    end: list[int] = []
    for row, o, s in zip(proj, offset, entry["shape"], strict=True):
        lo = hi = o
        for c, n in zip(row, extent, strict=True):
            if n <= 0:
                continue
            lo += min(0, c * (n - 1))
            hi += max(0, c * (n - 1))
        start.append(lo)
        end.append(hi + s)
    return start, end


def _declared_length(ref: Ref) -> int:
    length = ref.length
    if length is None:
        raise ShapeError(
            f'axis "{ref}" has no length; bind it to derive projections '
            f'(e.g. Axis("{ref.axes[0].name}", 4))'
        )
    return length


def _start(
    starts: Mapping[str, Sequence[Sequence[int]]] | None, key: str, pos: int, rank: int
) -> list[int]:
    if starts is None or key not in starts or pos >= len(starts[key]):
        return [0] * rank
    start = list(starts[key][pos])
    if len(start) != rank:
        raise ShapeError(f'selection "{key}[{pos}]" starts at {start}; expected {rank} coordinates')
    return start


def _access_json(
    dims: Sequence[Dim], start: Sequence[int], rank: int, size: Lengths
) -> dict[str, Any]:
    projection: list[list[int]] = []
    offset: list[int] = []
    shape: list[int] = []
    for dim, s in zip(dims, start, strict=True):
        row = [0] * rank
        for col, coef in dim.terms:
            row[col] += coef
        if dim.merged:
            stride = 1
            for col, part in reversed(dim.merged):
                row[col] += stride
                stride *= size(part)
        projection.append(row)
        offset.append(s + dim.offset)
        shape.append(dim.extent if isinstance(dim.extent, int) else size(dim.extent))
    return {"affineMap": {"projection": projection, "offset": offset}, "shape": shape}


# ------------------------------------------------------------------------------------------
# Resolving axis names in params


class _Resolver:
    """Resolves reference strings in params against declarations and the operands' axes."""

    def __init__(
        self,
        declared: Mapping[str, Axis] | Callable[[str], Axis | None] | None,
        operands: Iterable[Axes],
    ) -> None:
        self._known: dict[str, Axis] = {}
        for axes in operands:
            for axis in axes.declared:
                self._known.setdefault(axis.name, axis)
        self._declared = declared

    def axis(self, name: str) -> Axis | None:
        if self._declared is not None:
            found = (
                self._declared.get(name)
                if isinstance(self._declared, Mapping)
                else self._declared(name)
            )
            if found is not None:
                return found
        return self._known.get(name)

    def ref(self, item: Any, what: str) -> Ref:
        if isinstance(item, Axis):
            return AxisRef(item, 0)
        if isinstance(item, (AxisRef, CompositeRef)):
            return item
        if not isinstance(item, str):
            raise KernelError(f'{what} has "{item!r}"; expected an axis reference such as "W-1"')
        return AxisRef.parse(item, self.axis)

    def refs(self, items: Any, what: str) -> list[Ref]:
        if not isinstance(items, (list, tuple)):
            raise KernelError(f'{what} is "{items!r}"; expected a list of axis references')
        return [self.ref(i, what) for i in items]


def _params_obj(params: Mapping[str, Any] | None, kname: str) -> Mapping[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise KernelError(f'{kname} params are "{params!r}"; expected a JSON object')
    return params


def _only(params: Mapping[str, Any], allowed: tuple[str, ...], kname: str) -> None:
    for key in params:
        if key not in allowed:
            expected = quote_axes(allowed) if allowed else "no params"
            raise KernelError(f'{kname} has unknown param "{key}"; expected {expected}')


def _names(refs: Iterable[object]) -> list[str]:
    return [str(r) for r in refs]


def _no_dups(refs: Sequence[Ref], what: str) -> None:
    seen: set[Ref] = set()
    for r in refs:
        if r in seen:
            raise AxisError(f'axis "{r}" appears twice in {what}; name each axis once')
        seen.add(r)


# ------------------------------------------------------------------------------------------
# Inference per family


def infer(
    kernel_name: str,
    inputs: Mapping[str, Sequence[Axes]],
    params: Mapping[str, Any] | None = None,
    axes: Mapping[str, Axis] | Callable[[str], Axis | None] | None = None,
) -> Inference:
    """Infer the result axes, index axes and projections of one op.

    ``inputs`` maps IO keys to operand axes (``{"tensors": [a, b]}``, ``{"x": [a], "y": [b]}``,
    ``{"tensor": [a]}``); ``params`` is the op's params JSON; ``axes`` resolves axis names used
    in params (new axes of slice/pad/cast...) that the operands do not carry.
    Raises :class:`AxisError`, :class:`ShapeError` or :class:`KernelError`, naming the axis.
    """
    k = kernel(kernel_name)
    if not k.named:
        raise KernelError(
            f'kernel "{k.name}" is positional (loom) and has no axis inference; use a named '
            'kernel such as "op:dot" on tensors with axes'
        )
    check_io(k, inputs)
    operands = [Axes.of(a) for key in k.inputs for a in inputs.get(key, ())]
    ins = tuple((key, tuple(Axes.of(a) for a in inputs.get(key, ()))) for key in k.inputs)
    p = _params_obj(params, k.name)
    res = _Resolver(axes, operands)
    if k.family in ("nary", "binary"):
        return _elementwise(k, ins, p, res)
    if k.family == "unary":
        _only(p, (), k.name)
        a = operands[0]
        return _make(k, ins, a, a, {}, {"tensor": [_identity_dims(len(a))]})
    if k.family == "dot":
        _only(p, (), k.name)
        return _dot(k, ins, operands[0], operands[1])
    if k.family == "reduction":
        return _reduction(k, ins, operands[0], p, res)
    if k.family == "conv":
        return _conv2d(k, ins, operands[0], operands[1], p, res)
    view = _VIEWS[k.name]
    return view(k, ins, operands[0], p, res)


def _make(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    result: Axes,
    index: Axes,
    params: dict[str, Any],
    in_dims: Mapping[str, list[tuple[Dim, ...]]],
    out_dims: tuple[Dim, ...] | None = None,
    plan: dict[str, Any] | None = None,
) -> Inference:
    dims = [(key, tuple(in_dims[key])) for key, _ in ins if key in in_dims]
    dims.append(("result", (out_dims if out_dims is not None else _identity_dims(len(result)),)))
    return Inference(k.name, ins, result, index, params, tuple(dims), plan or {})


def _elementwise(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    _only(p, ("axes",), k.name)
    operands = [a for _, group in ins for a in group]
    result: list[Ref] = list(operands[0])
    maps: list[list[int]] = [list(range(len(result)))]
    for axes in operands[1:]:
        before = len(result)
        claimed = {r for r in axes if r in result}
        m: list[int] = []
        for r in axes:
            if r in result:
                m.append(result.index(r))
                continue
            found = None
            if isinstance(r, AxisRef) and r.cls is not None:
                for i in range(before):
                    a = result[i]
                    if (
                        isinstance(a, AxisRef)
                        and a.axis != r.axis
                        and a.cls == r.cls
                        and a.length is not None
                        and a.length == r.length
                        and a not in claimed
                    ):
                        found = i
                        break
            if found is None:
                result.append(r)
                m.append(len(result) - 1)
            else:
                claimed.add(result[found])
                m.append(found)
        maps.append(m)
    params: dict[str, Any] = {}
    if "axes" in p:
        order = res.refs(p["axes"], f'{k.name} params "axes"')
        _no_dups(order, f'{k.name} params "axes"')
        missing = [r for r in result if r not in order]
        extra = [r for r in order if r not in result]
        if missing or extra:
            raise AxisError(
                f"{k.name} params axes {quote_axes(order)} are not an order of the result axes "
                f"{quote_axes(result)}"
                + (f"; missing {quote_axes(missing)}" if missing else "")
                + (f"; not in the result {quote_axes(extra)}" if extra else "")
            )
        perm = [order.index(r) for r in result]
        maps = [[perm[i] for i in m] for m in maps]
        result = order
        params["axes"] = _names(order)
    out = Axes(tuple(result))
    in_dims: dict[str, list[tuple[Dim, ...]]] = {}
    it = iter(maps)
    for key, group in ins:
        in_dims[key] = [tuple(Dim(terms=((c, 1),)) for c in next(it)) for _ in group]
    return _make(k, ins, out, out, params, in_dims, plan={"align": maps})


def _dot(k: Kernel, ins: tuple[tuple[str, tuple[Axes, ...]], ...], x: Axes, y: Axes) -> Inference:
    # Pair x's A^k with y's A^(k+1) or A^(k-1); record which side holds the lower level.
    pairs: list[tuple[int, int, str]] = []  # (x dim, y dim, "x" | "y": side of the lower level)
    y_partner: dict[int, int] = {}
    for i, a in enumerate(x):
        found = [(j, b) for j, b in enumerate(y) if b == a.shift(1) or b == a.shift(-1)]
        if len(found) > 1:
            raise AxisError(
                f'axis "{a}" of x could pair with both {quote_axes(b for _, b in found)} of y; '
                f'keep only one of them, e.g. "{found[0][1]}"'
            )
        if found:
            j, b = found[0]
            if j in y_partner:
                raise AxisError(
                    f'axis "{b}" of y could pair with both "{x[y_partner[j]]}" and "{a}" of x; '
                    f'keep only one of them, e.g. "{x[y_partner[j]]}"'
                )
            y_partner[j] = i
            pairs.append((i, j, "x" if b == a.shift(1) else "y"))
    paired_x = {i for i, _, _ in pairs}
    paired_y = {j for _, j, _ in pairs}
    free_x = [a for i, a in enumerate(x) if i not in paired_x]
    free_y = [b for j, b in enumerate(y) if j not in paired_y]
    for a in free_x:
        if a in free_y:
            raise AxisError(
                f'axis "{a}" appears in both operands at level {a.level}; mark one side as a '
                f"dual, e.g. {a.shift(-1)}"
            )
    sides = {s for _, _, s in pairs}
    if len(sides) > 1:
        lx = next((i, j) for i, j, s in pairs if s == "x")
        ly = next((i, j) for i, j, s in pairs if s == "y")
        raise AxisError(
            f'dot pairs disagree on which operand holds the lower level: "{x[lx[0]]}" of x pairs '
            f'with "{y[lx[1]]}" of y, but "{y[ly[1]]}" of y pairs with "{x[ly[0]]}" of x; put '
            f'every lower level on one side, e.g. write "{y[ly[1]]}" in x and "{x[ly[0]]}" in y'
        )
    y_first = sides == {"y"}
    result = Axes(tuple(free_y + free_x) if y_first else tuple(free_x + free_y))
    col = {r: c for c, r in enumerate(result)}
    x_dims = tuple(
        Dim(extent=a) if i in paired_x else Dim(terms=((col[a], 1),)) for i, a in enumerate(x)
    )
    y_dims = tuple(
        Dim(extent=b) if j in paired_y else Dim(terms=((col[b], 1),)) for j, b in enumerate(y)
    )
    plan = {"pairs": [[i, j] for i, j, _ in pairs], "lower": "y" if y_first else "x"}
    return _make(k, ins, result, result, {}, {"x": [x_dims], "y": [y_dims]}, plan=plan)


def _reduction(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    _only(p, ("reduction_axes", "out_axes"), k.name)
    red = (
        res.refs(p["reduction_axes"], f"{k.name} reduction_axes") if "reduction_axes" in p else None
    )
    out = res.refs(p["out_axes"], f"{k.name} out_axes") if "out_axes" in p else None
    for name, group in (("reduction_axes", red), ("out_axes", out)):
        if group is None:
            continue
        _no_dups(group, f"{k.name} {name}")
        strangers = [r for r in group if r not in a]
        if strangers:
            raise AxisError(
                f"{k.name} {name} {quote_axes(strangers)} "
                + ("is not an axis" if len(strangers) == 1 else "are not axes")
                + f" of the input; expected axes from {quote_axes(a)}"
            )
    if red is not None and out is not None:
        both = [r for r in red if r in out]
        if both:
            raise AxisError(
                f"{k.name} axes {quote_axes(both)} appear in both reduction_axes and out_axes; "
                "each input axis goes to exactly one of them"
            )
        neither = [r for r in a if r not in red and r not in out]
        if neither:
            raise AxisError(
                f"{k.name} input axes {quote_axes(neither)} are in neither reduction_axes nor "
                "out_axes; each input axis goes to exactly one of them"
            )
    if out is None:
        reduced = list(a) if red is None else red
        out = [r for r in a if r not in reduced]
    else:
        reduced = [r for r in a if r not in out]
    result = Axes(tuple(out))
    dims = tuple(Dim(terms=((result.index(r), 1),)) if r in result else Dim(extent=r) for r in a)
    params = {"reduction_axes": _names(r for r in a if r in reduced), "out_axes": _names(out)}
    plan = {"reduced": [i for i, r in enumerate(a) if r not in result]}
    return _make(k, ins, result, result, params, {"tensor": [dims]}, plan=plan)


def _view_axes(p: Mapping[str, Any], k: Kernel, res: _Resolver) -> list[Ref]:
    _only(p, ("axes",), k.name)
    if "axes" not in p:
        raise KernelError(f'{k.name} needs params "axes"; expected a list of axis references')
    refs = res.refs(p["axes"], f'{k.name} params "axes"')
    _no_dups(refs, f'{k.name} params "axes"')
    return refs


def _cast_axes(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    new = _view_axes(p, k, res)
    if len(new) != len(a):
        raise AxisError(
            f"cast_axes to {quote_axes(new)} has {len(new)} axes but the input {format_axes(a)} "
            f"has {len(a)}; name one new axis per input axis"
        )
    for old, r in zip(a, new, strict=True):
        if old.length is not None and r.length is not None and old.length != r.length:
            raise ShapeError(
                f'cast_axes cannot relabel "{old}" (length {old.length}) as "{r}" (length '
                f"{r.length}); the lengths must agree position by position"
            )
    result = Axes(tuple(new))
    return _make(
        k, ins, result, result, {"axes": _names(new)}, {"tensor": [_identity_dims(len(a))]}
    )


def _reordered(
    k: Kernel, ins: tuple[tuple[str, tuple[Axes, ...]], ...], a: Axes, new: Sequence[Ref]
) -> Inference:
    """A view whose result axes are ``new`` and whose input dims follow them by identity."""
    result = Axes(tuple(new))
    dims = tuple(Dim(terms=((result.index(r), 1),)) for r in a)
    return _make(k, ins, result, result, {"axes": _names(new)}, {"tensor": [dims]})


def _broadcast(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    new = _view_axes(p, k, res)
    missing = [r for r in a if r not in new]
    if missing:
        raise AxisError(
            f"broadcast to {quote_axes(new)} is missing the input's {quote_axes(missing)}; "
            "the target axes must include every input axis"
        )
    return _reordered(k, ins, a, new)


def _dimshuffle(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    new = _view_axes(p, k, res)
    missing = [r for r in a if r not in new]
    extra = [r for r in new if r not in a]
    if missing or extra:
        raise AxisError(
            f"dimshuffle to {quote_axes(new)} is not an order of the input {quote_axes(a)}"
            + (f"; missing {quote_axes(missing)}" if missing else "")
            + (f"; not in the input {quote_axes(extra)}" if extra else "")
        )
    return _reordered(k, ins, a, new)


def _transpose(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    _only(p, (), k.name)
    result = a.T
    n = len(a)
    dims = tuple(Dim(terms=((n - 1 - i, 1),)) for i in range(n))
    return _make(k, ins, result, result, {}, {"tensor": [dims]})


def _renames(k: Kernel, p: Mapping[str, Any], a: Axes, res: _Resolver) -> dict[Ref, Ref]:
    raw = p.get("axes", {})
    if not isinstance(raw, Mapping):
        raise KernelError(
            f'{k.name} params "axes" is "{raw!r}"; expected an object mapping old axis to new'
        )
    out: dict[Ref, Ref] = {}
    for old_s, new_s in raw.items():
        old = res.ref(old_s, f'{k.name} params "axes"')
        if old not in a:
            raise AxisError(
                f'{k.name} renames "{old}", which is not an axis of the input; expected one of '
                f"{quote_axes(a)}"
            )
        out[old] = res.ref(new_s, f'{k.name} params "axes"')
    return out


def _new_axis(k: Kernel, old: Ref, new_len: int, renames: Mapping[Ref, Ref], example: str) -> Ref:
    new = renames.get(old)
    if new is None:
        if old.length is not None and old.length != new_len:
            verb = "slicing" if k.name == "op:slice" else "padding"
            raise AxisError(
                f'{verb} axis "{old}" changes its length from {old.length} to {new_len}; name a '
                f'new axis for it, e.g. axes={{"{old}": "{example}"}}'
            )
        return old
    if new.length is not None and new.length != new_len:
        raise ShapeError(
            f'{k.name} maps axis "{old}" to "{new}" of length {new.length}, but the result has '
            f'{new_len} elements along it; declare "{new}" with length {new_len}'
        )
    return new


def _slice(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    _only(p, ("slices", "axes"), k.name)
    raw = p.get("slices")
    if not isinstance(raw, Mapping):
        raise KernelError(
            f'{k.name} params "slices" is "{raw!r}"; expected an object such as '
            '{"H": {"start": 0, "stop": 2, "step": 1}} or {"H": 0}'
        )
    specs: dict[Ref, tuple[int, int, int] | int] = {}
    for name, spec in raw.items():
        ref = res.ref(name, f'{k.name} params "slices"')
        if ref not in a:
            raise AxisError(
                f'op:slice slices "{ref}", which is not an axis of the input; expected one of '
                f"{quote_axes(a)}"
            )
        length = ref.length
        if isinstance(spec, int) and not isinstance(spec, bool):
            if length is not None and not -length <= spec < length:
                raise ShapeError(
                    f'op:slice index {spec} is out of range for axis "{ref}" of length {length}; '
                    f"expected {-length} <= index < {length}"
                )
            specs[ref] = spec if spec >= 0 or length is None else spec + length
            continue
        if not isinstance(spec, Mapping) or any(
            key not in ("start", "stop", "step") for key in spec
        ):
            raise KernelError(
                f'op:slice spec "{spec!r}" for axis "{ref}" is invalid; expected an integer or '
                '{"start", "stop", "step"}'
            )
        parts = [spec.get("start"), spec.get("stop"), spec.get("step")]
        for v in parts:
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise KernelError(
                    f'op:slice spec "{spec!r}" for axis "{ref}" has "{v!r}"; expected integers '
                    "or null"
                )
        if parts[2] == 0:
            raise KernelError(f'op:slice step for axis "{ref}" is 0; expected a nonzero integer')
        if length is None:
            raise ShapeError(
                f'op:slice cannot slice axis "{ref}" before it has a length; bind it first'
            )
        specs[ref] = slice(*parts).indices(length)
    renames = _renames(k, p, a, res)
    for old in renames:
        if old not in specs:
            raise AxisError(
                f'op:slice renames "{old}" but does not slice it; rename axes with cast_axes'
            )
    result: list[Ref] = []
    for r in a:
        spec = specs.get(r)
        if isinstance(spec, int):
            if r in renames:
                raise AxisError(
                    f'op:slice drops axis "{r}" with an integer index, so it cannot be renamed'
                )
            continue
        if spec is None:
            result.append(r)
            continue
        n = len(range(*spec))
        if n == 0:
            raise ShapeError(f'op:slice selects no elements of axis "{r}"; an axis has length >= 1')
        result.append(_new_axis(k, r, n, renames, f"{r}{n}"))
    out = Axes(tuple(result))
    dims: list[Dim] = []
    col = 0
    canon: dict[str, Any] = {}
    for r in a:
        spec = specs.get(r)
        if isinstance(spec, int):
            dims.append(Dim(offset=spec))
            canon[str(r)] = spec
        elif spec is None:
            dims.append(Dim(terms=((col, 1),)))
            col += 1
        else:
            start, _, step = spec
            dims.append(Dim(terms=((col, step),), offset=start))
            n = len(range(*spec))
            stop = start + step * n
            # a negative step running past 0 stops "before the start" — null, not -1
            canon[str(r)] = {"start": start, "stop": stop if stop >= 0 else None, "step": step}
            col += 1
    params: dict[str, Any] = {"slices": canon}
    if renames:
        params["axes"] = {str(o): str(n) for o, n in renames.items()}
    plan = {"slices": [specs.get(r) for r in a]}
    return _make(k, ins, out, out, params, {"tensor": [tuple(dims)]}, plan=plan)


def _pad(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    _only(p, ("pad", "axes"), k.name)
    raw = p.get("pad")
    if not isinstance(raw, Mapping):
        raise KernelError(
            f'op:pad params "pad" is "{raw!r}"; expected an object such as {{"H": [1, 1]}}'
        )
    widths: dict[Ref, tuple[int, int]] = {}
    for name, w in raw.items():
        ref = res.ref(name, 'op:pad params "pad"')
        if ref not in a:
            raise AxisError(
                f'op:pad pads "{ref}", which is not an axis of the input; expected one of '
                f"{quote_axes(a)}"
            )
        if (
            not isinstance(w, (list, tuple))
            or len(w) != 2
            or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in w)
        ):
            raise KernelError(
                f'op:pad widths "{w!r}" for axis "{ref}" are invalid; expected [before, after] '
                "with integers >= 0"
            )
        if ref.length is None:
            raise ShapeError(f'op:pad cannot pad axis "{ref}" before it has a length; bind it')
        widths[ref] = (int(w[0]), int(w[1]))
    renames = _renames(k, p, a, res)
    result: list[Ref] = []
    for r in a:
        if r in widths:
            n = (r.length or 0) + sum(widths[r])
            result.append(_new_axis(k, r, n, renames, f"{r}{n}"))
        elif r in renames:
            raise AxisError(f'op:pad renames "{r}" but does not pad it; rename with cast_axes')
        else:
            result.append(r)
    out = Axes(tuple(result))
    dims = tuple(
        Dim(terms=((i, 1),), offset=-widths[r][0] if r in widths else 0) for i, r in enumerate(a)
    )
    params: dict[str, Any] = {"pad": {str(r): list(w) for r, w in widths.items()}}
    if renames:
        params["axes"] = {str(o): str(n) for o, n in renames.items()}
    plan = {"pad": [list(widths.get(r, (0, 0))) for r in a]}
    return _make(k, ins, out, out, params, {"tensor": [dims]}, plan=plan)


def _flatten(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    group = _view_axes(p, k, res)
    if len(group) < 2:
        raise AxisError(
            f"flatten needs at least two adjacent axes; got {quote_axes(group)} from "
            f"{format_axes(a)}"
        )
    strangers = [r for r in group if r not in a]
    if strangers:
        raise AxisError(
            f"flatten axes {quote_axes(strangers)} are not axes of the input; expected adjacent "
            f"axes from {quote_axes(a)}"
        )
    first = a.index(group[0])
    if list(a[first : first + len(group)]) != group:
        raise AxisError(
            f"flatten axes {quote_axes(group)} are not adjacent in this order in "
            f"{format_axes(a)}; dimshuffle them next to each other first"
        )
    comp = CompositeRef.of(group)
    result = Axes((*a[:first], comp, *a[first + len(group) :]))
    out_dims: list[Dim] = [Dim(terms=((i, 1),)) for i in range(first)]
    out_dims.append(Dim(merged=tuple((first + j, ref) for j, ref in enumerate(group))))
    out_dims += [Dim(terms=((i, 1),)) for i in range(first + len(group), len(a))]
    return _make(
        k,
        ins,
        result,
        a,
        {"axes": _names(group)},
        {"tensor": [_identity_dims(len(a))]},
        out_dims=tuple(out_dims),
        plan={"first": first, "count": len(group)},
    )


def _unflatten(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    a: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    _only(p, ("axes",), k.name)
    if "axes" in p:
        chosen = res.refs(p["axes"], 'op:unflatten params "axes"')
        for r in chosen:
            if not isinstance(r, CompositeRef) or r not in a:
                comps = [c for c in a if isinstance(c, CompositeRef)]
                raise AxisError(
                    f'unflatten axis "{r}" is not a composite axis of the input; expected one of '
                    f"{quote_axes(comps)}"
                )
    else:
        chosen = [r for r in a if isinstance(r, CompositeRef)]
        if not chosen:
            raise AxisError(
                f"unflatten found no composite axis (such as H*W) in {format_axes(a)}; flatten "
                "first"
            )
    result: list[Ref] = []
    for r in a:
        if r in chosen and isinstance(r, CompositeRef):
            result.extend(r.parts)
        else:
            result.append(r)
    out = Axes(tuple(result))
    dims: list[Dim] = []
    for r in a:
        if r in chosen and isinstance(r, CompositeRef):
            dims.append(Dim(merged=tuple((out.index(part), part) for part in r.parts)))
        else:
            dims.append(Dim(terms=((out.index(r), 1),)))
    return _make(k, ins, out, out, {"axes": _names(chosen)}, {"tensor": [tuple(dims)]})


def _pair_ints(value: Any, name: str, default: int, minimum: int) -> tuple[int, int]:
    if value is None:
        return (default, default)
    pair = [value, value] if isinstance(value, int) and not isinstance(value, bool) else value
    if (
        not isinstance(pair, (list, tuple))
        or len(pair) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in pair)
    ):
        raise KernelError(
            f'op:conv2d {name} "{value!r}" is invalid; expected an integer >= {minimum} or '
            f"[height, width]"
        )
    return (int(pair[0]), int(pair[1]))


def _one_role(axes: Axes, role: str, what: str, exclude: Iterable[Ref] = ()) -> AxisRef:
    skip = set(exclude)
    found = [r for r in axes if isinstance(r, AxisRef) and role in r.roles and r not in skip]
    if len(found) != 1:
        got = "none" if not found else "several: " + format_axes(found)
        raise AxisError(
            f'op:conv2d {what} needs exactly one axis with role "{role}"; found {got} among '
            f"{format_axes(axes)}"
        )
    return found[0]


def _conv2d(
    k: Kernel,
    ins: tuple[tuple[str, tuple[Axes, ...]], ...],
    x: Axes,
    f: Axes,
    p: Mapping[str, Any],
    res: _Resolver,
) -> Inference:
    _only(p, ("out_axes", "stride", "padding"), k.name)
    stride = _pair_ints(p.get("stride"), "stride", 1, 1)
    padding = _pair_ints(p.get("padding"), "padding", 0, 0)
    if "out_axes" not in p:
        raise KernelError(
            'op:conv2d needs params "out_axes"; expected the output axes, e.g. ["K", "P", "Q", "N"]'
        )
    out = res.refs(p["out_axes"], 'op:conv2d params "out_axes"')
    _no_dups(out, 'op:conv2d params "out_axes"')
    c = _one_role(x, "Channel", 'input "x"')
    h = _one_role(x, "Height", 'input "x"')
    w = _one_role(x, "Width", 'input "x"')
    batch = [r for r in x if r not in (c, h, w)]
    fc = [r for r in f if r == c.shift(-1) or r == c.shift(1)]
    if len(fc) != 1:
        raise AxisError(
            f'op:conv2d filter must carry the input\'s channel "{c}" as a dual ("{c.shift(-1)}" '
            f'or "{c.shift(1)}"); found {format_axes(f)}'
        )
    fh = _one_role(f, "Height", 'filter "filter"', exclude=fc)
    fw = _one_role(f, "Width", 'filter "filter"', exclude=fc)
    fk = _one_role(f, "Channelout", 'filter "filter"', exclude=fc)
    others = [r for r in f if r not in (fc[0], fh, fw, fk)]
    if others:
        raise AxisError(
            f"op:conv2d filter has unexpected axes {quote_axes(others)}; expected a dual of the "
            "channel and axes with roles Height, Width and Channelout"
        )
    for r in batch:
        if r not in out:
            raise AxisError(
                f'op:conv2d out_axes {quote_axes(out)} lack the input\'s batch axis "{r}"'
            )
    if fk not in out:
        raise AxisError(
            f'op:conv2d out_axes {quote_axes(out)} lack the filter\'s Channelout axis "{fk}"'
        )
    rest = Axes(tuple(r for r in out if r not in batch and r != fk))
    oh = _one_role(rest, "Height", "out_axes")
    ow = _one_role(rest, "Width", "out_axes")
    extra = [r for r in rest if r not in (oh, ow)]
    if extra:
        raise AxisError(
            f"op:conv2d out_axes have unexpected axes {quote_axes(extra)}; expected the batch "
            "axes, the Channelout axis and one Height and one Width axis"
        )
    for o, i, win, s, pad in (
        (oh, h, fh, stride[0], padding[0]),
        (ow, w, fw, stride[1], padding[1]),
    ):
        if i.length is None or win.length is None:
            continue
        n = (i.length + 2 * pad - win.length) // s + 1
        if n < 1:
            raise ShapeError(
                f'op:conv2d window "{win}" of length {win.length} is longer than "{i}" '
                f"(length {i.length}) plus padding {pad} on each side"
            )
        if o.length is not None and o.length != n:
            raise ShapeError(
                f'op:conv2d output axis "{o}" has length {o.length}; the window "{win}" '
                f'(length {win.length}) over "{i}" (length {i.length}) with stride {s} and '
                f"padding {pad} gives {n}"
            )
    result = Axes(tuple(out))
    col = {r: j for j, r in enumerate(result)}
    x_dims = []
    for r in x:
        if r == c:
            x_dims.append(Dim(extent=c))
        elif r == h:
            x_dims.append(Dim(terms=((col[oh], stride[0]),), offset=-padding[0], extent=fh))
        elif r == w:
            x_dims.append(Dim(terms=((col[ow], stride[1]),), offset=-padding[1], extent=fw))
        else:
            x_dims.append(Dim(terms=((col[r], 1),)))
    f_dims = tuple(Dim(terms=((col[r], 1),)) if r == fk else Dim(extent=r) for r in f)
    params = {
        "out_axes": _names(out),
        "stride": list(stride),
        "padding": list(padding),
    }
    plan = {
        "x": {"channel": x.index(c), "height": x.index(h), "width": x.index(w)},
        "filter": {
            "channel": f.index(fc[0]),
            "height": f.index(fh),
            "width": f.index(fw),
            "channelout": f.index(fk),
        },
        "out": {
            "channelout": result.index(fk),
            "height": result.index(oh),
            "width": result.index(ow),
            "batch": [result.index(r) for r in batch],
        },
        "batch": [x.index(r) for r in batch],
    }
    return _make(
        k, ins, result, result, params, {"x": [tuple(x_dims)], "filter": [f_dims]}, plan=plan
    )


_View = Callable[
    [Kernel, tuple[tuple[str, tuple[Axes, ...]], ...], Axes, Mapping[str, Any], _Resolver],
    Inference,
]

_VIEWS: dict[str, _View] = {
    "op:cast_axes": _cast_axes,
    "op:broadcast": _broadcast,
    "op:dimshuffle": _dimshuffle,
    "op:transpose": _transpose,
    "op:slice": _slice,
    "op:pad": _pad,
    "op:flatten": _flatten,
    "op:unflatten": _unflatten,
}


# ------------------------------------------------------------------------------------------
# Positional (loom) kernels: shapes in, shapes and projections out


@dataclass(frozen=True, slots=True)
class PositionalInference:
    """Shape inference of a positional loom kernel: the result shape and, per operand, dims
    whose extents are plain ints (the ``dims`` of :class:`Inference` with ``int`` extents).

    >>> p = infer_positional("matmul", {"x": [(2, 3)], "y": [(3, 4)]})
    >>> p.result, p.signature()["inputs"]["y"][0]["shape"]
    ((2, 4), [3, 1])
    """

    kernel: str
    result: tuple[int, ...]
    dims: tuple[tuple[str, tuple[tuple[Dim, ...], ...]], ...] = field(hash=False)

    def signature(
        self, starts: Mapping[str, Sequence[Sequence[int]]] | None = None
    ) -> dict[str, Any]:
        """The ``IPFSignature`` (loom's own derivation for these kernels)."""
        sig: dict[str, Any] = {"inputs": {}, "outputs": {}}
        for key, operands in self.dims:
            side = "outputs" if key == "result" else "inputs"
            sig[side][key] = [
                _access_json(d, _start(starts, key, pos, len(d)), len(self.result), _no_refs)
                for pos, d in enumerate(operands)
            ]
        return sig


def _no_refs(ref: Ref) -> int:  # positional dims carry int extents only
    raise ShapeError(f'positional kernels have no axes; got "{ref}"')


def infer_positional(
    kernel_name: str, shapes: Mapping[str, Sequence[Sequence[int]]]
) -> PositionalInference:
    """Infer a positional kernel (``op:linear``, ``matmul``, ``row_sum``) from operand shapes
    (loom's rules: ``x[*batch, features]·A[features, out] + b[out]``, ``x[n, k]·y[k, m]``,
    ``tensor[n, m] -> [n]``); :class:`ShapeError` names the disagreeing dims."""
    k = kernel(kernel_name)
    if k.named:
        raise KernelError(f'kernel "{k.name}" is named; use infer() with the operands\' axes')
    check_io(k, shapes)
    one = {key: tuple(int(n) for n in group[0]) for key, group in shapes.items() if group}
    ident = _identity_dims
    if k.name == "row_sum":
        t = one["tensor"]
        if len(t) != 2:
            raise ShapeError(f"row_sum reads a matrix [n, m]; got shape {list(t)}")
        dims = {"tensor": (Dim(terms=((0, 1),)), Dim(extent=t[1]))}
        return _positional(k, (t[0],), dims)
    if k.name == "matmul":
        x, y = one["x"], one["y"]
        if len(x) != 2 or len(y) != 2 or x[1] != y[0]:
            raise ShapeError(
                f"matmul reads x[n, k] and y[k, m] with the same k; got x {list(x)} and y {list(y)}"
            )
        dims = {
            "x": (Dim(terms=((0, 1),)), Dim(extent=x[1])),
            "y": (Dim(extent=y[0]), Dim(terms=((1, 1),))),
        }
        return _positional(k, (x[0], y[1]), dims)
    x, a = one["x"], one["A"]
    if len(x) < 1 or len(a) != 2 or x[-1] != a[0]:
        raise ShapeError(
            f"op:linear reads x[*batch, features] and A[features, out] with the same features; "
            f"got x {list(x)} and A {list(a)}"
        )
    batch = len(x) - 1
    out = (*x[:-1], a[1])
    lin: dict[str, tuple[Dim, ...]] = {
        "x": (*ident(batch), Dim(extent=x[-1])),
        "A": (Dim(extent=a[0]), Dim(terms=((batch, 1),))),
    }
    if "b" in one:
        if one["b"] != (a[1],):
            raise ShapeError(f"op:linear reads b[out] with out = {a[1]}; got b {list(one['b'])}")
        lin["b"] = (Dim(terms=((batch, 1),)),)
    return _positional(k, out, lin)


def _positional(
    k: Kernel, result: tuple[int, ...], dims: Mapping[str, tuple[Dim, ...]]
) -> PositionalInference:
    ordered = [(key, (dims[key],)) for key in k.inputs if key in dims]
    ordered.append(("result", (_identity_dims(len(result)),)))
    return PositionalInference(k.name, result, tuple(ordered))


# ------------------------------------------------------------------------------------------
# Shared cases (the editor's TypeScript mirror runs the same table)


def run_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """Run one inference case given as JSON data and answer as JSON data.

    A case is ``{"axes": {name: {length, roles?, cls?}}, "kernel", "inputs": {key: [[ref...]]},
    "params"?}``; the answer is ``{"result": [...], "index": [...], "signature": {...}}`` or
    ``{"error": {"type": "AxisError", "message": "..."}}``.

    >>> run_case({"axes": {"H": {"length": 2}, "W": {"length": 3}}, "kernel": "op:add",
    ...           "inputs": {"tensors": [["H"], ["W", "H"]]}})["result"]
    ['H', 'W']
    """
    declared = {name: Axis.from_json({"name": name, **body}) for name, body in case["axes"].items()}
    try:
        inputs = {
            key: [Axes.parse(refs, declared) for refs in group]
            for key, group in case["inputs"].items()
        }
        inf = infer(case["kernel"], inputs, case.get("params"), declared)
        return {
            "result": list(inf.result.names),
            "index": list(inf.index.names),
            "params": json.loads(json.dumps(inf.params)),
            "signature": inf.signature(),
        }
    except (AxisError, ShapeError, KernelError) as e:
        return {"error": {"type": type(e).__name__, "message": str(e)}}
