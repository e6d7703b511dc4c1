"""Abandoned reviews (issue 35): a model import stopped in ``review`` for its axes' names keeps
its upload until they are given; one left there over ``GEON_IMPORT_REVIEW_HOURS`` is swept by
the worker's sweeper (:func:`geon.runs.services.sweep.sweep_reviews`): the upload deleted, the
import ``expired`` with the reason, which ``GET /api/v1/imports/<id>`` answers and a late
``POST /imports/<id>/names`` is refused with."""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from geon.graphs.models import Graph
from geon.runs.models import ModelImport
from geon.runs.services.imports import do_import
from geon.runs.services.sweep import sweep_reviews

pytestmark = pytest.mark.django_db

API = "/api/v1"
ENCODER = Path(__file__).resolve().parent.parent / "interop" / "models" / "encoder.onnx"
#: The module (``geon.runs.services`` exports its ``sweep`` function under the same name).
sweeper = importlib.import_module("geon.runs.services.sweep")
EXPIRED = (
    "nobody named its axes within 2 h of the import (GEON_IMPORT_REVIEW_HOURS), so its upload "
    "was deleted; import the model again to name them"
)


@pytest.fixture(autouse=True)
def no_import_files(settings: Any) -> None:
    """Each test starts without files of imports (the data folder outlives the database), and
    with reviews kept 2 hours."""
    shutil.rmtree(Path(django_settings.DATA_DIR) / "files" / "imports", ignore_errors=True)
    settings.GEON_IMPORT_REVIEW_HOURS = 2


def _in_review(client: Client, capture: Callable[..., Any], review: str = "true") -> ModelImport:
    model = SimpleUploadedFile("encoder.onnx", ENCODER.read_bytes())
    with capture():
        answer = client.post(
            f"{API}/imports", {"model": model, "dims": "batch=3", "review": review}
        )
        assert answer.status_code == 202
    found = ModelImport.objects.get(pk=answer.json()["id"])
    do_import(found.pk)
    found.refresh_from_db()
    return found


def _upload_path(found: ModelImport) -> Path:
    return Path(found.upload.path)


def test_an_import_left_in_review_past_the_hours_is_expired_and_its_upload_deleted(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # given ann's import stopped in review, its upload kept for the names
    found = _in_review(client, django_capture_on_commit_callbacks)
    assert found.status == ModelImport.Status.REVIEW
    upload = _upload_path(found)
    assert upload.is_file()
    # when the sweeper runs 2 h and 1 minute after it stopped in review, and that commits
    assert found.review_since is not None
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_reviews(found.review_since + timedelta(hours=2, minutes=1)) == 1
    # then the upload is gone and the import says why it expired
    assert not upload.exists()
    body = client.get(f"{API}/imports/{found.pk}").json()
    assert (body["status"], body["error"], body["graph"], body["weights"]) == (
        "expired", EXPIRED, None, None,
    )  # fmt: skip
    # and names sent now are refused with that reason; no graph is made
    late = client.post(f"{API}/imports/{found.pk}/names", {"names": {"d4": "heads"}},
                       content_type="application/json")  # fmt: skip
    assert late.status_code == 409
    assert late.json()["error"]["message"] == f'model import "encoder.onnx" is expired: {EXPIRED}'
    assert Graph.objects.count() == 0
    # and a message for it still queued leaves it as it is
    do_import(found.pk)
    found.refresh_from_db()
    assert (found.status, found.error) == (ModelImport.Status.EXPIRED, EXPIRED)


def test_a_review_younger_than_the_hours_and_finished_imports_are_kept(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # given an import in review and one done without review
    waiting = _in_review(client, django_capture_on_commit_callbacks)
    done = _in_review(client, django_capture_on_commit_callbacks, review="false")
    assert done.status == ModelImport.Status.DONE
    # when the sweeper runs 1 h 59 min after the review began
    assert waiting.review_since is not None and done.review_since is None
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_reviews(waiting.review_since + timedelta(hours=1, minutes=59)) == 0
    # then the review keeps its upload and can still be named
    waiting.refresh_from_db()
    assert waiting.status == ModelImport.Status.REVIEW and _upload_path(waiting).is_file()
    # and long after, only the review expires; the done import and its graph stay
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_reviews(done.created + timedelta(days=30)) == 1
        assert sweep_reviews(done.created + timedelta(days=31)) == 0  # once is enough
    done.refresh_from_db()
    assert done.status == ModelImport.Status.DONE and done.graph is not None
    assert client.get(f"{API}/imports/{waiting.pk}").json()["status"] == "expired"


def test_the_hours_count_from_entering_review_not_from_the_upload(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # given ann's import that waited 3 h in the queue before the worker stopped it in review
    found = _in_review(client, django_capture_on_commit_callbacks)
    assert found.review_since is not None
    ModelImport.objects.filter(pk=found.pk).update(created=found.review_since - timedelta(hours=3))
    # when the sweeper runs 1 h after it entered review (4 h after the upload)
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_reviews(found.review_since + timedelta(hours=1)) == 0
    # then it is still in review, its upload kept; 2 h 1 min after entering review it expires
    found.refresh_from_db()
    assert found.status == ModelImport.Status.REVIEW and _upload_path(found).is_file()
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_reviews(found.review_since + timedelta(hours=2, minutes=1)) == 1


def test_a_review_without_review_since_expires_counting_from_the_upload(
    client: Client, user: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client.force_login(user)
    # given ann's import in review with no review_since (a row from before the field)
    found = _in_review(client, django_capture_on_commit_callbacks)
    ModelImport.objects.filter(pk=found.pk).update(review_since=None)
    # when the sweeper runs 1 h 59 min after the upload, it is kept
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_reviews(found.created + timedelta(hours=1, minutes=59)) == 0
    found.refresh_from_db()
    assert found.status == ModelImport.Status.REVIEW and _upload_path(found).is_file()
    path = _upload_path(found)
    # then 2 h 1 min after the upload it expires (review_since__lt alone skipped it for ever),
    # its upload deleted and the reason given
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_reviews(found.created + timedelta(hours=2, minutes=1)) == 1
    found.refresh_from_db()
    assert (found.status, found.error, found.upload.name) == ("expired", EXPIRED, "")
    assert not path.exists()


def test_a_failing_run_sweep_does_not_stop_the_review_sweep(
    client: Client,
    user: Any,
    django_capture_on_commit_callbacks: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client.force_login(user)
    # given an import left in review 3 days ago, and a run sweep that fails (database away)
    found = _in_review(client, django_capture_on_commit_callbacks)
    ModelImport.objects.filter(pk=found.pk).update(review_since=found.created - timedelta(days=3))

    def sweep(now: Any = None) -> dict[str, int]:
        raise RuntimeError("the database is away")

    monkeypatch.setattr(sweeper, "sweep", sweep)
    monkeypatch.setattr(sweeper.db_connection, "close", lambda: None)  # the test's transaction
    # when the sweeper's round runs
    with django_capture_on_commit_callbacks(execute=True):
        sweeper.sweep_once()
    # then the failure is logged by name and the review is still expired
    assert "sweep failed: sweep" in caplog.text
    found.refresh_from_db()
    assert found.status == ModelImport.Status.EXPIRED
