"""A stored plan tried on a document (:func:`plan_trial`), and the collectives of the plan a
live document holds, which every ``applied`` carries (:func:`live_plan_cost`; issue 16: the
editor's edge labels follow an edit within one animation frame, with no request of their own).

The **current plan** of a document is the stored plan whose last generation wrote exactly the
document's Applications (what the editor's Plans panel calls the plan the document has now). Its
collectives are those of :func:`geon.graphs.services.plans.plan_cost` (the plan generated on the
document as it is now), under every shipped profile, so each editor reads its chosen one.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from django.conf import settings

from geon.core.collector import collector_paused
from geon.core.costmodel import load_profile, shipped_profiles
from geon.core.costmodel.collectives import infer_collectives
from geon.core.costmodel.placed import read_placed
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION
from geon.core.graph import Graph as Document
from geon.core.plan_diff import named_collective
from geon.core.plans import Plan, apply_plan, read_plan
from geon.graphs.edits import EditRefused
from geon.graphs.models import ShardPlan
from geon.graphs.services.documents import LiveDocument


def check_plan(
    name: Any,
    mesh: Any,
    spec: Any,
    axis_mapping: Any = None,
    inputs: Any = None,
) -> Plan:
    """A plan's fields from a request, checked (:func:`geon.core.plans.read_plan`: a
    :class:`~geon.core.plans.PlanError`, answered 422, names the field, the bad value and what
    is valid). Whether it fits the graph's document is decided when it is saved."""
    return read_plan(
        {
            "name": name,
            "mesh": mesh,
            "axisMapping": {} if axis_mapping is None else axis_mapping,
            "inputs": {} if inputs is None else inputs,
            "spec": spec,
        }
    )


def core_plan(plan: ShardPlan) -> Plan:
    """The stored plan as the core reads it."""
    return check_plan(plan.name, plan.mesh, plan.spec, plan.axis_mapping, plan.inputs)


def mesh_id_of(plan: ShardPlan) -> str:
    """The id of the Mesh node a plan writes: one per plan, so generating it again updates it."""
    return str(uuid.uuid5(uuid.UUID(str(plan.graph_id)), f"geon-plan-{plan.pk}-mesh"))


def refused(plan: ShardPlan, error: GeonError) -> EditRefused:
    """The refusal of a plan that does not fit the document, naming the plan."""
    return EditRefused("invalid_edit", f'plan "{plan.name}": {error}')


def plan_trial(document: Document, plan: ShardPlan) -> Document:
    """A copy of ``document`` with the plan written into it
    (:func:`geon.core.plans.apply_plan`); :class:`EditRefused` (``invalid_edit``, naming the
    operation or input) when the plan does not fit the document."""
    try:
        return apply_plan(document, core_plan(plan), mesh_id=mesh_id_of(plan))
    except GeonError as error:
        raise refused(plan, error) from None


def live_trial(live: LiveDocument, plan: ShardPlan) -> Document:
    """:func:`plan_trial` of a live document, remembered on it for its version (the last plan
    tried only: the ``planCost`` of an ``applied`` and the REST cost asked right after share it).
    At the version the plan's last generation wrote, the document is that trial already (only
    the new Applications' ids would differ, and no cost names them)."""
    key = (plan.pk, plan.updated)
    kept = live.trial
    if kept is not None and kept[0] == key and kept[1] == live.version:
        return kept[2]
    version = live.version
    written = (plan.applications or {}).get("version")
    trial = live.document if written == version else plan_trial(live.document, plan)
    live.trial = (key, version, trial)
    return trial


def generated_applications(plan: ShardPlan) -> set[str]:
    """The ids of the Applications the plan's last generation wrote (none if never)."""
    operations = (plan.applications or {}).get("operations") or {}
    return set(itertools.chain.from_iterable(operations.values()))


def current_plan(graph_id: uuid.UUID, held: set[str]) -> ShardPlan | None:
    """The stored plan whose last generation wrote exactly the Applications ``held`` (the ids
    of a document's; see the module docstring), or None."""
    if not held:
        return None
    for plan in ShardPlan.objects.filter(graph_id=graph_id).order_by("pk"):
        if generated_applications(plan) == held:
            return plan
    return None


@collector_paused()
def live_plan_cost(
    graph_id: uuid.UUID, live: LiveDocument, *, layout_only: bool = False
) -> dict[str, Any] | None:
    """What an ``applied`` of the live document's version carries as ``planCost``:
    ``{"planId", "plan", "version", "collectives": {profile: [collective, ...]}}`` for the
    document's current plan (each collective as the plan's REST cost names it), ``{"planId",
    "plan", "version", "error"}`` when that plan does not fit the document any more, and None
    when it has no current plan or more Applications than ``GEON_LIVE_COST_MAX_APPLICATIONS``
    (the editor then asks the plan's REST cost, as for any plan it finds current itself).

    After edits that only moved nodes (``layout_only``) the plan tried last is costed again as
    it is: a layout changes no cost."""
    document, version = live.document, live.version
    held = {node.id for node in document.of_type(APPLICATION)}
    if len(held) > settings.GEON_LIVE_COST_MAX_APPLICATIONS:
        return None
    plan = current_plan(graph_id, held)
    if plan is None:
        return None
    head = {"planId": plan.pk, "plan": plan.name, "version": version}
    kept = live.trial
    if layout_only and kept is not None and kept[0] == (plan.pk, plan.updated):
        live.trial = (kept[0], version, kept[2])
    try:
        trial = live_trial(live, plan)
    except EditRefused as error:
        return {**head, "error": str(error)}
    placed = read_placed(trial)
    by_profile = {}
    for name in shipped_profiles():
        found = infer_collectives(placed, load_profile(name))
        by_profile[name] = [named_collective(trial, c.to_json()) for c in found]
    return {**head, "collectives": by_profile}
