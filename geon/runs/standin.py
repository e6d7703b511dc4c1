"""A stand-in executor until ``geon.execute`` lands: whole-tensor elementwise kernels on NumPy.

It runs each Operation of a document once on its selections (applications are ignored, so a
sharded graph runs logically), with seeded inputs for the tensors no operation writes, and
summarises every tensor that no operation reads. Anything else is refused with a clear error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from geon.core.errors import ExecutionError

TENSOR = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Tensor"
OPERATION = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Operation"

_NARY: dict[str, Callable[..., Any]] = {
    "op:add": np.add,
    "op:multiply": np.multiply,
    "op:maximum": np.maximum,
    "op:minimum": np.minimum,
}
_BINARY: dict[str, Callable[..., Any]] = {"op:subtract": np.subtract}
_UNARY: dict[str, Callable[..., Any]] = {"op:negative": np.negative, "op:abs": np.abs}
SUPPORTED = tuple(sorted([*_NARY, *_BINARY, *_UNARY]))


def _region(tensor: dict[str, Any], selection: dict[str, Any]) -> tuple[slice, ...]:
    start = tensor["body"]["range"]["start"]
    return tuple(
        slice(a - s, b - s)
        for a, b, s in zip(
            selection["range"]["start"], selection["range"]["end"], start, strict=True
        )
    )


def _order(operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Operations so that each runs after the operations writing what it reads."""
    writer = {
        sel["tensorId"]: op["id"]
        for op in operations
        for sels in op["body"].get("outputs", {}).values()
        for sel in sels
    }
    by_id = {op["id"]: op for op in operations}
    done: list[str] = []

    def visit(op_id: str, path: tuple[str, ...]) -> None:
        if op_id in done:
            return
        if op_id in path:
            raise ExecutionError(f'operation "{op_id}" depends on itself; remove the cycle')
        for sels in by_id[op_id]["body"].get("inputs", {}).values():
            for sel in sels:
                if sel["tensorId"] in writer:
                    visit(writer[sel["tensorId"]], (*path, op_id))
        done.append(op_id)

    for op in operations:
        visit(op["id"], ())
    return [by_id[i] for i in done]


def execute(
    document: dict[str, Any], *, backend: str, progress: Callable[[float], None]
) -> dict[str, Any]:
    """Run ``document`` and return ``{"outputs": [{id, label, shape, dtype, sum, min, max}]}``."""
    if backend != "numpy":
        raise ExecutionError(f'backend "{backend}" is not available; expected "numpy"')
    nodes = document["nodes"]
    tensors = {n["id"]: n for n in nodes if n["type"] == TENSOR}
    operations = [n for n in nodes if n["type"] == OPERATION]
    for op in operations:
        if op["body"]["kernel"] not in SUPPORTED:
            raise ExecutionError(
                f'kernel "{op["body"]["kernel"]}" is not supported by the stand-in executor; '
                f"expected one of {', '.join(SUPPORTED)}"
            )
    rng = np.random.default_rng(0)
    values: dict[str, Any] = {}
    for tid, tensor in tensors.items():
        shape = tuple(
            e - s
            for s, e in zip(
                tensor["body"]["range"]["start"], tensor["body"]["range"]["end"], strict=True
            )
        )
        dtype = {"boolean": "bool"}.get(tensor["body"]["dtype"], tensor["body"]["dtype"])
        values[tid] = rng.integers(0, 10, size=shape).astype(dtype)
    read: set[str] = set()
    ordered = _order(operations)
    for step, op in enumerate(ordered, start=1):
        body = op["body"]
        kernel = body["kernel"]
        ins = [
            (name, values[sel["tensorId"]][_region(tensors[sel["tensorId"]], sel)])
            for name, sels in body.get("inputs", {}).items()
            for sel in sels
        ]
        read.update(sel["tensorId"] for sels in body.get("inputs", {}).values() for sel in sels)
        if kernel in _NARY:
            out = ins[0][1]
            for _, arr in ins[1:]:
                out = _NARY[kernel](out, arr)
        elif kernel in _BINARY:
            args = dict(ins)
            out = _BINARY[kernel](args["x"], args["y"])
        else:
            out = _UNARY[kernel](ins[0][1])
        for sel in body["outputs"]["result"]:
            target = values[sel["tensorId"]]
            target[_region(tensors[sel["tensorId"]], sel)] = out.astype(target.dtype)
        progress(step / len(ordered))
    outputs = []
    for tid, tensor in tensors.items():
        if tid in read:
            continue
        arr = values[tid]
        outputs.append(
            {
                "id": tid,
                "label": tensor.get("label", tid),
                "shape": list(arr.shape),
                "dtype": str(arr.dtype),
                "sum": arr.sum().item(),
                "min": arr.min().item(),
                "max": arr.max().item(),
            }
        )
    return {"outputs": outputs}
