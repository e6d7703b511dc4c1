"""``/healthz`` reports the database, the broker, a worker and the channel layer."""

from __future__ import annotations

from typing import Any

import pytest
from celery import Celery
from django.conf import settings
from django.test import Client

from geon.runs.health import check_worker


@pytest.mark.django_db(transaction=True)
def test_healthz_reports_every_part_when_the_stack_is_up(celery_worker: Any) -> None:
    response = Client().get("/healthz")
    report = response.json()
    redis = settings.REDIS_URL is not None
    assert (response.status_code, report["worker"]["ok"]) == (200, True)
    assert celery_worker.name in report["worker"]["workers"]
    assert report == {
        "status": "ok",
        "database": {"ok": True, "vendor": "postgresql" if settings.DATABASE_URL else "sqlite"},
        "broker": {"ok": True, "transport": "redis" if redis else "filesystem"},
        "worker": {"ok": True, "workers": report["worker"]["workers"]},
        "channel_layer": {
            "ok": True,
            "backend": "RedisChannelLayer" if redis else "InMemoryChannelLayer",
        },
    }


def test_no_worker_answering_is_reported(tmp_path: Any) -> None:
    # given a broker no worker listens on
    for sub in ("queue", "processed", "control"):
        (tmp_path / sub).mkdir()
    app = Celery("lonely", broker="filesystem://")
    app.conf.broker_transport_options = {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "processed_folder": str(tmp_path / "processed"),
        "control_folder": str(tmp_path / "control"),
    }
    # when the health check pings it
    result = check_worker(app, timeout=0.5)
    # then it says so
    assert result == {"ok": False, "workers": [], "error": "no worker answered within 0.5 s"}
