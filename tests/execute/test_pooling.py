"""``op:max_pool2d`` and ``op:avg_pool2d``: axes and derived projections, the refusals, the
reference and the array-API executor against the windows' definition, and sharded runs over the
output height (halo reads) equal to the logical run.

The definition the tests compute directly is PyTorch's (``torch.nn.MaxPool2d`` and
``torch.nn.AvgPool2d`` docs, https://pytorch.org/docs/stable/generated/torch.nn.MaxPool2d.html):
``out(N, C, h, w) = max / mean over m < kH, n < kW of input(N, C, stride[0]*h + m - padding[0],
stride[1]*w + n - padding[1])``, with padded cells -inf for max; ONNX's AveragePool
(https://onnx.ai/onnx/operators/onnx__AveragePool.html) divides by the cells of the window that
are not padding when ``count_include_pad`` is 0, by the whole window when it is 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from geon import core as gc
from geon.core.axes import Axes
from geon.core.errors import AxisError, KernelError, ShapeError
from geon.core.graph import Graph
from geon.core.ops import infer
from geon.core.plans.shards import shard
from geon.core.reference import evaluate_graph as reference
from geon.execute import run

B, C = gc.Axis("B", 2), gc.Axis("C", 3)
H, W = gc.Axis("H", 7, roles="Height"), gc.Axis("W", 6, roles="Width")


def _out(size: int, stride: int, pad: int) -> tuple[gc.Axis, gc.Axis]:
    p = (7 + 2 * pad - size) // stride + 1
    q = (6 + 2 * pad - size) // stride + 1
    return gc.Axis("P", p, roles="Height"), gc.Axis("Q", q, roles="Width")


def _direct(
    x: np.ndarray, kind: str, size: int, stride: int, pad: int, include: bool
) -> np.ndarray:
    """The definition, cell by cell, on x of axes (B, H, W, C); result (B, C, P, Q)."""
    nb, rows, cols, nc = x.shape
    p = (rows + 2 * pad - size) // stride + 1
    q = (cols + 2 * pad - size) // stride + 1
    out = np.zeros((nb, nc, p, q))
    for b in range(nb):
        for c in range(nc):
            for i in range(p):
                for j in range(q):
                    cells = [
                        x[b, r, s, c]
                        for m in range(size)
                        for n in range(size)
                        if 0 <= (r := stride * i + m - pad) < rows
                        and 0 <= (s := stride * j + n - pad) < cols
                    ]
                    if kind == "max":
                        out[b, c, i, j] = max(cells)
                    else:
                        out[b, c, i, j] = sum(cells) / (size * size if include else len(cells))
    return out


def _pooled(kind: str, size: int, stride: int, pad: int, include: bool) -> gc.Tensor:
    P, Q = _out(size, stride, pad)
    x = gc.placeholder(axes=[B, H, W, C], name="x")
    if kind == "max":
        return gc.max_pool2d(x, [B, C, P, Q], size, stride=stride, padding=pad, name="y")
    return gc.avg_pool2d(
        x, [B, C, P, Q], size, stride=stride, padding=pad, count_include_pad=include, name="y"
    )


WINDOWS = [
    # kind, kernel size, stride, padding, count_include_pad
    ("max", 2, 2, 0, True),
    ("max", 3, 2, 1, True),
    ("max", 3, 1, 2, True),
    ("avg", 2, 2, 0, True),
    ("avg", 3, 2, 1, True),
    ("avg", 3, 2, 1, False),
    ("avg", 3, 1, 2, False),
]
IDS = [f"{k}-k{s}-s{t}-p{p}{'' if i else '-exclude-pad'}" for k, s, t, p, i in WINDOWS]


@pytest.mark.parametrize(("kind", "size", "stride", "pad", "include"), WINDOWS, ids=IDS)
def test_pooling_equals_the_definition(
    kind: str, size: int, stride: int, pad: int, include: bool, backend: str
) -> None:
    # given a pooled input of axes (B, H, W, C) with negative values (max padding is not 0)
    xv = np.random.default_rng(1).standard_normal((2, 7, 6, 3)) - 2.0
    y = _pooled(kind, size, stride, pad, include)
    g = gc.graph([y])
    # when it runs on the executor and on the reference
    got = run(g, {"x": xv}, backend=backend).by_key()["y"]
    want = _direct(xv, kind, size, stride, pad, include)
    # then both equal the definition
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(reference(g, {"x": xv})[y.id], want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("kind", "size", "stride", "pad", "include"), WINDOWS, ids=IDS)
@pytest.mark.parametrize("parts", [2, 3])
def test_pooling_sharded_over_output_height_reads_halos_and_matches_logical(
    kind: str, size: int, stride: int, pad: int, include: bool, parts: int
) -> None:
    # given a pooled op split into row blocks of its output height P
    y = _pooled(kind, size, stride, pad, include)
    g = gc.graph([y])
    shard(g, y.op_id, dim="P", parts=parts)
    # when it runs sharded
    result = run(g, seed=4, sharded=True)
    # then the shards, each reading its window rows, assemble the logical result
    assert len(result.timings["applications"]) == parts
    assert result.max_abs_diff is not None
    assert result.max_abs_diff["y"] < 1e-12


def test_sharded_pooling_reads_overlapping_rows() -> None:
    # given a 3x3 window at stride 2 and the op split over P in two
    y = _pooled("max", 3, 2, 1, True)
    g = gc.graph([y])
    shard(g, y.op_id, dim="P", parts=2)
    apps = g.index.applications_of(y.op_id)
    rows = [a.body["inputs"]["tensor"][0]["range"] for a in apps]
    # then the two input selections overlap on H (P = 4: rows [-1, 4) and [3, 8) clipped)
    assert [(r["start"][1], r["end"][1]) for r in rows] == [(0, 4), (3, 7)]


def test_max_pool_pads_integers_with_their_least_value(backend: str) -> None:
    # given a uint8 image pooled with padding (ONNX's test_maxpool_2d_uint8 shape)
    Y, X = gc.Axis("Y", 5, roles="Height"), gc.Axis("X", 5, roles="Width")
    P, Q = gc.Axis("P", 5, roles="Height"), gc.Axis("Q", 5, roles="Width")
    xv = np.arange(1, 26, dtype=np.uint8).reshape(5, 5)
    y = gc.max_pool2d(gc.placeholder(axes=[Y, X], dtype="uint8", name="x"), [P, Q], 5, stride=1,
                      padding=2, name="y")  # fmt: skip
    got = run(gc.graph([y]), {"x": xv}, backend=backend).by_key()["y"]
    # then each cell is the max of the cells its window covers, in uint8
    assert got.dtype == np.uint8
    assert got.tolist()[0] == [13, 14, 15, 15, 15]


def test_pool_axes_and_projection() -> None:
    # given max_pool2d 3x3, stride 2, padding 1 over (B, H, W, C)
    P, Q = _out(3, 2, 1)
    inf = infer(
        "op:max_pool2d",
        {"tensor": [Axes.of([B, H, W, C])]},
        {"out_axes": ["B", "C", "P", "Q"], "kernel_size": 3, "stride": 2, "padding": 1},
        {"P": P, "Q": Q},
    )
    # then the result is out_axes and the input reads a window per output cell
    assert str(inf.result) == "(B, C, P, Q)"
    assert inf.params == {
        "out_axes": ["B", "C", "P", "Q"],
        "kernel_size": [3, 3],
        "stride": [2, 2],
        "padding": [1, 1],
    }
    entry = inf.signature()["inputs"]["tensor"][0]
    assert entry == {
        "affineMap": {
            "projection": [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2], [0, 1, 0, 0]],
            "offset": [0, -1, -1, 0],
        },
        "shape": [1, 3, 3, 1],
    }


def test_avg_pool_stride_defaults_to_the_window_and_counts_padding() -> None:
    P, Q = _out(2, 2, 0)
    params = {"out_axes": ["B", "C", "P", "Q"], "kernel_size": [2, 2]}
    inf = infer("op:avg_pool2d", {"tensor": [Axes.of([B, C, H, W])]}, params, {"P": P, "Q": Q})
    assert inf.params["stride"] == [2, 2]
    assert inf.params["count_include_pad"] is True


P3, Q3 = _out(3, 2, 1)
REFUSALS = [
    (
        "ceil-mode",
        "op:max_pool2d",
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        KernelError,
        'op:max_pool2d params "ceil_mode" is "True"; geon pools with ceil_mode false only (the '
        "output length rounds down: (length + 2*padding - kernel_size) // stride + 1)",
    ),
    (
        "dilation",
        "op:avg_pool2d",
        {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": [2, 2]},
        KernelError,
        'op:avg_pool2d params "dilation" is "[2, 2]"; geon pools with dilation 1 only (windows '
        "of adjacent cells)",
    ),
    (
        "padding-not-less-than-window",
        "op:max_pool2d",
        {"kernel_size": 3, "stride": 2, "padding": 3},
        KernelError,
        'op:max_pool2d padding "[3, 3]" is not less than kernel_size "[3, 3]"; expected padding '
        "< kernel_size, so every window holds a cell of the input",
    ),
    (
        "no-kernel-size",
        "op:max_pool2d",
        {"stride": 2},
        KernelError,
        'op:max_pool2d needs params "kernel_size"; expected an integer or [kh, kw]',
    ),
    (
        "count-include-pad-on-max",
        "op:max_pool2d",
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        KernelError,
        'op:max_pool2d has unknown param "count_include_pad"; expected ("out_axes", '
        '"kernel_size", "stride", "padding", "dilation", "ceil_mode")',
    ),
    (
        "wrong-output-length",
        "op:max_pool2d",
        {"kernel_size": 3, "stride": 1, "padding": 1},
        ShapeError,
        'op:max_pool2d output axis "P" has length 4; a window of 3 over "H" (length 7) with '
        "stride 1 and padding 1 gives 7",
    ),
]


@pytest.mark.parametrize(
    ("label", "kernel", "params", "error", "message"), REFUSALS, ids=[r[0] for r in REFUSALS]
)
def test_pool_refusals_name_the_value(
    label: str, kernel: str, params: dict, error: type, message: str
) -> None:
    with pytest.raises(error) as info:
        infer(kernel, {"tensor": [Axes.of([B, C, H, W])]},
              {"out_axes": ["B", "C", "P", "Q"], **params}, {"P": P3, "Q": Q3})  # fmt: skip
    assert str(info.value) == message


def test_pool_out_axes_must_keep_the_other_axes() -> None:
    with pytest.raises(AxisError) as info:
        infer("op:max_pool2d", {"tensor": [Axes.of([B, C, H, W])]},
              {"out_axes": ["B", "P", "Q"], "kernel_size": 3, "stride": 2, "padding": 1},
              {"P": P3, "Q": Q3})  # fmt: skip
    assert str(info.value) == ('op:max_pool2d out_axes ("B", "P", "Q") lack the input\'s axis "C"')


def test_a_pooled_document_checks_clean_after_a_round_trip() -> None:
    y = _pooled("avg", 3, 2, 1, False)
    g = Graph.from_json(gc.graph([y]).to_json())
    assert [i for i in g.check() if i.severity == "error"] == []
