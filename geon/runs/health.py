"""``/healthz``: is each part of the stack answering? Database, broker, worker, channel layer.

Each check returns ``{"ok": bool, ...}`` with a short ``error`` when it fails; none raises.
:func:`answer` gives staff the whole report, with ``geon serve``'s supervision of the worker
(restarts, last exit), and everybody else only ``{"status": "ok" | "unavailable"}``: the details
name hosts, versions and errors that are nobody else's business.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from celery import Celery
from channels.layers import get_channel_layer
from django.db import connection

from geon.celery import app as celery_app
from geon.cli.serve import read_state

PING_TIMEOUT = 1.0
LAYER_TIMEOUT = 2.0


def check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any driver error means "not healthy"
        return {"ok": False, "vendor": connection.vendor, "error": str(error)}
    return {"ok": True, "vendor": connection.vendor}


def check_broker(app: Celery = celery_app) -> dict[str, Any]:
    transport = app.conf.broker_url.split(":", 1)[0]
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=PING_TIMEOUT)
    except Exception as error:
        return {"ok": False, "transport": transport, "error": str(error)}
    return {"ok": True, "transport": transport}


def check_worker(app: Celery = celery_app, timeout: float = PING_TIMEOUT) -> dict[str, Any]:
    try:
        replies = app.control.ping(timeout=timeout)
    except Exception as error:
        return {"ok": False, "workers": [], "error": str(error)}
    workers = sorted(name for reply in replies for name in reply)
    if not workers:
        return {"ok": False, "workers": [], "error": f"no worker answered within {timeout} s"}
    return {"ok": True, "workers": workers}


async def check_channel_layer() -> dict[str, Any]:
    layer = get_channel_layer()
    if layer is None:
        return {"ok": False, "backend": None, "error": "no channel layer is configured"}
    # the channels library's layer it is (geon's Redis layer only guards its teardown)
    backend = next(
        kind.__name__ for kind in type(layer).__mro__ if kind.__module__.startswith("channels")
    )
    try:
        channel = await layer.new_channel("healthz.")
        token = uuid.uuid4().hex
        await layer.send(channel, {"type": "healthz.ping", "token": token})
        message = await asyncio.wait_for(layer.receive(channel), LAYER_TIMEOUT)
    except Exception as error:
        return {"ok": False, "backend": backend, "error": str(error) or type(error).__name__}
    if message.get("token") != token:
        return {"ok": False, "backend": backend, "error": "the layer returned another message"}
    return {"ok": True, "backend": backend}


def _check_celery(app: Celery) -> tuple[dict[str, Any], dict[str, Any]]:
    return check_broker(app), check_worker(app)


async def report(app: Celery = celery_app) -> dict[str, Any]:
    """All four checks and the supervision; ``status`` is ``ok`` only when every check is."""
    database, (broker, worker), layer = await asyncio.gather(
        sync_to_async(check_database)(),
        sync_to_async(_check_celery, thread_sensitive=False)(app),
        check_channel_layer(),
    )
    parts = {"database": database, "broker": broker, "worker": worker, "channel_layer": layer}
    status = "ok" if all(part["ok"] for part in parts.values()) else "unavailable"
    return {"status": status, **parts, "supervision": read_state()}


async def answer(user: Any, app: Celery = celery_app) -> tuple[dict[str, Any], int]:
    """The ``/healthz`` answer for ``user`` and its HTTP status (200, or 503 when a part fails):
    the whole :func:`report` for active staff, only its ``status`` for anybody else."""
    full = await report(app)
    code = 200 if full["status"] == "ok" else 503
    if getattr(user, "is_staff", False) and getattr(user, "is_active", False):
        return full, code
    return {"status": full["status"]}, code
