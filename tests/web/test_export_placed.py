"""Export under a plan (issue 35, "no silent failures": "export under a plan with partial
products exports the logical model, or says why it cannot"): the gallery transformer placed by
Megatron's plan, whose attention output and MLP down projections are partial products and their
sums, exports its logical model through REST and ``geon export``, says so, and onnxruntime (the
outside oracle) computes what geon's logical run of the unplaced block computes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from django.test import Client

from geon.cli import main
from geon.core.graph import APPLICATION, OPERATION
from geon.core.graph import Graph as Document
from geon.core.plans.contract import CONTRACTED_SPLIT
from geon.examples.transformer import PLANS, transformer_block
from geon.execute import run
from geon.graphs.services import do_create_graph, live_document
from geon.graphs.services.plans import do_generate_plan, do_save_plan
from geon.interop.export import export

pytestmark = pytest.mark.django_db

NOTICE = (
    "exported the logical model; the plan's placement is not part of ONNX (2 split operations "
    "put back whole, {apps} Applications and the mesh left out)"
)


@pytest.fixture
def placed(user: Any) -> Any:
    """ann's transformer block with Megatron's plan generated into its document."""
    graph = do_create_graph(owner=user, title="Block", document=transformer_block().to_json())
    plan = next(p for p in PLANS if p["name"] == "Megatron tensor parallel")
    saved = do_save_plan(
        user, graph, plan["name"], plan["mesh"], {}, None,
        axis_mapping=plan["axisMapping"], inputs=plan["inputs"],
    )  # fmt: skip
    do_generate_plan(user, graph.pk, saved.pk, 1)
    graph.refresh_from_db()
    return graph


def logical_outputs(
    document: Document, onnx_bytes: bytes
) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    """What geon's logical run and onnxruntime compute from the same seeded inputs: the inputs,
    geon's outputs by key, onnxruntime's in its output order."""
    session = ort.InferenceSession(onnx_bytes)
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal(i.shape) for i in session.get_inputs()}
    want = run(document, feeds).by_key()
    got = session.run(None, feeds)
    return feeds, {o.name: want[o.name] for o in session.get_outputs()}, got


def test_the_rest_export_of_a_megatron_placed_block_is_its_logical_model(
    client: Client, user: Any, placed: Any
) -> None:
    # given the placed document: partial products and their sums, Applications on a mesh
    document = live_document(placed).document
    kernels = {n.body["kernel"] for n in document.of_type(OPERATION)}
    apps = len(document.of_type(APPLICATION))
    assert "op:dot_partial" in kernels and apps > 0
    # when ann exports it as ONNX
    client.force_login(user)
    response = client.get(f"/api/v1/graphs/{placed.pk}/export?to=onnx")
    # then the file comes, and the answer says it is the logical model
    assert (response.status_code, response["X-Geon-Export-Notice"]) == (
        200, NOTICE.format(apps=apps),
    )  # fmt: skip
    model = onnx.load_model_from_string(response.content)
    onnx.checker.check_model(model, full_check=True)
    # and onnxruntime computes what geon's logical run of the unplaced block computes
    _, want, got = logical_outputs(transformer_block(), response.content)
    assert len(want) == len(got) == 1
    for (name, w), g in zip(want.items(), got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=name)


def test_an_unplaced_export_says_nothing_more(client: Client, user: Any) -> None:
    graph = do_create_graph(owner=user, title="Block", document=transformer_block().to_json())
    client.force_login(user)
    response = client.get(f"/api/v1/graphs/{graph.pk}/export?to=einsum")
    assert response.status_code == 200 and "X-Geon-Export-Notice" not in response


def test_geon_export_of_the_placed_block_writes_the_logical_model_and_says_so(
    placed: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given the placed document in a file
    document = live_document(placed).document
    path = tmp_path / "placed.json"
    path.write_text(json.dumps(document.to_json()))
    apps = len(document.of_type(APPLICATION))
    # when it is exported as ONNX and as a NumPy script
    assert main(["export", str(path), "--to", "onnx", "-o", str(tmp_path / "m.onnx")]) == 0
    assert capsys.readouterr().err == f"geon export: {NOTICE.format(apps=apps)}\n"
    assert main(["export", str(path), "--to", "numpy", "-o", str(tmp_path / "m.py")]) == 0
    assert "not part of a NumPy script" in capsys.readouterr().err
    # then both compute what geon's logical run computes, onnxruntime as the oracle
    feeds, want, got = logical_outputs(transformer_block(), (tmp_path / "m.onnx").read_bytes())
    for (name, w), g in zip(want.items(), got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=name)
    namespace: dict[str, Any] = {"__name__": "exported"}
    exec(compile((tmp_path / "m.py").read_text(), "m.py", "exec"), namespace)
    outputs = namespace["model"](feeds)
    assert set(outputs) == set(want)
    for name, value in outputs.items():
        np.testing.assert_allclose(value, want[name], rtol=1e-9, atol=1e-12, err_msg=name)


def test_the_logical_export_is_the_unplaced_documents(placed: Any) -> None:
    # the einsum and builder exports of the placed block are those of the block before the plan
    document = live_document(placed).document
    before = Document.from_json(placed.versions.order_by("number").first().document)
    for to in ("einsum", "python"):
        assert export(document, to) == export(before, to)


@pytest.mark.parametrize(
    ("label", "record", "says"),
    [
        ("original not an object", {"original": 1}, '"original" must be'),
        ("no partial", {"partial": None}, '"partial" must be'),
        ("partial ids not text", {"partial": {"operation": 3, "tensor": []}}, '"partial" must be'),
        ("added axis without id", {"axis": {"added": True}}, '"axis" must be'),
    ],
)
def test_a_malformed_split_record_is_refused_by_name_and_nothing_is_exported(
    client: Client, user: Any, placed: Any, label: str, record: dict[str, Any], says: str
) -> None:
    # given a placed document whose split dot carries a rewrite record an editor broke (the
    # ContractedSplit tag has no schema, so any editor can store one)
    document = live_document(placed).document.to_json()
    split = next(n for n in document["nodes"] if CONTRACTED_SPLIT in (n.get("tags") or {}))
    split["tags"][CONTRACTED_SPLIT].update(record)
    broken = do_create_graph(owner=user, title="Broken", document=document)
    # when ann exports it
    client.force_login(user)
    response = client.get(f"/api/v1/graphs/{broken.pk}/export?to=onnx")
    # then she is told which operation's record is malformed and how, not a server error
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "cannot_export"
    assert f'operation "{split["label"]}" has a malformed' in error["message"], error
    assert says in error["message"], error
