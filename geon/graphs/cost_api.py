"""REST of the current document's cost (issue 35), beside the plans' (``geon.graphs.api``):

- ``GET /graphs/<id>/cost[?profile=]``: the current document as it is placed, saved plan or not;
- ``GET /graphs/<id>/cost/diff/<plan>[?current=before|after][&profile=]``: it against a plan.

Both are bounded, cached and handed to a worker past the web budget as a plan's cost is
(docs/cost-model.md, "The current document's cost")."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from geon.envelope import answers
from geon.graphs import services
from geon.graphs.api import PATH_NUMBER, _answer_or_pending
from geon.graphs.plan_schemas import CostPending, PlanCost, PlanDiffOut
from geon.graphs.services import plan_diff
from geon.graphs.services.plans import requested_document_cost

router = Router(tags=["plans"])


@router.get(
    "/graphs/{graph_id}/cost",
    response=answers({200: PlanCost, 202: CostPending}),
    exclude_unset=True,
    by_alias=True,  # CollectiveCost's "pass" (one component for every endpoint)
)
def document_cost(request: HttpRequest, graph_id: str, profile: str | None = None) -> Any:
    """What the current document costs as it is placed (its Applications and Placements),
    whether or not that is a saved plan's: the plan cost's answer (``geon cost`` JSON), bounded,
    cached per (version, profile) and handed to a worker past the web budget (202, poll)."""
    graph = services.check_can_view(request.user, graph_id)
    found = requested_document_cost(graph, profile)
    return _answer_or_pending(request, found, "the document's cost")


@router.get(
    "/graphs/{graph_id}/cost/diff/{plan_id}",
    response=answers({200: PlanDiffOut, 202: CostPending}),
    exclude_unset=True,
    by_alias=True,  # CollectiveCost's "pass" (one component for every endpoint)
)
def diff_document(
    request: HttpRequest,
    graph_id: str,
    plan_id: int = PATH_NUMBER,
    current: str = "before",
    profile: str | None = None,
) -> Any:
    """The current document as it is placed against plan ``plan_id`` as generated on it, the
    document ``before`` (default) or ``after`` (``current``), its side named "current document"
    with id null; bounded, cached and handed to a worker as plan against plan is."""
    graph = services.check_can_view(request.user, graph_id)
    found = plan_diff.requested_document_diff(
        graph, services.plan_of(graph, plan_id), current, profile
    )
    return _answer_or_pending(request, found, "the comparison with the current document")
