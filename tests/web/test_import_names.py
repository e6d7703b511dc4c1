"""The axes' names of a model import (issue 35): ``POST /api/v1/imports`` with ``review=true``
stops in ``review`` with the axes the worker read (name as imported, length, role, proposed
name, where the model shows it) and no graph; ``POST /api/v1/imports/<id>/names`` takes the
names the person accepts, checked like every axis name, and the worker makes the graph with
them. Without ``review`` the graph is made with the proposed names at once."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from geon.graphs.models import Graph
from geon.runs.models import ModelImport
from geon.runs.services.imports import do_import

pytestmark = pytest.mark.django_db

API = "/api/v1"
ENCODER = Path(__file__).resolve().parent.parent / "interop" / "models" / "encoder.onnx"

#: The encoder layer's axes longer than 1 (d_model 32, 4 heads of 8, ff 64, 10 tokens), as the
#: worker proposes them: (name as imported, length, role, proposed name).
PROPOSED = [
    ("batch", 3, "batch", "batch"),
    ("d10", 10, "sequence", "sequence"),
    ("d10_2", 10, "sequence", "sequence_q"),
    ("d4", 4, "heads", "heads"),
    ("d8", 8, "head_size", "head_size"),
    ("d32", 32, "hidden", "hidden"),
    ("d64", 64, "ffn", "ffn"),
    ("d3", 3, "", "d3"),
]


@pytest.fixture(autouse=True)
def no_import_files() -> None:
    """Each test starts without files of imports (the data folder outlives the database)."""
    shutil.rmtree(Path(django_settings.DATA_DIR) / "files" / "imports", ignore_errors=True)


def _upload(client: Client, **fields: str) -> Any:
    model = SimpleUploadedFile("encoder.onnx", ENCODER.read_bytes())
    return client.post(f"{API}/imports", {"model": model, "dims": "batch=3", **fields})


def _axes_of(graph: Graph) -> list[str]:
    version = graph.current_version
    assert version is not None
    document = version.document
    return sorted(n["label"] for n in document["nodes"] if n["type"].endswith("/Axis"))


def _in_review(client: Client, capture: Callable[..., Any]) -> ModelImport:
    with capture():
        assert _upload(client, review="true").status_code == 202
    found = ModelImport.objects.get()
    do_import(found.pk)
    return found


def test_an_import_to_review_stops_with_its_axes_proposed_and_no_graph(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # when ann uploads the encoder layer to review its axes and the worker converts it
    found = _in_review(client, django_capture_on_commit_callbacks)
    # then it waits for her names, with no graph made
    body = client.get(f"{API}/imports/{found.pk}").json()
    assert (body["status"], body["step"], body["graph"], body["review"], body["names"]) == (
        "review", "waiting for the axes' names", None, True, None,
    )  # fmt: skip
    assert Graph.objects.count() == 0
    # and it lists each axis with its role, proposed name and where the model shows it
    wide = [a for a in body["axes"] if a["length"] > 1]
    assert [(a["name"], a["length"], a["role"], a["proposed"]) for a in wide] == PROPOSED
    assert wide[5]["seen"] == 'normalised by LayerNormalization "/layer/norm1/LayerNormalization"'
    # and a worker that sees it again leaves it in review
    do_import(found.pk)
    assert ModelImport.objects.get().status == "review"


def test_the_graph_is_made_with_the_names_accepted(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    found = _in_review(client, django_capture_on_commit_callbacks)
    # when ann renames the heads to h and accepts the rest as proposed
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            f"{API}/imports/{found.pk}/names",
            {"names": {"d4": "h"}},
            content_type="application/json",
        )
    # then the import is queued again, with every axis's name
    assert (response.status_code, response["Location"]) == (202, f"/api/v1/imports/{found.pk}")
    names = response.json()["names"]
    assert (response.json()["status"], len(callbacks)) == ("queued", 1)
    assert [names[name] for name, *_ in PROPOSED] == [
        "batch", "sequence", "sequence_q", "h", "head_size", "hidden", "ffn", "d3",
    ]  # fmt: skip
    # and once the worker has run, her graph carries those names
    do_import(found.pk)
    body = client.get(f"{API}/imports/{found.pk}").json()
    graph = Graph.objects.get()
    assert (body["status"], body["graph"]) == ("done", str(graph.pk))
    assert _axes_of(graph) == [
        "batch", "d1_43", "d1_44", "d1_45", "d3", "ffn", "h", "head_size", "hidden", "sequence",
        "sequence_q",
    ]  # fmt: skip


def test_the_review_reads_the_axes_only_and_the_model_is_converted_once(
    client: Client,
    user: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    # given the worker's two bounded children counted (the review's axes, the full conversion)
    from geon.interop import onnx_bounded

    runs: list[tuple[str, dict[str, Any]]] = []
    for name in ("import_in_child", "review_in_child"):
        real = getattr(onnx_bounded, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            answer = _real(*args, **kw)
            runs.append((_name, {"answered": answer}))
            return answer

        monkeypatch.setattr(onnx_bounded, name, counted)
    client.force_login(user)
    # when ann uploads the encoder to review and the worker reads it
    found = _in_review(client, django_capture_on_commit_callbacks)
    # then the child answered the axes alone: no document, no weights made or stored
    assert [name for name, _ in runs] == ["review_in_child"]
    assert runs[0][1]["answered"] == ModelImport.objects.get().axes
    assert not ModelImport.objects.get().weights.name
    assert not (Path(django_settings.DATA_DIR) / "files" / "imports" / str(found.pk) /
                "weights.npz").exists()  # fmt: skip
    # when she accepts the names and the worker runs again
    with django_capture_on_commit_callbacks():
        client.post(f"{API}/imports/{found.pk}/names", {"names": {}},
                    content_type="application/json")  # fmt: skip
    do_import(found.pk)
    # then the model was converted once, with her names, into the graph and its weights
    assert [name for name, _ in runs] == ["review_in_child", "import_in_child"]
    document, weights, axes = runs[1][1]["answered"]
    done = ModelImport.objects.get()
    assert done.status == "done" and weights
    # and the review listed exactly the axes the converted document declares (the oracle)
    assert runs[0][1]["answered"] == axes
    declared = {n["label"] for n in document["nodes"] if n["type"].endswith("/Axis")}
    assert {done.names[a["name"]] for a in axes} == declared


def test_without_review_the_graph_is_made_with_the_proposed_names(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # when ann uploads the encoder layer without asking to review
    with django_capture_on_commit_callbacks():
        _upload(client)
    found = ModelImport.objects.get()
    do_import(found.pk)
    # then the graph is made at once, its axes named as proposed
    graph = Graph.objects.get()
    assert {"batch", "sequence", "heads", "head_size", "hidden", "ffn"} <= set(_axes_of(graph))
    body = client.get(f"{API}/imports/{found.pk}").json()
    assert (body["status"], body["review"], body["names"]) == ("done", False, None)
    assert [a["proposed"] for a in body["axes"] if a["length"] > 1] == [p for *_, p in PROPOSED]


@pytest.mark.parametrize(
    ("label", "names", "code", "message"),
    [
        ("not an axis name", {"d4": "2 heads"}, "invalid_names",
         'the name for axis "d4": axis name "2 heads" is invalid; expected a letter or "_" '
         'followed by letters, digits or "_"'),
        ("not an axis", {"d5": "x"}, "invalid_names",
         'axis "d5" is not an axis of this model; expected one of "batch", "d10", "d10_2", '
         '"d4", "d8", "d32", "d64", "d3"'),
        ("one name twice", {"d4": "hidden"}, "invalid_names",
         'name "hidden" is given to axes "d4" and "d32"; expected one name per axis'),
        ("not text", {"d4": None}, "invalid_names",
         'the name for axis "d4" is None; expected text'),
    ],
)  # fmt: skip
def test_bad_names_are_refused_naming_them_and_change_nothing(
    client: Client,
    user: Any,
    django_capture_on_commit_callbacks: Callable[..., Any],
    label: str,
    names: dict[str, Any],
    code: str,
    message: str,
) -> None:
    client.force_login(user)
    found = _in_review(client, django_capture_on_commit_callbacks)
    # when ann posts a bad name
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            f"{API}/imports/{found.pk}/names", {"names": names}, content_type="application/json"
        )
    # then it is refused naming it, and the import still waits, nothing queued
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["message"]) == (code, message)
    found.refresh_from_db()
    assert (found.status, found.names, len(callbacks)) == ("review", None, 0)


def test_names_for_an_import_not_in_review_are_refused(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    with django_capture_on_commit_callbacks():
        _upload(client)
    found = ModelImport.objects.get()
    # when ann names the axes of an import still queued
    response = client.post(
        f"{API}/imports/{found.pk}/names", {"names": {}}, content_type="application/json"
    )
    # then it is refused with its status, and nothing changed
    assert response.status_code == 409
    assert response.json()["error"]["message"] == (
        'model import "encoder.onnx" is queued; names are taken while it is in review '
        "(imported with review=true, before its graph is made)"
    )
    found.refresh_from_db()
    assert (found.status, found.names) == ("queued", None)


def test_a_review_field_that_is_not_a_yes_or_no_is_refused(client: Client, user: Any) -> None:
    client.force_login(user)
    response = _upload(client, review="maybe")
    assert (response.status_code, response.json()["error"]["message"]) == (
        400, 'review "maybe" is not one of "true", "false", "1", "0"',
    )  # fmt: skip
    assert ModelImport.objects.count() == 0


def test_imports_in_review_count_in_the_cap_on_imports(
    client: Client, user: Any, settings: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    settings.GEON_IMPORTS_PER_USER = 2
    client.force_login(user)
    # given two of ann's imports in review, each keeping its upload for the names
    for _ in range(2):
        with django_capture_on_commit_callbacks():
            do_import(_upload(client, review="true").json()["id"])
    assert ModelImport.objects.filter(status="review").count() == 2
    # when she uploads a third
    response = _upload(client, review="true")
    # then she is told what holds her uploads and what to do, and it is not stored
    assert (response.status_code, response["Retry-After"], response.json()["error"]) == (
        429, "5", {"code": "too_many_imports", "message":
                   "2 of your model imports wait for their axes' names; at most 2 may wait at "
                   "once (GEON_IMPORTS_PER_USER): name the axes of one and wait for it to finish "
                   "converting (it counts until then), or let one in review expire (one left "
                   "24 h expires: GEON_IMPORT_REVIEW_HOURS)"},
    )  # fmt: skip
    assert ModelImport.objects.count() == 2
    # and naming one frees no slot while it converts (review -> queued, both held)
    one = ModelImport.objects.order_by("pk").first()
    assert one is not None
    with django_capture_on_commit_callbacks():
        named = client.post(
            f"{API}/imports/{one.pk}/names", {"names": {}}, content_type="application/json"
        )
    assert (named.status_code, ModelImport.objects.get(pk=one.pk).status) == (202, "queued")
    response = _upload(client, review="true")
    assert (response.status_code, response.json()["error"]["message"]) == (
        429, "1 of your model imports is still converting and 1 waits for its axes' names; at "
             "most 2 may wait at once (GEON_IMPORTS_PER_USER): wait for one to finish "
             "converting, or let one in review expire (one left 24 h expires: "
             "GEON_IMPORT_REVIEW_HOURS)",
    )  # fmt: skip
    # and once it has converted, she may upload again
    do_import(one.pk)
    assert _upload(client, review="true").status_code == 202


def test_names_are_refused_while_too_many_other_imports_convert(
    client: Client, user: Any, settings: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # given ann's import in review and another of hers queued, and the cap lowered to 1
    found = _in_review(client, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks():
        assert _upload(client).status_code == 202
    settings.GEON_IMPORTS_PER_USER = 1
    # when she sends the names of the one in review
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            f"{API}/imports/{found.pk}/names", {"names": {"d4": "h"}},
            content_type="application/json",
        )  # fmt: skip
    # then she is told to wait, naming the model, and it stays in review with nothing queued
    assert (response.status_code, response["Retry-After"], response.json()["error"]) == (
        429, "5", {"code": "too_many_imports", "message":
                   "1 of your model imports is still converting; at most 1 may wait at once "
                   '(GEON_IMPORTS_PER_USER): wait for one to finish, then send the names for '
                   '"encoder.onnx" again (it stays in review)'},
    )  # fmt: skip
    found.refresh_from_db()
    assert (found.status, found.names, len(callbacks)) == ("review", None, 0)


def test_another_person_or_a_visitor_cannot_name_the_axes(
    client: Client,
    user: Any,
    other_user: Any,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    client.force_login(user)
    found = _in_review(client, django_capture_on_commit_callbacks)
    # when bob sends names for ann's import
    client.force_login(other_user)
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            f"{API}/imports/{found.pk}/names", {"names": {"d4": "h"}},
            content_type="application/json",
        )  # fmt: skip
    # then it is as if there were none, and nothing changes
    assert (response.status_code, response.json()["error"]) == (
        404, {"code": "not_found",
              "message": f'model import "{found.pk}" does not exist or is not yours'},
    )  # fmt: skip
    # and a visitor who is not signed in is refused too
    client.logout()
    with django_capture_on_commit_callbacks() as more:
        anonymous = client.post(
            f"{API}/imports/{found.pk}/names", {"names": {"d4": "h"}},
            content_type="application/json",
        )  # fmt: skip
    assert anonymous.status_code == 401  # signed-out callers are 401 everywhere in the API
    found.refresh_from_db()
    assert (found.status, found.names, len(callbacks) + len(more)) == ("review", None, 0)
