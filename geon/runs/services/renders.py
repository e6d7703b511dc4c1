"""Renders (DESIGN.md §7): the Graphviz diagram of a version's document, drawn by a worker and
cached by the document's content hash and format. :func:`check_can_render` then
:func:`do_request_render` find the cached diagram or queue one for the worker's
:func:`do_render`; a render waiting longer than :data:`RENDER_RETRY_SECONDS` is handed over
again (drawing is idempotent)."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from geon import render
from geon.core.errors import GeonError
from geon.core.graph import Graph as Document
from geon.graphs.models import GraphVersion
from geon.graphs.services import User, check_can_view
from geon.runs.models import Render
from geon.runs.services.errors import RunRefused
from geon.runs.services.fields import check_version
from geon.runs.services.files import save_file
from geon.runs.services.worker import queue_render

log = logging.getLogger(__name__)

#: The content type of each render format.
CONTENT_TYPES = {
    "svg": "image/svg+xml",
    "png": "image/png",
    "dot": "text/vnd.graphviz; charset=utf-8",
}

#: A render still queued or drawing this many seconds after it was handed to a worker is handed
#: over again (its message was lost, or its worker died); drawing is idempotent.
RENDER_RETRY_SECONDS = 60.0

UNEXPECTED_RENDER_FAILURE = "the renderer failed unexpectedly; the worker log has the details"


def document_hash(document: dict[str, Any]) -> str:
    """SHA-256 of the document's canonical JSON: what a cached diagram is keyed by."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_can_render(
    user: User, graph_id: uuid.UUID | str, format: str, version: Any = None
) -> tuple[GraphVersion, str]:
    """The version to draw and the format, if ``user`` may see the graph and the format is one
    :mod:`geon.render` writes (else :class:`RunRefused` ``unknown_format``, 404)."""
    graph = check_can_view(user, graph_id)
    try:
        fmt = render.check_format(format)
    except render.RenderFormatError as error:
        raise RunRefused("unknown_format", str(error), status=404) from None
    return check_version(graph, version), fmt


def do_request_render(version: GraphVersion, format: str) -> Render:
    """The diagram of ``version`` as ``format``: the cached one for the same document, or a new
    one queued for the worker once committed. A finished render whose file has gone missing,
    and one waiting longer than :data:`RENDER_RETRY_SECONDS`, are queued again (the latter up
    to ``GEON_RUN_MAX_ATTEMPTS`` times, then failed)."""
    with transaction.atomic():
        found, created = Render.objects.select_for_update().get_or_create(
            content_hash=document_hash(version.document),
            format=format,
            defaults={"graph_version": version},
        )
        now = timezone.now()
        lost = found.status == Render.Status.DONE and not (
            found.file.name and found.file.storage.exists(found.file.name)
        )
        if lost:  # the file went missing: draw it again, a first attempt
            found.attempts = 0
        if lost or render_stuck(found, now):
            hand_over_render(found, now)
        elif created:
            transaction.on_commit(lambda: queue_render(found.pk))
    return found


def do_render(render_id: int) -> None:
    """Draw a queued diagram (in the worker), with the document's issues highlighted.
    Idempotent: a finished render is left as it is."""
    with transaction.atomic():
        found = (
            Render.objects.select_for_update()
            .select_related("graph_version")
            .filter(pk=render_id)
            .first()
        )
        if found is None or found.status in (Render.Status.DONE, Render.Status.FAILED):
            return
        found.status = Render.Status.RUNNING
        found.save(update_fields=["status"])
    try:
        graph = Document.from_json(found.graph_version.document)
        data = render.render(graph, render.check_format(found.format), graph.check())
        save_file(found.file, f"renders/{found.content_hash}.{found.format}", data)
        found.status = Render.Status.DONE
    except GeonError as error:
        found.status = Render.Status.FAILED
        found.error = str(error)
    except Exception:
        log.exception("render %s failed unexpectedly", render_id)
        found.status = Render.Status.FAILED
        found.error = UNEXPECTED_RENDER_FAILURE
    found.finished = timezone.now()
    found.save()


def render_json(found: Render, version: GraphVersion) -> dict[str, Any]:
    """A render's state as JSON (for the 202 answer while it is drawn)."""
    return {
        "graphId": str(version.graph_id),
        "version": version.number,
        "format": found.format,
        "hash": found.content_hash,
        "status": found.status,
        "error": found.error,
    }


def render_stuck(found: Render, now: datetime) -> bool:
    """Whether a render has waited for a worker longer than :data:`RENDER_RETRY_SECONDS`."""
    waiting = found.status in (Render.Status.QUEUED, Render.Status.RUNNING)
    return waiting and (now - found.queued).total_seconds() > RENDER_RETRY_SECONDS


def hand_over_render(found: Render, now: datetime) -> None:
    """Queue a render again (a new attempt), or fail it once it had all its attempts."""
    if found.attempts >= settings.GEON_RUN_MAX_ATTEMPTS:
        found.status = Render.Status.FAILED
        found.error = (
            f"no worker finished drawing this; it was handed to a worker {found.attempts} times"
        )
        found.finished = now
        found.save()
        return
    found.attempts += 1
    found.status = Render.Status.QUEUED
    found.file = ""
    found.finished = None
    found.queued = now
    found.save()
    pk = found.pk
    transaction.on_commit(lambda: queue_render(pk))
