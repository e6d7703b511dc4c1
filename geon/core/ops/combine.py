"""Inference rules of the kernels that combine several operands into one: ``op:concat``,
``op:gather`` and ``op:where`` (DESIGN.md §2, §4; the formulas and sharding rules are in
docs/kernels.md).

>>> from geon.core.axes import Axes, Axis
>>> from geon.core.ops import infer
>>> N, C1, C2, C = Axis("N", 2), Axis("C1", 3), Axis("C2", 1), Axis("C", 4)
>>> inf = infer("op:concat", {"tensors": [Axes.of([N, C1]), Axes.of([C2, N])]},
...             {"along": ["C1", "C2"], "axis": "C"}, {"C": C})
>>> str(inf.result), str(inf.index)
('(N, C)', '(N)')
>>> inf.signature()["inputs"]["tensors"][1]
{'affineMap': {'projection': [[0], [1]], 'offset': [0, 0]}, 'shape': [1, 1]}

``op:concat`` joins its operands (``tensors``, one or more) along one axis of each,
``params.along`` (one reference per operand, in operand order): the joined axes differ in length,
so each is its own axis, and the result holds a new axis ``params.axis`` whose length is their sum
(a length that disagrees is a :class:`~geon.core.errors.ShapeError`). Every operand's other axes
are the same set (any order); the result has the first operand's axes in its order, its joined
axis replaced by ``params.axis``. As a normalization's normalised axes, the joined axes are **not
index axes**: the index space is the result's other axes, every application reads each operand's
joined dim whole and writes the result's whole (zero rows of full ``shape``), so a shard plan can
split a concat over any other axis. ``Inference.plan``: ``dim`` — the result position of
``params.axis``; ``along`` — per operand, the position of its joined dim; ``perm`` — per operand,
the permutation that puts its dims in the result's order.

``op:gather`` looks rows of a ``table`` up by integer ``indices`` (an embedding lookup, ONNX's
Gather): ``params.axis`` is the table axis indexed; the result is the table's axes with that
axis replaced, in place, by the indices' axes (ONNX's order, ``table[:axis] + indices +
table[axis+1:]``), which must not be table axes. The indexed axis is read whole (a zero row
of full ``shape``, as the joined axes of a concat); every other dim follows its index axis, so a
plan can split a lookup over the indices' axes (batch, sequence) and the table's other axes
(the embedding), not over the vocabulary. ``Inference.plan``: ``axis`` — the indexed table dim;
``at`` — the result position of the indices' first axis. The dtype is the table's.

``op:where`` reads ``x``, ``y`` and a boolean ``condition`` and takes ``x`` where the condition
holds, ``y`` elsewhere; its axes broadcast as an n-ary elementwise op's over the operands in that
order (``x``, ``y``, ``condition``), so the result starts with ``x``'s axes, and ``params.axes``
may name another order. Its dtype is ``x``'s (``y`` is cast to it, ``condition`` read as boolean).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from geon.core.axes import Axes, Ref, quote_axes
from geon.core.errors import AxisError, KernelError, ShapeError
from geon.core.ops.catalogue import Kernel
from geon.core.ops.inference import Dim, Inference, Operands, make_inference
from geon.core.ops.params import Resolver, only_params, ref_names


def infer_concat(k: Kernel, ins: Operands, p: Mapping[str, Any], res: Resolver) -> Inference:
    """The axes and projections of ``op:concat`` (see the module docstring)."""
    only_params(p, k.params, k.name)
    operands = [a for _, group in ins for a in group]
    along = _along(k, operands, p, res)
    if "axis" not in p:
        raise KernelError(
            f'{k.name} needs params "axis"; expected the new axis of the result, whose length is '
            "the sum of the joined axes' lengths"
        )
    axis = res.ref(p["axis"], f'{k.name} params "axis"')
    first = operands[0]
    others = [r for r in first if r != along[0]]
    for n, (a, joined) in enumerate(zip(operands[1:], along[1:], strict=True), start=1):
        rest = [r for r in a if r != joined]
        missing = [r for r in others if r not in rest]
        extra = [r for r in rest if r not in others]
        if missing or extra:
            raise AxisError(
                f'{k.name} operand {n} {quote_axes(a)} joined along "{joined}" does not share '
                f"the other axes {quote_axes(others)} of operand 0"
                + (f"; missing {quote_axes(missing)}" if missing else "")
                + (f"; not in operand 0 {quote_axes(extra)}" if extra else "")
            )
    if axis in others:
        raise AxisError(
            f'{k.name} params "axis" is "{axis}", which the operands keep; name a new axis for '
            f"the joined one, not one of {quote_axes(others)}"
        )
    lengths = [r.length for r in along]
    if axis.length is not None and all(n is not None for n in lengths):
        total = sum(n for n in lengths if n is not None)
        if axis.length != total:
            shown = " + ".join(str(n) for n in lengths)
            raise ShapeError(
                f"{k.name} joins {quote_axes(along)} of lengths {shown} = {total}, but axis "
                f'"{axis}" has length {axis.length}; declare an axis of length {total}'
            )
    result = Axes(tuple(axis if r == along[0] else r for r in first))
    index = Axes(tuple(others))
    dims: list[tuple[Dim, ...]] = []
    perms: list[list[int]] = []
    for a, joined in zip(operands, along, strict=True):
        dims.append(
            tuple(Dim(extent=r) if r == joined else Dim(terms=((index.index(r), 1),)) for r in a)
        )
        perms.append([a.index(joined if r == axis else r) for r in result])
    out_dims = tuple(
        Dim(extent=axis) if r == axis else Dim(terms=((index.index(r), 1),)) for r in result
    )
    params = {"along": ref_names(along), "axis": str(axis)}
    plan = {
        "dim": result.index(axis),
        "along": [a.index(j) for a, j in zip(operands, along, strict=True)],
        "perm": perms,
    }
    return make_inference(
        k, ins, result, index, params, {"tensors": dims}, out_dims=out_dims, plan=plan
    )


def infer_gather(k: Kernel, ins: Operands, p: Mapping[str, Any], res: Resolver) -> Inference:
    """The axes and projections of ``op:gather`` (see the module docstring)."""
    only_params(p, k.params, k.name)
    table, indices = (group[0] for _, group in ins)
    if "axis" not in p:
        raise KernelError(
            f'{k.name} needs params "axis"; expected the table axis to index, one of '
            f"{quote_axes(table)}"
        )
    axis = res.ref(p["axis"], f'{k.name} params "axis"')
    if axis not in table:
        raise AxisError(
            f'{k.name} params "axis" is "{axis}", which is not a table axis; expected one of '
            f"{quote_axes(table)}"
        )
    shared = [r for r in indices if r in table]
    if shared:
        raise AxisError(
            f"{k.name} indices {quote_axes(indices)} share {quote_axes(shared)} with the table "
            f"{quote_axes(table)}; give the indices axes of their own"
        )
    at = table.index(axis)
    result = Axes((*table[:at], *indices, *table[at + 1 :]))
    table_dims = tuple(
        Dim(extent=r) if r == axis else Dim(terms=((result.index(r), 1),)) for r in table
    )
    index_dims = tuple(Dim(terms=((result.index(r), 1),)) for r in indices)
    return make_inference(
        k,
        ins,
        result,
        result,
        {"axis": str(axis)},
        {"table": [table_dims], "indices": [index_dims]},
        plan={"axis": at, "at": at},
    )


def _along(k: Kernel, operands: list[Axes], p: Mapping[str, Any], res: Resolver) -> list[Ref]:
    what = f'{k.name} params "along"'
    if "along" not in p:
        raise KernelError(
            f'{k.name} needs params "along"; expected one axis per operand, the axis it is '
            "joined along"
        )
    along = res.refs(p["along"], what)
    if len(along) != len(operands):
        raise KernelError(
            f"{what} names {len(along)} axes for {len(operands)} operands; expected one axis "
            "per operand, in operand order"
        )
    for n, (a, r) in enumerate(zip(operands, along, strict=True)):
        if r not in a:
            raise AxisError(
                f'{what} names "{r}" for operand {n}, which is not one of its axes; expected '
                f"one of {quote_axes(a)}"
            )
    return along
