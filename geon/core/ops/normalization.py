"""Inference rules of the normalization family: ``op:softmax`` and ``op:layer_norm`` (DESIGN.md
§2, §4; the formulas and the sharding rule are in docs/kernels.md).

>>> from geon.core.axes import Axes, Axis
>>> from geon.core.ops import infer
>>> N, C = Axis("N", 2), Axis("C", 3)
>>> inf = infer("op:softmax", {"tensor": [Axes.of([N, C])]}, {"reduction_axes": ["C"]})
>>> str(inf.result), str(inf.index)
('(N, C)', '(N)')
>>> inf.signature()["outputs"]["result"][0]
{'affineMap': {'projection': [[1], [0]], 'offset': [0, 0]}, 'shape': [1, 3]}

Both normalise their operand over named axes, ``params.reduction_axes`` (named as a reduction
names them; required, at least one) and keep its axes: the result has the operand's axes in its
order. Every application needs the whole of each normalised axis (its max and sum, its mean and
variance), so — as for a reduction — the normalised axes are **not index axes**: the index space
is the operand's other axes, in its order, and the normalised dims of the operand and of the
result are zero rows whose ``shape`` is the axis's full length. A shard plan can therefore split a
normalization over any other axis, and a split over a normalised axis is refused as for any axis
that is not an index axis (:func:`geon.core.plans.shards.resolve_dim`).

``op:layer_norm`` also reads the optional ``scale`` and ``bias``, whose axes are exactly the
normalised axes (in any order; every dim a zero row read whole), and takes ``epsilon`` (a positive
number, 1e-05 by default, always written into the canonical params).

``Inference.plan``: ``reduced`` — the operand dims normalised over; ``scale`` / ``bias`` (when
given) — per dim of that input, the operand dim it is.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from geon.core.axes import Axes, Ref, quote_axes
from geon.core.errors import AxisError, KernelError
from geon.core.limits import show_int
from geon.core.ops.catalogue import Kernel
from geon.core.ops.inference import Dim, Inference, Operands, make_inference
from geon.core.ops.params import Resolver, axes_of_input, no_duplicates, only_params, ref_names

EPSILON = 1e-05
"""``op:layer_norm``'s default ``epsilon`` (PyTorch's ``nn.LayerNorm`` default)."""


def infer_normalization(
    k: Kernel, ins: Operands, a: Axes, p: Mapping[str, Any], res: Resolver
) -> Inference:
    """The axes and projections of ``op:softmax`` or ``op:layer_norm`` on operand axes ``a``."""
    layer_norm = k.name == "op:layer_norm"
    only_params(p, k.params, k.name)
    normalized = _normalized_axes(k, a, p, res)
    index = Axes(tuple(r for r in a if r not in normalized))
    dims = tuple(Dim(terms=((index.index(r), 1),)) if r in index else Dim(extent=r) for r in a)
    params: dict[str, Any] = {"reduction_axes": ref_names(r for r in a if r in normalized)}
    plan: dict[str, Any] = {"reduced": [i for i, r in enumerate(a) if r in normalized]}
    in_dims: dict[str, list[tuple[Dim, ...]]] = {"tensor": [dims]}
    if layer_norm:
        params["epsilon"] = _epsilon(p)
        for key, group in ins:
            if key == "tensor" or not group:
                continue
            _affine_axes(key, group[0], normalized)
            in_dims[key] = [tuple(Dim(extent=r) for r in group[0])]
            plan[key] = [a.index(r) for r in group[0]]
    return make_inference(k, ins, a, index, params, in_dims, out_dims=dims, plan=plan)


def _normalized_axes(k: Kernel, a: Axes, p: Mapping[str, Any], res: Resolver) -> list[Ref]:
    what = f"{k.name} reduction_axes"
    if "reduction_axes" not in p:
        raise KernelError(
            f'{k.name} needs params "reduction_axes"; expected a list of the axes to normalise '
            f"over, from {quote_axes(a)}"
        )
    refs = res.refs(p["reduction_axes"], what)
    if not refs:
        raise KernelError(f"{what} is empty; expected at least one axis from {quote_axes(a)}")
    no_duplicates(refs, what)
    axes_of_input(refs, a, what)
    return refs


def _epsilon(p: Mapping[str, Any]) -> float:
    value = p.get("epsilon", EPSILON)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and 0 < value <= sys.float_info.max:  # also refuses NaN and a huge int
        return float(value)
    shown = show_int(value) if number and isinstance(value, int) else repr(value)
    raise KernelError(
        f'op:layer_norm params "epsilon" is "{shown}"; expected a positive number such as 1e-05'
    )


def _affine_axes(key: str, b: Axes, normalized: list[Ref]) -> None:
    missing = [r for r in normalized if r not in b]
    extra = [r for r in b if r not in normalized]
    if missing or extra:
        raise AxisError(
            f"op:layer_norm {key} axes {quote_axes(b)} are not the normalised axes "
            f"{quote_axes(normalized)} in some order"
            + (f"; missing {quote_axes(missing)}" if missing else "")
            + (f"; not normalised {quote_axes(extra)}" if extra else "")
        )
