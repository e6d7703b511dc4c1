"""Regions of a plan's steps (geon.execute.regions): the projection of an index range through an
operand's IPF, the clip of a padded read, and axes of length zero."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from geon.core.graph import AXIS, OPERATION, TENSOR, TENSOR_AXES, Graph
from geon.core.zspace import IPF, ZRange
from geon.execute import run
from geon.execute.regions import Operand

X = "00000000-0000-4000-8000-000000000001"
Y = "00000000-0000-4000-8000-000000000002"


def _reduce_doc(kernel: str, params: dict[str, Any] | None, k: int, out: list[str]) -> Graph:
    """x[M=2, K=k] -> y[out]: K is declared without a length, so x binds it (possibly to 0)."""
    out_end = [2, k][: len(out)]

    def tensor(tid: str, label: str, axes: list[str], end: list[int]) -> dict[str, Any]:
        return {
            "id": tid,
            "type": TENSOR,
            "label": label,
            "body": {"dtype": "float64", "range": {"start": [0] * len(end), "end": end}},
            "tags": {TENSOR_AXES: {"axes": axes}},
        }

    def sel(tid: str, end: list[int]) -> dict[str, Any]:
        return {"tensorId": tid, "range": {"start": [0] * len(end), "end": end}}

    nodes = [
        {"id": "00000000-0000-4000-8000-000000000101", "type": AXIS, "body": {"name": "K"}},
        {
            "id": "00000000-0000-4000-8000-000000000102",
            "type": AXIS,
            "body": {"name": "M", "length": 2},
        },
        tensor(X, "x", ["M", "K"], [2, k]),
        tensor(Y, "y", out, out_end),
        {
            "id": "00000000-0000-4000-8000-000000000003",
            "type": OPERATION,
            "body": {
                "kernel": kernel,
                "params": params,
                "inputs": {"tensor": [sel(X, [2, k])]},
                "outputs": {"result": [sel(Y, out_end)]},
            },
        },
    ]
    return Graph.from_json({"id": "00000000-0000-4000-8000-000000000000", "nodes": nodes})


@pytest.mark.parametrize(
    ("label", "kernel", "params", "k", "out", "expected"),
    [
        ("sum over K=3", "op:sum", {"reduction_axes": ["K"]}, 3, ["M"], [3.0, 3.0]),
        ("sum over K=0 is zero", "op:sum", {"reduction_axes": ["K"]}, 0, ["M"], [0.0, 0.0]),
        ("relu over K=0 is empty", "op:relu", None, 0, ["M", "K"], [[], []]),
    ],
)
def test_axes_of_length_zero_run(
    label: str, kernel: str, params: dict[str, Any] | None, k: int, out: list[str], expected: Any
) -> None:
    # given one operation over x[M=2, K=k] (K bound by x alone)
    graph = _reduce_doc(kernel, params, k, out)
    # when it runs on ones
    result = run(graph, {"x": np.ones((2, k))})
    # then the result is what NumPy gives for the same shapes
    assert result.outputs[Y].tolist() == expected, label


def test_operand_region_is_the_ipf_projection() -> None:
    # given a flatten-like operand: one row merging index columns (2, 3) row-major, at offset 10
    operand = Operand(IPF([[3, 1]], offset=[10], shape=[1]))
    # when the index range [1:2, 0:3] is projected
    region = operand.region(ZRange([1, 0], [2, 3]))
    # then it is the cells 13..15 (the corner rule)
    assert region == ZRange([13], [16])


def test_operand_region_cuts_zero_length_spans_to_empty() -> None:
    # given an operand whose dim 1 spans a tensor of length 0 (an IPF footprint is >= 1 wide)
    operand = Operand(IPF([[1], [0]], offset=[0, 5], shape=[1, 1]), empty=(1,))
    # when [0:2] is projected
    region = operand.region(ZRange([0], [2]))
    # then dim 1 is empty at its start
    assert region == ZRange([0, 5], [2, 5])
