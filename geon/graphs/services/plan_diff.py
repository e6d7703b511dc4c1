"""Plan against plan on a graph (issue 18, "Diffs"; docs/reviews.md "Plan diff"): both plans
written into the graph's current document, as they would be generated (nothing is stored), and
compared under one shipped hardware profile by :func:`geon.core.plans.diff.plan_diff`. The REST
diff is bounded as a plan's cost is (:func:`requested_diff`, :mod:`.plan_jobs`). A plan with
pipeline stages is compared as its cost costs it (issue 33): the step with the bubble, the
``send`` of each microbatch among the collectives, and ``pipeline``: ``{"a", "b", "changed",
"bubbleDelta"}`` (each side its schedule, stage count, microbatches and bubble, or null)."""

from __future__ import annotations

from typing import Any

from geon.core.errors import GeonError, quote
from geon.core.graph import Graph as Document
from geon.core.plans import Plan
from geon.core.plans.cost import load_profile
from geon.core.plans.diff import plan_diff
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.documents import live_document
from geon.graphs.services.plan_jobs import (
    Pending,
    bounded,
    diff_key,
    document_diff_key,
    summarise_diff,
)
from geon.graphs.services.plan_trials import (
    core_plan,
    document_work,
    mesh_id_of,
    plan_trial,
    plan_work,
)
from geon.graphs.services.plans import check_profile, queue_job


def diff_plans(
    graph: Graph, base: ShardPlan, target: ShardPlan, profile: str | None = None
) -> dict[str, Any]:
    """Plan ``base`` (before) against ``target`` (after) on the graph's current document under
    ``profile``: ``{"base": {"id", "name"}, "target": {...}, "profile": name, "version", ...}``
    with the core's placements, collectives, devices and time. A plan that does not fit the
    document is refused as generating it would be (``invalid_edit``, naming the plan). Whole
    and unbounded: the REST diff is :func:`requested_diff`."""
    name = check_profile(profile)
    live = live_document(graph)
    return diffed(live.document, live.version, base, target, name)


def requested_diff(
    graph: Graph, base: ShardPlan, target: ShardPlan, profile: str | None = None
) -> dict[str, Any] | Pending:
    """The REST diff (:mod:`.plan_jobs`): :func:`diff_plans` summarised within the answer's
    bounds, cached per (document version, both plans, profile); compared now when the two
    plans' work estimates together are within ``GEON_PLAN_COST_WEB_MAX_WORK``, else handed to a
    worker (:class:`Pending` until it has answered)."""
    name = check_profile(profile)
    live = live_document(graph)
    document, version = live.document, live.version
    key = diff_key(graph, version, base, target, name)
    job = {"kind": "diff", "graph": str(graph.pk), "version": version}
    return bounded(
        key,
        plan_work(document, base) + plan_work(document, target),
        lambda: summarise_diff(diffed(document, version, base, target, name)),
        lambda: queue_job({**job, "plans": [base.pk, target.pk], "profile": name, "key": key}),
    )


def diffed(
    document: Document, version: int, base: ShardPlan, target: ShardPlan, profile: str
) -> dict[str, Any]:
    """Plan ``base`` against ``target``, each written into ``document`` (of ``version``),
    under the shipped ``profile`` (see :func:`diff_plans`)."""
    before = plan_trial(document, base)
    after = plan_trial(document, target)
    return {
        "base": {"id": base.pk, "name": base.name},
        "target": {"id": target.pk, "name": target.name},
        "profile": profile,
        "version": version,
        **plan_diff(
            before,
            after,
            load_profile(profile),
            base_mesh=mesh_id_of(base),
            target_mesh=mesh_id_of(target),
            base_plan=core_plan(base),
            target_plan=core_plan(target),
        ),
    }


#: The name the current document goes by in a comparison (as in the editor's Compare).
CURRENT_DOCUMENT = "current document"
#: Where the current document may stand in a comparison with a plan.
CURRENT_SIDES = ("before", "after")


def requested_document_diff(
    graph: Graph, plan: ShardPlan, current: str = "before", profile: str | None = None
) -> dict[str, Any] | Pending:
    """The current document as it is placed against ``plan`` (issue 35: Compare offers the
    current document beside the saved plans); ``current`` says which side the document is
    (``before`` or ``after``). Its side is ``{"id": null, "name": "current document"}``. Bounded,
    cached and handed to a worker as plan against plan is."""
    if current not in CURRENT_SIDES:
        raise GeonError(f'current {quote(current)} is not valid; expected "before" or "after"')
    name = check_profile(profile)
    live = live_document(graph)
    document, version = live.document, live.version
    key = document_diff_key(graph, version, plan, current, name)
    job = {"kind": "document-diff", "graph": str(graph.pk), "version": version}
    return bounded(
        key,
        document_work(document) + plan_work(document, plan),
        # a copy: nothing reads the live document while it is compared
        lambda: summarise_diff(
            document_diffed(Document.from_json(document.to_json()), version, plan, current, name)
        ),
        lambda: queue_job(
            {**job, "plans": [plan.pk], "current": current, "profile": name, "key": key}
        ),
    )


def document_diffed(
    document: Document, version: int, plan: ShardPlan, current: str, profile: str
) -> dict[str, Any]:
    """``document`` as placed against ``plan`` written into it, the document on the side
    ``current`` names (see :func:`requested_document_diff`)."""
    trial = plan_trial(document, plan)
    meshes: tuple[str | None, str | None]
    mine: dict[str, Any] = {"id": None, "name": CURRENT_DOCUMENT}
    theirs: dict[str, Any] = {"id": plan.pk, "name": plan.name}
    plans: tuple[Plan | None, Plan | None]
    if current == "before":
        sides, docs, meshes = (mine, theirs), (document, trial), (None, mesh_id_of(plan))
        plans = (None, core_plan(plan))
    else:
        sides, docs, meshes = (theirs, mine), (trial, document), (mesh_id_of(plan), None)
        plans = (core_plan(plan), None)
    return {
        "base": sides[0],
        "target": sides[1],
        "profile": profile,
        "version": version,
        **plan_diff(
            docs[0],
            docs[1],
            load_profile(profile),
            base_mesh=meshes[0],
            target_mesh=meshes[1],
            base_plan=plans[0],
            target_plan=plans[1],
        ),
    }
