"""The Celery application: ``celery -A geon worker`` runs the tasks of ``geon.runs.tasks``.

Configuration comes from Django settings (``CELERY_*``): geon's ``geonfs://`` transport
(:mod:`geon.runs.broker`, kombu's filesystem transport with atomic writes) under
``GEON_DATA_DIR/broker`` by default, Redis when ``REDIS_URL`` is set.

A worker, once ready, reconciles the runs and renders that workers which are gone left behind,
then keeps doing so every ``GEON_RUN_SWEEP_SECONDS`` (:func:`geon.runs.services.sweep`).
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_ready

from geon.runs import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "geon.settings")
broker.register()

app = Celery("geon")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["geon.runs"])


@worker_ready.connect
def _start_sweeping(sender: Any = None, **kwargs: Any) -> None:
    """Reconcile stranded runs now and then periodically, in the worker's main process."""
    from geon.runs.services import start_sweeper

    start_sweeper()
