"""Loom's own documents check clean (the loom regression of issue 30): ``OperationPorts`` holds
only kernels of geon's namespace (``op:``) to geon's ports. Loom's ``matmul`` of
crutcher/tapestry's ``IPFSignatureAgreementConstraintTest`` (ports ``x``, ``y`` -> ``z``, tensor
A starting at (-10, 4), a relative IPFSignature) is loom's, although geon's catalogue knows a
``matmul``: sharded by rows and tiled in two dimensions, it checks clean, and loom's rules
(the signature's agreement) still judge it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from geon.core.checks import IncrementalChecker, check, check_document
from geon.core.checks.runnable import GEON_NAMESPACE
from geon.core.errors import ExecutionError
from geon.core.graph import Graph
from geon.execute import compile_run

LOOM_UNIT = Path(__file__).parents[1] / "loom_unit"
TILINGS = ["matmul_sharded.json", "matmul_tiled_2d.json"]


def _doc(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((LOOM_UNIT / name).read_text("utf-8"))
    return data


def _operation(doc: dict[str, Any]) -> dict[str, Any]:
    return next(n for n in doc["nodes"] if n["type"].endswith("/Operation"))


@pytest.mark.parametrize("name", TILINGS)
def test_loom_matmul_documents_check_clean(name: str) -> None:
    doc = _doc(name)
    op = _operation(doc)
    assert op["body"]["kernel"] == "matmul" and set(op["body"]["outputs"]) == {"z"}
    assert set(op["body"]["inputs"]) == {"x", "y"}
    apps = [n for n in doc["nodes"] if n["type"].endswith("/Application")]
    assert len(apps) == (2 if name == "matmul_sharded.json" else 4)
    assert check_document(json.dumps(doc)) == []
    assert Graph.from_json(doc).check() == []
    # the live (incremental) checker agrees, node by node
    checker = IncrementalChecker(Graph.from_json({"id": doc["id"], "nodes": []}))
    for node in doc["nodes"]:
        checker.apply([{"op": "add_node", "node": node}])
    assert checker.issues == []


@pytest.mark.parametrize("name", TILINGS)
def test_loom_rules_still_judge_a_loom_kernel(name: str) -> None:
    """Out of geon's ports is not out of checking: a tile that writes a cell its IPFIndex does
    not project to is loom's ApplicationIPFSignatureAgreement issue."""
    doc = _doc(name)
    app = next(n for n in doc["nodes"] if n["type"].endswith("/Application"))
    app["body"]["outputs"]["z"][0]["range"]["end"][1] -= 1
    found = {i.constraint for i in check(Graph.from_json(doc))}
    assert "ApplicationIPFSignatureAgreement" in found
    assert "OperationPorts" not in found


def test_a_geon_kernel_with_loom_ports_is_still_refused() -> None:
    """The same document with a kernel of geon's namespace (``op:linear``: ``x·A + b``) is
    held to geon's ports, which name what is wrong and what is valid."""
    doc = copy.deepcopy(_doc("matmul_sharded.json"))
    _operation(doc)["body"]["kernel"] = GEON_NAMESPACE + "linear"
    messages = [i.message for i in check(Graph.from_json(doc)) if i.constraint == "OperationPorts"]
    assert (
        'operation "op:linear" (op:linear) has an output "z"; expected only "result"; disconnect '
        'the tensors from "z"'
    ) in messages
    assert any('has no input "A"' in m for m in messages)


def test_the_executor_names_a_loom_output_it_does_not_run() -> None:
    """Checking clean is loom's verdict; the executor runs ``matmul`` only with geon's ports and
    says so, naming the output it found (the documented exception to "no error issue, then it
    runs")."""
    with pytest.raises(ExecutionError) as refused:
        compile_run(Graph.from_json(_doc("matmul_tiled_2d.json")))
    assert str(refused.value) == (
        'operation "matmul" (matmul) writes 1 selection(s), as "z"; the executor runs it writing '
        'exactly one, as "result"'
    )
