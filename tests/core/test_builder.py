"""The Python authoring API (DESIGN.md §8): building, documents, checking and evaluation."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from geon import core as gc
from geon.core.builder import CONSTANT, decode_constant, encode_constant
from geon.core.graph import (
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    Graph,
)


def test_design_snippet_runs_as_written() -> None:
    # given the §8 snippet, verbatim
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1])  # W - 1: dual level -1
    y = gc.placeholder(axes=[W, N], name="y")
    z = gc.dot(x, y)  # z.axes -> (H, N)
    assert str(z.axes[1]) == "N"
    g = gc.graph([z])  # a geon.core.graph.Graph (LoomGraph document)
    assert g.check() == []
    d = g.to_json()
    assert Graph.from_json(json.loads(json.dumps(d))).to_json() == d
    out = gc.evaluate(z, feeds={y: np.ones((3, 4))})  # ndarray in z's axis order
    # then the axes and the values are those of the design
    assert z.axes == (H, N)
    assert isinstance(g, Graph)
    assert out.tolist() == (np.arange(6.0).reshape(2, 3) @ np.ones((3, 4))).tolist()


def _by_type(g: Graph, url: str) -> list[Any]:
    return [n for n in g.nodes if n.type == url]


def test_document_has_axes_tensors_and_derived_tags() -> None:
    H, W, N = gc.Axis("H", 2, roles="Height"), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1], name="x")
    y = gc.placeholder(axes=[W, N], name="y")
    z = gc.dot(x, y, name="z")
    g = gc.graph([z])
    axes = {n.body["name"]: n.body for n in _by_type(g, AXIS)}
    assert axes == {
        "H": {"name": "H", "length": 2, "roles": ["Height"]},
        "W": {"name": "W", "length": 3},
        "N": {"name": "N", "length": 4},
    }
    tensors = {n.label: n for n in _by_type(g, TENSOR)}
    assert tensors["x"].tags[TENSOR_AXES] == {"axes": ["H", "W-1"]}
    assert tensors["x"].body == {"dtype": "float64", "range": {"start": [0, 0], "end": [2, 3]}}
    assert tensors["x"].tags[CONSTANT] == {"value": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]}
    assert CONSTANT not in tensors["y"].tags
    assert tensors["z"].tags[TENSOR_AXES] == {"axes": ["H", "N"]}
    [op] = _by_type(g, OPERATION)
    assert op.body["kernel"] == "op:dot"
    assert op.body["inputs"]["x"][0]["tensorId"] == x.id
    assert op.body["outputs"]["result"][0] == {
        "tensorId": z.id,
        "range": {"start": [0, 0], "end": [2, 4]},
    }
    assert op.tags[INDEX_AXES] == {"axes": ["H", "N"]}
    assert op.tags[IPF_INDEX] == {"start": [0, 0], "end": [2, 4]}
    assert op.tags[IPF_SIGNATURE]["inputs"]["y"] == [
        {"affineMap": {"projection": [[0, 0], [0, 1]], "offset": [0, 0]}, "shape": [3, 1]}
    ]


@pytest.mark.parametrize(
    ("build", "names"),
    [
        (lambda a, b: a + b, ("C", "H", "W", "N")),
        (lambda a, b: a - b, ("C", "H", "W", "N")),
        (lambda a, b: a * b, ("C", "H", "W", "N")),
        (lambda a, b: gc.maximum(a, b), ("C", "H", "W", "N")),
        (lambda a, b: b + a, ("W", "H", "N", "C")),
        (
            lambda a, b: gc.add(a, b, axes=[a.axes[1], *b.axes[::2], a.axes[0]]),
            ("H", "W", "N", "C"),
        ),
    ],
    ids=["add", "subtract", "multiply", "maximum", "add-reversed", "add-axes"],
)
def test_elementwise_order(build: Any, names: tuple[str, ...]) -> None:
    C, H, W, N = (gc.Axis(n, i + 2) for i, n in enumerate("CHWN"))
    a = gc.placeholder(axes=[C, H])
    b = gc.placeholder(axes=[W, H, N])
    assert build(a, b).axes.names == names


def test_python_numbers_are_scalar_constants() -> None:
    H = gc.Axis("H", 2)
    x = gc.constant([1.0, 2.0], axes=[H])
    y = 2 * x + 1 - x / 4.0
    assert y.axes == (H,)
    assert (
        gc.evaluate(y).tolist()
        == (2 * np.array([1.0, 2.0]) + 1 - np.array([1.0, 2.0]) / 4).tolist()
    )
    assert gc.evaluate(-x).tolist() == [-1.0, -2.0]
    assert gc.evaluate(abs(-x)).tolist() == [1.0, 2.0]
    assert gc.evaluate(x**2).tolist() == [1.0, 4.0]
    assert gc.evaluate(np.float64(3.0) * x).tolist() == [3.0, 6.0]
    assert (x @ gc.constant([1.0, 1.0], axes=[H - 1])).axes == ()


def test_transpose_and_the_dot_identity() -> None:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    rng = np.random.default_rng(0)
    x = gc.constant(rng.normal(size=(2, 3)), axes=[H, W - 1])
    y = gc.constant(rng.normal(size=(3, 4)), axes=[W, N])
    assert x.T.axes.names == ("W", "H-1")
    left = gc.dot(x, y)
    right = gc.dot(y.T, x.T).T
    assert right.axes == left.axes
    np.testing.assert_allclose(gc.evaluate(right), gc.evaluate(left), rtol=1e-12)


def test_reductions_with_out_axes_order() -> None:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    v = np.arange(24.0).reshape(2, 3, 4)
    x = gc.constant(v, axes=[H, W, N])
    s = gc.sum(x, out_axes=[N, H])
    assert s.axes == (N, H)
    assert gc.evaluate(s).tolist() == v.sum(axis=1).T.tolist()
    m = gc.max(x, reduction_axes=[H, N])
    assert m.axes == (W,)
    assert gc.evaluate(m).tolist() == v.max(axis=(0, 2)).tolist()
    assert gc.sum(x, reduction_axes=W).axes == (H, N)
    assert gc.mean(x).axes == ()
    assert float(gc.evaluate(gc.mean(x))) == float(v.mean())


def test_cast_axes_avoids_the_accidental_outer_product() -> None:
    # given two vectors on different axes of equal length
    H, K = gc.Axis("H", 2), gc.Axis("K", 2)
    a = gc.constant([1.0, 2.0], axes=[H])
    b = gc.constant([10.0, 20.0], axes=[K])
    # then adding them is an outer sum, and relabelling first gives the elementwise sum
    assert (a + b).axes == (H, K)
    assert gc.evaluate(a + b).tolist() == [[11.0, 21.0], [12.0, 22.0]]
    c = a + gc.cast_axes(b, [H])
    assert c.axes == (H,)
    assert gc.evaluate(c).tolist() == [11.0, 22.0]


def test_slice_drops_or_renames() -> None:
    H, W, H2 = gc.Axis("H", 4), gc.Axis("W", 3), gc.Axis("H2", 2)
    v = np.arange(12.0).reshape(4, 3)
    x = gc.constant(v, axes=[H, W])
    s = gc.slice(x, {H: slice(0, 2)}, axes={H: H2})
    assert s.axes == (H2, W)
    assert gc.evaluate(s).tolist() == v[0:2].tolist()
    d = gc.slice(x, {H: 3})
    assert d.axes == (W,)
    assert gc.evaluate(d).tolist() == v[3].tolist()
    assert gc.graph([s, d]).check() == []


def test_pad_needs_a_new_axis() -> None:
    H, W, H3 = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("H3", 5)
    v = np.arange(6.0).reshape(2, 3)
    x = gc.constant(v, axes=[H, W])
    p = gc.pad(x, {H: (1, 2)}, axes={H: H3})
    assert p.axes == (H3, W)
    assert gc.evaluate(p).tolist() == np.pad(v, ((1, 2), (0, 0))).tolist()
    with pytest.raises(gc.AxisError) as e:
        gc.pad(x, {H: (1, 2)})
    assert str(e.value) == (
        'padding axis "H" changes its length from 2 to 5; name a new axis for it, '
        'e.g. axes={"H": "H5"}'
    )


def test_flatten_round_trip() -> None:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    v = np.arange(24.0).reshape(2, 3, 4)
    x = gc.constant(v, axes=[H, W, N])
    f = gc.flatten(x, [H, W])
    assert f.axes.names == ("H*W", "N")
    assert f.axes[0] == H * W
    u = gc.unflatten(f)
    assert u.axes == (H, W, N)
    assert gc.evaluate(f).tolist() == v.reshape(6, 4).tolist()
    assert gc.evaluate(u).tolist() == v.tolist()
    g = gc.graph([u])
    assert g.check() == []
    assert Graph.from_json(json.loads(json.dumps(g.to_json()))).check() == []


def test_conv2d_shapes() -> None:
    C, Y, X = (
        gc.Axis("C", 2, roles="Channel"),
        gc.Axis("Y", 6, roles="Height"),
        gc.Axis("X", 5, roles="Width"),
    )
    B = gc.Axis("B", 2)
    R, S, K = (
        gc.Axis("R", 3, roles="Height"),
        gc.Axis("S", 2, roles="Width"),
        gc.Axis("K", 4, roles="Channelout"),
    )
    P, Q = gc.Axis("P", 4, roles="Height"), gc.Axis("Q", 4, roles="Width")
    img = gc.placeholder(axes=[B, C, Y, X], name="img")
    f = gc.placeholder(axes=[K, C - 1, R, S], name="f")
    out = gc.conv2d(img, f, [B, K, P, Q])
    assert out.axes == (B, K, P, Q)
    assert gc.graph([out]).check() == []


# --- refusals ------------------------------------------------------------------------------


def test_two_axes_with_one_name_are_refused() -> None:
    a = gc.placeholder(axes=[gc.Axis("H", 2)])
    b = gc.placeholder(axes=[gc.Axis("H", 3)])
    with pytest.raises(gc.AxisError) as e:
        a + b
    assert str(e.value) == (
        'two different axes are named "H": Axis("H", 2) and Axis("H", 3); an axis is declared '
        "once per graph, so give one of them another name"
    )


def test_dot_collision_is_refused() -> None:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    with pytest.raises(gc.GeonError) as e:
        gc.dot(gc.placeholder(axes=[H, W]), gc.placeholder(axes=[W, N]))
    assert str(e.value) == (
        'axis "W" appears in both operands at level 0; mark one side as a dual, e.g. W-1'
    )


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: gc.constant(np.zeros((2, 3)), axes=[gc.Axis("H", 2)]),
            gc.ShapeError,
            "constant value has 2 dims (shape (2, 3)) but axes (H) name 1; name one axis per dim",
        ),
        (
            lambda: gc.constant(np.zeros(3), axes=[gc.Axis("H", 2)]),
            gc.ShapeError,
            'constant value has 3 elements along axis "H" of length 2; the value\'s shape must '
            "equal the axes' lengths",
        ),
        (
            lambda: gc.constant(np.zeros(3), axes=[gc.Axis("H")]),
            gc.ShapeError,
            'axis "H" has no length but the constant has 3 elements along it; declare it as '
            'Axis("H", 3)',
        ),
        (
            lambda: gc.placeholder(axes=[gc.Axis("H", 2)], dtype="float128"),
            gc.ShapeError,
            "dtype \"float128\" is unknown; expected one of ('boolean', 'int8', 'int16', "
            "'int32', 'int64', 'uint8', 'float16', 'float32', 'float64', 'complex64', "
            "'complex128')",
        ),
        (
            lambda: gc.add(gc.placeholder(axes=[gc.Axis("H", 2)]), "two"),
            gc.GeonError,
            '"two" is not a tensor; expected a geon Tensor (from constant, placeholder or an '
            "op) or a Python number",
        ),
        (
            lambda: gc.graph([gc.placeholder(axes=[gc.Axis("B")])]),
            gc.ShapeError,
            'tensor <Tensor placeholder (B) float64> has axis "B" without a length; bind it '
            '(e.g. Axis("B", 4)) before building a document',
        ),
    ],
    ids=["rank", "length", "unbound-constant", "dtype", "not-a-tensor", "unbound-graph"],
)
def test_refusals(make: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as e:
        make()
    assert str(e.value) == message


def test_missing_feed_and_unknown_feed() -> None:
    H = gc.Axis("H", 2)
    y = gc.placeholder(axes=[H], name="y")
    with pytest.raises(gc.GeonError) as e:
        gc.evaluate(y * 2.0)
    assert (
        str(e.value) == "placeholder \"y\" has no value; feed an array of shape (2,) (axes ('H',))"
    )
    with pytest.raises(gc.GeonError) as e:
        gc.evaluate(y * 2.0, feeds={"q": np.ones(2)})
    assert str(e.value) == (
        'feed "q" is not a placeholder of this graph; expected a placeholder handle or one '
        "of the names ('y',)"
    )
    with pytest.raises(gc.ShapeError) as e:
        gc.evaluate(y * 2.0, feeds={"y": np.ones(3)})
    assert str(e.value) == 'input for tensor "y" has shape (3,); expected (2,)'
    assert gc.evaluate(y * 2.0, feeds={"y": np.ones(2)}).tolist() == [2.0, 2.0]


@pytest.mark.parametrize(
    "value",
    [
        np.array([[1.5, -2.0], [np.nan, np.inf]]),
        np.array([1, 2, 3], dtype=np.int32),
        np.array([True, False]),
        np.array([1 + 2j, -3j], dtype=np.complex64),
        np.array(-np.inf),
    ],
    ids=["float-nonfinite", "int32", "bool", "complex", "scalar"],
)
def test_constants_round_trip_through_json(value: np.ndarray[Any, Any]) -> None:
    tag = json.loads(json.dumps(encode_constant(value), allow_nan=False))
    from geon.core.dtypes import dtype_name as _dtype_name

    back = decode_constant(tag, _dtype_name(value.dtype), value.shape)
    assert back.dtype == value.dtype
    np.testing.assert_array_equal(back, value)


def test_slice_value_must_be_a_slice_or_an_int() -> None:
    H = gc.Axis("H", 2)
    with pytest.raises(gc.KernelError) as e:
        gc.slice(gc.placeholder(axes=[H]), {H: "0:1"})  # type: ignore[dict-item]
    assert str(e.value) == 'slice for axis "H" is "\'0:1\'"; expected a Python slice or an int'


def test_evaluate_runs_on_the_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    # given the executor's entry point observed, when evaluating, then the executor ran the graph
    import geon.execute

    calls: list[int] = []
    real = geon.execute.evaluate_graph

    def observed(g: Graph, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(g.nodes))
        return real(g, inputs, *args, **kwargs)

    monkeypatch.setattr(geon.execute, "evaluate_graph", observed)
    H = gc.Axis("H", 2)
    x = gc.constant([1.0, 2.0], axes=[H])
    assert gc.evaluate(x * 3.0).tolist() == [3.0, 6.0]
    assert calls == [5]
