""":func:`infer`, the one derivation of an op's axes and projections, choosing the rule of the
kernel's family; and :func:`run_case`, which runs the shared cases the editor's TypeScript mirror
is tested on (``tests/core/axis_cases.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from geon.core.axes import Axes, Axis
from geon.core.errors import AxisError, KernelError, ShapeError
from geon.core.ops.arithmetic import (
    infer_dot,
    infer_dot_partial,
    infer_elementwise,
    infer_reduction,
    infer_unary,
)
from geon.core.ops.catalogue import check_io, kernel
from geon.core.ops.combine import infer_concat, infer_gather
from geon.core.ops.conv import infer_conv2d, infer_pool2d
from geon.core.ops.inference import Inference
from geon.core.ops.normalization import infer_normalization
from geon.core.ops.params import Resolver, only_params, params_object
from geon.core.ops.views import VIEW_RULES


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
    p = params_object(params, k.name)
    res = Resolver(axes, operands)
    if k.family in ("nary", "binary", "where"):
        return infer_elementwise(k, ins, p, res)
    if k.family == "concat":
        return infer_concat(k, ins, p, res)
    if k.family == "gather":
        return infer_gather(k, ins, p, res)
    if k.family == "unary":
        return infer_unary(k, ins, operands[0], p)
    if k.name == "op:dot_partial":
        return infer_dot_partial(k, ins, operands[0], operands[1], p, res)
    if k.family == "dot":
        only_params(p, k.params, k.name)
        return infer_dot(k, ins, operands[0], operands[1], p, res)
    if k.family == "reduction":
        return infer_reduction(k, ins, operands[0], p, res)
    if k.family == "normalization":
        return infer_normalization(k, ins, operands[0], p, res)
    if k.family == "conv":
        return infer_conv2d(k, ins, operands[0], operands[1], p, res)
    if k.family == "pool":
        return infer_pool2d(k, ins, operands[0], p, res)
    view = VIEW_RULES[k.name]
    return view(k, ins, operands[0], p, res)


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
