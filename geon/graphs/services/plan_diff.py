"""Plan against plan on a graph (issue 18, "Diffs"; docs/reviews.md "Plan diff"): both plans
written into the graph's current document, as they would be generated (nothing is stored), and
compared under one shipped hardware profile by :func:`geon.core.plan_diff.plan_diff`."""

from __future__ import annotations

from typing import Any

from geon.core.costmodel import load_profile
from geon.core.plan_diff import plan_diff
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.documents import live_document
from geon.graphs.services.plan_trials import mesh_id_of, plan_trial
from geon.graphs.services.plans import check_profile


def diff_plans(
    graph: Graph, base: ShardPlan, target: ShardPlan, profile: str | None = None
) -> dict[str, Any]:
    """Plan ``base`` (before) against ``target`` (after) on the graph's current document under
    ``profile``: ``{"base": {"id", "name"}, "target": {...}, "profile": name, "version", ...}``
    with the core's placements, collectives, devices and time. A plan that does not fit the
    document is refused as generating it would be (``invalid_edit``, naming the plan)."""
    name = check_profile(profile)
    live = live_document(graph)
    before = plan_trial(live.document, base)
    after = plan_trial(live.document, target)
    return {
        "base": {"id": base.pk, "name": base.name},
        "target": {"id": target.pk, "name": target.name},
        "profile": name,
        "version": live.version,
        **plan_diff(
            before,
            after,
            load_profile(name),
            base_mesh=mesh_id_of(base),
            target_mesh=mesh_id_of(target),
        ),
    }
