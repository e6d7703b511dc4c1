"""``GET /api/v1/graphs/<id>/render.{svg,png,dot}``: 202 with a ``Location`` until a worker has
drawn the diagram, then the file; cached per document hash; per persona; refusals store nothing."""

from __future__ import annotations

import shutil
import time
import xml.etree.ElementTree as ET
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from geon.graphs.models import GraphVersion
from geon.graphs.services import do_create_graph
from geon.runs.models import Render
from geon.runs.services import do_render, document_hash

API = "/api/v1"
SVG = "{http://www.w3.org/2000/svg}svg"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def no_render_files() -> None:
    """Each test starts with no render files (render ids and hashes repeat between tests)."""
    shutil.rmtree(Path(settings.DATA_DIR) / "files" / "renders", ignore_errors=True)


def render_files() -> list[str]:
    root = Path(settings.DATA_DIR) / "files" / "renders"
    return sorted(p.name for p in root.rglob("*") if p.is_file())


def not_found(graph: Any) -> dict[str, Any]:
    message = f'graph "{graph.pk}" does not exist or you do not have access to it'
    return {"error": {"code": "not_found", "message": message}}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("persona", "status"),
    [("owner", 202), ("editor", 202), ("viewer", 202), ("stranger", 404)],
)
def test_who_may_ask_for_a_diagram(
    persona: str, status: int, client: Client, people: dict[str, Any], graph: Any
) -> None:
    client.force_login(people[persona])
    # when the persona asks for the SVG for the first time
    response = client.get(f"{API}/graphs/{graph.pk}/render.svg")
    # then anyone with a role is told to poll while the render waits for a worker
    assert response.status_code == status
    if status == 404:
        assert response.json() == not_found(graph)
        assert (Render.objects.count(), render_files()) == (0, [])
        return
    version = graph.current_version
    location = f"/api/v1/graphs/{graph.pk}/render.svg?version=1"
    assert (response["Location"], response["Retry-After"]) == (location, "1")
    assert response.json() == {
        "status": "queued",
        "message": "version 1 is being rendered as svg; poll the Location until it answers 200 "
        "with the file",
        "location": location,
        "render": {
            "graphId": str(graph.pk),
            "version": 1,
            "format": "svg",
            "hash": document_hash(version.document),
            "status": "queued",
            "error": "",
        },
    }
    render = Render.objects.get()
    assert (render.graph_version, render.format, render.status, render.file.name) == (
        version, "svg", "queued", "",
    )  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("label", "path", "status", "error"),
    [
        ("unknown format", "render.pdf", 404,
         {"code": "unknown_format", "message": 'render format "pdf" is not supported; expected '
          'one of ("svg", "png", "dot")'}),
        ("unknown version", "render.svg?version=4", 404,
         {"code": "not_found", "message": 'version "4" of graph "{title}" does not exist; '
          "expected 1 to 1"}),
        ("version 0", "render.png?version=0", 400,
         {"code": "invalid_request", "message": 'version "0" is not valid; expected an integer '
          "from 1 to 9223372036854775807 such as 1"}),
    ],
)  # fmt: skip
def test_a_bad_render_request_is_refused_and_stores_nothing(
    label: str,
    path: str,
    status: int,
    error: dict[str, str],
    client: Client,
    user: Any,
    graph: Any,
) -> None:
    client.force_login(user)
    response = client.get(f"{API}/graphs/{graph.pk}/{path}")
    message = error["message"].replace("{graph}", str(graph.pk)).replace("{title}", graph.title)
    assert (response.status_code, response.json()) == (
        status,
        {"error": {**error, "message": message}},
    )
    assert Render.objects.count() == 0


@pytest.mark.django_db
def test_a_stranger_gets_the_same_answer_for_a_bad_format_as_for_a_good_one(
    client: Client, people: dict[str, Any], graph: Any
) -> None:
    client.force_login(people["stranger"])
    response = client.get(f"{API}/graphs/{graph.pk}/render.pdf")
    assert (response.status_code, response.json()) == (404, not_found(graph))


@pytest.mark.django_db
def test_versions_with_the_same_document_share_one_render(
    client: Client, user: Any, graph: Any, loom_document: dict[str, Any]
) -> None:
    # given a second graph holding the same document, and the first one's DOT drawn
    twin = do_create_graph(owner=user, title="Twin", document=loom_document)
    client.force_login(user)
    client.get(f"{API}/graphs/{graph.pk}/render.dot")
    do_render(Render.objects.get().pk)
    # when the twin's DOT is asked for
    response = client.get(f"{API}/graphs/{twin.pk}/render.dot")
    # then it is served from the same render at once
    render = Render.objects.get()
    assert (response.status_code, response["Content-Type"]) == (
        200, "text/vnd.graphviz; charset=utf-8",
    )  # fmt: skip
    assert response.content.startswith(b"digraph geon {")
    assert response["ETag"] == f'"{render.content_hash}.dot"'
    assert (render.status, render.graph_version.graph) == ("done", graph)
    assert render_files() == [f"{render.content_hash}.dot"]


@pytest.mark.django_db
def test_each_version_is_drawn_with_its_own_issues(
    client: Client, user: Any, graph: Any, loom_document: dict[str, Any]
) -> None:
    # given version 2 of the graph, whose tensor t1 has an unknown dtype
    loom_document["nodes"][0]["body"]["dtype"] = "int33"
    second = GraphVersion.objects.create(graph=graph, number=2, snapshot=loom_document)
    graph.current_version = second
    graph.save()
    client.force_login(user)
    # when both versions' DOT is drawn
    for number in (1, 2):
        client.get(f"{API}/graphs/{graph.pk}/render.dot?version={number}")
    for render in Render.objects.all():
        do_render(render.pk)
    old = client.get(f"{API}/graphs/{graph.pk}/render.dot?version=1").content.decode()
    new = client.get(f"{API}/graphs/{graph.pk}/render.dot").content.decode()
    # then only version 2 outlines a node as an error issue
    assert (old.count('class="issue-error"'), new.count('class="issue-error"')) == (0, 1)
    assert Render.objects.count() == 2


@pytest.mark.django_db
def test_drawing_twice_changes_nothing(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    client.get(f"{API}/graphs/{graph.pk}/render.dot")
    render = Render.objects.get()
    do_render(render.pk)
    before = Render.objects.values().get()
    # when the task is delivered again
    do_render(render.pk)
    # then the render is as it was
    assert Render.objects.values().get() == before
    assert before["status"] == "done"


@pytest.mark.django_db
def test_a_diagram_too_large_to_lay_out_fails_with_the_reason(
    client: Client, user: Any, loom_document: dict[str, Any]
) -> None:
    # given the loom example (6 nodes) with 1,000 more tensors
    template = loom_document["nodes"][0]
    loom_document["nodes"] += [
        {**template, "id": f"00000000-0000-4000-8000-{i:012d}", "label": f"extra{i}"}
        for i in range(1000)
    ]
    big = do_create_graph(owner=user, title="Big", document=loom_document)
    client.force_login(user)
    client.get(f"{API}/graphs/{big.pk}/render.svg")
    # when the worker's service draws it
    do_render(Render.objects.get().pk)
    # then the render failed with the renderer's reason, and asking again answers it
    response = client.get(f"{API}/graphs/{big.pk}/render.svg")
    message = (
        "the diagram has 1,006 nodes; the limit is 1,000 (render a smaller graph, or its DOT "
        "text and lay it out yourself)"
    )
    assert (response.status_code, response.json()) == (
        422, {"error": {"code": "render_failed", "message": message}},
    )  # fmt: skip
    assert (Render.objects.get().status, render_files()) == ("failed", [])


@pytest.mark.django_db
def test_a_lost_file_is_drawn_again(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    client.get(f"{API}/graphs/{graph.pk}/render.dot")
    do_render(Render.objects.get().pk)
    # when the data folder loses the file
    shutil.rmtree(Path(settings.DATA_DIR) / "files" / "renders")
    response = client.get(f"{API}/graphs/{graph.pk}/render.dot")
    # then the render is queued again
    assert (response.status_code, Render.objects.get().status) == (202, "queued")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("label", "status", "waited", "handed_again"),
    [
        ("queued a moment ago", "queued", 5, False),
        ("queued too long ago", "queued", 61, True),
        ("drawing too long", "running", 61, True),
    ],
)
def test_a_render_waiting_too_long_is_handed_to_a_worker_again(
    label: str,
    status: str,
    waited: float,
    handed_again: bool,
    client: Client,
    user: Any,
    graph: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a render handed to a worker ``waited`` seconds ago
    client.force_login(user)
    client.get(f"{API}/graphs/{graph.pk}/render.svg")
    long_ago = timezone.now() - timedelta(seconds=waited)
    Render.objects.update(status=status, queued=long_ago)
    # when the client polls
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.get(f"{API}/graphs/{graph.pk}/render.svg")
    # then it is still 202, and the render is queued again only when it waited too long
    render = Render.objects.get()
    assert (response.status_code, len(callbacks)) == (202, 1 if handed_again else 0)
    assert (render.status, render.queued > long_ago) == (
        ("queued", True) if handed_again else (status, False)
    )


@pytest.mark.django_db
def test_a_render_handed_over_too_often_fails_with_the_reason(
    client: Client, user: Any, graph: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given a render that workers were handed GEON_RUN_MAX_ATTEMPTS times and never drew
    client.force_login(user)
    client.get(f"{API}/graphs/{graph.pk}/render.svg")
    long_ago = timezone.now() - timedelta(seconds=61)
    Render.objects.update(status="running", queued=long_ago, attempts=3)
    # when the client polls
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.get(f"{API}/graphs/{graph.pk}/render.svg")
    # then it is not handed over again: it failed, and the answer says why
    assert (response.status_code, len(callbacks)) == (422, 0)
    error = response.json()["error"]
    assert error["code"] == "render_failed"
    assert "no worker finished drawing this; it was handed to a worker 3 times" in error["message"]
    assert Render.objects.get().status == "failed"


# --- a real worker ----------------------------------------------------------------------------


def poll(client: Client, url: str, timeout: float = 60.0) -> Any:
    """Ask ``url`` until it answers something other than 202; the answers in order."""
    answers = []
    deadline = time.monotonic() + timeout
    while True:
        response = client.get(url)
        answers.append(response)
        if response.status_code != 202 or time.monotonic() > deadline:
            return answers
        url = response["Location"]
        time.sleep(0.1)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [("svg", "image/svg+xml"), ("png", "image/png"), ("dot", "text/vnd.graphviz; charset=utf-8")],
)
def test_the_worker_draws_the_diagram_and_polling_gets_it(
    fmt: str, content_type: str, celery_worker: Any, client: Client, user: Any, graph: Any
) -> None:
    client.force_login(user)
    # when ann asks for the diagram and follows the Location until it is there
    answers = poll(client, f"{API}/graphs/{graph.pk}/render.{fmt}?download=1")
    # then the first answer was 202 and the last the file, as an attachment
    last = answers[-1]
    assert (answers[0].status_code, last.status_code) == (202, 200)
    assert answers[0]["Location"] == f"/api/v1/graphs/{graph.pk}/render.{fmt}?version=1&download=1"
    assert last["Content-Type"] == content_type
    assert last["Content-Disposition"] == f'attachment; filename="loom-add-v1.{fmt}"'
    if fmt == "svg":
        assert ET.fromstring(last.content).tag == SVG
    elif fmt == "png":
        assert last.content[:8] == PNG_SIGNATURE
    else:
        assert last.content.decode().startswith("digraph geon {")
    render = Render.objects.get()
    assert (render.status, render.error, render_files()) == (
        "done", "", [f"{render.content_hash}.{fmt}"],
    )  # fmt: skip
    # and later requests get the file at once, without the attachment header
    again = client.get(f"{API}/graphs/{graph.pk}/render.{fmt}")
    assert (again.status_code, again.content, again.has_header("Content-Disposition")) == (
        200, last.content, False,
    )  # fmt: skip
