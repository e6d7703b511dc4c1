"""``GET /api/v1/graphs/<id>/export?to=onnx|numpy|einsum|python``: the editor's Export menu
downloads a graph as ONNX that onnxruntime runs equal to geon's executor, or as code; anyone
who may view the graph may export it, and every refusal answers JSON (issue #20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from django.test import Client

from geon.core.graph import Graph as Document
from geon.execute import run
from geon.graphs.models import Membership
from geon.graphs.services import do_create_graph
from geon.interop.export import to_einsum, to_python
from geon.interop.onnx_import import import_onnx

pytestmark = pytest.mark.django_db

MLP = Path(__file__).resolve().parent.parent / "interop" / "models" / "mlp.onnx"
FORMATS = '"json", "onnx", "numpy", "einsum", "python"'


@pytest.fixture
def imported() -> Any:
    """The MLP imported with a batch of 4 (its weights by label)."""
    return import_onnx(MLP, dims={"batch": 4})


@pytest.fixture
def mlp(user: Any, other_user: Any, imported: Any) -> Any:
    """ann's graph of the imported MLP, which bob may view."""
    graph = do_create_graph(owner=user, title="My MLP", document=imported.graph.to_json())
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    return graph


def inputs(imported: Any) -> dict[str, Any]:
    """Values for every leaf: a seeded ``x`` and the weights."""
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    return {"x": x, **imported.weights}


def export(client: Client, graph: Any, to: str) -> Any:
    return client.get(f"/api/v1/graphs/{graph.pk}/export?to={to}")


def test_onnx_export_runs_in_onnxruntime_equal_to_geon(
    client: Client, other_user: Any, mlp: Any, imported: Any
) -> None:
    # when bob, a viewer, exports the graph as ONNX
    client.force_login(other_user)
    response = export(client, mlp, "onnx")
    # then he gets a file named after the title that ONNX's checker accepts
    assert (response.status_code, response["Content-Type"], response["Content-Disposition"]) == (
        200, "application/octet-stream", 'attachment; filename="my_mlp.onnx"',
    )  # fmt: skip
    model = onnx.load_model_from_string(response.content)
    onnx.checker.check_model(model, full_check=True)
    # and onnxruntime computes what geon's executor computes (every leaf is an input)
    values = inputs(imported)
    want = run(Document.from_json(mlp.current_version.document), values).by_key()["y"]
    session = ort.InferenceSession(response.content)
    fed = {i.name: values[i.name] for i in session.get_inputs()}
    assert sorted(fed) == sorted(values)
    (got,) = session.run(["y"], fed)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_numpy_export_is_a_script_computing_what_geon_computes(
    client: Client, user: Any, mlp: Any, imported: Any
) -> None:
    client.force_login(user)
    response = export(client, mlp, "numpy")
    assert (response.status_code, response["Content-Type"], response["Content-Disposition"]) == (
        200, "text/x-python; charset=utf-8", 'attachment; filename="my_mlp_numpy.py"',
    )  # fmt: skip
    # the script's model() gives the executor's outputs
    namespace: dict[str, Any] = {"__name__": "exported"}
    exec(compile(response.content.decode(), "my_mlp_numpy.py", "exec"), namespace)
    values = inputs(imported)
    want = run(Document.from_json(mlp.current_version.document), values).by_key()["y"]
    np.testing.assert_allclose(namespace["model"](values)["y"], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("to", "name", "content_type", "write"),
    [
        ("einsum", "my_mlp_einsum.txt", "text/plain; charset=utf-8", to_einsum),
        ("python", "my_mlp_geon.py", "text/x-python; charset=utf-8", to_python),
    ],
)
def test_einsum_and_builder_exports_are_what_the_cli_writes(
    to: str, name: str, content_type: str, write: Any, client: Client, user: Any, mlp: Any
) -> None:
    client.force_login(user)
    response = export(client, mlp, to)
    assert (response.status_code, response["Content-Type"], response["Content-Disposition"]) == (
        200, content_type, f'attachment; filename="{name}"',
    )  # fmt: skip
    document = Document.from_json(mlp.current_version.document)
    assert response.content.decode().rstrip("\n") == write(document).rstrip("\n")
    if to == "einsum":  # one line per Gemm of the MLP
        lines = response.content.decode().splitlines()
        assert [line.count('einsum("ab,cb->ac"') for line in lines] == [1, 1, 1]
    else:  # the builder code rebuilds a graph with the same operations
        namespace: dict[str, Any] = {"__name__": "exported"}
        exec(compile(response.content.decode(), name, "exec"), namespace)
        kernels = sorted(n.body["kernel"] for n in document.nodes if n.type.endswith("Operation"))
        rebuilt = namespace["graph"]
        assert sorted(n.body["kernel"] for n in rebuilt.nodes if n.type.endswith("Operation")) == (
            kernels
        )


@pytest.mark.parametrize(
    ("label", "who", "to", "status", "code", "message"),
    [
        ("unknown format", "owner", "pdf", 400, "unknown_format",
         f'export format "pdf" is unknown; expected one of {FORMATS}'),
        ("a stranger", "stranger", "onnx", 404, "not_found",
         'graph "{graph}" does not exist or you do not have access to it'),
        ("anonymous visitor", None, "onnx", 401, "not_authenticated",
         "sign in, or send an API token as 'Authorization: Bearer <token>'"),
    ],
)  # fmt: skip
def test_refused_exports(
    label: str, who: str | None, to: str, status: int, code: str, message: str,
    client: Client, mlp: Any, django_user_model: Any, user: Any,
) -> None:  # fmt: skip
    if who == "owner":
        client.force_login(user)
    elif who == "stranger":
        client.force_login(django_user_model.objects.create_user("dan", password="x"))
    response = export(client, mlp, to)
    assert (response.status_code, response.json()) == (
        status, {"error": {"code": code, "message": message.format(graph=mlp.pk)}},
    )  # fmt: skip


def test_a_document_the_exporter_refuses_answers_its_message(
    client: Client, user: Any, graph: Any
) -> None:
    # given the loom example, whose tensors carry no axis names
    client.force_login(user)
    response = export(client, graph, "onnx")
    assert (response.status_code, response.json()) == (
        400,
        {
            "error": {
                "code": "cannot_export",
                "message": 'tensor "t1" has no TensorAxes; export needs names',
            }
        },
    )


def test_a_graph_over_the_size_limit_is_not_exported(
    client: Client, user: Any, mlp: Any, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    client.force_login(user)
    response = export(client, mlp, "numpy")
    error = response.json()["error"]
    assert (response.status_code, error["code"]) == (413, "too_large")
    assert error["message"].startswith("the graph is ")
    assert error["message"].endswith(
        " KiB of JSON; at most 2.0 KiB is exported (GEON_MAX_REQUEST_BYTES)"
    )


def test_without_to_the_export_is_loomgraph_json(client: Client, user: Any, mlp: Any) -> None:
    client.force_login(user)
    response = client.get(f"/api/v1/graphs/{mlp.pk}/export")
    assert (response.status_code, response["Content-Disposition"]) == (
        200, 'attachment; filename="my-mlp.json"',
    )  # fmt: skip
    assert len(response.json()["nodes"]) == len(mlp.current_version.document["nodes"])
