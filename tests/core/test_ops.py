"""The kernel catalogue: IO keys, axis inference and derived projections (DESIGN.md §2, §4).

The table of cases lives in ``axis_cases.json`` so the editor's TypeScript mirror runs the same
cases. The older expectations were written by hand from DESIGN.md; those of the pools, concat,
gather and where are what the server answered, each read against docs/kernels.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geon.core.axes import Axes, Axis, AxisRef
from geon.core.errors import AxisError, KernelError, ShapeError
from geon.core.ops import CATALOGUE, Dim, infer, infer_positional, kernel, run_case

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "axis_cases.json").read_text(encoding="utf-8")
)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_shared_case(case: dict[str, Any]) -> None:
    # given a case from the shared table, when it runs, then the answer is the expected one
    got = run_case(case)
    expect = case["expect"]
    if "error" in expect:
        assert got == {"error": expect["error"]}
        return
    assert "error" not in got, got
    assert got["result"] == expect["result"]
    assert got["index"] == expect.get("index", expect["result"])
    if "signature" in expect:
        assert got["signature"] == expect["signature"]


def test_shared_cases_are_unique_and_cover_every_named_kernel() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    covered = {c["kernel"] for c in CASES}
    named = {k for k, spec in CATALOGUE.items() if spec.named}
    families = {CATALOGUE[k].family for k in covered if k in CATALOGUE}
    assert families == {
        "nary",
        "binary",
        "unary",
        "dot",
        "reduction",
        "normalization",
        "view",
        "conv",
        "pool",
        "concat",
        "gather",
        "where",
    }
    views = {k for k in named if CATALOGUE[k].family in ("view", "normalization")}
    assert views | {"op:gelu"} <= covered


CATALOGUE_NAMES = [
    "op:dot_partial",
    "op:add",
    "op:subtract",
    "op:multiply",
    "op:divide",
    "op:power",
    "op:maximum",
    "op:minimum",
    "op:negative",
    "op:abs",
    "op:exp",
    "op:log",
    "op:sqrt",
    "op:square",
    "op:tanh",
    "op:sigmoid",
    "op:relu",
    "op:gelu",
    "op:dot",
    "op:sum",
    "op:prod",
    "op:max",
    "op:min",
    "op:mean",
    "op:softmax",
    "op:layer_norm",
    "op:cast_axes",
    "op:broadcast",
    "op:dimshuffle",
    "op:transpose",
    "op:slice",
    "op:pad",
    "op:flatten",
    "op:unflatten",
    "op:conv2d",
    "op:max_pool2d",
    "op:avg_pool2d",
    "op:concat",
    "op:where",
    "op:gather",
    "op:linear",
    "matmul",
    "row_sum",
]


def test_catalogue_lists_every_kernel_of_the_design() -> None:
    assert sorted(CATALOGUE) == sorted(CATALOGUE_NAMES)


@pytest.mark.parametrize(
    ("name", "inputs"),
    [
        ("op:add", ("tensors",)),
        ("op:multiply", ("tensors",)),
        ("op:maximum", ("tensors",)),
        ("op:minimum", ("tensors",)),
        ("op:subtract", ("x", "y")),
        ("op:divide", ("x", "y")),
        ("op:power", ("x", "y")),
        ("op:dot", ("x", "y")),
        ("op:relu", ("tensor",)),
        ("op:mean", ("tensor",)),
        ("op:slice", ("tensor",)),
        ("op:softmax", ("tensor",)),
        ("op:layer_norm", ("tensor", "scale", "bias")),
        ("op:conv2d", ("x", "filter")),
        ("op:max_pool2d", ("tensor",)),
        ("op:avg_pool2d", ("tensor",)),
        ("op:linear", ("x", "A", "b")),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_io_keys(name: str, inputs: tuple[str, ...]) -> None:
    spec = kernel(name)
    assert spec.inputs == inputs
    assert spec.outputs == ("result",)
    assert spec.variadic == (inputs == ("tensors",))


def test_positional_kernels_have_no_axis_inference() -> None:
    H = Axis("H", 2)
    with pytest.raises(KernelError) as e:
        infer("matmul", {"x": [Axes.of([H])], "y": [Axes.of([H])]})
    assert str(e.value) == (
        'kernel "matmul" is positional (loom) and has no axis inference; use a named kernel such '
        'as "op:dot" on tensors with axes'
    )


def test_binary_needs_exactly_one_tensor_per_key() -> None:
    H = Axis("H", 2)
    with pytest.raises(KernelError) as e:
        infer("op:subtract", {"x": [Axes.of([H]), Axes.of([H])], "y": [Axes.of([H])]})
    assert str(e.value) == 'op:subtract input "x" has 2 tensors; expected exactly one'


def test_unknown_param_is_refused() -> None:
    H = Axis("H", 2)
    with pytest.raises(KernelError) as e:
        infer("op:dot", {"x": [Axes.of([H])], "y": [Axes.of([H - 1])]}, {"order": ["H"]})
    assert str(e.value) == 'op:dot has unknown param "order"; expected ("axes")'


def test_signature_offsets_follow_the_tensor_start() -> None:
    # given tensors living at [200:202, 50:53], then the offsets are their starts
    H, W, N = Axis("H", 2), Axis("W", 3), Axis("N", 4)
    inf = infer("op:dot", {"x": [Axes.of([H, W - 1])], "y": [Axes.of([W, N])]})
    sig = inf.signature({"x": [[200, 50]], "y": [[7, 0]], "result": [[0, 0]]})
    assert sig["inputs"]["x"][0]["affineMap"]["offset"] == [200, 50]
    assert sig["inputs"]["y"][0]["affineMap"]["offset"] == [7, 0]
    assert inf.index_range() == {"start": [0, 0], "end": [2, 4]}
    assert inf.index_json() == {"axes": ["H", "N"]}


def test_contracted_axes_are_not_index_dims() -> None:
    H, W, N = Axis("H", 2), Axis("W", 3), Axis("N", 4)
    inf = infer("op:dot", {"x": [Axes.of([H, W - 1])], "y": [Axes.of([W, N])]})
    assert W not in inf.index and (W - 1) not in inf.index
    assert inf.operand_dims("x") == (Dim(terms=((0, 1),)), Dim(extent=W - 1))
    assert inf.plan == {"pairs": [[1, 0]], "lower": "x"}


def test_selections_are_the_regions_read() -> None:
    # a slice reads its window; a pad reads the whole (smaller) input
    R, R2, H, H4 = Axis("R", 6), Axis("R2", 2), Axis("H", 2), Axis("H4", 4)
    sl = infer(
        "op:slice",
        {"tensor": [Axes.of([R])]},
        {"slices": {"R": {"start": 1, "stop": 3}}, "axes": {"R": "R2"}},
        {"R2": R2},
    )
    assert sl.selections({"tensor": [([10], [16])], "result": [([0], [2])]}) == {
        "tensor": [{"start": [11], "end": [13]}],
        "result": [{"start": [0], "end": [2]}],
    }
    pd = infer(
        "op:pad",
        {"tensor": [Axes.of([H])]},
        {"pad": {"H": [1, 1]}, "axes": {"H": "H4"}},
        {"H4": H4},
    )
    assert pd.selections({"tensor": [([0], [2])], "result": [([0], [4])]})["tensor"] == [
        {"start": [0], "end": [2]}
    ]


def test_conv_shards_over_height_overlap() -> None:
    # given the conv of the shared table, when its index is split over P in two halves,
    # then the input rows the halves read overlap by the window minus one (a halo)
    case = next(c for c in CASES if c["name"] == "conv2d window and halo")
    got = run_case(case)
    x_ipf = got["signature"]["inputs"]["x"][0]
    row = x_ipf["affineMap"]["projection"][1]
    window = x_ipf["shape"][1]
    first = (0 * row[1], 2 * row[1] + window)  # P in [0, 3)
    second = (3 * row[1], 5 * row[1] + window)  # P in [3, 6)
    assert first == (0, 5)
    assert second == (3, 8)
    assert first[1] - second[0] == window - 1


# --- dot(x, y) == dot(y.T, x.T).T over random axis sets (axes only; values: test_reference) --

NAMES = ["A", "B", "C", "D", "E"]
DECLS = {n: Axis(n, i + 2) for i, n in enumerate(NAMES)}


@st.composite
def operand_pair(draw: st.DrawFn) -> tuple[Axes, Axes]:
    def operand() -> Axes:
        refs: list[AxisRef] = []
        for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=4)):
            level = draw(st.integers(min_value=-2, max_value=2))
            refs.append(AxisRef(DECLS[name], level))
        order = draw(st.permutations(refs))
        return Axes(tuple(order))

    return operand(), operand()


@settings(deadline=None)  # correctness, not timing: the machine is shared
@given(operand_pair())
def test_dot_transpose_identity_on_axes(pair: tuple[Axes, Axes]) -> None:
    x, y = pair
    try:
        direct = infer("op:dot", {"x": [x], "y": [y]}).result
    except AxisError as e:
        # then the transposed form is refused too
        with pytest.raises(AxisError):
            infer("op:dot", {"x": [y.T], "y": [x.T]})
        assert "appears in both" in str(e) or "pair" in str(e)
        return
    flipped = infer("op:dot", {"x": [y.T], "y": [x.T]}).result
    assert direct == flipped.T


# --- hostile params never escape as anything but a GeonError ---------------------------------

JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 8),
    st.sampled_from(["A", "B", "C-1", "A*B", "Z", "", "1x", "start"]),
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "axes",
                    "out_axes",
                    "reduction_axes",
                    "slices",
                    "pad",
                    "stride",
                    "padding",
                    "start",
                    "stop",
                    "step",
                    "A",
                    "B",
                    "C-1",
                ]
            ),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=8,
)
FUZZ_AXES = {
    "A": Axis("A", 2, roles=("Channel",)),
    "B": Axis("B", 3, roles=("Height",)),
    "C": Axis("C", 4, roles=("Width",)),
}


@settings(deadline=None)  # correctness, not timing: the machine is shared
@given(
    st.sampled_from(sorted(k for k, spec in CATALOGUE.items() if spec.named)),
    st.lists(
        st.lists(st.sampled_from(["A", "B", "C", "A-1", "C+1"]), unique=True, max_size=3),
        min_size=1,
        max_size=3,
    ),
    st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(
                [
                    "axes",
                    "out_axes",
                    "reduction_axes",
                    "slices",
                    "pad",
                    "stride",
                    "padding",
                    "epsilon",
                    "approximate",
                ]
            ),
            JSON,
            max_size=3,
        ),
    ),
)
def test_infer_raises_only_geon_errors(kname: str, operands: list[list[str]], params: Any) -> None:
    spec = CATALOGUE[kname]
    axes = [Axes.parse(o, FUZZ_AXES) for o in operands]
    if spec.variadic:
        inputs = {"tensors": axes}
    else:
        inputs = {key: [axes[i % len(axes)]] for i, key in enumerate(spec.inputs)}
    try:
        inf = infer(kname, inputs, params, FUZZ_AXES)
    except (AxisError, KernelError, ShapeError):
        return
    sig = inf.signature()
    assert len(sig["outputs"]["result"]) == 1


@pytest.mark.parametrize(
    ("epsilon", "shown"),
    [(10**400, "1000000000000... (401 digits)"), (float("nan"), "nan"), (True, "True")],
    ids=["huge-int", "nan", "bool"],
)
def test_layer_norm_refuses_an_epsilon_json_allows(epsilon: Any, shown: str) -> None:
    # given values Python's JSON parser reads but no float epsilon can be
    N = Axis("N", 2)
    with pytest.raises(KernelError) as e:
        infer(
            "op:layer_norm",
            {"tensor": [Axes.of([N])]},
            {"reduction_axes": ["N"], "epsilon": epsilon},
        )
    # then the refusal shows the value, bounded, and what is valid
    assert str(e.value) == (
        f'op:layer_norm params "epsilon" is "{shown}"; expected a positive number such as 1e-05'
    )


def test_normalised_axes_are_no_index_axes() -> None:
    # given a layer norm over (T, D) of x[N, T, D] with a scale over (D, T)
    N, T, D = Axis("N", 2), Axis("T", 3), Axis("D", 4)
    t, d = AxisRef(T, 0), AxisRef(D, 0)
    inf = infer(
        "op:layer_norm",
        {"tensor": [Axes.of([N, T, D])], "scale": [Axes.of([D, T])]},
        {"reduction_axes": ["D", "T"]},
    )
    # then only N indexes it; T and D are read and written whole; params are canonical
    assert inf.index_json() == {"axes": ["N"]}
    assert inf.operand_dims("result") == (Dim(terms=((0, 1),)), Dim(extent=t), Dim(extent=d))
    assert inf.operand_dims("scale") == (Dim(extent=d), Dim(extent=t))
    assert inf.params == {"reduction_axes": ["T", "D"], "epsilon": 1e-05}
    assert inf.plan == {"reduced": [1, 2], "scale": [2, 1]}


# --- positional loom kernels -----------------------------------------------------------------


def _ipf(proj: list[list[int]], off: list[int], shape: list[int]) -> dict[str, Any]:
    return {"affineMap": {"projection": proj, "offset": off}, "shape": shape}


def test_linear_follows_loom() -> None:
    # given x[batch 5, features 3], A[3, 2], b[2]: the index is [5, 2] as loom derives it
    p = infer_positional("op:linear", {"x": [(5, 3)], "A": [(3, 2)], "b": [(2,)]})
    assert p.result == (5, 2)
    assert p.signature({"x": [[100, 0]]}) == {
        "inputs": {
            "x": [_ipf([[1, 0], [0, 0]], [100, 0], [1, 3])],
            "A": [_ipf([[0, 0], [0, 1]], [0, 0], [3, 1])],
            "b": [_ipf([[0, 1]], [0], [1])],
        },
        "outputs": {"result": [_ipf([[1, 0], [0, 1]], [0, 0], [1, 1])]},
    }


def test_row_sum_and_matmul() -> None:
    assert infer_positional("row_sum", {"tensor": [(4, 6)]}).signature()["inputs"] == {
        "tensor": [_ipf([[1], [0]], [0, 0], [1, 6])]
    }
    assert infer_positional("matmul", {"x": [(2, 3)], "y": [(3, 4)]}).result == (2, 4)


@pytest.mark.parametrize(
    ("name", "shapes", "message"),
    [
        (
            "matmul",
            {"x": [(2, 3)], "y": [(4, 4)]},
            "matmul reads x[n, k] and y[k, m] with the same k; got x [2, 3] and y [4, 4]",
        ),
        (
            "op:linear",
            {"x": [(5, 3)], "A": [(3, 2)], "b": [(3,)]},
            "op:linear reads b[out] with out = 2; got b [3]",
        ),
        ("row_sum", {"tensor": [(4,)]}, "row_sum reads a matrix [n, m]; got shape [4]"),
    ],
    ids=["matmul", "linear-bias", "row-sum"],
)
def test_positional_refusals(name: str, shapes: dict[str, Any], message: str) -> None:
    with pytest.raises(ShapeError) as e:
        infer_positional(name, shapes)
    assert str(e.value) == message
