"""An editor made the owner run code (issue 30, finding 1): an axis name holding a carriage
return was stored by ``update_node`` (the checker only raised an issue), and the NumPy export
wrote the raw reference into a ``# (...)`` comment, which Python ends at the CR, so the line after
it ran when the owner ran the exported script; the einsum export carried it too, and some stored
bad references made the export answer 500.

Replayed through the real paths: the edit on the REST API and on the websocket (as the server
applies it), an upload, an ONNX import converted by the worker's task,
``GET /api/v1/graphs/<id>/export?to=...`` of a document stored before the rule, and
``python -m geon export`` as a user runs it. Each refusal is checked to name the bad
text (escaped), to have stored nothing, and to leave another client answered.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from onnx import TensorProto, helper

from geon import core as gc
from geon.asgi import application
from geon.core.graph import AXIS, TENSOR, TENSOR_AXES
from geon.graphs.models import Graph, GraphVersion, Membership
from geon.graphs.services import do_create_graph
from geon.runs.services.imports import do_import

API = "/api/v1"
#: The finding's axis name: a CR ends the comment it was written into; the next line runs.
PAYLOAD = "F\r    __import__('os').system('touch pwned')\r    #"
RULE = (
    "labels, axis names and axis references may not hold control characters (U+0000-U+001F, "
    "U+007F-U+009F) or the line separators U+2028 and U+2029"
)
SHOWN = "\"F\\r    __import__('os').system('touch pwned')\\r    #\""
FORMATS = ("numpy", "einsum", "python", "onnx")


def document() -> dict[str, Any]:
    """``r = relu(x[H, W] · y[W+1, N])`` as the builder writes it."""
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.placeholder(axes=[H, W], name="x")
    y = gc.placeholder(axes=[W + 1, N], name="y")
    doc: dict[str, Any] = gc.graph([gc.relu(gc.dot(x, y, name="z"), name="r")]).to_json()
    return doc


def node_id(doc: dict[str, Any], kind: str, label: str) -> str:
    return next(n["id"] for n in doc["nodes"] if n["type"] == kind and n.get("label") == label)


def stored(graph: Any) -> tuple[int, int, str]:
    """What a refused edit must not change: the current version, the versions, the document."""
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    assert fresh.current_version is not None
    return (
        fresh.current_version.number,
        GraphVersion.objects.filter(graph=fresh).count(),
        json.dumps(fresh.current_version.document, sort_keys=True),
    )


def calls(source: str) -> set[str]:
    """Every call in ``source`` (which must parse) as written: ``np.einsum``, ``align``."""
    return {ast.unparse(n.func) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)}


@pytest.fixture
def owned(user: Any, other_user: Any) -> Any:
    """ann's graph of :func:`document`, which bob may edit."""
    graph = do_create_graph(owner=user, title="net", document=document())
    Membership.objects.create(graph=graph, user=other_user, role="editor")
    return graph


def edit(client: Client, graph: Any, ops: list[dict[str, Any]]) -> Any:
    return client.post(
        f"{API}/graphs/{graph.pk}/edits",
        {"baseVersion": graph.current_version.number, "ops": ops},
        content_type="application/json",
    )


def hostile_edits(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """``(case, op, the refusal's start)``: the finding's edit, and the same text elsewhere."""
    axis_w, tensor_x = node_id(doc, AXIS, "W"), node_id(doc, TENSOR, "x")
    return [
        (
            "the finding: an axis renamed by update_node",
            {"op": "update_node", "id": axis_w, "body": {"name": PAYLOAD}},
            f"the axis name {SHOWN} holds a control character (U+000D)",
        ),
        (
            "a tensor's axis reference",
            {"op": "update_node", "id": tensor_x, "tags": {TENSOR_AXES: {"axes": ["H", PAYLOAD]}}},
            f'the axis reference {SHOWN} of "x" holds a control character (U+000D)',
        ),
        (
            "a label with a line separator",
            {"op": "update_node", "id": tensor_x, "label": "x\u2028y = 1"},
            'the label "x\\u2028y = 1" holds a line break (U+2028)',
        ),
        (
            "a new node's label with a newline",
            {"op": "add_node", "node": {"id": "n1", "type": AXIS, "label": "a\nb",
                                        "body": {"name": "K", "length": 2}}},
            'the label "a\\nb" holds a control character (U+000A)',
        ),
    ]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("case", range(4))
def test_a_control_character_edit_is_refused_on_rest_and_nothing_is_stored(
    client: Client, user: Any, other_user: Any, owned: Any, case: int
) -> None:
    # given bob, an editor of ann's graph
    _, op, refusal = hostile_edits(owned.current_version.document)[case]
    before = stored(owned)
    client.force_login(other_user)
    # when he sends the edit
    answer = edit(client, owned, [op])
    # then it is refused (422 invalid_edit, as every refused edit), naming the text escaped
    # and what is valid; nothing is stored
    assert (answer.status_code, answer.json()["error"]["code"]) == (422, "invalid_edit")
    message = answer.json()["error"]["message"]
    assert message == f"edit op 0 ({op['op']}): {refusal}; {RULE}"
    assert "\r" not in message and "\u2028" not in message and owned.pk.hex not in message
    assert stored(owned) == before
    # and ann (another client) is still answered: her export is the graph's, clean
    client.force_login(user)
    export = client.get(f"{API}/graphs/{owned.pk}/export?to=numpy")
    assert export.status_code == 200
    assert "__import__" not in export.content.decode()


@pytest.mark.django_db
def test_an_upload_with_a_control_character_is_refused_and_nothing_is_stored(
    client: Client, user: Any
) -> None:
    doc = document()
    for node in doc["nodes"]:
        if node["type"] == AXIS and node["body"]["name"] == "W":
            node["body"]["name"] = PAYLOAD
    client.force_login(user)
    graphs = Graph.objects.count()
    answer = client.post(
        f"{API}/graphs", {"title": "up", "document": doc}, content_type="application/json"
    )
    # refused as every invalid document is (422 invalid_document), naming the text escaped
    assert (answer.status_code, answer.json()["error"]["code"]) == (422, "invalid_document")
    message = answer.json()["error"]["message"]
    assert message.startswith(f"node 1: the axis name {SHOWN} holds a control character")
    assert Graph.objects.count() == graphs
    # another request is still answered
    assert client.get(f"{API}/graphs").status_code == 200


@pytest.mark.django_db
def test_a_stored_node_with_a_control_character_can_still_be_moved_and_fixed(
    client: Client, user: Any
) -> None:
    # given a document stored before the rule, with a tensor labelled across two lines
    doc = document()
    tensor_x = node_id(doc, TENSOR, "x")
    for node in doc["nodes"]:
        if node["id"] == tensor_x:
            node["label"] = "x\ny"
    graph = do_create_graph(owner=user, title="old", document=doc)
    client.force_login(user)
    # when its owner moves the node, then renames it: both are applied
    moved = edit(client, graph, [{"op": "set_layout", "id": tensor_x, "x": 1.0, "y": 2.0}])
    assert moved.status_code == 200, moved.content
    graph.refresh_from_db()
    renamed = edit(client, graph, [{"op": "update_node", "id": tensor_x, "label": "xy"}])
    assert renamed.status_code == 200, renamed.content


# --- the websocket ----------------------------------------------------------------------------

ORIGIN = (b"origin", b"http://localhost")


@pytest.fixture
def fresh_channel_layer() -> Iterator[None]:
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest_asyncio.fixture
async def sockets(session_cookie: Any, fresh_channel_layer: None) -> Any:
    opened: list[WebsocketCommunicator] = []

    async def open_socket(user: Any, graph: Any) -> WebsocketCommunicator:
        cookie = await database_sync_to_async(session_cookie)(user)
        ws = WebsocketCommunicator(
            application, f"/ws/graphs/{graph.pk}/", headers=[ORIGIN, (b"cookie", cookie)]
        )
        assert await ws.connect() == (True, None)
        assert (await ws.receive_json_from(timeout=10))["type"] == "snapshot"
        opened.append(ws)
        return ws

    yield open_socket
    for ws in opened:
        await ws.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_findings_edit_is_rejected_on_the_websocket_and_nothing_is_stored(
    sockets: Any, user: Any, other_user: Any
) -> None:
    doc = document()
    graph = await database_sync_to_async(do_create_graph)(owner=user, title="net", document=doc)
    await database_sync_to_async(Membership.objects.create)(
        graph=graph, user=other_user, role="editor"
    )
    before = await database_sync_to_async(stored)(graph)
    owner = await sockets(user, graph)
    editor = await sockets(other_user, graph)
    assert (await owner.receive_json_from(timeout=10))["event"] == "join"
    # when the editor renames axis W to the finding's text
    _, op, refusal = hostile_edits(doc)[0]
    await editor.send_json_to({"type": "edit", "id": "e1", "baseVersion": 1, "ops": [op]})
    answer = await editor.receive_json_from(timeout=10)
    # then it is rejected with the refusal; nothing is stored, the owner hears of nothing
    assert (answer["type"], answer["id"], answer["reason"], answer["version"]) == (
        "rejected", "e1", "invalid_edit", 1,
    )  # fmt: skip
    assert answer["message"] == f"edit op 0 (update_node): {refusal}; {RULE}"
    assert await database_sync_to_async(stored)(graph) == before
    assert await owner.receive_nothing(timeout=0.2)
    # and both are still answered
    for ws, ping in ((owner, "p1"), (editor, "p2")):
        await ws.send_json_to({"type": "ping", "id": ping})
        assert await ws.receive_json_from(timeout=10) == {"type": "pong", "id": ping}


# --- documents stored before the rule ---------------------------------------------------------


def legacy(user: Any, change: Any) -> Any:
    """A graph stored as it could be before the rule: :func:`document` changed by ``change``."""
    doc = document()
    change(doc)
    return do_create_graph(owner=user, title="legacy", document=doc)


def with_ref(doc: dict[str, Any]) -> None:
    for node in doc["nodes"]:
        if node.get("label") == "y":
            node["tags"][TENSOR_AXES]["axes"] = [PAYLOAD, "N"]


@pytest.mark.django_db
@pytest.mark.parametrize("to", FORMATS)
def test_a_stored_reference_that_does_not_parse_is_refused_by_every_export(
    client: Client, user: Any, other_user: Any, to: str
) -> None:
    graph = legacy(user, with_ref)
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    client.force_login(user)
    answer = client.get(f"{API}/graphs/{graph.pk}/export?to={to}")
    # a 400 naming the tensor by its label and the reference escaped, not a 500 or a script
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"] == {
        "code": "cannot_export",
        "message": f'tensor "y" has axis reference {SHOWN}, which does not parse; expected a '
        'name with an optional dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"',
    }
    # and another client is still answered
    client.force_login(other_user)
    assert client.get(f"{API}/graphs/{graph.pk}").status_code == 200


def bad_dtype(doc: dict[str, Any]) -> None:
    for node in doc["nodes"]:
        if node.get("label") == "x":
            node["body"]["dtype"] = "float64); __import__('os').system('touch pwned'); (0"


def no_range(doc: dict[str, Any]) -> None:
    for node in doc["nodes"]:
        if node.get("label") == "x":
            del node["body"]["range"]


def lost_operand(doc: dict[str, Any]) -> None:
    for node in doc["nodes"]:
        if node.get("label") == "op:dot":
            node["body"]["inputs"]["y"] = [{"tensorId": "gone"}]


def bad_axis(doc: dict[str, Any]) -> None:
    for node in doc["nodes"]:
        if node["type"] == AXIS and node["body"]["name"] == "N":
            node["body"]["name"] = "N\r#"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (bad_dtype, 'tensor "x" has dtype "float64); __import__(\'os\').system(\'touch pwned\'); '
                    '(0"; export knows boolean, int8,'),
        (no_range, 'tensor "x" has no valid range; expected start and end of one length'),
        (lost_operand, 'operation "op:dot" reads or writes a tensor the document does not have'),
        (bad_axis, 'axis "N\\r#" has a name that is not one; expected a letter or _ then'),
    ],
)  # fmt: skip
def test_other_stored_malformations_answer_400_naming_the_node(
    client: Client, user: Any, change: Any, message: str
) -> None:
    graph = legacy(user, change)
    client.force_login(user)
    for to in FORMATS:
        answer = client.get(f"{API}/graphs/{graph.pk}/export?to={to}")
        assert answer.status_code == 400, (to, answer.content)
        assert answer.json()["error"]["message"].startswith(message), to


def hostile_labels(doc: dict[str, Any]) -> None:
    """Labels stored before the rule: the finding's text, quotes, a docstring's end."""
    labels = {"x": PAYLOAD, "y": 'y\'"""\\\u2028', "r": "r\n__import__('os')"}
    for node in doc["nodes"]:
        if node.get("label") in labels:
            node["label"] = labels[node["label"]]


@pytest.mark.django_db
def test_stored_hostile_labels_export_as_data_never_as_code(
    client: Client, user: Any, tmp_path: Path
) -> None:
    graph = legacy(user, hostile_labels)
    client.force_login(user)
    allowed = {"np.asarray", "np.einsum", "np.maximum"}
    for to in FORMATS:
        answer = client.get(f"{API}/graphs/{graph.pk}/export?to={to}")
        assert answer.status_code == 200, (to, answer.content)
        if to == "onnx":
            model = onnx.load_model_from_string(answer.content)
            onnx.checker.check_model(model, full_check=True)
            assert [n.op_type for n in model.graph.node] == ["Einsum", "Relu"]
            continue
        text = answer.content.decode()
        assert not any(c in text for c in "\r\u2028\x0b\x0c"), to
        found = calls(text) - calls(export_of_empty(client, user, to))
        assert found <= allowed | {"gc.Axis", "gc.placeholder", "R", "make_op", "list",
                                   "AX.values", "einsum"}, (to, found)  # fmt: skip
    # and the NumPy script, run as the owner runs it, computes and touches nothing
    script = client.get(f"{API}/graphs/{graph.pk}/export?to=numpy").content
    (tmp_path / "model.py").write_bytes(script)
    rng = np.random.default_rng(0)
    leaves = {PAYLOAD: rng.random((2, 3)), 'y\'"""\\\u2028': rng.random((3, 4))}
    np.savez(tmp_path / "in.npz", **leaves)  # type: ignore[arg-type]
    ran = subprocess.run(
        [sys.executable, "model.py", "--inputs", "in.npz", "--out", "out.npz"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert not (tmp_path / "pwned").exists()
    with np.load(tmp_path / "out.npz") as out:
        assert out.files == ["r\n__import__('os')"]


def export_of_empty(client: Client, user: Any, to: str) -> str:
    """What an export of a graph without nodes writes (the script's fixed part)."""
    empty = do_create_graph(
        owner=user, title="empty", document={"id": "00000000-0000-4000-8000-000000000001",
                                             "nodes": []}
    )  # fmt: skip
    answer = client.get(f"{API}/graphs/{empty.pk}/export?to={to}")
    assert answer.status_code == 200
    return str(answer.content.decode())


# --- the CLI ----------------------------------------------------------------------------------


def cli_export(tmp_path: Path, doc: dict[str, Any], to: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    return subprocess.run(
        [sys.executable, "-m", "geon", "export", "doc.json", "--to", to, "-o", f"out.{to}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("to", FORMATS)
def test_the_cli_refuses_the_findings_document_in_one_line_and_writes_nothing(
    tmp_path: Path, to: str
) -> None:
    # given the document the finding's edit made (axis W renamed, its references with it)
    doc = document()
    for node in doc["nodes"]:
        if node["type"] == AXIS and node["body"]["name"] == "W":
            node["body"]["name"] = PAYLOAD
        axes = node.get("tags", {}).get(TENSOR_AXES, {}).get("axes")
        if axes:
            node["tags"][TENSOR_AXES]["axes"] = [
                PAYLOAD + a[1:] if a.startswith("W") else a for a in axes
            ]
    ran = cli_export(tmp_path, doc, to)
    assert ran.returncode == 2
    assert ran.stderr.startswith(f"geon export: axis {SHOWN} has a name that is not one")
    assert ran.stderr.count("\n") == 1 and "\r" not in ran.stderr
    assert not (tmp_path / f"out.{to}").exists() and not (tmp_path / "pwned").exists()


def test_the_cli_writes_hostile_labels_as_data(tmp_path: Path) -> None:
    doc = document()
    hostile_labels(doc)
    for to in ("numpy", "einsum", "python"):
        ran = cli_export(tmp_path, doc, to)
        assert ran.returncode == 0, ran.stderr
        text = (tmp_path / f"out.{to}").read_text()
        assert "\r" not in text and "\u2028" not in text
        assert not {c for c in calls(text) if "import" in c or "system" in c}


# --- an ONNX import -------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_onnx_model_whose_names_hold_a_line_break_fails_to_import_and_makes_no_graph(
    client: Client, user: Any
) -> None:
    # given a model whose input is named with the finding's text (its tensor's label)
    relu = helper.make_node("Relu", [PAYLOAD], ["y"], name="relu")
    g = helper.make_graph(
        [relu], "g",
        [helper.make_tensor_value_info(PAYLOAD, TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )  # fmt: skip
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    client.force_login(user)
    graphs = Graph.objects.count()
    queued = client.post(f"{API}/imports", {"model": SimpleUploadedFile("m.onnx", data)})
    assert queued.status_code == 202, queued.content
    # when the worker converts it
    do_import(queued.json()["id"])
    # then the import fails naming the label escaped, and no graph is made
    body = client.get(f"{API}/imports/{queued.json()['id']}").json()
    assert (body["status"], body["graph"]) == ("failed", None)
    assert body["error"].startswith("node 1: the label " + SHOWN + " holds a control character")
    assert Graph.objects.count() == graphs
    # and another request is still answered
    assert client.get(f"{API}/graphs").status_code == 200
