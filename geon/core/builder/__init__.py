"""The Python authoring API (DESIGN.md §8), re-exported as :mod:`geon.core`.

>>> import numpy as np
>>> from geon import core as gc
>>> H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
>>> x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1])
>>> y = gc.placeholder(axes=[W, N], name="y")
>>> z = gc.dot(x, y)
>>> str(z.axes), str(z.axes[1])
('(H, N)', 'N')
>>> gc.evaluate(z, feeds={y: np.ones((3, 4))}).tolist()
[[3.0, 3.0, 3.0, 3.0], [12.0, 12.0, 12.0, 12.0]]

Modules: :mod:`~geon.core.builder.tensor` (the :class:`Tensor` handle, leaves and how an op
call becomes a handle), :mod:`~geon.core.builder.functions` (the operator functions),
:mod:`~geon.core.builder.combine` (concat, where, gather) and
:mod:`~geon.core.builder.document` (:func:`graph`); :func:`evaluate` is here, the one import of
the core from the executor.

Every call infers its result axes at once through :func:`geon.core.ops.infer` and raises a
:class:`~geon.core.errors.GeonError` subclass naming the axis; :func:`graph` then writes exactly
what the checker re-derives, so a graph built here checks clean.

Document written by :func:`graph`:

- one ``Axis`` node per declared axis mentioned anywhere (tensor axes and op params);
- one ``Tensor`` node per tensor: ``{dtype, range}`` with the range ``[0, length)`` per axis, a
  ``TensorAxes`` tag, and its ``label`` when the tensor was named;
- one ``Operation`` node per op: ``{kernel, params?, inputs, outputs}`` and the tags
  ``IndexAxes``, ``IPFIndex`` and the derived ``IPFSignature``. Each selection is the region the
  op reads or writes (:meth:`geon.core.ops.Inference.selections`): the whole tensor for most
  kernels, the sliced window for ``op:slice``. Kernel params count from the tensor's origin.

Constants are stored inline in the document (:mod:`geon.core.constants`).

Unbound axes. A document may hold axes with ``length: null``, but a Tensor's range needs an
extent, so :func:`graph` refuses tensors with unbound axes (``ShapeError`` naming the axis).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from geon.core.axes import Axis
from geon.core.builder.combine import concat, gather, where
from geon.core.builder.document import graph, walk_tensors
from geon.core.builder.functions import (
    abs,
    add,
    avg_pool2d,
    broadcast,
    cast_axes,
    conv2d,
    dimshuffle,
    divide,
    exp,
    flatten,
    gelu,
    layer_norm,
    log,
    max,
    max_pool2d,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    negative,
    pad,
    power,
    prod,
    relu,
    sigmoid,
    slice,
    softmax,
    sqrt,
    square,
    subtract,
    sum,
    tanh,
    unflatten,
)
from geon.core.builder.tensor import (
    Tensor,
    constant,
    dot,
    placeholder,
    shown,
    transpose,
    variable,
)
from geon.core.constants import CONSTANT, decode_constant, encode_constant
from geon.core.errors import ExecutionError

__all__ = [
    "CONSTANT",
    "Axis",
    "Tensor",
    "abs",
    "add",
    "avg_pool2d",
    "broadcast",
    "cast_axes",
    "concat",
    "constant",
    "conv2d",
    "decode_constant",
    "dimshuffle",
    "divide",
    "dot",
    "encode_constant",
    "evaluate",
    "exp",
    "flatten",
    "gather",
    "gelu",
    "graph",
    "layer_norm",
    "log",
    "max",
    "max_pool2d",
    "maximum",
    "mean",
    "min",
    "minimum",
    "multiply",
    "negative",
    "pad",
    "placeholder",
    "power",
    "prod",
    "relu",
    "sigmoid",
    "slice",
    "softmax",
    "sqrt",
    "square",
    "subtract",
    "sum",
    "tanh",
    "transpose",
    "unflatten",
    "variable",
    "where",
]


def evaluate(
    outputs: Tensor | Sequence[Tensor],
    feeds: Mapping[Tensor | str, Any] | None = None,
) -> Any:
    """Evaluate one tensor (an ndarray in its axis order) or a list of them (a list).

    ``feeds`` gives every placeholder a value, keyed by the handle or its name. The graph runs
    on the executor (:func:`geon.execute.evaluate_graph`); the NumPy reference
    (:func:`geon.core.reference.evaluate_graph`) stays as the executor's test oracle.
    """
    # The one import from core into a layer above it, allowed by name in the import contract:
    # the authoring API's convenience entry point runs graphs where every other run goes.
    from geon.execute import evaluate_graph

    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    g = graph(outs)
    by_name = {t.name: t for t in walk_tensors(outs) if t.is_placeholder and t.name}
    values: dict[str, Any] = {}
    for key, v in (feeds or {}).items():
        if isinstance(key, Tensor):
            values[key.id] = v
        elif isinstance(key, str) and key in by_name:
            values[by_name[key].id] = v
        else:
            names = tuple(by_name)
            raise ExecutionError(
                f'feed "{shown(key)}" is not a placeholder of this graph; expected a placeholder '
                f"handle or one of the names {names}"
            )
    result = evaluate_graph(g, values)
    arrays = [np.asarray(result[t.id]) for t in outs]
    return arrays[0] if isinstance(outputs, Tensor) else arrays
