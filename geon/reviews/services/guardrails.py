"""A graph's guardrails on approvals (docs/reviews.md, Guardrails): which hold for a review now,
and the graph's settings of them.

The capacity guardrail reads the plan's cost through the REST cost's bounded machinery
(:func:`geon.graphs.services.plans.requested_cost`: the ``plan_costs`` cache, the web budget
``GEON_PLAN_COST_WEB_MAX_WORK`` and the worker's job), never the whole cost in the web process: a
plan past the budget whose cost no worker has answered yet holds the approval with the
``costPending`` guardrail ("being computed; approve again in a moment"), and the job is queued."""

from __future__ import annotations

import uuid
from typing import Any

from geon.core.errors import GeonError, quote
from geon.graphs import services as graphs
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.access import User
from geon.graphs.services.plan_jobs import Pending
from geon.graphs.services.plans import (
    DEFAULT_PROFILE,
    check_profile,
    requested_cost,
    shipped_profiles,
)
from geon.reviews.models import Review, ReviewSettings
from geon.reviews.services.reading import Context

#: The settings' names in the API, and their model fields.
SWITCHES = {
    "requireResolvedThreads": "require_resolved_threads",
    "blockOnErrors": "block_on_errors",
    "blockOverCapacity": "block_over_capacity",
}


class GuardrailRefused(GeonError):
    """An approval refused by the graph's guardrails: ``guardrails`` lists each that holds."""

    def __init__(self, guardrails: list[dict[str, str]]) -> None:
        super().__init__("approval refused: " + "; ".join(g["message"] for g in guardrails))
        self.guardrails = guardrails


def settings_of(graph: Graph) -> ReviewSettings:
    """The graph's guardrails (the defaults, unsaved, when it has none stored)."""
    found = ReviewSettings.objects.filter(graph=graph).first()
    return found if found is not None else ReviewSettings(graph=graph)


def settings_json(found: ReviewSettings) -> dict[str, Any]:
    out: dict[str, Any] = {name: getattr(found, field) for name, field in SWITCHES.items()}
    out["profile"] = found.profile or DEFAULT_PROFILE
    out["profiles"] = list(shipped_profiles())
    return out


def get_settings(user: User, graph_id: uuid.UUID | str) -> dict[str, Any]:
    return settings_json(settings_of(graphs.check_can_view(user, graph_id)))


def do_change_settings(
    user: User, graph_id: uuid.UUID | str, changes: dict[str, Any]
) -> dict[str, Any]:
    """Change the graph's guardrails (role owner); a bad value changes nothing."""
    graph = graphs.check_can_manage(user, graph_id)
    found = settings_of(graph)
    for name, value in changes.items():
        if name in SWITCHES:
            if not isinstance(value, bool):
                raise GeonError(f"{name} {quote(value)} is not valid; expected true or false")
            setattr(found, SWITCHES[name], value)
        elif name == "profile":
            found.profile = check_profile(value if isinstance(value, str) else repr(value))
        else:
            raise GeonError(
                f"setting {quote(name)} is not known; expected " + ", ".join([*SWITCHES, "profile"])
            )
    found.save()
    return settings_json(found)


def guardrails_holding(graph: Graph, review: Review, context: Context) -> list[dict[str, str]]:
    """Each guardrail that refuses an approval of ``review`` now: ``{"name", "message"}``."""
    rules = settings_of(graph)
    held = []
    if rules.require_resolved_threads:
        open_threads = [t.anchor_name for t in review.threads.all() if not t.resolved]
        if open_threads:
            shown = ", ".join(f'"{name}"' for name in open_threads[:5])
            more = f" and {len(open_threads) - 5} more" if len(open_threads) > 5 else ""
            held.append(
                {
                    "name": "requireResolvedThreads",
                    "message": f"{len(open_threads)} thread(s) are not resolved (on "
                    f"{shown}{more}); resolve them first",
                }
            )
    if rules.block_on_errors:
        errors = [i for i in context.live.checker.issues if i.severity == "error"]
        if errors:
            held.append(
                {
                    "name": "blockOnErrors",
                    "message": f"the graph has {len(errors)} error issue(s), the first: "
                    f"{errors[0].message}",
                }
            )
    if rules.block_over_capacity and review.plan is not None:
        found = capacity_held(graph, review.plan, rules.profile or None)
        if found is not None:
            held.append(found)
    return held


def capacity_held(graph: Graph, plan: ShardPlan, profile: str | None) -> dict[str, str] | None:
    """The capacity guardrail of ``plan`` under ``profile``: None when every device fits; the
    plan's cost read as the REST cost is (bounded, cached, past the web budget a worker's), so an
    approval never costs a plan at the maxima in the web process. A cost still with the worker
    holds the approval as ``costPending`` (the next approval reads the worker's answer)."""
    cost = requested_cost(graph, plan, profile)
    if isinstance(cost, Pending):
        return {
            "name": "costPending",
            "message": f"the cost of plan {quote(plan.name)} is being computed (it is past what "
            "the web process computes at once; a worker computes it) and the capacity "
            "guardrail needs it; approve again in a moment",
        }
    capacity = cost["memory"]["capacity"]
    over = [d for d in cost["ledger"] if d["overBudget"]]
    if not over:
        return None
    worst = max(over, key=lambda d: d["peakBytes"])
    count = sum(d.get("count", 1) for d in over)
    # grouped rows past GEON_PLAN_COST_DEVICE_ROWS are left out, the least loaded first
    counted = f"at least {count:,}" if cost.get("omitted", {}).get("ledger") else f"{count:,}"
    mesh = quote(plan.mesh.get("name", ""))
    return {
        "name": "blockOverCapacity",
        "message": f"plan {quote(plan.name)} needs {worst['peakBytes']:,} bytes on device "
        f"{worst['coords']} of mesh {mesh}, more than the {capacity:,} bytes of a "
        f"{cost['profile']['name']} device ({counted} device(s) over)",
    }


def check_guardrails(graph: Graph, review: Review, context: Context) -> None:
    """Refuse an approval of ``review`` while a guardrail holds."""
    held = guardrails_holding(graph, review, context)
    if held:
        raise GuardrailRefused(held)
