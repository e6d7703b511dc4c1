"""REST endpoint for plan suggestions (issue 33, DESIGN.md §12), mounted in :mod:`geon.urls`
beside the graphs router:

- ``GET /graphs/<id>/plans/suggestions?mesh=dp=2,tp=4[&profile=NAME]``: the best five plans of
  :func:`geon.core.plans.cost.search.search_plans` on the graph's current document (``{"best",
  "candidates": [{"name", "axisMapping", "seconds", "fits", "why", "peakBytes", "plan"}],
  "searched", "complete"}``); each ``plan`` is the ShardPlan JSON ``POST /graphs/<id>/plans``
  saves. Nothing is stored.

Checked before any work: the mesh (``axis=size`` pairs; at most 4 axes and
:data:`MAX_WEB_DEVICES` devices), the profile (a shipped name), and the document's size (at most
:data:`MAX_WEB_OPERATIONS` operations; larger ones are searched by ``geon plan --search``): each
refused 422 naming the value and what is valid. The search stops after :data:`WEB_BUDGET`
seconds (``complete`` false then). Someone with no role on the graph gets 404, as for one that
does not exist.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router

from geon.core.graph import OPERATION
from geon.core.plans import parse_mesh
from geon.core.plans.cost import load_profile
from geon.core.plans.cost.profiles import DEFAULT_PROFILE, shipped_profiles
from geon.core.plans.cost.search import search_plans
from geon.envelope import answers, error_response
from geon.graphs.services.access import check_can_view
from geon.graphs.services.documents import live_document

router = Router(tags=["plans"])

MAX_WEB_OPERATIONS = 1000
MAX_WEB_DEVICES = 64
WEB_BUDGET = 2.0
SHOWN = 5


@router.get("/graphs/{graph_id}/plans/suggestions", response=answers({200: dict[str, Any]}))
def suggest_plans(
    request: HttpRequest, graph_id: str, mesh: str, profile: str | None = None
) -> dict[str, Any] | HttpResponse:
    """The best five plans on a mesh (see the module docstring)."""
    try:
        axes = parse_mesh(mesh[:200])
    except ValueError as exc:
        return error_response(422, "invalid_mesh", str(exc))
    devices = 1
    for size in axes.values():
        devices *= size
    if devices > MAX_WEB_DEVICES:
        return error_response(
            422,
            "invalid_mesh",
            f'mesh "{mesh[:80]}" has {devices:,} devices; the web searches at most '
            f"{MAX_WEB_DEVICES} (search larger meshes with geon plan --search)",
        )
    name = profile or DEFAULT_PROFILE
    if name not in shipped_profiles():
        return error_response(
            422,
            "invalid_profile",
            f'profile "{name[:80]}" is not a shipped profile; expected one of '
            + ", ".join(f'"{p}"' for p in shipped_profiles()),
        )
    graph = check_can_view(request.user, graph_id)
    document = live_document(graph).document
    operations = len(document.of_type(OPERATION))
    if operations > MAX_WEB_OPERATIONS:
        return error_response(
            422,
            "too_large",
            f"the graph has {operations:,} operations; the web suggests plans for at most "
            f"{MAX_WEB_OPERATIONS:,} (export it and run geon plan --search)",
        )
    found = search_plans(document, axes, load_profile(name), budget=WEB_BUDGET)
    return {**found, "candidates": found["candidates"][:SHOWN], "profile": name}
