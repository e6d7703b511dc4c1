"""``POST /api/v1/graphs/<id>/runs`` queues a run (the editor's Run button posts there); every
refusal answers JSON and stores nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from geon.core.errors import DocumentError
from geon.graphs.models import GraphVersion
from geon.graphs.services import do_create_graph, do_delete_graph
from geon.runs.models import Run
from geon.runs.services import do_execute_run, run_json

pytestmark = pytest.mark.django_db


def post(client: Client, graph_id: Any, body: str = '{"backend": "numpy"}') -> Any:
    return client.post(f"/api/v1/graphs/{graph_id}/runs", body, content_type="application/json")


def test_the_owner_queues_a_run(
    client: Client, user: Any, graph: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # when ann asks for a run
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, graph.pk)
    # then it is stored as queued, and publishing + handing it to the worker wait for the commit
    run = Run.objects.get()
    assert response.status_code == 202
    assert response.json() == run_json(run)
    assert {k: response.json()[k] for k in ("status", "version", "backend", "progress")} == {
        "status": "queued",
        "version": 1,
        "backend": "numpy",
        "progress": 0.0,
    }
    assert (run.requested_by, run.graph_version) == (user, graph.current_version)
    assert len(callbacks) == 2


@pytest.mark.parametrize(
    ("label", "who", "target", "body", "status", "error"),
    [
        (
            "anonymous visitor",
            None,
            "graph",
            '{"backend": "numpy"}',
            401,
            {
                "code": "not_authenticated",
                "message": "sign in, or send an API token as 'Authorization: Bearer <token>'",
            },
        ),
        (
            "another user",
            "other",
            "graph",
            '{"backend": "numpy"}',
            404,
            {
                "code": "not_found",
                "message": 'graph "{graph}" does not exist or you do not have access to it',
            },
        ),
        (
            "unknown graph",
            "owner",
            "00000000-0000-4000-8000-000000000000",
            '{"backend": "numpy"}',
            404,
            {
                "code": "not_found",
                "message": 'graph "00000000-0000-4000-8000-000000000000" does not exist or you '
                "do not have access to it",
            },
        ),
        (
            "unknown backend",
            "owner",
            "graph",
            '{"backend": "tpu"}',
            400,
            {
                "code": "invalid_backend",
                "message": 'backend "tpu" is not known; expected one of "numpy", "cupy"',
            },
        ),
        (
            "body that is not an object",
            "owner",
            "graph",
            "[1, 2]",
            400,
            {
                "code": "invalid_body",
                "message": 'the request body is not a JSON object; expected e.g. {"sharded": true}',
            },
        ),
        (
            "body that is not JSON",
            "owner",
            "graph",
            "backend=numpy",
            400,
            {
                "code": "invalid_body",
                "message": 'the request body is not a JSON object; expected e.g. {"sharded": true}',
            },
        ),
    ],
)
def test_refused_runs_answer_json_and_store_nothing(
    label: str,
    who: str | None,
    target: str,
    body: str,
    status: int,
    error: dict[str, str],
    client: Client,
    user: Any,
    other_user: Any,
    graph: Any,
) -> None:
    if who is not None:
        client.force_login(user if who == "owner" else other_user)
    graph_id = graph.pk if target == "graph" else uuid.UUID(target)
    response = post(client, graph_id, body)
    expected = {k: v.replace("{graph}", str(graph.pk)) for k, v in error.items()}
    assert (response.status_code, response.json()) == (status, {"error": expected})
    assert Run.objects.count() == 0


def test_a_graph_with_error_issues_is_not_run(
    client: Client, user: Any, loom_document: dict[str, Any]
) -> None:
    # given a graph whose first tensor has an unknown dtype
    loom_document["nodes"][0]["body"]["dtype"] = "int33"
    broken = do_create_graph(owner=user, title="Broken", document=loom_document)
    client.force_login(user)
    # when ann asks for a run
    response = post(client, broken.pk)
    # then it is refused with the issues, and nothing is stored
    error = response.json()["error"]
    assert (response.status_code, error["code"], error["message"]) == (
        409,
        "graph_has_errors",
        'graph "Broken" version 1 has 1 error issue(s); fix them before running',
    )
    assert [i["constraint"] for i in error["issues"]] == ["TensorDTypesAreValid"]
    assert Run.objects.count() == 0


def test_put_is_not_allowed(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    assert client.put(f"/api/v1/graphs/{graph.pk}/runs").status_code == 405


def test_executing_a_finished_run_again_changes_nothing(user: Any, graph: Any) -> None:
    # given a run that has been executed
    run = Run.objects.create(graph_version=graph.current_version, requested_by=user)
    do_execute_run(run.pk)
    before = run_json(Run.objects.get(pk=run.pk))
    # when the task is delivered a second time
    do_execute_run(run.pk)
    # then the run is as it was
    assert (before["status"], before["progress"]) == ("done", 1.0)
    assert [(o["label"], o["shape"], o["dtype"]) for o in before["result"]["outputs"]] == [
        ("z", [10, 5], "int32")
    ]
    assert run_json(Run.objects.get(pk=run.pk)) == before


def test_a_run_the_executor_cannot_do_fails_with_its_message(
    user: Any, loom_document: dict[str, Any]
) -> None:
    # given a graph whose operation uses a custom kernel (valid, but the executor has none)
    op = next(n for n in loom_document["nodes"] if n.get("label") == "op:add")
    op["body"]["kernel"] = "my:blend"
    custom = do_create_graph(owner=user, title="Custom", document=loom_document)
    run = Run.objects.create(graph_version=custom.current_version, requested_by=user)
    # when it executes
    do_execute_run(run.pk)
    # then it failed with a message naming the operation by its label, and the kernel
    run.refresh_from_db()
    assert (run.status, run.error, run.result, run.progress) == (
        "failed",
        f'operation "{op["label"]}" has kernel "my:blend", which the executor does not implement; '
        'expected a catalogue kernel such as "op:add"',
        {},
        0.0,
    )


def test_a_stored_version_cannot_be_changed(graph: Any) -> None:
    version = GraphVersion.objects.get(graph=graph)
    stored = json.dumps(version.document, sort_keys=True)
    version.document = {"id": "x", "nodes": []}
    with pytest.raises(DocumentError) as raised:
        version.save()
    assert str(raised.value) == 'graph version "1" is immutable; store a new version instead'
    assert json.dumps(GraphVersion.objects.get(pk=version.pk).document, sort_keys=True) == stored


@pytest.mark.parametrize("model", ["run", "render"])
def test_the_admin_lists_and_shows_runs_and_renders(
    model: str, client: Client, django_user_model: Any, graph: Any
) -> None:
    # given a run and a render of ann's graph, and a superuser
    from geon.runs.models import Render

    run = Run.objects.create(graph_version=graph.current_version, sharded=True, seed=1)
    render = Render.objects.create(
        graph_version=graph.current_version, format="svg", content_hash="ab" * 32
    )
    admin = django_user_model.objects.create_superuser("root", password="x")
    client.force_login(admin)
    pk = run.pk if model == "run" else render.pk
    # when the superuser opens the list and the row
    listed = client.get(f"/admin/runs/{model}/")
    shown = client.get(f"/admin/runs/{model}/{pk}/change/")
    # then both pages answer and name the row
    assert (listed.status_code, shown.status_code) == (200, 200)
    expected = str(run) if model == "run" else str(render)
    assert expected in shown.content.decode()


def test_the_files_of_a_graph_are_named_for_deletion_and_deleted(
    user: Any, graph: Any, loom_document: dict[str, Any]
) -> None:
    # given a done run and a drawn diagram of ann's graph, and a run of another graph
    from geon.runs.models import Render
    from geon.runs.services import (
        do_delete_files,
        do_render,
        document_hash,
        files_of_graph,
    )

    run = Run.objects.create(graph_version=graph.current_version, seed=0)
    do_execute_run(run.pk)
    render = Render.objects.create(
        graph_version=graph.current_version,
        format="dot",
        content_hash=document_hash(graph.current_version.document),
    )
    do_render(render.pk)
    other = do_create_graph(owner=user, title="Other", document=loom_document)
    kept = Run.objects.create(graph_version=other.current_version, seed=0)
    do_execute_run(kept.pk)
    run.refresh_from_db()
    render.refresh_from_db()
    # when the graph's files are listed and deleted
    names = files_of_graph(graph.pk)
    do_delete_files([*names, "runs/0/gone.npz"])
    # then exactly its results and diagram are gone; the other graph's results stay
    assert names == [f"runs/{run.pk}/results.npz", f"renders/{render.content_hash}.dot"]
    assert (
        run.results.storage.exists(run.results.name),
        render.file.storage.exists(render.file.name),
    ) == (False, False)
    kept.refresh_from_db()
    assert kept.results.storage.exists(kept.results.name)


def test_deleting_a_graph_deletes_its_stored_files_once_committed(
    user: Any, graph: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a done run of ann's graph with its results on disk
    run = Run.objects.create(graph_version=graph.current_version, seed=0)
    do_execute_run(run.pk)
    run.refresh_from_db()
    storage, name = run.results.storage, run.results.name
    assert storage.exists(name)
    # when ann deletes the graph and the deletion commits
    with django_capture_on_commit_callbacks(execute=True):
        do_delete_graph(user, graph.pk)
    # then the graph, its runs and the results file are gone
    assert (Run.objects.filter(pk=run.pk).exists(), storage.exists(name)) == (False, False)
