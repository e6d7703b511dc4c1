"""The axis edit rule (``set_axis``: rename and/or length) on the cases the editor mirrors.

``tests/core/axis_rename_cases.json`` is read here and by frontend/src/model/axisRename.test.ts:
the server is the authority (DESIGN.md §6: every edit is applied and checked there), so each
case is what an edit does on the server's own path (:func:`geon.graphs.services.rebasing.
apply_ops`: expand, then apply), and the editor's ``editAxis`` must do the same to the names.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from geon.core.checks import IncrementalChecker
from geon.core.graph import AXIS, INDEX_AXES, OPERATION, TENSOR, TENSOR_AXES, Graph, Node
from geon.core.nodes import split_level
from geon.core.ops import CATALOGUE, run_case
from geon.graphs.edits import EditRefused
from geon.graphs.services.documents import LiveDocument
from geon.graphs.services.rebasing import apply_ops

TABLE = json.loads(
    (Path(__file__).parents[1] / "core" / "axis_rename_cases.json").read_text(encoding="utf-8")
)
G = "00000000-0000-4000-8000-000000000000"


def build(graph: dict[str, Any]) -> Graph:
    """The document a case's compact graph stands for (ids are the names)."""
    lengths = graph["axes"]
    nodes = [
        Node(name, AXIS, label=name, body={"name": name, "length": n})
        for name, n in lengths.items()
    ]

    def extent(ref: str) -> int:
        return math.prod(lengths[split_level(part)[0]] for part in ref.split("*"))

    ranges = {}
    for tid, axes in graph["tensors"].items():
        ranges[tid] = {"start": [0] * len(axes), "end": [extent(a) for a in axes]}
        nodes.append(
            Node(tid, TENSOR, label=tid, body={"dtype": "float32", "range": ranges[tid]},
                 tags={TENSOR_AXES: {"axes": axes}})
        )  # fmt: skip
    for oid, op in graph["operations"].items():

        def sel(ids: list[str]) -> list[dict[str, Any]]:
            return [{"tensorId": t, "range": ranges[t]} for t in ids]

        body: dict[str, Any] = {
            "kernel": op["kernel"],
            "inputs": {key: sel(ids) for key, ids in op["inputs"].items()},
            "outputs": {"result": sel(op["outputs"])} if op["outputs"] else {},
        }
        if "params" in op:
            body["params"] = op["params"]
        tags = {INDEX_AXES: {"axes": op["index"]}} if "index" in op else {}
        nodes.append(Node(oid, OPERATION, label=oid, body=body, tags=tags))
    return Graph(nodes, id=G)


def names(doc: Graph) -> dict[str, dict[str, Any]]:
    """What an axis edit may change, per node: the Axis, TensorAxes, IndexAxes, params."""
    out: dict[str, dict[str, Any]] = {}
    for node in doc.nodes:
        seen: dict[str, Any] = {}
        if node.type == AXIS:
            seen["axis"] = {
                "name": node.body.get("name"),
                "length": node.body.get("length", "(absent)"),
                "label": node.label,
            }
        for key, url in (("axes", TENSOR_AXES), ("indexAxes", INDEX_AXES)):
            tag = (node.tags or {}).get(url)
            if tag is not None:
                seen[key] = tag.get("axes")
        if node.type == OPERATION and "params" in node.body:
            seen["params"] = node.body["params"]
        out[node.id] = seen
    return out


def set_axis(edit: dict[str, Any]) -> dict[str, Any]:
    op: dict[str, Any] = {"op": "set_axis", "name": edit["axis"]}
    if "name" in edit:
        op["rename"] = edit["name"]
    if "length" in edit:
        op["length"] = edit["length"]
    return op


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_the_server_does_what_the_case_says(case: dict[str, Any]) -> None:
    # given the case's graph, live on the server at version 1
    doc = build(TABLE["graphs"][case["graph"]])
    before = names(doc)
    live = LiveDocument(1, IncrementalChecker(doc))
    expect = case["expect"]
    if "error" in expect:
        # when the edit is refused, then with the case's code and words, and nothing changes
        with pytest.raises(EditRefused) as refused:
            apply_ops(live, 1, [set_axis(case["edit"])], 1, {})
        assert (refused.value.reason, str(refused.value)) == (
            expect["error"]["code"],
            f"edit op 0 (set_axis): {expect['error']['message']}",
        )
        assert names(live.document) == before
        return
    # when the edit is applied
    apply_ops(live, 1, [set_axis(case["edit"])], 1, {})
    # then the nodes the case lists say what it says, and every other name is kept
    want = {nid: {**seen, **expect["nodes"].get(nid, {})} for nid, seen in before.items()}
    assert names(live.document) == want


def test_the_graphs_are_what_the_server_infers() -> None:
    # given each case graph's operations that the catalogue infers (all inputs connected)
    for gname, graph in TABLE["graphs"].items():
        axes = {name: {"length": n} for name, n in graph["axes"].items()}
        for oid, op in graph["operations"].items():
            if not op["inputs"] or op["kernel"] not in CATALOGUE:
                continue
            inputs = {k: [graph["tensors"][t] for t in ids] for k, ids in op["inputs"].items()}
            got = run_case(
                {"axes": axes, "kernel": op["kernel"], "inputs": inputs, "params": op.get("params")}
            )
            # then its IndexAxes and output axes are what geon.core.ops infers
            outputs = [r for t in op["outputs"] for r in graph["tensors"][t]]
            assert (got.get("index"), got.get("result")) == (op["index"], outputs), (gname, oid)
