"""``/healthz`` reports the database, the broker, a worker, the channel layer and the supervision
of the worker to staff; anybody else gets the status alone."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from celery import Celery
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from geon.cli.serve import read_state, state_path
from geon.runs.health import answer, check_worker


@pytest.mark.django_db(transaction=True)
def test_healthz_reports_every_part_to_staff_when_the_stack_is_up(
    celery_worker: Any, django_user_model: Any
) -> None:
    client = Client()
    client.force_login(django_user_model.objects.create_user("root", is_staff=True))
    response = client.get("/healthz")
    report = response.json()
    redis = settings.REDIS_URL is not None
    assert (response.status_code, report["worker"]["ok"]) == (200, True)
    assert celery_worker.name in report["worker"]["workers"]
    assert report == {
        "status": "ok",
        "database": {"ok": True, "vendor": "postgresql" if settings.DATABASE_URL else "sqlite"},
        "broker": {"ok": True, "transport": "redis" if redis else "geonfs"},
        "worker": {"ok": True, "workers": report["worker"]["workers"]},
        "channel_layer": {
            "ok": True,
            "backend": "RedisChannelLayer" if redis else "InMemoryChannelLayer",
        },
        "supervision": {"supervised": False},
    }


@pytest.mark.django_db(transaction=True)
def test_anybody_but_staff_gets_the_status_alone(
    celery_worker: Any, user: Any, django_user_model: Any
) -> None:
    inactive = django_user_model.objects.create_user("gone", is_staff=True, is_active=False)
    for who in (AnonymousUser(), user, inactive):
        assert async_to_sync(answer)(who) == ({"status": "ok"}, 200)


@pytest.mark.django_db
def test_a_failing_part_is_unavailable_without_saying_which(tmp_path: Any) -> None:
    # given a broker no worker listens on
    body, code = async_to_sync(answer)(AnonymousUser(), lonely_app(tmp_path))
    # then the caller learns only that the service is unavailable
    assert (code, body) == (503, {"status": "unavailable"})


def test_the_supervision_that_serve_records_is_read_while_serve_lives() -> None:
    path = state_path()
    state = {"servePid": os.getpid(), "since": "t0", "workerPid": 7, "restarts": 2,
             "lastExit": {"status": -9, "at": "t1"}}  # fmt: skip
    try:
        path.write_text(json.dumps(state), encoding="utf-8")
        assert read_state() == {"supervised": True, **state}
        # a serve that is gone supervises nothing
        path.write_text(json.dumps({**state, "servePid": 2**22 + 1}), encoding="utf-8")
        assert read_state() == {"supervised": False}
        path.write_text("{torn", encoding="utf-8")
        assert read_state() == {"supervised": False}
    finally:
        path.unlink(missing_ok=True)


def lonely_app(folder: Any) -> Celery:
    """A Celery app on a broker of its own, in ``folder``, that no worker listens on."""
    app = Celery("lonely", broker="geonfs://")
    app.conf.broker_transport_options = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
    }
    return app


def test_no_worker_answering_is_reported(tmp_path: Any) -> None:
    # when the health check pings a broker no worker listens on
    result = check_worker(lonely_app(tmp_path), timeout=0.5)
    # then it says so
    assert result == {"ok": False, "workers": [], "error": "no worker answered within 0.5 s"}
