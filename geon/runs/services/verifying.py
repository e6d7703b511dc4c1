"""``geon verify`` from the editor (issue 31, docs/engines.md): a version's placed plan compiled
by XLA in a worker, its collectives matched with geon's predictions, for the plans panel.

``POST /graphs/<id>/verify`` checks everything before any work (access: anyone who may view the
graph; jax installed, else 400 ``engine_unavailable``; the version; a plan placed in it, else
422 ``not_placed``; a lowering that takes it, else 422 ``cannot_run``; a mesh within the
worker's ``GEON_JAX_DEVICES``, else 413 ``limit_exceeded``), then answers the report cached for
that version (200), or queues the worker's compile and answers 202 with the ``location`` to poll
(``GET`` the same path: 200 once answered, 202 while pending, 404 ``not_requested`` when nobody
asked). Answers live in the ``plan_costs`` cache (:mod:`geon.graphs.services.plan_jobs`' cache,
shared by the worker and every web process), per graph and version: no database row is written,
and a refusal the worker met is cached and answered as it was (422).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.conf import settings
from django.core.cache import caches

from geon.celery import app
from geon.core.errors import GeonError
from geon.core.graph import Graph as Document
from geon.graphs.models import Graph
from geon.graphs.services import User, check_can_view, version_of
from geon.runs.services.errors import RunRefused
from geon.runs.services.execution import jax_devices
from geon.runs.services.fields import check_version

__all__ = ["VERIFY_TASK", "check_can_verify", "do_verify", "verify_answer"]

VERIFY_TASK = "geon.runs.verify_plan"
_CACHE = "plan_costs"


def _key(graph_id: Any, version: int) -> str:
    return f"geon:verify:{graph_id}:{version}"


def _location(graph: Graph, version: int) -> str:
    return f"/api/v1/graphs/{graph.pk}/verify?version={version}"


def check_can_verify(
    user: User, graph_id: uuid.UUID | str, version: Any = None
) -> tuple[Graph, int, Document]:
    """The graph, the version's number and its document, once a verify of it may be asked for
    (see the module docstring); :class:`RunRefused` naming what is wrong."""
    from geon.interop.jax_engine import INSTALL, jax_available
    from geon.interop.jax_export import to_jax
    from geon.interop.jax_lowering import lower_shardings

    graph = check_can_view(user, graph_id)
    stored = check_version(graph, version)
    if not jax_available():
        raise RunRefused(
            "engine_unavailable", f"verify compiles with XLA and needs jax, which is not "
            f"installed: {INSTALL}",
        )  # fmt: skip
    document = Document.from_json(stored.document)
    try:
        lowering = lower_shardings(document)
        to_jax(document)
    except GeonError as error:
        raise RunRefused("cannot_run", str(error), status=422) from None
    if not lowering.mesh_axes:
        raise RunRefused(
            "not_placed",
            f'graph "{graph.title}" version {stored.number} has no placed plan; switch to a '
            "plan (or shard an operation on a mesh) first",
            status=422,
        )
    if lowering.devices > jax_devices():
        raise RunRefused(
            "limit_exceeded",
            f"the plan's mesh needs {lowering.devices} devices; the worker gives JAX "
            f"{jax_devices()} (GEON_JAX_DEVICES)",
            status=413,
        )
    return graph, stored.number, document


def verify_answer(graph: Graph, version: int, *, queue: bool) -> tuple[int, dict[str, Any]]:
    """(status, body): the cached report (200), the job pending (202, queued now when ``queue``
    and none was queued in the last ``GEON_PLAN_COST_JOB_RETRY_SECONDS``), or 404 when none was
    asked for and ``queue`` is false. A cached refusal is raised again."""
    key = _key(graph.pk, version)
    entry = caches[_CACHE].get(key)
    if isinstance(entry, dict) and "answer" in entry:
        return 200, entry["answer"]
    if isinstance(entry, dict) and "refused" in entry:
        raise RunRefused(entry["refused"], entry["message"], status=422)
    now = time.time()
    pending = isinstance(entry, dict) and "pending" in entry
    recent = pending and now - entry["pending"] < settings.GEON_PLAN_COST_JOB_RETRY_SECONDS
    if not queue and not pending:
        raise RunRefused(
            "not_requested",
            f"nobody asked to verify version {version} of this graph; POST to this path first",
            status=404,
        )
    if queue and not recent:
        caches[_CACHE].set(key, {"pending": now}, settings.GEON_PLAN_COST_CACHE_SECONDS)
        app.send_task(VERIFY_TASK, args=(str(graph.pk), version))
    return 202, {
        "status": "queued",
        "message": "a worker compiles the plan with XLA and matches its collectives: poll the "
        "location until it answers 200",
        "location": _location(graph, version),
    }


def do_verify(graph_id: str, version: int) -> None:
    """Compile a version's plan with XLA in the worker and cache the report (or the refusal)."""
    from geon.core.plans.cost import load_profile
    from geon.interop.jax_engine import force_host_devices
    from geon.interop.verify import verify

    key = _key(graph_id, version)
    graph = Graph.objects.filter(pk=graph_id).first()
    if graph is None:
        caches[_CACHE].delete(key)
        return
    try:
        force_host_devices(jax_devices())
        document = Document.from_json(version_of(graph, version).document)
        report = verify(document, load_profile(None))
        entry: dict[str, Any] = {"answer": report}
    except GeonError as error:
        entry = {"refused": "cannot_run", "message": str(error)}
    caches[_CACHE].set(key, entry, settings.GEON_PLAN_COST_CACHE_SECONDS)
