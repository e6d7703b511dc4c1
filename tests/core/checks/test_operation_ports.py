"""OperationPorts and PositionalKernelAgreement (issue 21): every refusal of ``compile_run`` on
an operation that no other constraint reports is an error issue on the operation, naming it by
its label and saying the fix; the executor refuses the same graphs; named operations keep one
issue (OperationAxesInference's); the incremental checker agrees with a full check."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import numpy as np
import pytest

from geon import core as gc
from geon.core.checks import IncrementalChecker, check
from geon.core.errors import ExecutionError
from geon.core.graph import (
    APPLICATION,
    INDEX_AXES,
    IPF_SIGNATURE,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    Graph,
)
from geon.core.plans.shards import shard
from geon.execute import compile_run, run

GRAPH_ID = "00000000-0000-4000-8000-000000000000"


def _tensor(label: str, shape: tuple[int, ...]) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, label)),
        "type": TENSOR,
        "label": label,
        "body": {"dtype": "float64", "range": {"start": [0] * len(shape), "end": list(shape)}},
    }


def _sel(t: dict[str, Any], rng: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"tensorId": t["id"], "range": rng or t["body"]["range"]}


def _op(
    kernel: str,
    inputs: dict[str, list[dict[str, Any]]],
    outputs: dict[str, list[dict[str, Any]]],
    label: str | None = "op_1",
) -> dict[str, Any]:
    node = {
        "id": "00000000-0000-4000-8000-0000000000aa",
        "type": OPERATION,
        "body": {"kernel": kernel, "inputs": inputs, "outputs": outputs},
    }
    if label is not None:
        node["label"] = label
    return node


def _graph(*nodes: dict[str, Any]) -> Graph:
    return Graph.from_json({"id": GRAPH_ID, "nodes": list(nodes)})


A, B, C, Z = _tensor("a", (2, 3)), _tensor("b", (3,)), _tensor("c", (3, 2)), _tensor("z", (2, 3))

# (label, nodes, constraint, expected message)
CASES = [
    (
        "palette op, nothing connected: input",
        [_op("op:add", {}, {}, label="add_1")],
        "OperationPorts",
        'operation "add_1" (op:add) has no input "tensors"; connect a tensor to its "tensors" '
        "input or delete the operation",
    ),
    (
        "palette op, nothing connected: output (no label: the kernel names it)",
        [_op("op:subtract", {"x": [_sel(A)], "y": [_sel(A)]}, {}, label=None), A],
        "OperationPorts",
        'operation "op:subtract" (op:subtract) writes no tensor; connect its "result" output to '
        "a tensor (the editor creates it once every input is connected) or delete the operation",
    ),
    (
        "binary op with one input",
        [_op("op:subtract", {"x": [_sel(A)]}, {"result": [_sel(Z)]}), A, Z],
        "OperationPorts",
        'operation "op_1" (op:subtract) has no input "y"; connect a tensor to its "y" input or '
        "delete the operation",
    ),
    (
        "n-ary op with one input",
        [_op("op:add", {"tensors": [_sel(A)]}, {"result": [_sel(Z)]}), A, Z],
        "OperationPorts",
        'operation "op_1" (op:add) reads 1 tensor as "tensors"; expected at least two; connect '
        "another tensor to it or delete the operation",
    ),
    (
        "two tensors in a single input",
        [_op("op:exp", {"tensor": [_sel(A), _sel(A)]}, {"result": [_sel(Z)]}), A, Z],
        "OperationPorts",
        'operation "op_1" (op:exp) reads 2 tensors as "tensor"; expected exactly one; disconnect '
        "all but one",
    ),
    (
        "an input the kernel does not read",
        [_op("op:exp", {"tensor": [_sel(A)], "bogus": [_sel(A)]}, {"result": [_sel(Z)]}), A, Z],
        "OperationPorts",
        'operation "op_1" (op:exp) has an input "bogus", which op:exp does not read; expected '
        'inputs ("tensor"); disconnect the tensors from "bogus"',
    ),
    (
        "two result tensors",
        [_op("op:exp", {"tensor": [_sel(A)]}, {"result": [_sel(Z), _sel(A)]}), A, Z],
        "OperationPorts",
        'operation "op_1" (op:exp) writes 2 tensors as "result"; expected exactly one; '
        "disconnect all but one",
    ),
    (
        "an output other than result",
        [_op("op:exp", {"tensor": [_sel(A)]}, {"result": [_sel(Z)], "extra": [_sel(A)]}), A, Z],
        "OperationPorts",
        'operation "op_1" (op:exp) has an output "extra"; expected only "result"; disconnect the '
        'tensors from "extra"',
    ),
    (
        "a named kernel on tensors without axes",
        [_op("op:sum", {"tensor": [_sel(A)]}, {"result": [_sel(B)]}), A, B],
        "PositionalKernelAgreement",
        'operation "op_1" (op:sum) reads and writes tensors without TensorAxes ("a", "b"); op:sum '
        "works on named axes; give every tensor it reads and writes its axes",
    ),
    (
        "positional operands that do not broadcast",
        [_op("op:add", {"tensors": [_sel(A), _sel(C)]}, {"result": [_sel(Z)]}), A, C, Z],
        "PositionalKernelAgreement",
        'operation "op_1" (op:add): the operation reads shapes ([2, 3], [3, 2]), which do not '
        "broadcast together; select regions whose shapes agree or are 1 from the right, or give "
        "the tensors axes",
    ),
    (
        "positional operands that broadcast to another shape",
        [_op("op:negative", {"tensor": [_sel(B)]}, {"result": [_sel(Z)]}), B, Z],
        "PositionalKernelAgreement",
        'operation "op_1" (op:negative): the operation reads shapes ([3]), which broadcast to '
        "[3], but writes [2, 3]; select regions whose shapes agree or are 1 from the right, or "
        "give the tensors axes",
    ),
]


@pytest.mark.parametrize(
    ("nodes", "constraint", "message"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_each_refusal_is_an_error_issue_on_the_operation(
    nodes: list[dict[str, Any]], constraint: str, message: str
) -> None:
    # given a graph that the executor refuses (compile_run, or the run itself)
    g = _graph(*nodes)
    with pytest.raises(ExecutionError):
        run(g, seed=0)
    # when it is checked
    found = [i for i in check(g) if i.constraint == constraint]
    # then an error on the operation says what is wrong and the fix, naming it by label
    assert [i.message for i in found if i.message == message] == [message]
    issue = next(i for i in found if i.message == message)
    assert issue.severity == "error"
    assert issue.node_ids[0] == nodes[0]["id"]


def test_the_issue_21_palette_operation_reports_input_and_output() -> None:
    # given an op:add added from the palette with nothing connected
    g = _graph(_op("op:add", {}, {}, label="op:add"))
    # then every issue is an OperationPorts error on it: its input and its output
    found = check(g)
    assert [(i.constraint, i.severity, i.summary) for i in found] == [
        ("OperationPorts", "error", "Operation input is not connected"),
        ("OperationPorts", "error", "Operation writes no tensor"),
    ]


def test_a_complete_positional_graph_checks_clean_and_compiles() -> None:
    # given positional (loom) elementwise operations that broadcast right
    g = _graph(
        _op("op:add", {"tensors": [_sel(A), _sel(B)]}, {"result": [_sel(Z)]}),
        A,
        B,
        Z,
    )
    # then no issue, and the executor accepts it
    assert check(g) == []
    compile_run(g)


def test_a_named_operation_keeps_one_issue() -> None:
    # given a named op:subtract that lost its "y" input
    H, W = gc.Axis("H", 2), gc.Axis("W", 3)
    built = gc.graph([gc.subtract(gc.placeholder(axes=[H, W]), gc.placeholder(axes=[W]))])
    doc = built.to_json()
    op = next(n for n in doc["nodes"] if n["type"] == OPERATION)
    op["body"]["inputs"].pop("y")
    g = Graph.from_json(doc)
    # then OperationAxesInference reports the missing input, and OperationPorts stays silent
    found = [i.constraint for i in check(g)]
    assert "OperationAxesInference" in found
    assert "OperationPorts" not in found and "PositionalKernelAgreement" not in found


def _sharded_positional_add(keep_signature: bool) -> tuple[str, dict[str, Any]]:
    """A positional (loom) op:add of x[2, 4] with itself in two shards along its last dim,
    checking clean: its id and document (its tags dropped, or all but its IPFSignature)."""
    H, W = gc.Axis("H", 2), gc.Axis("W", 4)
    x = gc.constant(np.ones((2, 4)), axes=[H, W], name="x")
    built = gc.graph([gc.add(x, x, name="x+x")])
    op_id = next(n.id for n in built.nodes if n.type == OPERATION)
    shard(built, op_id, dim="W", parts=2)
    doc = built.to_json()
    for n in doc["nodes"]:
        if n["type"] == TENSOR:
            n["tags"].pop(TENSOR_AXES)
        if n["type"] == OPERATION and keep_signature:
            n["tags"].pop(INDEX_AXES, None)
        elif n["type"] == OPERATION:
            n.pop("tags", None)
    assert check(Graph.from_json(copy.deepcopy(doc))) == []
    return op_id, doc


def test_a_sharded_positional_operation_is_checked_per_application() -> None:
    # given a positional (loom) op:add in two shards along its last dim
    op_id, doc = _sharded_positional_add(keep_signature=False)
    # when one application reads shapes that do not broadcast (still inside the operation's)
    app = next(n for n in doc["nodes"] if n["type"] == APPLICATION)
    app["body"]["inputs"]["tensors"][1]["range"] = {"start": [0, 0], "end": [2, 3]}
    g = Graph.from_json(doc)
    # then the sharded run is refused, and the check says so on the operation and application
    with pytest.raises(ExecutionError):
        compile_run(g, sharded=True)
    found = [i for i in check(g) if i.constraint == "PositionalKernelAgreement"]
    assert [(i.node_ids, i.severity) for i in found] == [((op_id, app["id"]), "error")]
    assert "reads shapes ([2, 2], [2, 3]), which do not broadcast together" in found[0].message


def test_applications_are_judged_where_the_signature_is_not_pointwise() -> None:
    # given the sharded positional op:add above, its signature kept (pointwise: every agreeing
    # application broadcasts, so none need reading), then the second operand made to read its
    # whole row at every index point (a zero row of shape 4: still the operation's selection)
    _, doc = _sharded_positional_add(keep_signature=True)
    op = next(n for n in doc["nodes"] if n["type"] == OPERATION)
    ipf = op["tags"][IPF_SIGNATURE]["inputs"]["tensors"][1]
    ipf["affineMap"]["projection"][1] = [0, 0]
    ipf["shape"][1] = 4
    for app in (n for n in doc["nodes"] if n["type"] == APPLICATION):
        app["body"]["inputs"]["tensors"][1]["range"]["start"][1] = 0
        app["body"]["inputs"]["tensors"][1]["range"]["end"][1] = 4
    g = Graph.from_json(doc)
    # then each application, which agrees with it, is refused by the executor and reported
    with pytest.raises(ExecutionError):
        compile_run(g, sharded=True)
    found = [i for i in check(g) if i.constraint == "PositionalKernelAgreement"]
    assert len(found) == 2 and all(len(i.node_ids) == 2 for i in found)
    assert "reads shapes ([2, 2], [2, 4])" in found[0].message


def test_the_incremental_checker_agrees_with_a_full_check() -> None:
    # given the palette operation, then its inputs and output connected one edit at a time
    g = _graph(A, B, Z)
    ic = IncrementalChecker(g)
    op = _op("op:add", {}, {}, label="add_1")
    steps = [
        [{"op": "add_node", "node": op}],
        [{"op": "update_node", "id": op["id"], "body": {"inputs": {"tensors": [_sel(A)]}}}],
        [
            {
                "op": "update_node",
                "id": op["id"],
                "body": {"inputs": {"tensors": [_sel(A), _sel(B)]}},
            }
        ],
        [{"op": "update_node", "id": op["id"], "body": {"outputs": {"result": [_sel(Z)]}}}],
    ]
    counts = []
    for ops in steps:
        got = ic.apply(ops)
        assert got == check(g)
        counts.append(len(got))
    # then the issues go from two to none as the operation is connected
    assert counts == [2, 2, 1, 0]
