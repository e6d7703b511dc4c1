"""The Celery application: ``celery -A geon worker`` runs the tasks of ``geon.runs.tasks`` and
``geon.learn.tasks`` (puzzle checks).

Configuration comes from Django settings (``CELERY_*``): geon's ``geonfs://`` transport
(:mod:`geon.runs.broker`, kombu's filesystem transport with atomic writes) under
``GEON_DATA_DIR/broker`` by default, Redis when ``REDIS_URL`` is set.

A worker, once ready, reconciles the runs and renders that workers which are gone left behind
(:mod:`geon.runs.tasks` connects that to ``worker_ready``).
"""

from __future__ import annotations

import os

from celery import Celery

from geon.runs import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "geon.settings")
broker.register()

app = Celery("geon")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["geon.runs", "geon.learn", "geon.graphs"])
