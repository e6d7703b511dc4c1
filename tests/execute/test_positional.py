"""Positional (loom) kernels — tensors without axes — on NumPy and ``array_api_strict``:
``op:add`` with broadcasting, ``op:relu``, ``op:linear``, ``matmul`` and ``row_sum``, on tensors
that live at offset ranges."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from geon.core.errors import ExecutionError
from geon.core.graph import OPERATION, TENSOR, Graph
from geon.execute import run


def _doc(
    tensors: dict[str, tuple[list[int], list[int], str]],
    kernel: str,
    inputs: dict[str, list[str]],
    out: str,
    selections: dict[str, tuple[list[int], list[int]]] | None = None,
) -> Graph:
    """A document with the given tensors (label -> start, end, dtype) and one operation."""
    nodes: list[dict[str, Any]] = []
    ids = {}
    for n, (label, (start, end, dtype)) in enumerate(tensors.items(), start=1):
        ids[label] = f"00000000-0000-4000-8000-{n:012d}"
        nodes.append(
            {
                "id": ids[label],
                "type": TENSOR,
                "label": label,
                "body": {"dtype": dtype, "range": {"start": start, "end": end}},
            }
        )
    sel = selections or {}

    def item(label: str) -> dict[str, Any]:
        start, end, _ = tensors[label]
        s, e = sel.get(label, (start, end))
        return {"tensorId": ids[label], "range": {"start": s, "end": e}}

    body = {
        "kernel": kernel,
        "inputs": {k: [item(v) for v in vs] for k, vs in inputs.items()},
        "outputs": {"result": [item(out)]},
    }
    nodes.append({"id": "00000000-0000-4000-8000-999999999999", "type": OPERATION, "body": body})
    return Graph.from_json({"id": "00000000-0000-4000-8000-000000000000", "nodes": nodes})


RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
A = RNG.standard_normal((3, 5))
B = RNG.standard_normal(5)
ROW = RNG.standard_normal(3)

CASES: dict[str, tuple[Graph, dict[str, np.ndarray], np.ndarray]] = {
    "add-broadcast": (
        _doc(
            {
                "x": ([100, 7], [104, 10], "float64"),
                "r": ([0], [3], "float64"),
                "z": ([0, 0], [4, 3], "float64"),
            },
            "op:add",
            {"tensors": ["x", "r"]},
            "z",
        ),
        {"x": X, "r": ROW},
        X + ROW,
    ),
    "relu": (
        _doc(
            {"x": ([0, 0], [4, 3], "float64"), "z": ([0, 0], [4, 3], "float64")},
            "op:relu",
            {"tensor": ["x"]},
            "z",
        ),
        {"x": X},
        np.maximum(X, 0),
    ),
    "linear": (
        _doc(
            {
                "x": ([0, 0], [4, 3], "float64"),
                "A": ([10, 10], [13, 15], "float64"),
                "b": ([0], [5], "float64"),
                "z": ([0, 0], [4, 5], "float64"),
            },
            "op:linear",
            {"x": ["x"], "A": ["A"], "b": ["b"]},
            "z",
        ),
        {"x": X, "A": A, "b": B},
        X @ A + B,
    ),
    "linear-no-bias": (
        _doc(
            {
                "x": ([0, 0], [4, 3], "float64"),
                "A": ([0, 0], [3, 5], "float64"),
                "z": ([0, 0], [4, 5], "float64"),
            },
            "op:linear",
            {"x": ["x"], "A": ["A"]},
            "z",
        ),
        {"x": X, "A": A},
        X @ A,
    ),
    "matmul": (
        _doc(
            {
                "x": ([0, 0], [4, 3], "float64"),
                "y": ([0, 0], [3, 5], "float64"),
                "z": ([0, 0], [4, 5], "float64"),
            },
            "matmul",
            {"x": ["x"], "y": ["y"]},
            "z",
        ),
        {"x": X, "y": A},
        X @ A,
    ),
    "row_sum": (
        _doc(
            {"x": ([0, 0], [4, 3], "float64"), "z": ([0], [4], "float64")},
            "row_sum",
            {"tensor": ["x"]},
            "z",
        ),
        {"x": X},
        X.sum(axis=-1),
    ),
    "add-sub-selection": (
        _doc(
            {
                "x": ([0, 0], [4, 3], "int32"),
                "y": ([0, 0], [4, 3], "int32"),
                "z": ([0, 0], [2, 3], "int32"),
            },
            "op:add",
            {"tensors": ["x", "y"]},
            "z",
            selections={"x": ([2, 0], [4, 3]), "y": ([0, 0], [2, 3])},
        ),
        {"x": np.arange(12, dtype=np.int32).reshape(4, 3), "y": np.ones((4, 3), np.int32)},
        np.arange(6, 12, dtype=np.int32).reshape(2, 3) + 1,
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_positional_kernel(case: str, backend: str) -> None:
    # given a loom document with one positional operation
    g, inputs, want = CASES[case]
    # when it runs
    got = run(g, inputs, backend=backend).by_key()["z"]
    # then it computes the kernel on the selections, translated by the ranges' starts
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_positional_named_kernel_is_refused() -> None:
    # given an op:sum over tensors without TensorAxes
    g = _doc(
        {"x": ([0, 0], [4, 3], "float64"), "z": ([0], [4], "float64")},
        "op:sum",
        {"tensor": ["x"]},
        "z",
    )
    # when it runs / then the error names the operation (by its kernel: no label) and the tensor
    with pytest.raises(ExecutionError) as exc:
        run(g, {"x": X})
    assert str(exc.value) == (
        'operation "op:sum" (op:sum) needs named axes, but tensor '
        '"x" has no TensorAxes; tag every tensor it reads and writes with its axes'
    )


def test_unbroadcastable_shapes_are_refused() -> None:
    g = _doc(
        {"x": ([0, 0], [4, 3], "float64"), "r": ([0], [2], "float64"),
         "z": ([0, 0], [4, 3], "float64")},
        "op:add", {"tensors": ["x", "r"]}, "z",
    )  # fmt: skip
    with pytest.raises(ExecutionError) as exc:
        run(g, {"x": X, "r": np.zeros(2)})
    assert str(exc.value) == (
        'operation "00000000-0000-4000-8000-999999999999": op:add cannot broadcast operand '
        "shapes ((4, 3), (2,)) together; expected shapes that agree or are 1 from the right"
    )


def test_custom_kernel_is_refused() -> None:
    g = _doc(
        {"x": ([0], [3], "float64"), "z": ([0], [3], "float64")},
        "my:frobnicate",
        {"tensor": ["x"]},
        "z",
    )
    with pytest.raises(ExecutionError) as exc:
        run(g, {"x": ROW})
    assert str(exc.value) == (
        'operation "my:frobnicate" has kernel "my:frobnicate", which the '
        'executor does not implement; expected a catalogue kernel such as "op:add"'
    )
