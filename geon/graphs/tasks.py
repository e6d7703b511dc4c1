"""Celery tasks of graphs: a plan's cost, or plan against plan, past the web process's budget
(:mod:`geon.graphs.services.plan_jobs`), costed in the worker and cached for the web process's
poll to answer."""

from __future__ import annotations

import logging
from typing import Any

from geon.celery import app
from geon.core.errors import GeonError
from geon.core.graph import Graph as Document
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.graphs import version_of
from geon.graphs.services.plan_diff import diffed
from geon.graphs.services.plan_jobs import (
    PLAN_COST_TASK,
    cost_key,
    diff_key,
    document_cost_key,
    refusal,
    store,
    summarise_cost,
    summarise_diff,
)
from geon.graphs.services.plan_trials import plan_trial
from geon.graphs.services.plans import costed

log = logging.getLogger(__name__)

UNEXPECTED = (
    "the cost could not be computed: something unexpected went wrong (the server's log has the "
    "details); ask again, or cost a smaller plan"
)


@app.task(name=PLAN_COST_TASK)
def plan_cost_job(job: dict[str, Any]) -> None:
    """Cost ``job`` (``{"kind": "cost"|"diff"|"document", "graph", "version", "plans": [ids],
    "profile", "key"}``; a ``document`` job costs the version as it is placed) on the graph's
    document of that version and cache the bounded answer, or the
    refusal, under the key of what was costed: the plans as they are now (a plan saved since
    it was queued is costed as saved, which its next poll asks for). A graph or plan deleted
    meanwhile leaves nothing to do."""
    graph = Graph.objects.filter(pk=job["graph"]).first()
    plans = {p.pk: p for p in ShardPlan.objects.filter(graph=graph, pk__in=job["plans"])}
    if graph is None or len(plans) != len(set(job["plans"])):
        return
    chosen = [plans[pk] for pk in job["plans"]]
    version, profile = job["version"], job["profile"]
    if job["kind"] == "document":
        key = document_cost_key(graph, version, profile)
    elif job["kind"] == "cost":
        key = cost_key(graph, version, chosen[0], profile)
    else:
        key = diff_key(graph, version, chosen[0], chosen[1], profile)
    entry: dict[str, Any]
    try:
        document = Document.from_json(version_of(graph, version).document)
        if job["kind"] == "document":
            entry = {"answer": summarise_cost(costed(document, version, profile))}
        elif job["kind"] == "cost":
            entry = {
                "answer": summarise_cost(costed(plan_trial(document, chosen[0]), version, profile))
            }
        else:
            answer = diffed(document, version, chosen[0], chosen[1], profile)
            entry = {"answer": summarise_diff(answer)}
    except GeonError as error:
        entry = refusal(error)
    except Exception:
        log.exception("plan cost job %s failed unexpectedly", job["key"])
        entry = {"refused": "cost_failed", "message": UNEXPECTED}
    store(key, entry)
