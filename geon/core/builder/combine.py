"""The authoring API's functions for the kernels that combine several operands
(:mod:`geon.core.ops.combine`): :func:`concat`, :func:`where` and :func:`gather`.

>>> from geon.core.builder import Axis, constant, evaluate
>>> N, V, D = Axis("N", 2), Axis("V", 3), Axis("D", 2)
>>> table = constant([[0.0, 1.0], [10.0, 11.0], [20.0, 21.0]], axes=[V, D])
>>> rows = constant(np.array([2, 0], dtype=np.int64), axes=[N])
>>> evaluate(gather(table, rows, V)).tolist()
[[20.0, 21.0], [0.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from geon.core.axes import Axis, RefLike
from geon.core.builder.tensor import Tensor, as_tensor, declared_axes, make_op, ref_str
from geon.core.dtypes import numpy_dtype
from geon.core.errors import KernelError

__all__ = ["concat", "gather", "where"]


def concat(
    tensors: Sequence[Any], along: Sequence[RefLike], axis: Axis, *, name: str | None = None
) -> Tensor:
    """Join ``tensors`` along one axis of each (``along``, in operand order) into the new axis
    ``axis``, whose length is the sum of theirs; the other axes are the same set in every
    operand, and the result has the first operand's order.

    >>> from geon.core.builder import Axis, constant, evaluate
    >>> N, A, B, C = Axis("N", 1), Axis("A", 1), Axis("B", 2), Axis("C", 3)
    >>> x, y = constant([[1.0]], axes=[N, A]), constant([[2.0, 3.0]], axes=[N, B])
    >>> evaluate(concat([x, y], [A, B], C)).tolist()
    [[1.0, 2.0, 3.0]]
    """
    operands = [as_tensor(t) for t in tensors]
    joined = list(along)
    if len(joined) != len(operands):
        raise KernelError(
            f"concat joins {len(operands)} tensors along {len(joined)} axes; expected one axis "
            "per tensor, in the same order"
        )
    params = {"along": [ref_str(a) for a in joined], "axis": ref_str(axis)}
    return make_op("op:concat", {"tensors": operands}, params, declared_axes([axis]), name)


def where(
    condition: Any,
    x: Any,
    y: Any,
    *,
    axes: Iterable[RefLike] | None = None,
    name: str | None = None,
) -> Tensor:
    """``x`` where ``condition`` holds, else ``y`` (NumPy's ``where``); the axes broadcast as an
    elementwise op's over ``x``, ``y`` and ``condition``, and ``axes`` may order the result's.

    >>> from geon.core.builder import Axis, constant, evaluate
    >>> H = Axis("H", 3)
    >>> keep = constant(np.array([True, False, True]), axes=[H])
    >>> evaluate(where(keep, constant([1.0, 2.0, 3.0], axes=[H]), 0.0)).tolist()
    [1.0, 0.0, 3.0]
    """
    order = None if axes is None else list(axes)
    params = {"axes": [ref_str(a) for a in order]} if order is not None else {}
    inputs = {"x": [as_tensor(x)], "y": [as_tensor(y)], "condition": [as_tensor(condition)]}
    return make_op("op:where", inputs, params, declared_axes(order or ()), name)


def gather(table: Any, indices: Any, axis: RefLike, *, name: str | None = None) -> Tensor:
    """Rows of ``table`` along ``axis`` looked up by the integers of ``indices`` (an embedding
    lookup, ONNX's Gather): the result is the table's axes with ``axis`` replaced, in place, by
    the indices' axes."""
    index = as_tensor(indices)
    if not np.issubdtype(numpy_dtype(index.dtype), np.integer):
        raise KernelError(
            f"gather indices have dtype {index.dtype}; expected an integer dtype (int32, int64)"
        )
    params = {"axis": ref_str(axis)}
    return make_op("op:gather", {"table": [as_tensor(table)], "indices": [index]}, params, (), name)
