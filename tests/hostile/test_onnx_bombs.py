"""Issue 30, findings 2-4: ONNX imports that open files the model names, run unbounded
operators while folding constants, or convert 150,000 nodes before the size check.

Each hostile model is built here with ``onnx``'s helpers (a few hundred bytes) and replayed
through the real paths: the REST upload (Django's test client) converted by the worker's task
as the worker runs it (``import_model``, which starts the bounded child process), a real Celery
worker beside another person's import, and ``python -m geon import`` as a user runs it. Each
refusal names the operator, tensor or bound and what is valid; nothing is stored; another
client is still answered; and no file the model names is opened (a secret file beside the
worker's working folders gives the same answer whether it exists or not).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from onnx import TensorProto, helper, numpy_helper

from geon.graphs.models import Graph
from geon.interop.onnx_gate import MAX_FOLDED, NODE_BYTES, estimate_document
from geon.interop.onnx_import import import_onnx
from geon.runs.models import ModelImport, data_files
from geon.runs.tasks import import_model
from tests.processes import geon

API = "/api/v1"
MODELS = Path(__file__).resolve().parent.parent / "interop" / "models"
SUPPORTED_LIST = "geon imports Abs, Add, AveragePool, BatchNormalization, Concat, Constant"
EXTERNAL = (
    "in external files; expected a model with its weights inside (onnx.save without "
    "save_as_external_data)"
)


# --- the hostile models -----------------------------------------------------------------------


def model_of(nodes: list[Any], x: list[int], y: list[int], **graph: Any) -> onnx.ModelProto:
    """An opset-17 model of ``nodes`` from float input ``x`` to float output ``y``."""
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)],
        **graph,
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def const(name: str, value: Any) -> Any:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value), name=name)


def loop_bomb() -> bytes:
    """A ``Loop`` of 2**62 iterations adding 1 (the finding's was 10**6: 18.6 s of worker)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "one"], ["acc_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [1])],
        initializer=[numpy_helper.from_array(np.ones(1, np.float32), "one")],
    )  # fmt: skip
    nodes = [
        const("trips", np.array(2**62, np.int64)),
        const("go", np.array(True)),
        const("zero", np.zeros(1, np.float32)),
        helper.make_node("Loop", ["trips", "go", "zero"], ["count"], body=body, name="/loop"),
        helper.make_node("Add", ["x", "count"], ["y"], name="/add"),
    ]
    return model_of(nodes, [1], [1]).SerializeToString()


def pad_bomb() -> bytes:
    """A ``Pad`` of a 2x2 constant to 20,002 x 20,002 (1.5 GiB of float32 if computed)."""
    nodes = [
        const("small", np.ones((2, 2), np.float32)),
        const("pads", np.array([0, 0, 20_000, 20_000], np.int64)),
        helper.make_node("Pad", ["small", "pads"], ["big"], name="/pad"),
        helper.make_node("Add", ["x", "big"], ["y"], name="/add"),
    ]
    return model_of(nodes, [1, 1], [20_002, 20_002]).SerializeToString()


def many_nodes(n: int = 150_000) -> bytes:
    """A chain of ``n`` Relu (the finding's 150,000 nodes took 31.7 s to refuse)."""
    names = ["x", *(f"v{i}" for i in range(n - 1)), "y"]
    nodes = [helper.make_node("Relu", [names[i]], [names[i + 1]]) for i in range(n)]
    return model_of(nodes, [2], [2]).SerializeToString()


def external(tensor: Any, location: str) -> Any:
    """``tensor`` with its data said to be in the file ``location``."""
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.ClearField("int64_data")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    return tensor


def sparse_attribute(location: str) -> bytes:
    """A ``Constant`` whose ``sparse_value`` keeps its values in ``location``."""
    values = external(helper.make_tensor("w", TensorProto.FLOAT, [1], [0.0]), location)
    indices = helper.make_tensor("w_i", TensorProto.INT64, [1], [0])
    sparse = helper.make_sparse_tensor(values, indices, [2])
    nodes = [
        helper.make_node("Constant", [], ["c"], sparse_value=sparse, name="/c"),
        helper.make_node("Add", ["x", "c"], ["y"], name="/add"),
    ]
    return model_of(nodes, [2], [2]).SerializeToString()


def node_attribute(location: str) -> bytes:
    """A ``ConstantOfShape`` whose ``value`` attribute keeps its data in ``location``."""
    value = external(helper.make_tensor("fill", TensorProto.FLOAT, [1], [1.0]), location)
    nodes = [
        const("shape", np.array([2], np.int64)),
        helper.make_node("ConstantOfShape", ["shape"], ["c"], value=value, name="/fill"),
        helper.make_node("Add", ["x", "c"], ["y"], name="/add"),
    ]
    return model_of(nodes, [2], [2]).SerializeToString()


def subgraph(location: str) -> bytes:
    """An ``If`` whose branch holds an initializer kept in ``location``."""

    def branch(name: str, init: Any) -> Any:
        return helper.make_graph(
            [helper.make_node("Identity", [init.name], [f"{name}_out"])], name, [],
            [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [2])],
            initializer=[init],
        )  # fmt: skip

    secret = external(helper.make_tensor("hidden", TensorProto.FLOAT, [2], [0.0, 0.0]), location)
    plain = helper.make_tensor("plain", TensorProto.FLOAT, [2], [1.0, 1.0])
    nodes = [
        const("cond", np.array(True)),
        helper.make_node("If", ["cond"], ["c"], name="/if",
                         then_branch=branch("then", secret), else_branch=branch("else", plain)),
        helper.make_node("Add", ["x", "c"], ["y"], name="/add"),
    ]  # fmt: skip
    return model_of(nodes, [2], [2]).SerializeToString()


def sparse_initializer(location: str) -> bytes:
    """A sparse initializer whose indices are kept in ``location``."""
    values = helper.make_tensor("s", TensorProto.FLOAT, [1], [3.0])
    indices = external(helper.make_tensor("s_i", TensorProto.INT64, [1], [0]), location)
    sparse = helper.make_sparse_tensor(values, indices, [2])
    nodes = [helper.make_node("Add", ["x", "s"], ["y"], name="/add")]
    return model_of(nodes, [2], [2], sparse_initializer=[sparse]).SerializeToString()


EXTERNAL_CASES = {
    "sparse attribute": (sparse_attribute, '"w"'),
    "node attribute": (node_attribute, '"fill"'),
    "subgraph": (subgraph, '"hidden"'),
    "sparse initializer": (sparse_initializer, '"s_i"'),
}

LOOP_REFUSAL = (
    'Loop "/loop": control flow (Loop, If, Scan) is not imported, and its subgraphs are never '
    "run; geon imports a static graph (export the model with its loops unrolled)"
)
PAD_REFUSAL = (
    f"Pad only on constants (shape arithmetic), when the result has at most {MAX_FOLDED:,} "
    'elements: "big" would have 400,080,004 elements'
)
MANY_REFUSAL = (
    "the model has 150,000 nodes on data (besides constants and shape arithmetic); its document "
    "would have at least 143.1 MiB of JSON (about 1000 bytes a node), over the 16.0 MiB a graph "
    "may have (GEON_MAX_REQUEST_BYTES): geon imports at most 16,777 such nodes"
)


# --- helpers ----------------------------------------------------------------------------------


def stored_files() -> list[str]:
    storage = data_files()
    if not storage.exists("imports"):
        return []
    folders, _ = storage.listdir("imports")
    return sorted(f"{d}/{f}" for d in folders for f in storage.listdir(f"imports/{d}")[1])


@pytest.fixture(autouse=True)
def no_import_files() -> None:
    shutil.rmtree(Path(django_settings.DATA_DIR) / "files" / "imports", ignore_errors=True)


def upload(client: Client, name: str, data: bytes) -> Any:
    return client.post(f"{API}/imports", {"model": SimpleUploadedFile(name, data)})


def import_as_the_worker(client: Client, name: str, data: bytes) -> dict[str, Any]:
    """Upload ``data``, run the worker's task on it as the worker does; the import's JSON."""
    response = upload(client, name, data)
    assert response.status_code == 202, response.content
    import_model.apply(args=(response.json()["id"],))  # the task, its body as the worker runs it
    answer: dict[str, Any] = client.get(response["Location"]).json()
    return answer


def assert_refused(body: dict[str, Any], *parts: str) -> None:
    """The import failed with a message holding ``parts``, stored nothing, and showed no
    internals."""
    assert (body["status"], body["graph"], body["weights"]) == ("failed", None, None)
    for part in parts:
        assert part in body["error"]
    assert "Traceback" not in body["error"] and "geon/" not in body["error"]
    assert (Graph.objects.count(), stored_files()) == (0, [])


def another_client_answered(other_user: Any) -> None:
    """bob, on his own client, is answered at once while and after ann's bomb was refused."""
    bob = Client()
    bob.force_login(other_user)
    response = bob.get(f"{API}/graphs")
    assert response.status_code == 200


@pytest.fixture
def secret_beside() -> Iterator[Path]:
    """The path of a file in the folder that holds the import's working folders (the system's
    temporary folder): created or not by each test; removed afterwards."""
    path = Path(tempfile.gettempdir()) / f"geon-secret-{os.getpid()}.txt"
    yield path
    path.unlink(missing_ok=True)


# --- finding 3: unbounded operators ------------------------------------------------------------

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("label", "build", "parts"),
    [
        ("Loop of 2**62 iterations", loop_bomb, [LOOP_REFUSAL]),
        ("Pad to 20,002 x 20,002", pad_bomb,
         ["unsupported ONNX operators: Pad (/pad); " + SUPPORTED_LIST, PAD_REFUSAL]),
        ("150,000 nodes", many_nodes, [MANY_REFUSAL]),
    ],
)  # fmt: skip
def test_a_bomb_is_refused_before_it_runs_and_stores_nothing(
    label: str, build: Any, parts: list[str], client: Client, user: Any, other_user: Any
) -> None:
    client.force_login(user)
    # when ann uploads the bomb and the worker's task converts it
    body = import_as_the_worker(client, "bomb.onnx", build())
    # then it is refused with what is wrong and what is valid, nothing stored
    assert_refused(body, *parts)
    if label.startswith("150,000"):
        assert body["error"] == MANY_REFUSAL
    # and another client is still answered
    another_client_answered(other_user)


def test_the_loop_is_refused_by_name_even_with_one_iteration(client: Client, user: Any) -> None:
    # given a Loop of one iteration (harmless, but its body would be run to fold it)
    data = loop_bomb().replace(np.array(2**62, np.int64).tobytes(), np.array(1, np.int64).tobytes())
    assert onnx.load_model_from_string(data).graph.node[0].attribute[0].t.raw_data == (
        np.array(1, np.int64).tobytes()
    )
    client.force_login(user)
    body = import_as_the_worker(client, "loop.onnx", data)
    assert_refused(body, LOOP_REFUSAL)


def test_a_supported_operator_past_the_bound_stays_an_operation_instead_of_being_computed() -> None:
    # given an Add of two constants broadcast to 2048 x 2048 (4 Mi elements, past the bound)
    nodes = [
        const("col", np.ones((2048, 1), np.float32)),
        const("row", np.ones((1, 2048), np.float32)),
        helper.make_node("Add", ["col", "row"], ["grid"], name="/grid"),
        helper.make_node("Add", ["x", "grid"], ["y"], name="/add"),
    ]
    imported = import_onnx(model_of(nodes, [1, 1], [2048, 2048]))
    # then it is not computed on import (4 Mi values inline would be ~16 MiB of JSON): the
    # document holds "grid" as the output of an operation
    document = imported.graph.to_json()
    assert len(json.dumps(document)) < 200_000
    grid = [n for n in document["nodes"] if n.get("label") == "grid"]
    assert len(grid) == 1 and grid[0]["type"].endswith("/Tensor")
    assert "value" not in json.dumps(grid[0]["body"])


# --- finding 2: files the model names ----------------------------------------------------------


@pytest.mark.parametrize("case", sorted(EXTERNAL_CASES))
@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative"])
def test_external_data_anywhere_is_refused_without_opening_it(
    case: str, relative: bool, secret_beside: Path, client: Client, user: Any, other_user: Any
) -> None:
    build, tensor = EXTERNAL_CASES[case]
    # given a model naming the secret, absolutely or from the import's working folder
    location = f"../{secret_beside.name}" if relative else str(secret_beside)
    data = build(location)
    client.force_login(user)
    answers = []
    for exists in (False, True):
        # when ann uploads it with the secret absent, then present (9 bytes)
        if exists:  # its access time before its modification: a read would move it
            secret_beside.write_bytes(b"top secret"[:9])
            mtime = secret_beside.stat().st_mtime_ns
            os.utime(secret_beside, ns=(mtime - 10**11, mtime))
        body = import_as_the_worker(client, "sneaky.onnx", data)
        assert_refused(body, f'"sneaky.onnx" keeps the data of {tensor} {EXTERNAL}')
        answers.append(body["error"])
        if exists:
            assert secret_beside.stat().st_atime_ns == mtime - 10**11
    # then the answer says nothing of the file: the same whether it exists or not
    assert answers[0] == answers[1]
    another_client_answered(other_user)


def mlp_with_external_weight(location: str) -> bytes:
    """The MLP whose first weight keeps its data in ``location``."""
    model = onnx.load(MODELS / "mlp.onnx")
    external(model.graph.initializer[0], location)
    return bytes(model.SerializeToString())


@pytest.mark.parametrize(
    ("build", "tensor"),
    [(sparse_attribute, "w"), (mlp_with_external_weight, "0.weight")],
    ids=["sparse attribute", "initializer"],
)
def test_the_importer_opens_no_file_a_model_names(build: Any, tensor: str, tmp_path: Path) -> None:
    # given a model file naming a secret beside it (onnx.load reads an initializer's external
    # data relative to the model's folder unless told not to), the secret's access time set
    # before its modification time (so that any read of it moves the access time)
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.zeros(8 * 16, np.float32).tobytes())
    stat = secret.stat()
    os.utime(secret, ns=(stat.st_mtime_ns - 10**11, stat.st_mtime_ns))
    path = tmp_path / "model.onnx"
    path.write_bytes(build("secret.bin"))
    opened: list[str] = []

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and args and "secret.bin" in str(args[0]):
            opened.append(str(args[0]))

    sys.addaudithook(audit)  # hooks stay for the process; this one only records
    # when it is imported from its path
    with pytest.raises(Exception) as refused:
        import_onnx(str(path))
    # then it is refused, naming the tensor, and the secret was neither opened from Python nor
    # read by onnx's C++ (its access time did not move)
    assert str(refused.value) == f'the model keeps the data of "{tensor}" {EXTERNAL}'
    assert opened == []
    assert secret.stat().st_atime_ns == stat.st_mtime_ns - 10**11
    if build is mlp_with_external_weight:  # what onnx.load, as the CLI called it, did
        onnx.load(str(path))
        assert secret.stat().st_atime_ns != stat.st_mtime_ns - 10**11


# --- finding 4 and the legitimate big model ---------------------------------------------------


def test_the_node_bound_is_an_estimate_that_the_real_document_exceeds() -> None:
    # given the encoder layer and a chain of scalar Relu (the smallest document per node)
    encoder = onnx.load(MODELS / "encoder.onnx")
    chain = onnx.load_model_from_string(many_nodes(300))
    for model in (encoder, chain):
        nodes, least = estimate_document(model)
        imported = import_onnx(model, dims={"batch": 2, "seq": 4})
        size = len(json.dumps(imported.graph.to_json(), separators=(",", ":")))
        # then the estimate is a floor of the document (a refusal never turns a model away
        # whose document would have fit)
        assert least == nodes * NODE_BYTES <= size
    # and a 96-layer encoder (4,896 operations) is far inside the 16 MiB bound
    per_layer, _ = estimate_document(encoder)
    assert per_layer * 96 * NODE_BYTES < 16 * 2**20 / 2


# --- the bounds of the child process -----------------------------------------------------------


def test_an_import_past_its_time_limit_is_killed_and_says_so(
    client: Client, user: Any, other_user: Any, settings: Any
) -> None:
    # given imports limited to 0.05 s (less than the child takes to start)
    settings.GEON_IMPORT_SECONDS = 0.05
    client.force_login(user)
    body = import_as_the_worker(client, "mlp.onnx", (MODELS / "mlp.onnx").read_bytes())
    # then the child is killed at the limit and the import fails naming it
    assert_refused(
        body,
        '"mlp.onnx" took longer than 0.05 s to import; an import may take at most 0.05 s '
        "(GEON_IMPORT_SECONDS): import a smaller model",
    )
    another_client_answered(other_user)


def test_an_import_past_its_memory_limit_fails_and_says_so(
    client: Client, user: Any, other_user: Any, settings: Any
) -> None:
    # given imports limited to 64 MiB of address space, and a model with a 4 MiB weight
    settings.GEON_IMPORT_MAX_MEMORY_BYTES = 64 * 2**20
    weight = numpy_helper.from_array(np.ones((1024, 1024), np.float32), "w")
    data = model_of(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="/mm")], [1, 1024], [1, 1024],
        initializer=[weight],
    ).SerializeToString()  # fmt: skip
    client.force_login(user)
    body = import_as_the_worker(client, "wide.onnx", data)
    # then the child's allocation fails, not the worker's, and the import names the limit
    assert_refused(
        body,
        '"wide.onnx" needed more than 64.0 MiB of memory to import; an import may use at most '
        "64.0 MiB (GEON_IMPORT_MAX_MEMORY_BYTES): import a smaller model",
    )
    another_client_answered(other_user)
    # and with the default limit the same model imports
    settings.GEON_IMPORT_MAX_MEMORY_BYTES = 2 * 2**30
    body = import_as_the_worker(client, "wide.onnx", data)
    assert (body["status"], body["error"]) == ("done", "")


# --- a real worker ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_worker_refuses_the_bombs_and_still_converts_alices_model(
    celery_worker: Any, user: Any, other_user: Any
) -> None:
    bob = Client()
    bob.force_login(other_user)
    alice = Client()
    alice.force_login(user)
    # when bob uploads the Loop and the Pad, and alice then uploads the MLP
    bombs = [upload(bob, "loop.onnx", loop_bomb()), upload(bob, "pad.onnx", pad_bomb())]
    mine = upload(alice, "mlp.onnx", (MODELS / "mlp.onnx").read_bytes())
    locations = [(bob, r["Location"]) for r in bombs] + [(alice, mine["Location"])]
    bodies: list[dict[str, Any]] = []
    deadline = time.monotonic() + 90
    for who, location in locations:
        body = who.get(location).json()
        while body["status"] in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(0.1)
            body = who.get(location).json()
        bodies.append(body)
    # then the bombs are refused by the worker, and alice's graph is made soon after
    assert [b["status"] for b in bodies] == ["failed", "failed", "done"]
    assert LOOP_REFUSAL in bodies[0]["error"] and PAD_REFUSAL in bodies[1]["error"]
    assert list(Graph.objects.values_list("owner", flat=True)) == [user.pk]
    assert ModelImport.objects.filter(status="failed", graph=None).count() == 2


# --- the CLI ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "build", "parts"),
    [
        ("Loop", loop_bomb, [LOOP_REFUSAL]),
        ("Pad", pad_bomb, [PAD_REFUSAL]),
        ("150,000 nodes", many_nodes, [MANY_REFUSAL]),
    ],
)
def test_the_cli_refuses_the_bombs_in_one_line(
    label: str, build: Any, parts: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "bomb.onnx"
    path.write_bytes(build())
    # when a user imports it
    done = geon("import", str(path), "-o", str(tmp_path / "out.json"))
    # then it exits 2 with one line naming what is wrong, and writes nothing
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("geon import: ")
    for part in parts:
        assert part in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bomb.onnx"]


def test_the_cli_reads_no_external_data_beside_the_model(tmp_path: Path) -> None:
    # given a model whose weight's data is said to be in a file beside it
    model = onnx.load(MODELS / "mlp.onnx")
    external(model.graph.initializer[0], "weights.bin")
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    answers = []
    for exists in (False, True):
        if exists:  # the right number of bytes: onnx.load would have read it as the weight
            size = int(np.prod(model.graph.initializer[0].dims)) * 4
            (tmp_path / "weights.bin").write_bytes(bytes(size))
        done = geon("import", str(path), "-o", str(tmp_path / "out.json"))
        assert done.returncode == 2
        answers.append(done.stderr)
    # then both answers are the same refusal, and no document was written
    name = model.graph.initializer[0].name
    assert (
        answers[0]
        == answers[1]
        == f'geon import: the model keeps the data of "{name}" {EXTERNAL}\n'
    )
    assert not (tmp_path / "out.json").exists()
