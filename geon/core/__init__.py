"""geon's pure domain core, and the Python authoring API (DESIGN.md §8).

>>> from geon import core as gc
>>> H, W = gc.Axis("H", 2), gc.Axis("W", 3)
>>> str(gc.placeholder(axes=[H, W]).T.axes)
'(W-1, H-1)'

The authoring names below come from :mod:`geon.core.builder`; the submodules (``axes``,
``dtypes``, ``tensors``, ``ops``, ``zspace``, ``graph``, ``constraints``, ``sharding``) are imported
by name.

One name is shared: ``gc.graph`` is the builder function of §8 (``gc.graph([z])``), and as a
package attribute it hides the submodule :mod:`geon.core.graph`. So ``from geon.core import
graph`` and ``import geon.core.graph as m`` both give the *function*; import what the module
defines by name (``from geon.core.graph import Graph``) or reach the module itself with
``importlib.import_module("geon.core.graph")``.

>>> import geon.core.graph as m
>>> m is graph
True
>>> from geon.core.graph import Graph
>>> Graph.__module__
'geon.core.graph'
"""

from geon.core.autodiff import training_step
from geon.core.axes import Axes, AxisRef, CompositeRef
from geon.core.builder import (
    Axis,
    Tensor,
    abs,
    add,
    avg_pool2d,
    broadcast,
    cast_axes,
    concat,
    constant,
    conv2d,
    dimshuffle,
    divide,
    dot,
    evaluate,
    exp,
    flatten,
    gather,
    gelu,
    graph,
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
    placeholder,
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
    transpose,
    unflatten,
    variable,
    where,
)
from geon.core.errors import AxisError, GeonError, KernelError, ShapeError

__all__ = [
    "Axes",
    "Axis",
    "AxisError",
    "AxisRef",
    "CompositeRef",
    "GeonError",
    "KernelError",
    "ShapeError",
    "Tensor",
    "abs",
    "add",
    "avg_pool2d",
    "broadcast",
    "cast_axes",
    "concat",
    "constant",
    "conv2d",
    "dimshuffle",
    "divide",
    "dot",
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
    "training_step",
    "transpose",
    "unflatten",
    "variable",
    "where",
]
