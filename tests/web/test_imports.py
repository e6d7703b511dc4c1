"""``POST /api/v1/imports``: an uploaded ONNX model becomes a graph of its uploader, converted by
the worker (``GET /api/v1/imports/<id>`` while it converts, ``/weights`` once done); every
refusal answers JSON and stores nothing (issue #20)."""

from __future__ import annotations

import io
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from onnx import TensorProto, helper, numpy_helper

from geon.core.graph import Graph as Document
from geon.core.nodes import TENSOR
from geon.graphs.models import Graph
from geon.runs.models import ModelImport, data_files
from geon.runs.services.imports import do_import, import_json

pytestmark = pytest.mark.django_db

API = "/api/v1"
MODELS = Path(__file__).resolve().parent.parent / "interop" / "models"
MLP = MODELS / "mlp.onnx"


def upload(client: Client, name: str, data: bytes, **fields: str) -> Any:
    """Post ``data`` as the file ``model`` named ``name``."""
    return client.post(f"{API}/imports", {"model": SimpleUploadedFile(name, data), **fields})


def model_bytes(nodes: list[Any], x: list[int], y: list[int]) -> bytes:
    """An opset-17 model of ``nodes`` from float input ``x`` to float output ``y`` (shapes)."""
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return bytes(model.SerializeToString())


def unsupported_model() -> bytes:
    """A model with an operator geon does not map (Ceil) between two it does."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="/f/relu"),
        helper.make_node("Ceil", ["r"], ["y"], name="/f/ceil"),
    ]
    return model_bytes(nodes, [2, 3], [2, 3])


def bomb_model() -> bytes:
    """A 1 KiB model whose constant folding would fill 37 GiB (ConstantOfShape 100000x100000)."""
    shape = helper.make_tensor("sv", TensorProto.INT64, [2], [100_000, 100_000])
    nodes = [
        helper.make_node("Constant", [], ["s"], value=shape, name="/shape"),
        helper.make_node("ConstantOfShape", ["s"], ["c"], name="/big"),
        helper.make_node("Add", ["x", "c"], ["y"], name="/add"),
    ]
    return model_bytes(nodes, [2, 2], [100_000, 100_000])


def stored_files() -> list[str]:
    storage = data_files()
    if not storage.exists("imports"):
        return []
    folders, _ = storage.listdir("imports")
    return sorted(f"{d}/{f}" for d in folders for f in storage.listdir(f"imports/{d}")[1])


@pytest.fixture(autouse=True)
def no_import_files() -> None:
    """Each test starts without files of imports (the data folder outlives the database)."""
    shutil.rmtree(Path(django_settings.DATA_DIR) / "files" / "imports", ignore_errors=True)


def test_an_uploaded_model_becomes_a_graph_with_its_weights(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # when ann uploads the MLP and the worker's service converts it
    with django_capture_on_commit_callbacks() as callbacks:
        response = upload(client, "mlp.onnx", MLP.read_bytes())
    found = ModelImport.objects.get()
    assert (response.status_code, response["Location"]) == (202, f"/api/v1/imports/{found.pk}")
    assert response.json() == {
        "id": found.pk, "name": "mlp.onnx", "status": "queued", "step": "", "error": "",
        "graph": None, "weights": None, "review": False, "axes": [], "names": None,
    }  # fmt: skip
    assert (len(callbacks), stored_files()) == (1, [f"{found.pk}/model.onnx"])
    do_import(found.pk)
    # then the import is done, and names ann's new graph and the weights download
    graph = Graph.objects.get()
    body = client.get(f"{API}/imports/{found.pk}").json()
    axes = body.pop("axes")  # issue 35's roles: tests/web/test_import_names.py
    assert body == {
        "id": found.pk, "name": "mlp.onnx", "status": "done", "step": "storing the graph",
        "error": "", "graph": str(graph.pk), "weights": f"/api/v1/imports/{found.pk}/weights",
        "review": False, "names": None,
    }  # fmt: skip
    assert [a["proposed"] for a in axes] == ["batch", "ffn", "ffn_2", "d16", "d8"]
    assert (graph.owner, graph.title, graph.current_version.message) == (
        user, "mlp", "imported from mlp.onnx",
    )  # fmt: skip
    # the tensors are labelled with the ONNX value names
    model = onnx.load(MLP)
    document = Document.from_json(graph.current_version.document)
    labels = {n.label for n in document.nodes if n.type == TENSOR and n.label}
    values = {"x", "y", *(i.name for i in model.graph.initializer)}
    values |= {o for n in model.graph.node for o in n.output}
    assert labels == values
    # the weights are the initializers, by name, with their values
    weights = client.get(body["weights"])
    assert (weights.status_code, weights["Content-Disposition"]) == (
        200, 'attachment; filename="mlp-weights.npz"',
    )  # fmt: skip
    with np.load(io.BytesIO(b"".join(weights.streaming_content)), allow_pickle=False) as npz:
        got = {k: npz[k] for k in npz.files}
    expected = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_array_equal(got[key], value)
    # and the upload is gone, the weights kept
    assert stored_files() == [f"{found.pk}/weights.npz"]


def test_dims_bind_the_models_dim_params(client: Client, user: Any) -> None:
    client.force_login(user)
    # when ann binds batch to 8 (unbound, it would be 2)
    response = upload(client, "mlp.onnx", MLP.read_bytes(), dims="batch=8")
    do_import(response.json()["id"])
    # then the graph's batch axis has length 8
    document = Graph.objects.get().current_version.document
    axes = {n["label"]: n["body"] for n in document["nodes"] if n["type"].endswith("Axis")}
    assert axes["batch"]["length"] == 8


@pytest.mark.parametrize(
    ("label", "name", "data", "status", "code", "message"),
    [
        (
            "not an ONNX model",
            "junk.onnx",
            b"this is not a protobuf \xff\xff",
            "failed",
            "",
            '"junk.onnx" is not an ONNX model; expected a file saved by onnx.save',
        ),
        (
            "an unsupported operator",
            "ceil.onnx",
            unsupported_model(),
            "failed",
            "",
            "unsupported ONNX operators: Ceil (/f/ceil); geon imports Abs, Add",
        ),
        (
            "a constant too large to fold",
            "bomb.onnx",
            bomb_model(),
            "failed",
            "",
            "unsupported ONNX operators: ConstantOfShape (/big); geon imports Abs, Add",
        ),
    ],
)
def test_a_model_the_interop_refuses_fails_with_its_words_and_makes_no_graph(
    label: str, name: str, data: bytes, status: str, code: str, message: str,
    client: Client, user: Any,
) -> None:  # fmt: skip
    client.force_login(user)
    # when ann uploads it and the worker's service tries it
    found = upload(client, name, data).json()
    do_import(found["id"])
    # then the import failed, saying why in the interop's words; no graph, no file is left
    body = client.get(f"{API}/imports/{found['id']}").json()
    assert (body["status"], body["graph"], body["weights"]) == (status, None, None)
    assert body["error"].startswith(message)
    assert "Traceback" not in body["error"]
    assert (Graph.objects.count(), stored_files()) == (0, [])


def test_a_model_with_external_data_is_refused(client: Client, user: Any) -> None:
    client.force_login(user)
    # given a model whose weight says its data is in /etc/passwd
    model = onnx.load(MLP)
    init = model.graph.initializer[0]
    init.ClearField("raw_data")
    init.data_location = TensorProto.EXTERNAL
    init.external_data.add(key="location", value="/etc/passwd")
    # when ann uploads it
    found = upload(client, "sneaky.onnx", model.SerializeToString()).json()
    do_import(found["id"])
    # then nothing is read from the worker's disk
    body = client.get(f"{API}/imports/{found['id']}").json()
    assert (body["status"], body["error"]) == (
        "failed",
        '"sneaky.onnx" keeps the data of "0.weight" in external files; expected a model with '
        "its weights inside (onnx.save without save_as_external_data)",
    )
    assert Graph.objects.count() == 0


@pytest.mark.parametrize(
    ("label", "who", "name", "fields", "status", "code", "message"),
    [
        ("anonymous visitor", None, "mlp.onnx", {}, 401, "not_authenticated",
         "sign in, or send an API token as 'Authorization: Bearer <token>'"),
        ("over the limit", "ann", "mlp.onnx", {}, 413, "model_too_large",
         'model "mlp.onnx" has 7.9 KiB; the limit is 4.0 KiB (GEON_IMPORT_MAX_BYTES)'),
        ("not named .onnx", "ann", "mlp.txt", {}, 415, "not_onnx",
         '"mlp.txt" is not an .onnx file; expected an ONNX model (a file named *.onnx)'),
        ("bad dims", "ann", "mlp.onnx", {"dims": "batch=0"}, 400, "invalid_dims",
         'dims item "batch=0" is invalid; expected NAME=N with 1 <= N <= 2147483647, '
         'e.g. "batch=8"'),
    ],
)  # fmt: skip
def test_a_refused_upload_stores_nothing(
    label: str, who: str | None, name: str, fields: dict[str, str],
    status: int, code: str, message: str, client: Client, user: Any, settings: Any,
) -> None:  # fmt: skip
    settings.GEON_IMPORT_MAX_BYTES = 4096 if code == "model_too_large" else 64 * 2**20
    if who:
        client.force_login(user)
    response = upload(client, name, MLP.read_bytes(), **fields)
    assert (response.status_code, response.json()) == (
        status, {"error": {"code": code, "message": message}},
    )  # fmt: skip
    assert (ModelImport.objects.count(), Graph.objects.count(), stored_files()) == (0, 0, [])


def test_an_upload_declared_over_the_limit_is_refused_before_it_is_read(
    client: Client, user: Any, settings: Any
) -> None:
    settings.GEON_IMPORT_MAX_BYTES = 4096
    client.force_login(user)
    # when ann sends 200,000 bytes (over the limit with the form's 64 KiB)
    response = upload(client, "big.onnx", b"\0" * 200_000)
    # then the declared length is refused
    error = response.json()["error"]
    assert (response.status_code, error["code"]) == (413, "model_too_large")
    assert error["message"].startswith("the request has 19")
    assert error["message"].endswith(
        " KiB; a model may have at most 4.0 KiB (GEON_IMPORT_MAX_BYTES)"
    )
    assert (ModelImport.objects.count(), stored_files()) == (0, [])


def test_a_request_without_the_file_is_refused(client: Client, user: Any) -> None:
    client.force_login(user)
    response = client.post(f"{API}/imports", {"dims": "batch=2"})
    assert (response.status_code, response.json()["error"]) == (
        400,
        {
            "code": "invalid_request",
            "message": 'file field "model" is missing; expected an ONNX model (.onnx)',
        },
    )
    assert ModelImport.objects.count() == 0


def test_too_many_waiting_imports_answer_429(client: Client, user: Any, settings: Any) -> None:
    settings.GEON_IMPORTS_PER_USER = 2
    client.force_login(user)
    # given two of ann's imports waiting for the worker
    for _ in range(2):
        assert upload(client, "mlp.onnx", MLP.read_bytes()).status_code == 202
    # when she uploads a third
    response = upload(client, "mlp.onnx", MLP.read_bytes())
    # then she is told to wait, and it is not stored
    assert (response.status_code, response["Retry-After"], response.json()["error"]) == (
        429,
        "5",
        {
            "code": "too_many_imports",
            "message": "2 of your model imports are still converting; at most 2 may wait at "
            "once (GEON_IMPORTS_PER_USER): wait for one to finish converting",
        },
    )
    assert ModelImport.objects.count() == 2
    # and once one is converted, she may upload again
    do_import(ModelImport.objects.order_by("pk").first().pk)  # type: ignore[union-attr]
    assert upload(client, "mlp.onnx", MLP.read_bytes()).status_code == 202


def test_only_the_uploader_sees_an_import_and_its_weights(
    client: Client, user: Any, other_user: Any
) -> None:
    client.force_login(user)
    found = upload(client, "mlp.onnx", MLP.read_bytes()).json()
    # before it is converted, the weights are not there
    early = client.get(f"{API}/imports/{found['id']}/weights")
    assert (early.status_code, early.json()["error"]) == (
        409,
        {
            "code": "weights_not_ready",
            "message": 'model import "mlp.onnx" is queued; its weights are there once it is done',
        },
    )
    do_import(found["id"])
    # bob, and an anonymous visitor, see neither the import nor its weights
    missing = {
        "code": "not_found",
        "message": f'model import "{found["id"]}" does not exist or is not yours',
    }
    client.force_login(other_user)
    for path in ("", "/weights"):
        response = client.get(f"{API}/imports/{found['id']}{path}")
        assert (response.status_code, response.json()["error"]) == (404, missing)
    client.logout()
    response = client.get(f"{API}/imports/{found['id']}/weights")
    assert response.status_code == 401


def test_a_finished_import_is_left_alone_and_a_stranded_one_fails(user: Any) -> None:
    # given an import that a worker began and then stopped under (its message came back)
    stranded = ModelImport.objects.create(owner=user, name="m.onnx", status="running")
    # when the task runs again
    do_import(stranded.pk)
    # then it fails, saying so, rather than trying again forever
    stranded.refresh_from_db()
    assert (stranded.status, stranded.error) == (
        "failed",
        "the worker stopped while importing this model (it may be too large to import); the "
        "import is not tried again",
    )
    do_import(stranded.pk)
    stranded.refresh_from_db()
    assert import_json(stranded)["status"] == "failed"


# --- a real worker ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_worker_converts_an_upload_while_the_client_polls(
    celery_worker: Any, client: Client, user: Any
) -> None:
    client.force_login(user)
    # when ann uploads the encoder layer and polls its Location
    response = upload(client, "encoder.onnx", (MODELS / "encoder.onnx").read_bytes())
    location = response["Location"]
    deadline = time.monotonic() + 60
    body = client.get(location).json()
    while body["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.1)
        body = client.get(location).json()
    # then the real worker made her graph
    graph = Graph.objects.get()
    assert (body["status"], body["error"], body["graph"]) == ("done", "", str(graph.pk))
    assert (graph.owner, graph.title) == (user, "encoder")
