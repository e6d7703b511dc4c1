"""An ``applied`` carries a pipelined current plan's live cost (issue 33): its collectives with
each microbatch's ``send`` between stages and its ``pipeline`` under every shipped profile, equal
to the plan's REST cost (less the schedule's grid, which the chart asks the REST cost for); past
the live bound (the sends it lists: microbatches x tensors crossing a stage boundary x passes),
none, and the editor asks the REST cost; a pipeline the document no longer fits, its refusal as
``planCost.error``."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from geon.core.graph import OPERATION
from geon.core.plans.cost import shipped_profiles
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.protocol import SERVER_MESSAGES, message_errors
from geon.graphs.services import do_create_graph, do_generate_plan, do_save_plan, plan_cost
from geon.graphs.services.documents import live_document
from geon.graphs.services.editing import do_apply_edit
from geon.graphs.services.plans import plan_of
from tests.core.plans.pipeline_docs import GROUP, chain

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PIPELINE = {
    "axis": "pp",
    "microbatches": 4,
    "schedule": "1f1b",
    "stages": [["layers.0", "layers.1"], ["layers.2", "layers.3"]],
}


def pipelined_graph(user: Any) -> tuple[Graph, int]:
    """ann's graph of four scoped layers with a pp=2, dp=2 plan saved (not generated)."""
    graph = do_create_graph(owner=user, title="Layers", document=chain().to_json())
    plan = do_save_plan(
        user,
        graph,
        "pp and dp",
        {"name": "pod", "axes": {"pp": 2, "dp": 2}},
        {},
        None,
        axis_mapping={"N": "dp"},
        pipeline=PIPELINE,
    )
    return graph, plan.pk


def rest_costs(graph: Graph, plan_id: int) -> dict[str, dict[str, Any]]:
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    plan = plan_of(fresh, plan_id)
    return {name: plan_cost(fresh, plan, name) for name in shipped_profiles()}


async def test_a_generated_pipelined_plan_arrives_with_its_sends_and_pipeline(
    connect: Any, user: Any
) -> None:
    # given a pipelined plan, when it is generated
    graph, plan_id = await database_sync_to_async(pipelined_graph)(user)
    ann = await connect(user, graph)
    await database_sync_to_async(do_generate_plan)(user, graph.pk, plan_id, 1, edit_id="switch")
    applied = await ann.receive()
    cost = applied["planCost"]
    # (the protocol's schema describes it, a send's microbatch, stages and pass included)
    assert message_errors(applied, SERVER_MESSAGES) == []
    send = next(c for c in cost["collectives"]["cpu-host"] if c["kind"] == "send")
    for bad in ({"pass": "sideways"}, {"microbatch": -1}, {"stages": [0, "1"]}):
        broken = {**cost, "collectives": {"cpu-host": [{**send, **bad}]}}
        assert message_errors({**applied, "planCost": broken}, SERVER_MESSAGES) != []
    # then its live cost has, under every shipped profile, the REST cost's collectives (a send
    # per microbatch from stage 0 to 1) and its pipeline less the grid
    assert sorted(cost["collectives"]) == sorted(cost["pipeline"]) == sorted(shipped_profiles())
    rest = await database_sync_to_async(rest_costs)(graph, plan_id)
    for name in shipped_profiles():
        assert cost["collectives"][name] == rest[name]["collectives"]
        sends = [c for c in cost["collectives"][name] if c["kind"] == "send"]
        assert [(c["microbatch"], c["stages"]) for c in sends] == [(i, [0, 1]) for i in range(4)]
        expected = {k: v for k, v in rest[name]["pipeline"].items() if k != "grid"}
        assert cost["pipeline"][name] == expected
        assert cost["pipeline"][name]["schedule"] == "1f1b"


async def test_past_the_live_bound_a_pipelined_plan_has_no_live_cost(
    connect: Any, user: Any
) -> None:
    # given the plan's 16 Applications within a bound of 20, and 24 microbatches times one
    # tensor crossing the stage boundary times one pass (a forward step): 24 sends, past it
    graph, plan_id = await database_sync_to_async(pipelined_graph)(user)
    plan = await database_sync_to_async(ShardPlan.objects.get)(pk=plan_id)
    plan.pipeline = {**PIPELINE, "microbatches": 24}
    await database_sync_to_async(plan.save)()
    ann = await connect(user, graph)
    with override_settings(GEON_LIVE_COST_MAX_APPLICATIONS=20):
        await database_sync_to_async(do_generate_plan)(user, graph.pk, plan_id, 1)
        applied = await ann.receive()
        assert len([o for o in applied["ops"] if o["node"]["type"].endswith("Application")]) == 16
    # then no live cost: the editor asks the REST cost instead
    assert applied["type"] == "applied" and "planCost" not in applied
    # and with 16 microbatches (16 sends, though microbatches times stages is 32), there is one
    plan.pipeline = {**PIPELINE, "microbatches": 16}
    await database_sync_to_async(plan.save)()
    ann_again = await connect(user, graph, presence=True)
    with override_settings(GEON_LIVE_COST_MAX_APPLICATIONS=20):
        await database_sync_to_async(do_generate_plan)(user, graph.pk, plan_id, 2)
        applied = await ann_again.receive()
    cost = applied["planCost"]
    assert cost["pipeline"]["cpu-host"]["microbatches"] == 16
    assert len([c for c in cost["collectives"]["cpu-host"] if c["kind"] == "send"]) == 16


def _rescope_last_layers(user: Any, graph: Graph) -> None:
    """ann scopes layers.2's and layers.3's operations ``head`` instead (an edit of tags)."""
    live = live_document(graph)
    ops = [
        {"op": "update_node", "id": node.id, "tags": {GROUP: {"scope": "head"}}}
        for node in live.document.of_type(OPERATION)
        if (node.tags or {}).get(GROUP) in ({"scope": "layers.2"}, {"scope": "layers.3"})
    ]
    assert ops
    do_apply_edit(user, graph.pk, live.version, ops)


async def test_a_pipeline_the_document_no_longer_fits_arrives_as_the_cost_s_error(
    connect: Any, user: Any
) -> None:
    # given a generated pipelined plan whose stage 1 runs layers.2 and layers.3
    graph, plan_id = await database_sync_to_async(pipelined_graph)(user)
    ann = await connect(user, graph)
    await database_sync_to_async(do_generate_plan)(user, graph.pk, plan_id, 1)
    assert "collectives" in (await ann.receive())["planCost"]
    # when an edit scopes those layers' operations otherwise (the plan is still current)
    await database_sync_to_async(_rescope_last_layers)(user, graph)
    applied = await ann.receive()
    while applied["type"] == "plans":  # the generation's news of the plans comes first
        applied = await ann.receive()
    # then the applied carries the plan's refusal as planCost.error, naming the stage's scope
    assert applied["type"] == "applied"
    cost = applied["planCost"]
    assert (cost["planId"], cost["plan"], cost["version"]) == (plan_id, "pp and dp", 3)
    assert cost["error"].startswith(
        'plan "pp and dp": pipeline stage 1 scope "layers.2" matches no operation\'s Group scope'
    )
    assert '("layers.0", "layers.1", "head")' in cost["error"]
