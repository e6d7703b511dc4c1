"""The Celery application: ``celery -A geon worker`` runs the tasks of ``geon.runs.tasks``.

Configuration comes from Django settings (``CELERY_*``): the ``filesystem://`` broker under
``GEON_DATA_DIR`` by default, Redis when ``REDIS_URL`` is set.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "geon.settings")

app = Celery("geon")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["geon.runs"])
