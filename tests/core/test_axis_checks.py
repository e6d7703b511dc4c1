"""The axis constraints: §2 problems inside a stored document are issues, never exceptions."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geon import core as gc
from geon.core.checks import check
from geon.core.checks.axes import CONSTRAINTS
from geon.core.graph import AXIS, IPF_INDEX, IPF_SIGNATURE, OPERATION, TENSOR, TENSOR_AXES, Graph
from geon.core.issues import Issue
from geon.core.ops import CATALOGUE

AXIS_CONSTRAINTS = {
    "AxisDeclarations",
    "TensorAxesAgreement",
    "OperationAxesInference",
    "KernelSignatureAgreement",
}


def test_constraints_are_registered_by_name() -> None:
    assert [c.name for c in CONSTRAINTS] == [
        "AxisDeclarations",
        "TensorAxesAgreement",
        "OperationAxesInference",
        "KernelSignatureAgreement",
    ]


def _dot_graph() -> tuple[Graph, dict[str, Any]]:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1], name="x")
    y = gc.placeholder(axes=[W, N], name="y")
    z = gc.dot(x, y, name="z")
    g = gc.graph([z])
    ids: dict[str, Any] = {n.label or n.id: n.id for n in g.nodes if n.type == TENSOR}
    ids["op"] = next(n.id for n in g.nodes if n.type == OPERATION)
    ids.update({n.body["name"]: n.id for n in g.nodes if n.type == AXIS})
    return g, ids


def _axis_issues(g: Graph) -> list[Issue]:
    return [i for i in check(g) if i.constraint in AXIS_CONSTRAINTS]


def test_built_graph_checks_clean_and_round_trips() -> None:
    g, _ = _dot_graph()
    assert g.check() == []
    again = Graph.from_json(json.loads(json.dumps(g.to_json())))
    assert again.to_json() == g.to_json()
    assert again.check() == []


def test_loom_document_has_no_axis_issues() -> None:
    doc = json.loads(resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text())
    assert _axis_issues(Graph.from_json(doc)) == []


def test_collision_in_a_stored_document_is_an_issue() -> None:
    # given the dot graph, when x's W-1 is edited into W, then the dot collision is reported
    g, ids = _dot_graph()
    g.update_node(ids["x"], tags={TENSOR_AXES: {"axes": ["H", "W"]}})
    issues = _axis_issues(g)
    assert [(i.constraint, i.type, i.node_ids) for i in issues] == [
        ("OperationAxesInference", "AxisError", (ids["op"],))
    ]
    assert issues[0].message == (
        f'operation "{ids["op"]}" (op:dot): axis "W" appears in both operands at level 0; mark '
        "one side as a dual, e.g. W-1"
    )
    assert issues[0].summary == "Operation axes do not infer"


def test_output_axes_that_differ_are_an_issue() -> None:
    g, ids = _dot_graph()
    g.update_node(ids["z"], tags={TENSOR_AXES: {"axes": ["N", "H"]}})
    g.update_node(ids["z"], body={"range": {"start": [0, 0], "end": [4, 2]}})
    issues = _axis_issues(g)
    assert [(i.constraint, i.summary) for i in issues] == [
        ("OperationAxesInference", "Output axes differ from the inferred axes")
    ]
    assert issues[0].message == (
        f'operation "{ids["op"]}" (op:dot) infers the result axes (H, N) but its output tensor '
        f"\"{ids['z']}\" has (N, H); expected TensorAxes ['H', 'N']"
    )
    assert issues[0].node_ids == (ids["op"], ids["z"])


@pytest.mark.parametrize(
    ("patch", "summary", "message"),
    [
        (
            {"length": 0},
            "Axis declaration is invalid",
            'axis "H" has length "0"; expected an integer >= 1 or null',
        ),
        (
            {"roles": ["Tall"]},
            "Axis declaration is invalid",
            'axis "H" has role "Tall"; expected one of ("Channel", "Channelout", "Depth", '
            '"Height", "Time", "Width")',
        ),
        (
            {"batch": "yes"},
            "Axis declaration is invalid",
            'axis "H" has batch "yes"; expected true or false',
        ),
        (
            {"name": "2x"},
            "Axis declaration is invalid",
            'axis name "2x" is invalid; expected a letter or "_" followed by letters, digits or '
            '"_"',
        ),
        (
            {"name": "A" * 129},
            "Axis declaration is invalid",
            f'axis name "{"A" * 40}... (129 characters)" is too long; expected at most 128 '
            "characters",
        ),
    ],
    ids=["length", "role", "batch", "name", "name-too-long"],
)
def test_axis_declarations(patch: dict[str, Any], summary: str, message: str) -> None:
    g, ids = _dot_graph()
    g.update_node(ids["H"], body=patch)
    issues = [i for i in check(g) if i.constraint == "AxisDeclarations"]
    assert [(i.summary, i.message, i.node_ids) for i in issues] == [(summary, message, (ids["H"],))]


def test_axis_declared_twice() -> None:
    g, ids = _dot_graph()
    other = "9a3f6a8e-5d0b-4f53-9b4e-2a4b9d1b7c11"
    g.add_node({"id": other, "type": AXIS, "body": {"name": "H", "length": 2}})
    issues = [i for i in check(g) if i.constraint == "AxisDeclarations"]
    assert [i.node_ids for i in issues] == [(ids["H"], other), (other, ids["H"])]
    assert issues[0].message == (
        f'axis "H" is declared by 2 Axis nodes; expected one declaration per name (rename or '
        f'remove the others: "{other}")'
    )


def test_many_declarations_of_a_name_list_a_few_others_each() -> None:
    # given 300 more declarations of H: each of the 301 issues lists 16 others, not 300
    # (listing every other in each issue was 301 x 300 ids, found by the checker's fuzz test)
    g, ids = _dot_graph()
    extra = [f"00000000-0000-4000-8000-{k:012d}" for k in range(300)]
    for other in extra:
        g.add_node({"id": other, "type": AXIS, "body": {"name": "H", "length": 2}})
    issues = [i for i in check(g) if i.constraint == "AxisDeclarations"]
    assert len(issues) == 301
    first = issues[0]
    assert first.node_ids == (ids["H"], *extra[:16])
    assert first.params == {"name": "H", "others": extra[:16], "more": 284}
    assert first.message.endswith(f'"{extra[15]}" and 284 more)')
    assert max(len(i.message) for i in issues) < 1_000


def test_a_kernel_that_is_not_a_string_is_only_a_schema_issue() -> None:
    # a dict kernel made the axis constraints fail (TypeError: unhashable type), found by the
    # checker's fuzz test
    g, _ = _dot_graph()
    doc = g.to_json()
    op = next(n for n in doc["nodes"] if n["type"] == OPERATION)
    op["body"]["kernel"] = {"length": 12}
    issues = check(Graph.from_json(doc))
    assert [(i.constraint, i.summary) for i in issues] == [
        ("SchemaConformance", "Node body does not match its schema")
    ]


@pytest.mark.parametrize(
    ("tag", "body", "summary", "message"),
    [
        (
            ["H", "K"],
            None,
            "Tensor axes are invalid",
            (
                'tensor "{x}" names axis "K", which is not declared; expected an Axis node with '
                'name "K", or an axis that is declared'
            ),
        ),
        (
            ["H", "W--1"],
            None,
            "Tensor axes are invalid",
            'tensor "{x}": axis reference "W--1" is invalid; expected a name with an optional '
            'dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"',
        ),
        (
            ["H", "H"],
            None,
            "Tensor axes are invalid",
            'tensor "{x}": axis "H" appears twice in (H, H); the axes of a tensor are '
            "duplicate-free",
        ),
        (
            ["H"],
            None,
            "Tensor axes do not match its rank",
            'tensor "{x}" has 1 axes (H) but its range has rank 2; expected one axis per dim',
        ),
        (
            ["H", "W-1"],
            {"range": {"start": [0, 0], "end": [2, 5]}},
            "Tensor extent does not match its axis",
            'tensor "{x}" has 5 elements along axis "W-1" (dim 1), which has length 3; expected '
            "the range's extent to equal the axis length",
        ),
    ],
    ids=["undeclared", "malformed", "duplicate", "rank", "extent"],
)
def test_tensor_axes_agreement(
    tag: list[str], body: dict[str, Any] | None, summary: str, message: str
) -> None:
    g, ids = _dot_graph()
    edit: dict[str, Any] = {"tags": {TENSOR_AXES: {"axes": tag}}}
    if body is not None:
        edit["body"] = body
    g.update_node(ids["x"], **edit)
    issues = [i for i in check(g) if i.constraint == "TensorAxesAgreement"]
    assert [(i.summary, i.message) for i in issues] == [(summary, message.format(x=ids["x"]))]


def test_edited_signature_is_reported() -> None:
    g, ids = _dot_graph()
    sig = g.node(ids["op"]).tags[IPF_SIGNATURE]
    edited = json.loads(json.dumps(sig))
    edited["inputs"]["y"][0]["shape"] = [1, 1]
    g.update_node(ids["op"], tags={IPF_SIGNATURE: edited})
    issues = [i for i in check(g) if i.constraint == "KernelSignatureAgreement"]
    assert len(issues) == 1
    assert issues[0].message == (
        f'operation "{ids["op"]}" (op:dot) has IPF "{{"affineMap": {{"projection": [[0, 0], '
        '[0, 1]], "offset": [0, 0]}, "shape": [1, 1]}" for inputs "y"[0]; the kernel derives '
        '"{"affineMap": {"projection": [[0, 0], [0, 1]], "offset": [0, 0]}, "shape": [3, 1]}" '
        "from the axes"
    )
    assert issues[0].params["expected"] == sig["inputs"]["y"][0]


def test_missing_signature_and_wrong_index_are_reported() -> None:
    g, ids = _dot_graph()
    g.update_node(
        ids["op"], tags={IPF_SIGNATURE: None, IPF_INDEX: {"start": [0, 0], "end": [2, 3]}}
    )
    issues = [i for i in check(g) if i.constraint == "KernelSignatureAgreement"]
    assert [i.summary for i in issues] == [
        "Operation has no IPFSignature",
        "IPFIndex differs from the index axes",
    ]


def test_wrong_io_keys_are_an_issue() -> None:
    g, ids = _dot_graph()
    op = g.node(ids["op"])
    inputs = dict(op.body["inputs"])
    inputs["tensors"] = inputs.pop("x")
    g.update_node(ids["op"], body={"inputs": {"x": None, "tensors": inputs["tensors"]}})
    issues = [i for i in check(g) if i.constraint == "OperationAxesInference"]
    assert [(i.type, i.message) for i in issues] == [
        (
            "KernelError",
            f'operation "{ids["op"]}" (op:dot): op:dot has no input "tensors"; expected ("x", "y")',
        )
    ]


def test_unbound_axes_take_their_extent_from_the_tensors() -> None:
    # given a document whose axis N is unbound, then it checks clean while extents agree
    g, ids = _dot_graph()
    g.update_node(ids["N"], body={"length": None})
    assert _axis_issues(g) == []
    # when the output's extent along N disagrees with the input's, then that is an issue
    g.update_node(ids["z"], body={"range": {"start": [0, 0], "end": [2, 5]}})
    issues = [i for i in check(g) if i.constraint == "OperationAxesInference"]
    assert [i.message for i in issues] == [
        f'operation "{ids["op"]}" (op:dot) reads axis "N" with 4 and with 5 elements; an '
        "unbound axis must have one extent across the operands"
    ]


# --- hostile documents give issues, never exceptions -----------------------------------------

LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 5),
    st.sampled_from(["H", "W-1", "N", "Q", "H*W", "x"]),
)
ANY_JSON = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["axes", "out_axes", "reduction_axes", "slices", "pad", "H", "W-1"]),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(CATALOGUE)),
    ANY_JSON,
    st.one_of(st.none(), ANY_JSON),
    st.one_of(st.none(), ANY_JSON),
)
def test_hostile_documents_give_issues(
    kname: str, params: Any, x_axes: Any, axis_body: Any
) -> None:
    g, ids = _dot_graph()
    g.update_node(ids["op"], body={"kernel": kname, "params": params})
    if x_axes is not None:
        g.update_node(ids["x"], tags={TENSOR_AXES: {"axes": x_axes}})
    if isinstance(axis_body, dict):
        g.update_node(ids["W"], body=axis_body)
    issues = check(g)
    assert all(isinstance(i, Issue) for i in issues)


# --- incremental checking agrees with a full check -------------------------------------------

EDITS = [
    ("axis length", lambda ids: [{"op": "update_node", "id": ids["W"], "body": {"length": 4}}]),
    ("axis unbound", lambda ids: [{"op": "update_node", "id": ids["N"], "body": {"length": None}}]),
    ("axis renamed", lambda ids: [{"op": "update_node", "id": ids["W"], "body": {"name": "V"}}]),
    ("axis removed", lambda ids: [{"op": "remove_node", "id": ids["H"]}]),
    (
        "tensor axes",
        lambda ids: [
            {"op": "update_node", "id": ids["x"], "tags": {TENSOR_AXES: {"axes": ["H", "W"]}}}
        ],
    ),
    (
        "params",
        lambda ids: [{"op": "update_node", "id": ids["op"], "body": {"params": {"axes": ["N"]}}}],
    ),
    ("kernel", lambda ids: [{"op": "update_node", "id": ids["op"], "body": {"kernel": "op:add"}}]),
]


@pytest.mark.parametrize("steps", [[0, 1], [2, 3], [4, 0], [5, 6], [1, 0, 2], [3, 4, 6]])
def test_incremental_checks_equal_full_checks(steps: list[int]) -> None:
    from geon.core.checks import IncrementalChecker

    g, ids = _dot_graph()
    ic = IncrementalChecker(g)
    for step in steps:
        _, make = EDITS[step]
        got = ic.apply(make(ids))
        fresh = Graph.from_json(json.loads(json.dumps(g.to_json())))
        assert [i.to_json() for i in got] == [i.to_json() for i in check(fresh)]


def test_axis_renames_back_and_forth_keep_inference_current() -> None:
    # given a dot whose y is positional (TensorAxes removed): "mixes named and positional"
    g, ids = _dot_graph()
    g.apply([{"op": "update_node", "id": ids["y"], "tags": {TENSOR_AXES: None}}])
    mixes = [i.summary for i in check(g) if i.constraint == "OperationAxesInference"]
    assert mixes == ["Operation mixes named and positional tensors"]
    # when W is renamed to H (x's axes no longer resolve), checked, then the old H renamed to W
    g.apply([{"op": "update_node", "id": ids["W"], "body": {"name": "H"}}])
    check(g)
    g.apply([{"op": "update_node", "id": ids["H"], "body": {"name": "W"}}])
    # then the re-check reads the new declarations, as a check of a fresh copy does
    again = [i.summary for i in check(g) if i.constraint == "OperationAxesInference"]
    fresh = Graph.from_json(json.loads(json.dumps(g.to_json())))
    assert again == ["Operation mixes named and positional tensors"]
    assert [i.to_json() for i in check(g)] == [i.to_json() for i in check(fresh)]
