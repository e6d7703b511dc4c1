"""Every constraint of DESIGN.md §5 that concerns loom documents, on the loom example and on
mutations of it: each case asserts the exact constraint, summary and node ids of every issue."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from geon.core.checks import all_constraints, check, check_document, coverage
from geon.core.checks import axes as axis_checks
from geon.core.checks import fastpath as constraints_module
from geon.core.graph import (
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    MESH,
    NOTE,
    OPERATION,
    PLACEMENT,
    TENSOR,
    TENSOR_AXES,
    Graph,
    GraphIndex,
    Node,
)
from geon.core.issues import Constraint, Issue
from geon.core.zspace import ZRange

OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
A1, A2 = ("2524fb44-d169-4afd-90fa-09711462e4b3", "2af709e2-c792-4712-80cc-0624ee767115")
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"
Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"
M = "00000000-0000-4000-8000-00000000000a"
N9 = "00000000-0000-4000-8000-000000000009"
Doc = dict[str, Any]
Triple = tuple[str, str, list[str]]


# -- mutations of the loom example -----------------------------------------------------------


def node(d: Doc, node_id: str) -> dict[str, Any]:
    return next(n for n in d["nodes"] if n["id"] == node_id)


def sel(d: Doc, node_id: str, side: str, pos: int) -> dict[str, Any]:
    key = "tensors" if side == "inputs" else "result"
    item: dict[str, Any] = node(d, node_id)["body"][side][key][pos]
    return item


def rng(start: list[int], end: list[int]) -> dict[str, list[int]]:
    return {"start": start, "end": end}


def set_rows(d: Doc, app: str, a: int, b: int) -> None:
    """Make application ``app`` the shard of rows a..b of the example's op (consistently)."""
    n = node(d, app)
    n["tags"][IPF_INDEX] = rng([a, 0], [b, 5])
    n["body"]["inputs"]["tensors"][0]["range"] = rng([a, 0], [b, 5])
    n["body"]["inputs"]["tensors"][1]["range"] = rng([200 + a, 50], [200 + b, 55])
    n["body"]["outputs"]["result"][0]["range"] = rng([a, 0], [b, 5])


def unsigned(drop: str | None) -> Callable[[Doc], None]:
    """The example without an IPFSignature and without the applications' IPFIndex tags (as
    loom allows: only signed operations need them), then without application ``drop``."""

    def mutate(d: Doc) -> None:
        node(d, OP)["tags"].pop(IPF_SIGNATURE)
        for app in (A1, A2):
            node(d, app)["tags"].pop(IPF_INDEX)
        if drop is not None:
            d["nodes"].remove(node(d, drop))

    return mutate


def gap_and_overlap_of_equal_size(d: Doc) -> None:
    # [0:4] + [3:7] + [8:10] rows: 20 + 20 + 10 = 50 cells, the output's size, yet row 3 is
    # written twice and row 7 never (loom, summing sizes, sees nothing wrong)
    set_rows(d, A1, 0, 4)
    set_rows(d, A2, 3, 7)
    extra = copy.deepcopy(node(d, A1))
    extra["id"] = N9
    d["nodes"].append(extra)
    set_rows(d, N9, 8, 10)


def placed(coords1: list[int], coords2: list[int], mesh: str = M) -> Callable[[Doc], None]:
    def mutate(d: Doc) -> None:
        d["nodes"].append(
            {"id": M, "type": MESH, "body": {"name": "gpus", "axes": {"x": 2, "y": 1}}}
        )
        node(d, A1)["tags"][PLACEMENT] = {"mesh": mesh, "coords": coords1}
        node(d, A2)["tags"][PLACEMENT] = {"mesh": mesh, "coords": coords2}

    return mutate


def signature(d: Doc, side: str, pos: int) -> dict[str, Any]:
    key = "tensors" if side == "inputs" else "result"
    item: dict[str, Any] = node(d, OP)["tags"][IPF_SIGNATURE][side][key][pos]
    return item


MUTATIONS: dict[str, Callable[[Doc], Any]] = {
    # SchemaConformance
    "node-id-not-uuid": lambda d: d["nodes"].append(
        {"id": "n1", "type": NOTE, "body": {"message": "m"}}
    ),
    "document-id-not-uuid": lambda d: d.update(id="doc"),
    "body-missing-field": lambda d: node(d, T1)["body"].pop("dtype"),
    "body-wrong-type": lambda d: node(d, T1)["body"]["range"].update(start=[200, "50"]),
    "tag-malformed": lambda d: node(d, A2)["tags"].update({IPF_INDEX: {"start": [0, 0]}}),
    "range-start-after-end": lambda d: node(d, Z)["body"]["range"].update(start=[11, 0]),
    "range-rank-mismatch": lambda d: node(d, Z)["body"]["range"].update(start=[0, 0, 0]),
    "unknown-node-type": lambda d: d["nodes"].append({"id": N9, "type": "urn:x:Thing", "body": {}}),
    "selection-bad-uuid": lambda d: sel(d, OP, "inputs", 0).update(tensorId="t0"),
    # TensorDTypesAreValid
    "dtype-invalid": lambda d: node(d, T1)["body"].update(dtype="int31"),
    # TensorOperationAgreement
    "op-missing-tensor": lambda d: sel(d, OP, "inputs", 0).update(tensorId=N9),
    "op-ref-not-tensor": lambda d: sel(d, OP, "outputs", 0).update(tensorId=A1),
    "op-selection-out-of-bounds": lambda d: node(d, Z)["body"]["range"].update(end=[9, 5]),
    "op-selection-rank": lambda d: node(d, Z)["body"].update(range=rng([0, 0, 0], [10, 5, 1])),
    "two-producers": lambda d: d["nodes"].append(
        {
            "id": N9,
            "type": OPERATION,
            "body": {
                "kernel": "op:negative",
                "outputs": {"result": [{"tensorId": Z, "range": rng([0, 0], [10, 5])}]},
            },
        }
    ),
    # OperationIPFSignatureAgreement
    "sig-offset": lambda d: signature(d, "inputs", 1)["affineMap"].update(offset=[0, 0]),
    "sig-missing-key": lambda d: node(d, OP)["tags"][IPF_SIGNATURE].update(outputs={}),
    "sig-count": lambda d: node(d, OP)["tags"][IPF_SIGNATURE]["inputs"]["tensors"].pop(),
    "sig-rows": lambda d: signature(d, "outputs", 0).update(
        {
            "affineMap": {"projection": [[1, 0], [0, 1], [0, 0]], "offset": [0, 0, 0]},
            "shape": [1, 1, 1],
        }
    ),
    "sig-cols": lambda d: signature(d, "outputs", 0).update(
        {"affineMap": {"projection": [[1], [0]], "offset": [0, 0]}, "shape": [1, 1]}
    ),
    "sig-ragged": lambda d: signature(d, "outputs", 0)["affineMap"].update(
        projection=[[1, 0], [0]]
    ),
    "sig-no-index": lambda d: node(d, OP)["tags"].pop(IPF_INDEX),
    # OperationApplicationAgreement
    "app-missing-op": lambda d: node(d, A1)["body"].update(operationId=N9),
    "app-op-not-operation": lambda d: node(d, A1)["body"].update(operationId=T0),
    "app-keys": lambda d: node(d, A1)["body"].update(
        inputs={"x": node(d, A1)["body"]["inputs"]["tensors"]}
    ),
    "app-count": lambda d: node(d, A1)["body"]["inputs"]["tensors"].pop(),
    "app-tensor": lambda d: sel(d, A1, "inputs", 1).update(tensorId=T0),
    "app-selection-outside": lambda d: sel(d, A1, "inputs", 1)["range"].update(end=[211, 55]),
    "app-index-outside": lambda d: node(d, A1)["tags"][IPF_INDEX].update(end=[11, 5]),
    "apps-do-not-span": lambda d: d["nodes"].remove(node(d, A1)),
    # ApplicationIPFSignatureAgreement
    "app-no-index": lambda d: node(d, A1)["tags"].pop(IPF_INDEX),
    "app-selection-not-projection": lambda d: sel(d, A1, "inputs", 0)["range"].update(end=[10, 4]),
    "op-no-signature": lambda d: node(d, OP)["tags"].pop(IPF_SIGNATURE),
    "unsigned-apps-without-index": unsigned(drop=None),
    "unsigned-apps-do-not-span": unsigned(drop=A1),
    # ApplicationOutputRangeCoverageIsExact
    "coverage-gap-and-overlap-same-size": gap_and_overlap_of_equal_size,
    "coverage-overlap-only": lambda d: set_rows(d, A1, 4, 10),
    # PlanPlacement
    "placement-ok": placed([0, 0], [1, 0]),
    "placement-outside": placed([0, 0], [2, 0]),
    "placement-rank": placed([0, 0], [1]),
    "placement-missing-mesh": placed([0, 0], [1, 0], mesh=N9),
    "placement-not-mesh": placed([0, 0], [1, 0], mesh=T0),
}

EXPECTED: list[tuple[str, list[Triple]]] = [
    (
        "node-id-not-uuid",
        [
            ("SchemaConformance", "Node id is not a UUID", ["n1"]),
        ],
    ),
    (
        "document-id-not-uuid",
        [
            ("SchemaConformance", "Document id is not a UUID", []),
        ],
    ),
    (
        "body-missing-field",
        [
            ("SchemaConformance", "Node body does not match its schema", [T1]),
        ],
    ),
    (
        "body-wrong-type",
        [
            ("SchemaConformance", "Node body does not match its schema", [T1]),
        ],
    ),
    (
        "tag-malformed",
        [
            ("SchemaConformance", "Tag value does not match its schema", [A2]),
        ],
    ),
    (
        "range-start-after-end",
        [
            ("SchemaConformance", "Range is invalid", [Z]),
        ],
    ),
    (
        "range-rank-mismatch",
        [
            ("SchemaConformance", "Range is invalid", [Z]),
        ],
    ),
    (
        "unknown-node-type",
        [
            ("SchemaConformance", "Unknown node type", [N9]),
        ],
    ),
    (
        "selection-bad-uuid",
        [
            ("SchemaConformance", "Node body does not match its schema", [OP]),
        ],
    ),
    (
        "dtype-invalid",
        [
            ("TensorDTypesAreValid", "Tensor dtype is not valid", [T1]),
        ],
    ),
    (
        "op-missing-tensor",
        [
            (
                "OperationApplicationAgreement",
                "Application tensor does not match the operation's",
                [A1, OP],
            ),
            ("TensorOperationAgreement", "Referenced node does not exist", [OP]),
            (
                "OperationApplicationAgreement",
                "Application tensor does not match the operation's",
                [A2, OP],
            ),
        ],
    ),
    (
        "op-ref-not-tensor",
        [
            (
                "OperationApplicationAgreement",
                "Application tensor does not match the operation's",
                [A1, OP],
            ),
            ("TensorOperationAgreement", "Referenced node is not a Tensor", [OP, A1]),
            (
                "OperationApplicationAgreement",
                "Application tensor does not match the operation's",
                [A2, OP],
            ),
        ],
    ),
    (
        "op-selection-out-of-bounds",
        [
            ("TensorOperationAgreement", "Selection is out of the tensor's bounds", [OP, Z]),
        ],
    ),
    (
        "op-selection-rank",
        [
            ("TensorOperationAgreement", "Selection rank does not match the tensor", [OP, Z]),
        ],
    ),
    (
        "two-producers",
        [
            (
                "TensorOperationAgreement",
                "Tensor is written by more than one operation",
                [Z, OP, N9],
            ),
            ("OperationPorts", "Operation input is not connected", [N9]),  # issue 21
        ],
    ),
    (
        "sig-offset",
        [
            (
                "ApplicationIPFSignatureAgreement",
                "Application selection does not match its projected index",
                [A1, OP],
            ),
            ("OperationIPFSignatureAgreement", "IPF projection does not match the selection", [OP]),
            (
                "ApplicationIPFSignatureAgreement",
                "Application selection does not match its projected index",
                [A2, OP],
            ),
        ],
    ),
    (
        "sig-missing-key",
        [
            (
                "OperationIPFSignatureAgreement",
                "IPFSignature keys do not match the operation's",
                [OP],
            ),
        ],
    ),
    (
        "sig-count",
        [
            (
                "OperationIPFSignatureAgreement",
                "IPFSignature keys do not match the operation's",
                [OP],
            ),
        ],
    ),
    (
        "sig-rows",
        [
            ("OperationIPFSignatureAgreement", "IPF rank does not match the selection", [OP]),
        ],
    ),
    (
        "sig-cols",
        [
            ("OperationIPFSignatureAgreement", "IPF rank does not match the index", [OP]),
        ],
    ),
    (
        "sig-ragged",
        [
            ("OperationIPFSignatureAgreement", "IPF is malformed", [OP]),
        ],
    ),
    (
        "sig-no-index",
        [
            (
                "OperationIPFSignatureAgreement",
                "Operation has an IPFSignature but no IPFIndex",
                [OP],
            ),
        ],
    ),
    (
        "app-missing-op",
        [
            ("OperationApplicationAgreement", "Referenced node does not exist", [A1]),
            (
                "OperationApplicationAgreement",
                "Applications do not span the operation's index range",
                [OP],
            ),
            ("ApplicationOutputRangeCoverageIsExact", "Application outputs leave a gap", [OP]),
        ],
    ),
    (
        "app-op-not-operation",
        [
            ("OperationApplicationAgreement", "Referenced node is not an Operation", [A1, T0]),
            (
                "OperationApplicationAgreement",
                "Applications do not span the operation's index range",
                [OP],
            ),
            ("ApplicationOutputRangeCoverageIsExact", "Application outputs leave a gap", [OP]),
        ],
    ),
    (
        "app-keys",
        [
            (
                "OperationApplicationAgreement",
                "Application keys do not match the operation's",
                [A1, OP],
            ),
        ],
    ),
    (
        "app-count",
        [
            (
                "OperationApplicationAgreement",
                "Application keys do not match the operation's",
                [A1, OP],
            ),
        ],
    ),
    (
        "app-tensor",
        [
            (
                "OperationApplicationAgreement",
                "Application tensor does not match the operation's",
                [A1, OP],
            ),
        ],
    ),
    (
        "app-selection-outside",
        [
            (
                "OperationApplicationAgreement",
                "Application selection is outside the operation's",
                [A1, OP],
            ),
            (
                "ApplicationIPFSignatureAgreement",
                "Application selection does not match its projected index",
                [A1, OP],
            ),
        ],
    ),
    (
        "app-index-outside",
        [
            (
                "OperationApplicationAgreement",
                "Application index is outside the operation's",
                [A1, OP],
            ),
            # the inputs read the projection [205:211, 50:55] clipped to their tensors, which is
            # what they select; the output must be the projection itself
            (
                "ApplicationIPFSignatureAgreement",
                "Application selection does not match its projected index",
                [A1, OP],
            ),
            (
                "OperationApplicationAgreement",
                "Applications do not span the operation's index range",
                [OP],
            ),
        ],
    ),
    (
        "apps-do-not-span",
        [
            (
                "OperationApplicationAgreement",
                "Applications do not span the operation's index range",
                [OP],
            ),
            ("ApplicationOutputRangeCoverageIsExact", "Application outputs leave a gap", [OP]),
        ],
    ),
    (
        "app-no-index",
        [
            ("ApplicationIPFSignatureAgreement", "Application has no IPFIndex", [A1, OP]),
        ],
    ),
    (
        "app-selection-not-projection",
        [
            (
                "ApplicationIPFSignatureAgreement",
                "Application selection does not match its projected index",
                [A1, OP],
            ),
        ],
    ),
    # as in loom, the applications of an operation without an IPFSignature are judged by their
    # selections alone: they need no IPFIndex, and must span the operation's selections
    ("op-no-signature", []),
    ("unsigned-apps-without-index", []),
    (
        "unsigned-apps-do-not-span",
        [
            (
                "OperationApplicationAgreement",
                "Applications do not span the operation's selection",
                [OP],
            ),
            (
                "OperationApplicationAgreement",
                "Applications do not span the operation's selection",
                [OP],
            ),
            (
                "OperationApplicationAgreement",
                "Applications do not span the operation's selection",
                [OP],
            ),
            ("ApplicationOutputRangeCoverageIsExact", "Application outputs leave a gap", [OP]),
        ],
    ),
    (
        "coverage-gap-and-overlap-same-size",
        [
            ("ApplicationOutputRangeCoverageIsExact", "Application outputs leave a gap", [OP]),
            ("ApplicationOutputRangeCoverageIsExact", "Application outputs overlap", [OP, A1, A2]),
        ],
    ),
    (
        "coverage-overlap-only",
        [
            ("ApplicationOutputRangeCoverageIsExact", "Application outputs overlap", [OP, A1, A2]),
        ],
    ),
    ("placement-ok", []),
    (
        "placement-outside",
        [
            ("PlanPlacement", "Placement coordinates are outside the mesh", [A2, M]),
        ],
    ),
    (
        "placement-rank",
        [
            ("PlanPlacement", "Placement coordinates do not match the mesh", [A2, M]),
        ],
    ),
    (
        "placement-missing-mesh",
        [
            ("PlanPlacement", "Referenced node does not exist", [A1]),
            ("PlanPlacement", "Referenced node does not exist", [A2]),
        ],
    ),
    (
        "placement-not-mesh",
        [
            ("PlanPlacement", "Referenced node is not a Mesh", [A1, T0]),
            ("PlanPlacement", "Referenced node is not a Mesh", [A2, T0]),
        ],
    ),
]


def triples(issues: list[Issue]) -> list[Triple]:
    return [(i.constraint, i.summary, list(i.node_ids)) for i in issues]


def mutated(base: Doc, name: str) -> Doc:
    d = copy.deepcopy(base)
    MUTATIONS[name](d)
    return d


# -- the loom example ------------------------------------------------------------------------


def test_the_loom_example_checks_clean(loom_doc: Doc, loom_text: str) -> None:
    assert check(Graph.from_json(loom_doc)) == []
    assert check_document(loom_text) == []
    assert Graph.from_json(loom_doc).check() == []


def test_every_mutation_has_an_expected_issue_list() -> None:
    assert [name for name, _ in EXPECTED] == list(MUTATIONS)


@pytest.mark.parametrize(("name", "expected"), EXPECTED, ids=[n for n, _ in EXPECTED])
def test_constraint_cases(loom_doc: Doc, name: str, expected: list[Triple]) -> None:
    # given the loom example with one thing changed
    graph = Graph.from_json(mutated(loom_doc, name))
    # when checked; then exactly these issues come back, in this order
    assert triples(check(graph)) == expected


def test_every_loom_constraint_is_exercised() -> None:
    names = {c for _, exp in EXPECTED for c, _, _ in exp}
    assert names >= {
        "SchemaConformance",
        "TensorDTypesAreValid",
        "TensorOperationAgreement",
        "OperationIPFSignatureAgreement",
        "OperationApplicationAgreement",
        "ApplicationIPFSignatureAgreement",
        "ApplicationOutputRangeCoverageIsExact",
        "PlanPlacement",
    }


# -- messages, params and contexts -----------------------------------------------------------

MESSAGES = [
    (
        "node-id-not-uuid",
        0,
        'node id "n1" is not a UUID; expected the form '
        '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)',
    ),
    (
        "document-id-not-uuid",
        0,
        'document id "doc" is not a UUID; expected the form '
        '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)',
    ),
    (
        "body-missing-field",
        0,
        f'node "{T1}" body: field "dtype" is missing; expected it to be present',
    ),
    (
        "body-wrong-type",
        0,
        f'node "{T1}" body.range.start[1]: value "50" is a string; expected integer',
    ),
    (
        "tag-malformed",
        0,
        f'node "{A2}" tag "{IPF_INDEX}": field "end" is missing; expected it to be present',
    ),
    (
        "range-start-after-end",
        0,
        f'node "{Z}": range has start "[11, 0]" after end "[10, 5]" '
        "in dim 0; expected start <= end",
    ),
    (
        "range-rank-mismatch",
        0,
        f'node "{Z}": range has start "[0, 0, 0]" of rank 3 and end '
        '"[10, 5]" of rank 2; expected equal ranks',
    ),
    (
        "unknown-node-type",
        0,
        f'node "{N9}" has type "urn:x:Thing", which geon does not know; it is kept but not checked',
    ),
    (
        "dtype-invalid",
        0,
        f'tensor "{T1}" has dtype "int31"; expected one of ("boolean", "int8", '
        '"int16", "int32", "int64", "uint8", "float16", "float32", "float64", "complex64", '
        '"complex128")',
    ),
    (
        "op-missing-tensor",
        1,
        f'node "{OP}" references a Tensor "{N9}", which does not exist; '
        "expected the id of a Tensor in this graph",
    ),
    (
        "op-ref-not-tensor",
        1,
        f'node "{OP}" references "{A1}", which is "Application"; expected a Tensor',
    ),
    (
        "op-selection-out-of-bounds",
        0,
        f'operation "{OP}" selects "[0:10, 0:5]" of tensor "{Z}", '
        'which spans "[0:9, 0:5]"; expected a range inside it',
    ),
    (
        "op-selection-rank",
        0,
        f'operation "{OP}" selects "[0:10, 0:5]" of rank 2 in tensor '
        f'"{Z}" of rank 3; expected a range of rank 3',
    ),
    (
        "two-producers",
        0,
        f'tensor "{Z}" is written by operations "{OP}", "{N9}"; expected at most one producer',
    ),
    (
        "sig-offset",
        1,
        f'operation "{OP}" IPF for inputs "tensors"[1] maps the index range '
        f'"[0:10, 0:5]" to "[0:10, 0:5]", which misses tensor "{T1}" at "[200:210, 50:55]"; '
        'expected the selection "[200:210, 50:55]"',
    ),
    (
        "sig-missing-key",
        0,
        f'operation "{OP}" has outputs keys ("result") but its IPFSignature '
        "has (); expected the same keys",
    ),
    (
        "sig-count",
        0,
        f'operation "{OP}" has 2 selections for inputs "tensors" but its '
        "IPFSignature has 1; expected one IPF per selection",
    ),
    (
        "sig-rows",
        0,
        f'operation "{OP}" IPF for outputs "result"[0] has 3 rows; expected 2, the '
        'rank of the selection "[0:10, 0:5]"',
    ),
    (
        "sig-cols",
        0,
        f'operation "{OP}" IPF for outputs "result"[0] has 1 columns; expected 2, '
        'the rank of the index range "[0:10, 0:5]"',
    ),
    (
        "sig-ragged",
        0,
        f'operation "{OP}" IPF for outputs "result"[0]: projection "[[1, 0], [0]]" '
        "has rows of lengths [1, 2]; expected every row to have the same length",
    ),
    (
        "sig-no-index",
        0,
        f'operation "{OP}" has an IPFSignature but neither an IPFIndex tag nor '
        "IndexAxes with bound lengths; expected an IPFIndex giving its index range",
    ),
    (
        "app-missing-op",
        0,
        f'node "{A1}" references an Operation "{N9}", which does not exist; '
        "expected the id of an Operation in this graph",
    ),
    (
        "app-op-not-operation",
        0,
        f'node "{A1}" references "{T0}", which is "Tensor"; expected an Operation',
    ),
    (
        "app-keys",
        0,
        f'application "{A1}" has inputs keys ("x"); expected ("tensors") like its operation "{OP}"',
    ),
    (
        "app-count",
        0,
        f'application "{A1}" has 1 selections for inputs "tensors"; expected 2 like '
        f'its operation "{OP}"',
    ),
    (
        "app-tensor",
        0,
        f'application "{A1}" selects tensor "{T0}" at body.inputs.tensors[1]; '
        f'expected "{T1}" like its operation "{OP}"',
    ),
    (
        "app-selection-outside",
        0,
        f'application "{A1}" selects "[205:211, 50:55]" of tensor '
        f'"{T1}"; expected a range inside "[200:210, 50:55]", the selection of its operation '
        f'"{OP}"',
    ),
    (
        "app-index-outside",
        0,
        f'application "{A1}" has index range "[5:11, 0:5]"; expected a '
        f'range inside "[0:10, 0:5]", the index range of its operation "{OP}"',
    ),
    (
        "apps-do-not-span",
        0,
        f'the applications of operation "{OP}" span "[0:5, 0:5]"; expected '
        'its index range "[0:10, 0:5]"',
    ),
    (
        "app-no-index",
        0,
        f'application "{A1}" has no IPFIndex tag; expected the index range of its shard, since '
        f'its operation "{OP}" has an IPFSignature',
    ),
    (
        "app-selection-not-projection",
        0,
        f'application "{A1}" selects "[5:10, 0:4]" for inputs '
        '"tensors"[0]; expected "[5:10, 0:5]", the projection of its index range "[5:10, 0:5]"',
    ),
    (
        "unsigned-apps-do-not-span",
        2,
        f'the applications of operation "{OP}" select "[0:5, 0:5]" of outputs "result"[0] '
        f'(tensor "{Z}") in all, their shard bounding range; expected the operation\'s '
        'selection "[0:10, 0:5]"',
    ),
    (
        "coverage-gap-and-overlap-same-size",
        0,
        f'the applications of operation "{OP}" leave 5 '
        f'cells of outputs "result"[0] (tensor "{Z}") unwritten: [7:8, 0:5]; expected them to '
        'cover "[0:10, 0:5]" exactly',
    ),
    (
        "coverage-gap-and-overlap-same-size",
        1,
        f'applications "{A1}" and "{A2}" of operation '
        f'"{OP}" both write "[3:4, 0:5]" (5 cells) of outputs "result"[0] (tensor "{Z}"); '
        "expected each cell to be written once",
    ),
    (
        "placement-outside",
        0,
        f'node "{A2}" is placed at "[2, 0]"; coordinate 2 of mesh axis "x" '
        f'is outside 0..1 of mesh "{M}"',
    ),
    (
        "placement-rank",
        0,
        f'node "{A2}" is placed at "[1]" of mesh "{M}", which has 2 axes '
        '("x", "y"); expected 2 coordinates',
    ),
    (
        "placement-missing-mesh",
        0,
        f'node "{A1}" references a Mesh "{N9}", which does not exist; '
        "expected the id of a Mesh in this graph",
    ),
    ("placement-not-mesh", 0, f'node "{A1}" references "{T0}", which is "Tensor"; expected a Mesh'),
]


@pytest.mark.parametrize(
    ("name", "position", "message"), MESSAGES, ids=[f"{n}-{p}" for n, p, _ in MESSAGES]
)
def test_issue_messages_name_the_values(
    loom_doc: Doc, name: str, position: int, message: str
) -> None:
    issues = check(Graph.from_json(mutated(loom_doc, name)))
    assert issues[position].message == message


def test_issue_json_has_the_design_shape(loom_doc: Doc) -> None:
    # given an operation referencing a tensor that does not exist
    issues = check(Graph.from_json(mutated(loom_doc, "op-missing-tensor")))
    # then the issue serialises exactly as DESIGN.md §5 shows
    assert issues[1].to_json() == {
        "constraint": "TensorOperationAgreement",
        "type": "NodeReferenceError",
        "severity": "error",
        "summary": "Referenced node does not exist",
        "message": f'node "{OP}" references a Tensor "{N9}", which does not exist; expected the '
        "id of a Tensor in this graph",
        "params": {"nodeId": N9},
        "nodeIds": [OP],
        "contexts": [
            {"name": "Reference", "jsonpath": f"$.nodes['{OP}'].body.inputs.tensors[0]", "data": N9}
        ],
    }


def test_coverage_issue_params_list_the_gap_and_overlap(loom_doc: Doc) -> None:
    issues = check(Graph.from_json(mutated(loom_doc, "coverage-gap-and-overlap-same-size")))
    assert issues[0].params == {
        "tensorId": Z,
        "key": "result",
        "position": 0,
        "cells": 5,
        "gaps": [{"start": [7, 0], "end": [8, 5]}],
    }
    assert issues[1].params == {
        "tensorId": Z,
        "key": "result",
        "position": 0,
        "cells": 5,
        "overlap": {"start": [3, 0], "end": [4, 5]},
    }
    assert [c.jsonpath for c in issues[1].contexts] == [
        f"$.nodes['{A1}'].body.outputs.result[0].range",
        f"$.nodes['{A2}'].body.outputs.result[0].range",
    ]


def test_unknown_node_type_is_only_a_warning(loom_doc: Doc) -> None:
    issues = check(Graph.from_json(mutated(loom_doc, "unknown-node-type")))
    assert [i.severity for i in issues] == ["warning"]


def test_schema_issue_path_and_context(loom_doc: Doc) -> None:
    issues = check(Graph.from_json(mutated(loom_doc, "body-wrong-type")))
    assert issues[0].params == {"path": ".body.range.start[1]"}
    assert issues[0].contexts[0].jsonpath == f"$.nodes['{T1}'].body.range.start[1]"
    assert issues[0].contexts[0].data == "50"


# -- coverage arithmetic ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "shards", "gaps", "overlaps"),
    [
        (ZRange([0], [10]), [ZRange([0], [5]), ZRange([5], [10])], [], []),
        (ZRange([0], [10]), [ZRange([0], [6]), ZRange([4], [8])], ["[8:10]"], [(0, 1, "[4:6]")]),
        (
            ZRange([0, 0], [4, 4]),
            [ZRange([0, 0], [2, 4]), ZRange([2, 0], [4, 2])],
            ["[2:4, 2:4]"],
            [],
        ),
        (
            ZRange([0, 0], [4, 4]),
            [
                ZRange([0, 0], [2, 2]),
                ZRange([2, 2], [4, 4]),
                ZRange([0, 2], [2, 4]),
                ZRange([2, 0], [4, 2]),
            ],
            [],
            [],
        ),
        (
            ZRange([0, 0], [4, 4]),
            [ZRange([1, 1], [3, 3])],
            ["[0:1, 0:4]", "[1:3, 0:1]", "[1:3, 3:4]", "[3:4, 0:4]"],
            [],
        ),
        (
            ZRange([0, 0], [4, 4]),
            [ZRange([0, 0], [4, 4]), ZRange([0, 0], [4, 4])],
            [],
            [(0, 1, "[0:4, 0:4]")],
        ),
        (
            ZRange([0], [10**12]),
            [ZRange([0], [5 * 10**11]), ZRange([5 * 10**11], [10**12])],
            [],
            [],
        ),
        (
            ZRange([0], [10**12]),
            [ZRange([0], [5 * 10**11]), ZRange([5 * 10**11 + 1], [10**12])],
            ["[500000000000:500000000001]"],
            [],
        ),
    ],
    ids=[
        "exact",
        "gap-and-overlap",
        "2d-corner-gap",
        "2d-quadrants",
        "hole-ring",
        "duplicate",
        "huge-exact",
        "huge-one-cell-gap",
    ],
)
def test_coverage_is_cell_exact(
    target: ZRange, shards: list[ZRange], gaps: list[str], overlaps: list[tuple[int, int, str]]
) -> None:
    found = coverage(target, shards)
    assert [str(g) for g in found.gaps] == gaps
    assert [(i, j, str(r)) for i, j, r in found.overlaps] == overlaps
    assert (found.unlisted, found.complete) == (0, True)


# -- cycles ----------------------------------------------------------------------------------


def test_operations_in_a_cycle(doc: Any) -> None:
    # given a -> op1 -> b -> op2 -> a
    a = doc.tensor([0], [4])
    b = doc.tensor([0], [4])
    op1 = doc.op({"tensor": [a]}, {"result": [b]}, kernel="op:negative")
    op2 = doc.op({"tensor": [b]}, {"result": [a]}, kernel="op:negative")
    issues = check(doc.graph())
    assert triples(issues) == [
        ("NoTensorOperationCycles", "Operations and tensors form a cycle", [a, b, op1, op2])
    ]
    assert issues[0].params == {"operationIds": [op1, op2], "tensorIds": sorted([a, b])}
    assert issues[0].message == (
        f'operations and tensors "{a}", "{b}", "{op1}", "{op2}" depend on each other in a cycle; '
        "expected every tensor to be computed before the operations that read it"
    )


def test_operation_reading_its_own_output_is_a_cycle(doc: Any) -> None:
    a = doc.tensor([0], [4])
    op = doc.op({"tensor": [a]}, {"result": [a]}, kernel="op:negative")
    assert triples(check(doc.graph())) == [
        ("NoTensorOperationCycles", "Operations and tensors form a cycle", [a, op])
    ]


def test_a_cycle_past_an_acyclic_chain_is_found(doc: Any) -> None:
    # given s -> op0 -> a, and a cycle b -> op2 -> c -> op1 -> b that op1 also reads a into:
    # the nodes nothing depends on are peeled first, and the cycle must still be reported
    s, a, b, c = (doc.tensor([0], [4]) for _ in range(4))
    doc.op({"tensor": [s]}, {"result": [a]}, kernel="op:negative")
    op1 = doc.op({"tensors": [a, c]}, {"result": [b]})
    op2 = doc.op({"tensor": [b]}, {"result": [c]}, kernel="op:negative")
    issues = check(doc.graph())
    assert triples(issues) == [
        ("NoTensorOperationCycles", "Operations and tensors form a cycle", [b, c, op1, op2])
    ]


def test_a_chain_is_not_a_cycle(doc: Any) -> None:
    a, b, c = doc.tensor([0], [4]), doc.tensor([0], [4]), doc.tensor([0], [4])
    doc.op({"tensor": [a]}, {"result": [b]}, kernel="op:negative")
    doc.op({"tensors": [a, b]}, {"result": [c]})
    assert check(doc.graph()) == []


# -- index ranges from IndexAxes -------------------------------------------------------------


def test_index_range_comes_from_index_axes_when_there_is_no_ipf_index(doc: Any) -> None:
    # given an op whose index range is named by IndexAxes of declared lengths
    h = doc.add(
        {
            "id": "00000000-0000-4000-8000-0000000000a1",
            "type": AXIS,
            "body": {"name": "H", "length": 4},
        }
    )
    x = doc.tensor([0], [4], tags={TENSOR_AXES: {"axes": ["H"]}})
    y = doc.tensor([0], [4], tags={TENSOR_AXES: {"axes": ["H"]}})
    op = doc.op({"tensor": [x]}, {"result": [y]}, kernel="op:negative")
    opnode = doc.get(op)
    del opnode["tags"][IPF_INDEX]
    opnode["tags"][INDEX_AXES] = {"axes": ["H"]}
    g = doc.graph()
    mine = [i for i in check(g) if i.constraint not in {c.name for c in axis_checks.CONSTRAINTS}]
    assert mine == []
    # when the axis gets a different length; then the signature no longer projects onto y (x's
    # read, [0:5] clipped to x's [0:4], is still its selection: inputs may reach past a tensor)
    g.apply([{"op": "update_node", "id": h, "body": {"length": 5}}])
    found = [i for i in check(g) if i.constraint == "OperationIPFSignatureAgreement"]
    assert [(i.summary, i.params["side"]) for i in found] == [
        ("IPF projection does not match the selection", "outputs"),
    ]


# -- registry --------------------------------------------------------------------------------


def test_checker_runs_the_registered_axis_constraints(
    loom_doc: Doc, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given an extra constraint registered in axis_checks
    def flag_tensors(index: GraphIndex, n: Node) -> Iterator[Issue]:
        yield Issue("AxisDeclarations", "AxisError", "probe", "probe", node_ids=(n.id,))

    probe = Constraint("AxisDeclarations", frozenset({TENSOR}), flag_tensors)
    monkeypatch.setattr(axis_checks, "CONSTRAINTS", (*axis_checks.CONSTRAINTS, probe))
    # when checking; then it ran on every tensor, after the loom constraints
    assert probe in all_constraints()
    found = [i for i in check(Graph.from_json(loom_doc)) if i.summary == "probe"]
    assert [i.node_ids[0] for i in found] == [T1, T0, Z]


def test_a_failing_constraint_is_reported_not_raised(
    loom_doc: Doc, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(index: GraphIndex, n: Node) -> Iterator[Issue]:
        raise ValueError("boom")

    monkeypatch.setattr(
        axis_checks, "CONSTRAINTS", (Constraint("Broken", frozenset({OPERATION}), broken),)
    )
    assert [(i.constraint, i.summary, i.message) for i in check(Graph.from_json(loom_doc))] == [
        (
            "Broken",
            "Constraint failed to run",
            f'constraint "Broken" failed on node "{OP}": ValueError: boom',
        )
    ]


# -- malformed documents ---------------------------------------------------------------------

BAD_DOCUMENTS: list[tuple[str, Any, list[tuple[str, str]]]] = [
    (
        "not-json",
        '{"id": ',
        [
            (
                "Document is not valid JSON",
                "document is not valid JSON: Expecting value at line 1 column 8; "
                "expected a JSON object",
            )
        ],
    ),
    (
        "not-utf8",
        b"\xff\xfe",
        [
            (
                "Document is not valid JSON",
                "document is not UTF-8 text: byte 0 is invalid; expected JSON text",
            )
        ],
    ),
    (
        "array",
        "[1, 2]",
        [
            (
                "Document is malformed",
                'document is "[1, 2]"; expected a JSON object with "id" and "nodes"',
            )
        ],
    ),
    (
        "missing-nodes",
        '{"id": "00000000-0000-4000-8000-000000000000"}',
        [("Document is malformed", 'document has no "nodes"; expected a list of nodes')],
    ),
    (
        "missing-field",
        {"id": N9, "nodes": [{"id": M, "body": {}}]},
        [("Node is malformed", f'node "{M}" has no "type"; expected a type URL string')],
    ),
    (
        "non-uuid-id",
        {"id": N9, "nodes": [{"id": "abc", "type": NOTE, "body": {"message": "x"}}]},
        [
            (
                "Node id is not a UUID",
                'node id "abc" is not a UUID; expected the form '
                '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)',
            )
        ],
    ),
    (
        "start-after-end",
        {
            "id": N9,
            "nodes": [{"id": M, "type": TENSOR, "body": {"dtype": "int8", "range": rng([5], [2])}}],
        },
        [
            (
                "Range is invalid",
                f'node "{M}": range has start "[5]" after end "[2]" in dim 0; '
                "expected start <= end",
            )
        ],
    ),
    (
        "huge-rank",
        {
            "id": N9,
            "nodes": [
                {
                    "id": M,
                    "type": TENSOR,
                    "body": {"dtype": "int8", "range": rng([0] * 100_000, [1] * 100_000)},
                }
            ],
        },
        [
            (
                "Node body does not match its schema",
                f'node "{M}" body.range.end: has 100000 items; expected at most 64',
            ),
            (
                "Node body does not match its schema",
                f'node "{M}" body.range.start: has 100000 items; expected at most 64',
            ),
        ],
    ),
    (
        "huge-integer",
        '{"id": "x", "nodes": [], "n": ' + "9" * 5000 + "}",
        [
            (
                "Document is not valid JSON",
                "document cannot be read as JSON: Exceeds the limit (4300 digits) for integer "
                "string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to "
                "increase the limit; expected a JSON object",
            )
        ],
    ),
    (
        "deep-nesting",
        '{"id": "x", "nodes": [' + "[" * 100_000 + "]" * 100_000 + "]}",
        [
            (
                "Document is not valid JSON",
                "document cannot be read as JSON: maximum recursion depth exceeded while "
                "decoding a JSON array from a unicode string; expected a JSON object",
            )
        ],
    ),
    (
        "duplicate-id",
        {"id": N9, "nodes": [{"id": M, "type": NOTE, "body": {"message": "a"}}] * 2},
        [
            (
                "Node id appears twice",
                f'node 1 has id "{M}", which an earlier node already has; '
                "expected unique ids (the later node is ignored)",
            )
        ],
    ),
]


@pytest.mark.parametrize(
    ("data", "expected"),
    [(d, e) for _, d, e in BAD_DOCUMENTS],
    ids=[n for n, _, _ in BAD_DOCUMENTS],
)
def test_malformed_documents_give_issues_not_tracebacks(
    data: Any, expected: list[tuple[str, str]]
) -> None:
    assert [(i.summary, i.message) for i in check_document(data)] == expected


def test_check_document_still_checks_the_loadable_nodes(loom_doc: Doc) -> None:
    # given the example with one extra broken node
    loom_doc["nodes"].append({"id": N9, "type": NOTE})
    loom_doc["nodes"][0]["body"]["dtype"] = "int31"
    # then both the broken node and the bad dtype are reported
    assert [(i.constraint, i.summary) for i in check_document(json.dumps(loom_doc))] == [
        ("SchemaConformance", "Node is malformed"),
        ("TensorDTypesAreValid", "Tensor dtype is not valid"),
    ]


# -- the certified fast path changes nothing -------------------------------------------------


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_certified_applications_give_the_same_issues_as_the_long_way(
    loom_doc: Doc, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a mutated document checked with the fast path
    fast = check(Graph.from_json(mutated(loom_doc, name)))
    # when checked again with every application going the long way
    monkeypatch.setattr(constraints_module, "_certificate", lambda index, app: None)
    slow = check(Graph.from_json(mutated(loom_doc, name)))
    # then the issues are identical
    assert fast == slow


def test_applications_of_the_loom_example_are_certified(loom_doc: Doc) -> None:
    g = Graph.from_json(loom_doc)
    certs = [constraints_module._certificate(g.index, g.node(a)) for a in (A1, A2)]
    assert [str(c.ipf_index) for c in certs if c is not None] == ["[5:10, 0:5]", "[0:5, 0:5]"]
    # and an application whose selection is off is not
    bad = mutated(loom_doc, "app-selection-not-projection")
    g = Graph.from_json(bad)
    assert constraints_module._certificate(g.index, g.node(A1)) is None


# -- padded reads: an input's projection is clipped to its tensor; outputs stay exact ---------

PX, PY = "00000000-0000-4000-8000-0000000000b1", "00000000-0000-4000-8000-0000000000b2"
POP = "00000000-0000-4000-8000-0000000000b3"
PA1, PA2 = "00000000-0000-4000-8000-0000000000b4", "00000000-0000-4000-8000-0000000000b5"


def padded_doc() -> Doc:
    """x [0:2, 0:6] padded by one row on each side into y [0:4, 0:6], in two shards."""
    whole_y = rng([0, 0], [4, 6])

    def ipf(offset: list[int]) -> dict[str, Any]:
        return {"affineMap": {"projection": [[1, 0], [0, 1]], "offset": offset}, "shape": [1, 1]}

    def app(app_id: str, rows: tuple[int, int], reads: tuple[int, int]) -> dict[str, Any]:
        return {
            "id": app_id,
            "type": "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Application",
            "body": {
                "operationId": POP,
                "inputs": {
                    "tensor": [{"tensorId": PX, "range": rng([reads[0], 0], [reads[1], 6])}]
                },
                "outputs": {"result": [{"tensorId": PY, "range": rng([rows[0], 0], [rows[1], 6])}]},
            },
            "tags": {IPF_INDEX: rng([rows[0], 0], [rows[1], 6])},
        }

    return {
        "id": "00000000-0000-4000-8000-0000000000b0",
        "nodes": [
            {"id": PX, "type": TENSOR, "body": {"dtype": "float32", "range": rng([0, 0], [2, 6])}},
            {"id": PY, "type": TENSOR, "body": {"dtype": "float32", "range": whole_y}},
            {
                "id": POP,
                "type": OPERATION,
                "body": {
                    "kernel": "my:pad_rows",
                    "inputs": {"tensor": [{"tensorId": PX, "range": rng([0, 0], [2, 6])}]},
                    "outputs": {"result": [{"tensorId": PY, "range": whole_y}]},
                },
                "tags": {
                    IPF_INDEX: whole_y,
                    IPF_SIGNATURE: {
                        "inputs": {"tensor": [ipf([-1, 0])]},
                        "outputs": {"result": [ipf([0, 0])]},
                    },
                },
            },
            app(PA1, (0, 2), (0, 1)),  # projection [-1:1] clipped to [0:1]
            app(PA2, (2, 4), (1, 2)),  # projection [1:3] clipped to [1:2]
        ],
    }


def _op_input(d: Doc) -> dict[str, Any]:
    item: dict[str, Any] = node(d, POP)["body"]["inputs"]["tensor"][0]
    return item


def _app_input(d: Doc, app_id: str) -> dict[str, Any]:
    item: dict[str, Any] = node(d, app_id)["body"]["inputs"]["tensor"][0]
    return item


PADDED_CASES: list[tuple[str, Callable[[Doc], None], list[tuple[str, str, list[str], str]]]] = [
    ("clean", lambda d: None, []),
    (
        "operation-selects-less-than-the-clipped-projection",
        lambda d: _op_input(d)["range"].update(end=[1, 6]),
        [
            (
                "OperationIPFSignatureAgreement",
                "IPF projection does not match the selection",
                [POP],
                f'operation "{POP}" IPF for inputs "tensor"[0] maps the index range '
                f'"[0:4, 0:6]" to "[-1:3, 0:6]", which tensor "{PX}" at "[0:2, 0:6]" clips to '
                '"[0:2, 0:6]"; expected the selection "[0:1, 0:6]"',
            ),
            (
                "OperationApplicationAgreement",
                "Application selection is outside the operation's",
                [PA2, POP],
                f'application "{PA2}" selects "[1:2, 0:6]" of tensor "{PX}"; expected a range '
                f'inside "[0:1, 0:6]", the selection of its operation "{POP}"',
            ),
        ],
    ),
    (
        "application-reads-the-wrong-rows",
        lambda d: _app_input(d, PA2)["range"].update(start=[0, 0]),
        [
            (
                "ApplicationIPFSignatureAgreement",
                "Application selection does not match its projected index",
                [PA2, POP],
                f'application "{PA2}" selects "[0:2, 0:6]" for inputs "tensor"[0]; expected '
                '"[1:2, 0:6]", the projection "[1:3, 0:6]" of its index range "[2:4, 0:6]" '
                "clipped to its tensor",
            ),
        ],
    ),
    (
        "application-reads-past-the-tensor",
        lambda d: _app_input(d, PA2)["range"].update(end=[3, 6]),
        [
            (
                "OperationApplicationAgreement",
                "Application selection is outside the operation's",
                [PA2, POP],
                f'application "{PA2}" selects "[1:3, 0:6]" of tensor "{PX}"; expected a range '
                f'inside "[0:2, 0:6]", the selection of its operation "{POP}"',
            ),
        ],
    ),
    (
        "output-projection-is-not-clipped",
        lambda d: node(d, POP)["tags"][IPF_SIGNATURE]["outputs"]["result"][0]["affineMap"].update(
            offset=[-1, 0]
        ),
        [
            (
                "OperationIPFSignatureAgreement",
                "IPF projection does not match the selection",
                [POP],
                f'operation "{POP}" IPF for outputs "result"[0] maps the index range '
                '"[0:4, 0:6]" to "[-1:3, 0:6]"; expected the selection "[0:4, 0:6]"',
            ),
            (
                "ApplicationIPFSignatureAgreement",
                "Application selection does not match its projected index",
                [PA1, POP],
                f'application "{PA1}" selects "[0:2, 0:6]" for outputs "result"[0]; expected '
                '"[-1:1, 0:6]", the projection of its index range "[0:2, 0:6]"',
            ),
            (
                "ApplicationIPFSignatureAgreement",
                "Application selection does not match its projected index",
                [PA2, POP],
                f'application "{PA2}" selects "[2:4, 0:6]" for outputs "result"[0]; expected '
                '"[1:3, 0:6]", the projection of its index range "[2:4, 0:6]"',
            ),
        ],
    ),
]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [(m, e) for _, m, e in PADDED_CASES],
    ids=[n for n, _, _ in PADDED_CASES],
)
def test_padded_reads_are_clipped_to_the_tensor(
    mutate: Callable[[Doc], None],
    expected: list[tuple[str, str, list[str], str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given an operation whose input projection reaches one row past its tensor on each side
    d = padded_doc()
    mutate(d)
    # when checked, with certified applications and with every application the long way
    fast = check(Graph.from_json(copy.deepcopy(d)))
    monkeypatch.setattr(constraints_module, "_certificate", lambda index, app: None)
    slow = check(Graph.from_json(copy.deepcopy(d)))
    # then the issues are exactly the expected ones, either way
    assert [(i.constraint, i.summary, list(i.node_ids), i.message) for i in fast] == expected
    assert slow == fast


def test_padded_applications_are_certified() -> None:
    g = Graph.from_json(padded_doc())
    certs = [constraints_module._certificate(g.index, g.node(a)) for a in (PA1, PA2)]
    assert [str(c.ipf_index) for c in certs if c is not None] == ["[0:2, 0:6]", "[2:4, 0:6]"]


def test_a_tensor_edit_re_judges_the_clipped_projection() -> None:
    # given the clean padded document, checked once (results cached)
    g = Graph.from_json(padded_doc())
    assert check(g) == []
    # when the input tensor grows by a row, so the clipped projections read more
    g.apply([{"op": "update_node", "id": PX, "body": {"range": rng([0, 0], [3, 6])}}])
    # then the operation's selection and the second shard's no longer match, as a fresh check says
    again = check(g)
    fresh = check(Graph.from_json(json.loads(json.dumps(g.to_json()))))
    assert again == fresh
    assert [(i.constraint, list(i.node_ids)) for i in again] == [
        ("OperationIPFSignatureAgreement", [POP]),
        ("ApplicationIPFSignatureAgreement", [PA2, POP]),
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([0, 0], []),
        ([0.0, 0], []),
        (
            [False, 0],
            [("SchemaConformance", "Node body does not match its schema", [PA1])],
        ),
    ],
    ids=["ints", "whole-float", "boolean"],
)
def test_an_exact_looking_selection_is_certified_only_with_json_integers(
    value: list[Any], expected: list[Triple]
) -> None:
    # given a shard whose input start equals its projection as Python compares (False == 0)
    d = padded_doc()
    _app_input(d, PA1)["range"]["start"] = value
    # when checked
    g = Graph.from_json(d)
    found = check(g)
    # then a boolean is a schema error (and not certified), while a whole float is an integer,
    # as JSON Schema says
    assert triples(found) == expected
    cert = constraints_module._certificate(g.index, g.node(PA1))
    assert (cert is not None) == (type(value[0]) is not bool)


def _app_output(d: Doc, app_id: str) -> dict[str, Any]:
    item: dict[str, Any] = node(d, app_id)["body"]["outputs"]["result"][0]
    return item


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: _app_input(d, PA1)["range"].update(end=[True, 6]),
        lambda d: _app_output(d, PA1)["range"].update(start=[0, False]),
        lambda d: _app_output(d, PA1)["range"].update(start=[False, 0]),
    ],
    ids=["input-end", "output-start-last-dim", "output-start-first-dim"],
)
def test_a_boolean_anywhere_in_a_shard_keeps_it_from_being_certified(
    edit: Callable[[Doc], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a shard equal to its projection as Python compares, with a boolean for a 0 or a 1
    d = padded_doc()
    edit(d)
    # when checked
    g = Graph.from_json(d)
    found = check(g)
    # then the boolean is a schema error, the shard is not certified, and the issues are the
    # ones every application gets the long way
    assert triples(found) == [("SchemaConformance", "Node body does not match its schema", [PA1])]
    assert constraints_module._certificate(g.index, g.node(PA1)) is None
    monkeypatch.setattr(constraints_module, "_certificate", lambda index, app: None)
    assert check(Graph.from_json(d)) == found


def test_clear_caches_forgets_what_earlier_checks_remembered(loom_doc: Doc) -> None:
    # given a check that built IPFs and matched ids against the UUID pattern
    assert check(Graph.from_json(copy.deepcopy(loom_doc))) == []
    assert constraints_module._ipf_of.cache_info().currsize > 0
    # when the caches are cleared
    constraints_module.clear_caches()
    # then nothing is remembered, and a check gives the same result cold
    from geon.core import schemas

    assert constraints_module._ipf_of.cache_info().currsize == 0
    assert [len(m) for m in schemas._MEMOS] == [0] * len(schemas._MEMOS)
    assert check(Graph.from_json(copy.deepcopy(loom_doc))) == []


# -- loom conformance: loom's own unit-test documents --------------------------------------

LOOM_UNIT = Path(__file__).parent / "loom_unit"


def uid(n: int) -> str:
    """The id of node ``n`` in the loom_unit documents."""
    return f"00000000-0000-4000-8000-{n:012d}"


def loom_unit(name: str) -> str:
    return (LOOM_UNIT / name).read_text("utf-8")


@pytest.mark.parametrize("name", ["source_sink.json", "increment.json"])
def test_loom_valid_unsigned_documents_check_clean(name: str) -> None:
    """Documents of the shape of loom's valid unit tests (crutcher/tapestry,
    java/src/test/java/loom/graph/constraints/OperationReferenceAgreementConstraintTest.java
    ``test_valid``: an unsigned ``source``/``sink`` pair with two applications each; and
    java/src/test/java/loom/graph/nodes/ApplicationNodeTest.java ``test_valid``: an unsigned
    ``increment`` with one application). Their operations have no IPFSignature, so their
    applications need no IPFIndex (loom's ApplicationIPFSignatureAgreement visits only signed
    operations)."""
    assert check_document(loom_unit(name)) == []


def test_loom_shard_bounding_range_disagreement_is_reported() -> None:
    """The document of loom's ``test_application_shard_range_disagreement`` (same file as
    above): the shards of an unsigned source and sink select only columns 0:2 of a 2x3 tensor,
    which loom reports as ``range zr[0:2, 0:3] != shard bounding range zr[0:2, 0:2]``."""
    source, sink, tensor = uid(2), uid(10), uid(1)
    issues = check_document(loom_unit("source_sink_shards_short.json"))
    assert triples(issues) == [
        (
            "OperationApplicationAgreement",
            "Applications do not span the operation's selection",
            [source],
        ),
        ("ApplicationOutputRangeCoverageIsExact", "Application outputs leave a gap", [source]),
        (
            "OperationApplicationAgreement",
            "Applications do not span the operation's selection",
            [sink],
        ),
    ]
    assert issues[2].message == (
        f'the applications of operation "{sink}" select "[0:2, 0:2]" of inputs "input"[0] '
        f'(tensor "{tensor}") in all, their shard bounding range; expected the operation\'s '
        'selection "[0:2, 0:3]"'
    )
    assert issues[2].params == {
        "side": "inputs",
        "key": "input",
        "position": 0,
        "tensorId": tensor,
        "range": {"start": [0, 0], "end": [2, 3]},
        "shardBoundingRange": {"start": [0, 0], "end": [2, 2]},
    }
