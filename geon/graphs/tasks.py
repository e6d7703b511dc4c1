"""Celery tasks of graphs: a plan's cost, or plan against plan, past the web process's budget
(:mod:`geon.graphs.services.plan_jobs`), costed in the worker and cached for the web process's
poll to answer."""

from __future__ import annotations

import logging
import time
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.conf import settings

from geon.celery import app
from geon.core.errors import GeonError
from geon.core.graph import Graph as Document
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.graphs import version_of
from geon.graphs.services.plan_diff import diffed, document_diffed
from geon.graphs.services.plan_jobs import (
    PLAN_COST_TASK,
    cost_key,
    diff_key,
    document_cost_key,
    document_diff_key,
    refusal,
    store,
    summarise_cost,
    summarise_diff,
)
from geon.graphs.services.plan_trials import core_plan, plan_trial
from geon.graphs.services.plans import costed

log = logging.getLogger(__name__)

UNEXPECTED = (
    "the cost could not be computed: something unexpected went wrong (the server's log has the "
    "details); ask again, or cost a smaller plan"
)


def over_time(seconds: int) -> dict[str, Any]:
    """The refusal cached for a job stopped by its time limit (``GEON_PLAN_COST_SECONDS``)."""
    return {
        "refused": "invalid_request",
        "message": f"costing this plan took more than {seconds} s, the most a worker spends on "
        "one (GEON_PLAN_COST_SECONDS); cost it with `geon cost` on your own machine, or place it "
        "on a smaller mesh",
    }


def job_key(job: dict[str, Any]) -> tuple[str, Graph, list[ShardPlan]] | None:
    """The cache key of what ``job`` costs (the plans as they are now), with its graph and plans;
    None when the graph or a plan was deleted meanwhile."""
    graph = Graph.objects.filter(pk=job["graph"]).first()
    plans = {p.pk: p for p in ShardPlan.objects.filter(graph=graph, pk__in=job["plans"])}
    if graph is None or len(plans) != len(set(job["plans"])):
        return None
    chosen = [plans[pk] for pk in job["plans"]]
    version, profile = job["version"], job["profile"]
    if job["kind"] == "document":
        key = document_cost_key(graph, version, profile)
    elif job["kind"] == "document-diff":
        key = document_diff_key(graph, version, chosen[0], job["current"], profile)
    elif job["kind"] == "cost":
        key = cost_key(graph, version, chosen[0], profile)
    else:
        key = diff_key(graph, version, chosen[0], chosen[1], profile)
    return key, graph, chosen


class PlanCostTask(app.Task):
    """Answers a job that ended without storing its answer, so that its poll never waits for
    one: Celery calls ``on_failure`` in the worker's main process when its hard time limit kills
    the child (the soft limit's exception may have been lost, raised inside a callback that
    swallowed it) or the child died under it (killed for memory)."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        found = job_key(args[0]) if args else None
        if found is None:
            return
        if isinstance(exc, TimeLimitExceeded):
            store(found[0], over_time(args[0].get("seconds", settings.GEON_PLAN_COST_SECONDS)))
        else:
            log.error("plan cost job %s ended without an answer: %r", args[0].get("key"), exc)
            store(found[0], {"refused": "cost_failed", "message": UNEXPECTED})


@app.task(
    base=PlanCostTask,
    name=PLAN_COST_TASK,
    soft_time_limit=settings.GEON_PLAN_COST_SECONDS,
    time_limit=settings.GEON_PLAN_COST_SECONDS + 10,
)
def plan_cost_job(job: dict[str, Any]) -> None:
    """Cost ``job`` (``{"kind": "cost"|"diff"|"document", "graph", "version", "plans": [ids],
    "profile", "key"}``; a ``document`` job costs the version as it is placed) on the graph's
    document of that version and cache the bounded answer, or the
    refusal, under the key of what was costed: the plans as they are now (a plan saved since
    it was queued is costed as saved, which its next poll asks for). A graph or plan deleted
    meanwhile leaves nothing to do. A job that ran past its seconds is answered as over time
    even when it finished: the soft limit's exception may have been swallowed on the way (a
    catch-all that reports a constraint's bug or a malformed IPF), and the answer is the one the
    limit gives."""
    started = time.monotonic()
    seconds = job.get("seconds", settings.GEON_PLAN_COST_SECONDS)
    found = job_key(job)
    if found is None:
        return
    key, graph, chosen = found
    version, profile = job["version"], job["profile"]
    entry: dict[str, Any]
    try:
        document = Document.from_json(version_of(graph, version).document)
        if job["kind"] == "document":
            entry = {"answer": summarise_cost(costed(document, version, profile))}
        elif job["kind"] == "document-diff":
            answer = document_diffed(document, version, chosen[0], job["current"], profile)
            entry = {"answer": summarise_diff(answer)}
        elif job["kind"] == "cost":
            trial = plan_trial(document, chosen[0])
            answer = costed(trial, version, profile, core_plan(chosen[0]))
            entry = {"answer": summarise_cost(answer)}
        else:
            answer = diffed(document, version, chosen[0], chosen[1], profile)
            entry = {"answer": summarise_diff(answer)}
    except GeonError as error:
        entry = refusal(error)
    except SoftTimeLimitExceeded:
        entry = over_time(seconds)
    except Exception:
        log.exception("plan cost job %s failed unexpectedly", job["key"])
        entry = {"refused": "cost_failed", "message": UNEXPECTED}
    if "answer" in entry and time.monotonic() - started > seconds:
        entry = over_time(seconds)
    store(key, entry)
