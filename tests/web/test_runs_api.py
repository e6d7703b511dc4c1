"""``/api/v1/`` runs: create (JSON or an ``.npz`` upload), list, status, results download.

Every request is made as each persona (owner, editor, viewer, stranger); every refusal answers the
JSON error envelope and leaves the database and the data folder as they were.
"""

from __future__ import annotations

import io
import shutil
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from geon.accounts.models import ApiToken
from geon.graphs.models import ShardPlan
from geon.graphs.services import do_create_graph
from geon.runs.models import Render, Run
from geon.runs.services import do_execute_run, run_json

API = "/api/v1"
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
INPUTS_LISTED = '"t1" (shape (10, 5), dtype int32), "t0" (shape (10, 5), dtype int32)'


@pytest.fixture(autouse=True)
def no_run_files() -> None:
    """Each test starts with no run files (run ids repeat between tests)."""
    shutil.rmtree(Path(settings.DATA_DIR) / "files" / "runs", ignore_errors=True)


def npz(**arrays: Any) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def npz_compressed(**arrays: Any) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def npz_member(array: np.ndarray[Any, Any]) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def upload(content: bytes, name: str = "in.npz") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


def ints(seed: int) -> np.ndarray[Any, Any]:
    return np.arange(50, dtype=np.int32).reshape(10, 5) * seed


def run_files() -> list[str]:
    """Every file stored for runs under the data folder."""
    root = Path(settings.DATA_DIR) / "files" / "runs"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def error(status: int, code: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": code, "message": message}}


def not_found(graph: Any) -> tuple[int, dict[str, Any]]:
    message = f'graph "{graph.pk}" does not exist or you do not have access to it'
    return error(404, "not_found", message)


# --- creating runs ----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("persona", "status"),
    [("owner", 202), ("editor", 202), ("viewer", 403), ("stranger", 404)],
)
def test_who_may_queue_a_run(
    persona: str, status: int, client: Client, people: dict[str, Any], graph: Any
) -> None:
    # given a signed-in persona
    client.force_login(people[persona])
    before = run_files()
    # when they ask for a sharded run with a seed
    response = client.post(
        f"{API}/graphs/{graph.pk}/runs", {"sharded": True, "seed": 7}, "application/json"
    )
    # then owners and editors get a queued run; viewers are forbidden; strangers see nothing
    assert response.status_code == status
    if status == 202:
        run = Run.objects.get()
        assert response.json() == run_json(run)
        assert response["Location"] == f"/api/v1/runs/{run.pk}"
        assert (run.status, run.sharded, run.seed, run.backend, run.requested_by) == (
            "queued", True, 7, "numpy", people[persona],
        )  # fmt: skip
        assert (run.graph_version, bool(run.inputs)) == (graph.current_version, False)
        return
    expected = (
        error(403, "forbidden", f'your role on graph "{graph.title}" is "viewer"; this needs '
              '"editor" or "owner"')
        if persona == "viewer"
        else not_found(graph)
    )  # fmt: skip
    assert (response.status_code, response.json()) == expected
    assert Run.objects.count() == 0
    assert run_files() == before


@pytest.mark.django_db
def test_a_run_without_body_is_a_logical_run_of_the_current_version_with_seed_0(
    client: Client, user: Any, graph: Any
) -> None:
    client.force_login(user)
    response = client.post(f"{API}/graphs/{graph.pk}/runs")
    run = Run.objects.get()
    assert response.status_code == 202
    assert {k: response.json()[k] for k in ("version", "sharded", "seed", "uploadedInputs")} == {
        "version": 1,
        "sharded": False,
        "seed": 0,
        "uploadedInputs": False,
    }
    assert (run.sharded, run.seed, run.status) == (False, 0, "queued")


@pytest.mark.django_db
def test_json_numbers_with_a_zero_fraction_are_integers(
    client: Client, user: Any, graph: Any
) -> None:
    client.force_login(user)
    body = {"version": 1.0, "seed": 2.0}
    response = client.post(f"{API}/graphs/{graph.pk}/runs", body, "application/json")
    assert (response.status_code, response.json()["seed"], Run.objects.get().seed) == (202, 2, 2)


@pytest.mark.django_db
def test_a_run_of_a_shard_plan_is_sharded_and_records_the_plan(
    client: Client, user: Any, graph: Any
) -> None:
    plan = ShardPlan.objects.create(graph=graph, name="rows")
    client.force_login(user)
    response = client.post(f"{API}/graphs/{graph.pk}/runs", {"plan": plan.pk}, "application/json")
    run = Run.objects.get()
    assert (response.status_code, response.json()["plan"], response.json()["sharded"]) == (
        202, plan.pk, True,
    )  # fmt: skip
    assert (run.plan, run.sharded) == (plan, True)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("label", "body", "expected"),
    [
        ("plan of another graph", {"plan": "other"},
         error(404, "plan_not_found", 'graph "Loom add" has no shard plan "{other}"; expected one '
               'of {rows} ("rows")')),
        ("plan run that is not sharded", {"plan": "rows", "sharded": False},
         error(400, "invalid_request", 'plan "rows" is given with sharded "false"; a run of a '
               "plan is sharded (leave sharded out, or set it true)")),
    ],
)  # fmt: skip
def test_a_bad_plan_is_refused(
    label: str,
    body: dict[str, Any],
    expected: tuple[int, dict[str, Any]],
    client: Client,
    user: Any,
    graph: Any,
    loom_document: dict[str, Any],
) -> None:
    rows = ShardPlan.objects.create(graph=graph, name="rows")
    elsewhere = do_create_graph(owner=user, title="Elsewhere", document=loom_document)
    other = ShardPlan.objects.create(graph=elsewhere, name="cols")
    ids = {"rows": rows.pk, "other": other.pk}
    client.force_login(user)
    sent = {**body, "plan": ids[body["plan"]]}
    response = client.post(f"{API}/graphs/{graph.pk}/runs", sent, "application/json")
    status, envelope = expected
    message = envelope["error"]["message"].format(**ids)
    assert (response.status_code, response.json()) == (
        status, {"error": {**envelope["error"], "message": message}},
    )  # fmt: skip
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_an_older_version_can_be_run(
    client: Client, user: Any, graph: Any, loom_document: dict[str, Any]
) -> None:
    # given a graph with a second version
    from geon.graphs.models import GraphVersion

    second = GraphVersion.objects.create(graph=graph, number=2, snapshot=loom_document, author=user)
    graph.current_version = second
    graph.save()
    client.force_login(user)
    # when version 1 is asked for (as a form field)
    response = client.post(f"{API}/graphs/{graph.pk}/runs", {"version": "1"})
    # then the run is of version 1
    assert (response.status_code, response.json()["version"]) == (202, 1)
    assert Run.objects.get().graph_version.number == 1


@pytest.mark.django_db
def test_an_uploaded_npz_is_stored_with_the_run(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    # when ann uploads both inputs, t0 by its id and t1 by its label
    content = npz(**{T0: ints(1), "t1": ints(2)})
    response = client.post(f"{API}/graphs/{graph.pk}/runs", {"inputs": upload(content)})
    # then the run has the file, no seed, and nothing else happened yet
    run = Run.objects.get()
    assert response.status_code == 202
    assert (response.json()["uploadedInputs"], response.json()["seed"]) == (True, None)
    assert run.inputs.name == f"runs/{run.pk}/inputs.npz"
    assert run_files() == [f"{run.pk}/inputs.npz"]
    assert Path(run.inputs.path).read_bytes() == content


@pytest.mark.django_db
def test_an_upload_with_some_inputs_and_a_seed_is_accepted(
    client: Client, user: Any, graph: Any
) -> None:
    client.force_login(user)
    response = client.post(
        f"{API}/graphs/{graph.pk}/runs", {"inputs": upload(npz(t1=ints(2))), "seed": "5"}
    )
    assert (response.status_code, Run.objects.get().seed) == (202, 5)


BAD_UPLOADS = [
    (
        "not a zip",
        b"hello, not a zip",
        {},
        error(400, "invalid_npz", 'inputs file "in.npz" is not an .npz file; expected one '
              "written by numpy.savez or numpy.savez_compressed"),
    ),
    (
        "pickled object array",
        npz(t0=np.array([{"x": 1}, None], dtype=object), t1=ints(1)),
        {},
        error(400, "invalid_npz", 'inputs file "in.npz": array "t0" holds Python objects, which '
              "are not loaded (allow_pickle=False); expected numeric or boolean arrays"),
    ),
    (
        "member that is not an array",
        zipped({"t0.npy": npz_member(ints(1)), "notes.txt": b"hello"}),
        {},
        error(400, "invalid_npz", 'inputs file "in.npz": "notes.txt" is not an array; expected '
              "only .npy members, as numpy.savez writes"),
    ),
    (
        "unknown key",
        npz(t0=ints(1), t1=ints(1), tx=ints(1)),
        {},
        error(422, "invalid_inputs", 'inputs file "in.npz" has an array "tx", which is not an '
              f"input of the graph; expected one of {INPUTS_LISTED}"),
    ),
    (
        "key of a computed tensor",
        npz(t0=ints(1), t1=ints(1), z=ints(1)),
        {},
        error(422, "invalid_inputs", 'inputs file "in.npz" has an array "z", which is not an '
              f"input of the graph; expected one of {INPUTS_LISTED}"),
    ),
    (
        "one tensor twice",
        npz(t0=ints(1), t1=ints(1), **{T0: ints(1)}),
        {},
        error(422, "invalid_inputs", f'inputs file "in.npz" has arrays "t0" and "{T0}" for the '
              'same input "t0"; expected one'),
    ),
    (
        "wrong shape",
        npz(t0=np.zeros((5, 10), np.int32), t1=ints(1)),
        {},
        error(422, "invalid_inputs", 'inputs file "in.npz": input for tensor "t0" has shape '
              "(5, 10); expected (10, 5)"),
    ),
    (
        "wrong dtype",
        npz(t0=ints(1).astype(np.float64), t1=ints(1)),
        {},
        error(422, "invalid_inputs", 'inputs file "in.npz": input "t0" has dtype float64; '
              "expected int32 or a dtype that casts to it without changing kind"),
    ),
    (
        "missing input and no seed",
        npz(t0=ints(1)),
        {},
        error(422, "invalid_inputs", 'inputs file "in.npz" has no array for input "t1" (shape '
              "(10, 5), dtype int32); add it, or give a seed to generate the inputs the file "
              "lacks"),
    ),
    (
        "too large",
        npz(t0=ints(1), t1=ints(1)),
        {"GEON_MAX_BYTES": "300"},
        error(413, "inputs_too_large", 'inputs file "in.npz" has {size} B; the limit is 300 B '
              "(GEON_MAX_BYTES)"),
    ),
    (
        "too large once unpacked",
        npz_compressed(t0=ints(1), t1=np.zeros((1000, 1000), np.int8)),
        {"GEON_MAX_BYTES": "100000"},
        error(413, "inputs_too_large", 'inputs file "in.npz" holds 977.0 KiB of arrays; the '
              "limit is 97.7 KiB (GEON_MAX_BYTES)"),
    ),
]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("label", "content", "environ", "expected"), BAD_UPLOADS, ids=[c[0] for c in BAD_UPLOADS]
)
def test_a_bad_upload_is_refused_before_anything_is_stored(
    label: str,
    content: bytes,
    environ: dict[str, str],
    expected: tuple[int, dict[str, Any]],
    client: Client,
    user: Any,
    graph: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    client.force_login(user)
    before = run_files()
    response = client.post(f"{API}/graphs/{graph.pk}/runs", {"inputs": upload(content)})
    status, body = expected
    message = body["error"]["message"].replace("{size}", str(len(content)))
    assert (response.status_code, response.json()) == (
        status, {"error": {**body["error"], "message": message}},
    )  # fmt: skip
    assert Run.objects.count() == 0
    assert run_files() == before


def test_the_too_large_upload_case_is_really_compressed_small() -> None:
    # the "too large once unpacked" case above must pass the size check of the upload itself
    assert len(npz_compressed(t0=ints(1), t1=np.zeros((1000, 1000), np.int8))) < 100_000


BAD_REQUESTS = [
    ("unknown backend", {"backend": "tpu"}, {},
     error(400, "invalid_backend", 'backend "tpu" is not known; expected one of "numpy", "cupy"')),
    ("sharded not a boolean", {"sharded": "maybe"}, {},
     error(400, "invalid_request", 'sharded "maybe" is not valid; expected true or false')),
    ("negative seed", {"seed": -1}, {},
     error(400, "invalid_request", 'seed "-1" is not valid; expected an integer from 0 to '
           "9223372036854775807 such as 0")),
    ("fractional seed", {"seed": 1.5}, {},
     error(400, "invalid_request", 'seed "1.5" is not valid; expected an integer from 0 to '
           "9223372036854775807 such as 0")),
    ("seed of text", {"seed": "abc"}, {},
     error(400, "invalid_request", 'seed "abc" is not valid; expected an integer from 0 to '
           "9223372036854775807 such as 0")),
    ("boolean seed", {"seed": True}, {},
     error(400, "invalid_request", 'seed "true" is not valid; expected an integer from 0 to '
           "9223372036854775807 such as 0")),
    ("version 0", {"version": 0}, {},
     error(400, "invalid_request", 'version "0" is not valid; expected an integer from 1 to '
           "9223372036854775807 such as 1")),
    ("unknown version", {"version": 9}, {},
     error(404, "not_found", 'version "9" of graph "{title}" does not exist; expected 1 to 1')),
    ("unknown field", {"shards": 4}, {},
     error(400, "invalid_request", 'field "shards" is not known; expected any of "backend", '
           '"engine", "version", "sharded", "seed", "plan", "intermediates"')),
    ("body not an object", [1, 2], {},
     error(400, "invalid_body", 'the request body is not a JSON object; expected e.g. '
           '{"sharded": true}')),
    ("tensor over the element limit", {}, {"GEON_MAX_ELEMENTS": "10"},
     error(413, "limit_exceeded", 'tensor "t1" has 50 elements; the limit is 10 elements per '
           "tensor (GEON_MAX_ELEMENTS)")),
    ("run over the byte limit", {}, {"GEON_MAX_BYTES": "100"},
     error(413, "limit_exceeded", "the run needs 600 B (planned arena 200 B plus inputs); the "
           'limit is 100 B (GEON_MAX_BYTES); the largest tensor is "t1" (200 B)')),
    ("sharded run over the byte limit", {"sharded": True}, {"GEON_MAX_BYTES": "700"},
     error(413, "limit_exceeded", "the sharded run and the logical run it is checked against "
           "need 800 B; the limit is 700 B (GEON_MAX_BYTES)")),
]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("label", "body", "environ", "expected"), BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS]
)
def test_a_bad_request_is_refused_and_stores_nothing(
    label: str,
    body: Any,
    environ: dict[str, str],
    expected: tuple[int, dict[str, Any]],
    client: Client,
    user: Any,
    graph: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    client.force_login(user)
    response = client.post(f"{API}/graphs/{graph.pk}/runs", body, "application/json")
    status, envelope = expected
    message = envelope["error"]["message"].replace("{graph}", str(graph.pk))
    message = message.replace("{title}", graph.title)
    assert (response.status_code, response.json()) == (
        status, {"error": {**envelope["error"], "message": message}},
    )  # fmt: skip
    assert Run.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("label", "body", "content_type", "expected"),
    [
        ("body that is not JSON", "sharded=1", "application/json",
         error(400, "invalid_body", 'the request body is not a JSON object; expected e.g. '
               '{"sharded": true}')),
        ("another content type", "sharded=1", "text/plain",
         error(415, "unsupported_media_type", 'content type "text/plain" is not accepted; '
               'expected "application/json" or "multipart/form-data"')),
    ],
)  # fmt: skip
def test_a_body_that_cannot_be_read_is_refused(
    label: str,
    body: str,
    content_type: str,
    expected: tuple[int, dict[str, Any]],
    client: Client,
    user: Any,
    graph: Any,
) -> None:
    client.force_login(user)
    response = client.post(f"{API}/graphs/{graph.pk}/runs", body, content_type)
    assert (response.status_code, response.json()) == expected
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_a_body_over_the_size_limit_is_refused(
    client: Client, user: Any, graph: Any, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    client.force_login(user)
    body = {"seed": 1, "backend": "numpy" + " " * 100}
    response = client.post(f"{API}/graphs/{graph.pk}/runs", body, "application/json")
    assert (response.status_code, response.json()) == error(
        413, "too_large", "the request body is larger than 100 bytes"
    )
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_an_unknown_file_field_is_refused(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    response = client.post(
        f"{API}/graphs/{graph.pk}/runs", {"data": upload(npz(t0=ints(1)), "data.npz")}
    )
    assert (response.status_code, response.json()) == error(
        400, "invalid_request", 'file field "data" is not known; expected "inputs" (an .npz)'
    )
    assert (Run.objects.count(), run_files()) == (0, [])


@pytest.mark.django_db
def test_a_graph_with_error_issues_is_not_run(
    client: Client, user: Any, loom_document: dict[str, Any]
) -> None:
    loom_document["nodes"][0]["body"]["dtype"] = "int33"
    broken = do_create_graph(owner=user, title="Broken", document=loom_document)
    client.force_login(user)
    response = client.post(f"{API}/graphs/{broken.pk}/runs")
    body = response.json()["error"]
    assert (response.status_code, body["code"], body["message"]) == (
        409,
        "graph_has_errors",
        'graph "Broken" version 1 has 1 error issue(s); fix them before running',
    )
    assert [i["constraint"] for i in body["issues"]] == ["TensorDTypesAreValid"]
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_an_anonymous_visitor_is_asked_to_sign_in_everywhere(
    client: Client, user: Any, graph: Any
) -> None:
    run = Run.objects.create(graph_version=graph.current_version, requested_by=user)
    do_execute_run(run.pk)
    before = run_json(Run.objects.get())
    answers = [
        client.post(f"{API}/graphs/{graph.pk}/runs"),
        client.get(f"{API}/graphs/{graph.pk}/runs"),
        client.get(f"{API}/runs/{run.pk}"),
        client.get(f"{API}/runs/{run.pk}/results.npz"),
        client.get(f"{API}/graphs/{graph.pk}/render.svg"),
    ]
    message = "sign in, or send an API token as 'Authorization: Bearer <token>'"
    assert [(a.status_code, a.json()) for a in answers] == [
        error(401, "not_authenticated", message) for _ in answers
    ]
    assert [run_json(r) for r in Run.objects.all()] == [before]
    assert Render.objects.count() == 0


@pytest.mark.django_db
def test_a_script_with_an_api_token_runs_a_graph_and_downloads_the_results(
    client: Client, user: Any, graph: Any
) -> None:
    # given ann's API token and no session
    _, key = ApiToken.issue(user, "script")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    # when a script queues a run with inputs, the worker's service executes it, and the script
    # downloads the results
    content = npz(t0=ints(2), t1=ints(3))
    queued = client.post(f"{API}/graphs/{graph.pk}/runs", {"inputs": upload(content)}, **auth)
    do_execute_run(queued.json()["id"])
    results = client.get(f"{API}/runs/{queued.json()['id']}/results.npz", **auth)
    # then the run is ann's and the results are z = t0 + t1
    assert (queued.status_code, results.status_code) == (202, 200)
    assert Run.objects.get().requested_by == user
    with np.load(io.BytesIO(results.getvalue()), allow_pickle=False) as data:
        assert np.array_equal(data["z"], ints(5))


# --- reading runs -----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("persona", "status"),
    [("owner", 200), ("editor", 200), ("viewer", 200), ("stranger", 404)],
)
def test_who_may_list_and_read_runs(
    persona: str, status: int, client: Client, people: dict[str, Any], graph: Any
) -> None:
    # given two runs of ann's graph, one executed
    first = Run.objects.create(graph_version=graph.current_version, requested_by=people["owner"])
    do_execute_run(first.pk)
    second = Run.objects.create(graph_version=graph.current_version, sharded=True, seed=3)
    client.force_login(people[persona])
    # when the persona lists them and reads one
    listed = client.get(f"{API}/graphs/{graph.pk}/runs")
    read = client.get(f"{API}/runs/{first.pk}")
    # then whoever has a role sees both, newest first; a stranger sees neither
    assert (listed.status_code, read.status_code) == (status, status)
    first.refresh_from_db()
    if status == 200:
        assert listed.json() == {"runs": [run_json(second), run_json(first)]}
        assert read.json() == run_json(first)
    else:
        assert (listed.status_code, listed.json()) == not_found(graph)
        assert (read.status_code, read.json()) == error(
            404, "not_found", f'run "{first.pk}" does not exist or you do not have access to it'
        )


@pytest.mark.django_db
def test_a_done_run_reports_progress_timings_and_its_results(
    client: Client, user: Any, graph: Any
) -> None:
    # given a sharded run executed in this process
    run = Run.objects.create(graph_version=graph.current_version, sharded=True, seed=0)
    do_execute_run(run.pk)
    client.force_login(user)
    # when ann reads it
    body = client.get(f"{API}/runs/{run.pk}").json()
    # then it is done, with one logical operation and two applications timed, and no difference
    op = next(k for k in body["timings"]["operations"])
    assert (body["status"], body["progress"], body["error"]) == ("done", 1.0, "")
    assert body["max_abs_diff"] == {"z": 0.0} == body["result"]["max_abs_diff"]
    assert (len(body["timings"]["operations"]), len(body["timings"]["applications"])) == (1, 2)
    assert {k: body["step"][k] for k in ("done", "total", "fraction", "phase", "operationId")} == {
        "done": 3, "total": 3, "fraction": 1.0, "phase": "sharded", "operationId": op,
    }  # fmt: skip
    assert body["results"] == f"/api/v1/runs/{run.pk}/results.npz"
    assert [(o["label"], o["shape"], o["dtype"]) for o in body["result"]["outputs"]] == [
        ("z", [10, 5], "int32")
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("run_id", ["999999", "0", "99999999999999999999999"])
def test_an_unknown_run_is_not_found(run_id: str, client: Client, user: Any) -> None:
    client.force_login(user)
    for path in (f"{API}/runs/{run_id}", f"{API}/runs/{run_id}/results.npz"):
        response = client.get(path)
        assert (response.status_code, response.json()) == error(
            404, "not_found", f'run "{run_id}" does not exist or you do not have access to it'
        )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("persona", "status"),
    [("owner", 200), ("editor", 200), ("viewer", 200), ("stranger", 404)],
)
def test_who_may_download_results(
    persona: str, status: int, client: Client, people: dict[str, Any], graph: Any
) -> None:
    # given a run of uploaded inputs, executed
    client.force_login(people["owner"])
    content = npz(t0=ints(1), t1=ints(3))
    client.post(f"{API}/graphs/{graph.pk}/runs", {"inputs": upload(content)})
    run = Run.objects.get()
    do_execute_run(run.pk)
    client.force_login(people[persona])
    # when the persona downloads the results
    response = client.get(f"{API}/runs/{run.pk}/results.npz")
    # then they get z = t0 + t1, keyed by label
    assert response.status_code == status
    if status == 404:
        assert (
            response.json()
            == error(
                404, "not_found", f'run "{run.pk}" does not exist or you do not have access to it'
            )[1]
        )
        return
    assert response["Content-Disposition"] == f'attachment; filename="run-{run.pk}-results.npz"'
    with np.load(io.BytesIO(response.getvalue()), allow_pickle=False) as data:
        assert data.files == ["z"]
        assert np.array_equal(data["z"], ints(4))
        assert data["z"].dtype == np.int32


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("label", "setup", "message"),
    [
        ("queued", None, 'run "{run}" is queued; results can be downloaded once it is done'),
        ("failed", "my:blend", 'run "{run}" failed: operation "{op}" has kernel "my:blend", which '
         'the executor does not implement; expected a catalogue kernel such as "op:add"; '
         "results can be downloaded once it is done"),
    ],
)  # fmt: skip
def test_results_of_an_unfinished_run_are_not_ready(
    label: str,
    setup: str | None,
    message: str,
    client: Client,
    user: Any,
    loom_document: dict[str, Any],
) -> None:
    op = next(n for n in loom_document["nodes"] if n.get("label") == "op:add")
    if setup is not None:
        op["body"]["kernel"] = setup
    graph = do_create_graph(owner=user, title="G", document=loom_document)
    assert graph.current_version is not None
    run = Run.objects.create(graph_version=graph.current_version, requested_by=user)
    if setup is not None:
        do_execute_run(run.pk)
    client.force_login(user)
    response = client.get(f"{API}/runs/{run.pk}/results.npz")
    assert (response.status_code, response.json()) == error(
        409, "results_not_ready", message.format(run=run.pk, op=op["label"])
    )


# --- a real worker ----------------------------------------------------------------------------


def wait_for_run(client: Client, run_id: int, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(f"{API}/runs/{run_id}").json()
        if body["status"] in ("done", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


@pytest.mark.django_db(transaction=True)
def test_a_sharded_run_through_the_worker_matches_the_logical_run(
    celery_worker: Any, client: Client, user: Any, graph: Any
) -> None:
    # given ann's loom graph and inputs she uploads
    client.force_login(user)
    t0, t1 = ints(1), ints(5)
    # when she asks for a sharded run and waits for the worker
    response = client.post(
        f"{API}/graphs/{graph.pk}/runs",
        {"inputs": upload(npz(t0=t0, t1=t1)), "sharded": "true"},
    )
    assert response.status_code == 202
    body = wait_for_run(client, response.json()["id"])
    # then the worker process ran it Application by Application with no difference
    assert (body["status"], body["error"], body["workerPid"]) == ("done", "", celery_worker.pid)
    assert body["max_abs_diff"] == {"z": 0.0}
    assert (body["sharded"], body["progress"], len(body["timings"]["applications"])) == (
        True, 1.0, 2,
    )  # fmt: skip
    # and the results round-trip: z = t0 + t1 under its label
    results = client.get(body["results"])
    with np.load(io.BytesIO(results.getvalue()), allow_pickle=False) as data:
        assert data.files == ["z"]
        assert np.array_equal(data["z"], t0 + t1)
    run = Run.objects.get()
    assert (run.status, run.results.name) == ("done", f"runs/{run.pk}/results.npz")
    assert run_files() == [f"{run.pk}/inputs.npz", f"{run.pk}/results.npz"]


# --- one result as JSON (the editor's heat map) ---------------------------------------------------


@pytest.mark.django_db
def test_one_result_as_json_with_its_sharded_difference(
    client: Client, user: Any, graph: Any
) -> None:
    # given a sharded run of z = t0 + t1 executed with uploaded inputs
    client.force_login(user)
    queued = client.post(
        f"{API}/graphs/{graph.pk}/runs",
        {"inputs": upload(npz(t0=ints(2), t1=ints(3))), "sharded": "true"},
    )
    run_id = queued.json()["id"]
    do_execute_run(run_id)
    # when ann reads the result z
    answer = client.get(f"{API}/runs/{run_id}/results/z")
    # then it carries its shape, dtype, range, every value and no sharded difference
    body = answer.json()
    assert answer.status_code == 200
    expected = ints(5)
    assert {k: body[k] for k in ("run", "key", "shape", "dtype", "at", "viewShape", "limit")} == {
        "run": run_id,
        "key": "z",
        "shape": [10, 5],
        "dtype": "int32",
        "at": [],
        "viewShape": [10, 5],
        "limit": 65_536,
    }
    assert body["values"] == [float(v) for v in expected.ravel()]
    assert (body["min"], body["max"]) == (float(expected.min()), float(expected.max()))
    assert body["maxAbsDiff"] == 0.0


@pytest.mark.django_db
def test_a_result_view_that_cannot_be_answered_is_refused(
    client: Client, user: Any, graph: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a logical run, done, and one still queued
    client.force_login(user)
    done = Run.objects.create(graph_version=graph.current_version, requested_by=user)
    do_execute_run(done.pk)
    queued = Run.objects.create(graph_version=graph.current_version, requested_by=user)
    monkeypatch.setattr("geon.runs.services.results.RESULT_VIEW_LIMIT", 49)
    # when ann asks for a result that is not there, a slice of a 2-D one, a view over the limit
    # and a result of the queued run
    unknown = client.get(f"{API}/runs/{done.pk}/results/w")
    sliced = client.get(f"{API}/runs/{done.pk}/results/z?at=1")
    large = client.get(f"{API}/runs/{done.pk}/results/z")
    waiting = client.get(f"{API}/runs/{queued.pk}/results/z")
    # then each is refused with what would be valid
    assert (unknown.status_code, unknown.json()) == error(
        404, "unknown_result", f'run "{done.pk}" has no result "w"; expected one of "z"'
    )
    assert (sliced.status_code, sliced.json()) == error(
        400, "invalid_slice", 'result "z" has rank 2; a slice "1" is only for rank 3 and more'
    )
    assert (large.status_code, large.json()) == error(
        413,
        "view_too_large",
        'the view of result "z" has 50 values (shape [10, 5]); at most 49 are sent; download '
        "results.npz for all of it",
    )
    assert (waiting.status_code, waiting.json()) == error(
        409,
        "results_not_ready",
        f'run "{queued.pk}" is queued; results can be downloaded once it is done',
    )
