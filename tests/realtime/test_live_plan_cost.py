"""An ``applied`` carries the collectives of the document's current plan (issue 16: the editor's
edge labels follow an edit within one animation frame, with no request of their own), equal to
the plan's REST cost under every shipped profile."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from geon.core.graph import Graph as Document
from geon.core.plans.cost import cost_report, load_profile, shipped_profiles
from geon.core.plans.diff import named_collective
from geon.examples.transformer import PLANS, transformer_block
from geon.graphs.models import Graph
from geon.graphs.services import do_create_graph, do_generate_plan, do_save_plan, plan_cost
from geon.graphs.services.plan_trials import plan_trial
from geon.graphs.services.plans import plan_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

MEGATRON, WORSE = PLANS[1], PLANS[2]


def block_graph(user: Any, saved: dict[str, Any] = MEGATRON) -> tuple[Graph, int, dict[str, str]]:
    """ann's graph of the transformer block with one of its gallery plans saved (not
    generated): the graph, the plan's id, and the id of each tensor by label."""
    document = transformer_block().to_json()
    graph = do_create_graph(owner=user, title="Block", document=document)
    plan = do_save_plan(
        user,
        graph,
        saved["name"],
        saved["mesh"],
        {},
        None,
        axis_mapping=saved["axisMapping"],
        inputs=saved["inputs"],
    )
    tensors = {n["label"]: n["id"] for n in document["nodes"] if n.get("label")}
    return graph, plan.pk, tensors


def rest_collectives(graph: Graph, plan_id: int) -> dict[str, list[dict[str, Any]]]:
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    plan = plan_of(fresh, plan_id)
    return {name: plan_cost(fresh, plan, name)["collectives"] for name in shipped_profiles()}


def written_collectives(graph: Graph, plan_id: int) -> dict[str, list[dict[str, Any]]]:
    """The collectives of the plan written afresh into the stored current document (what
    neither the live document nor its remembered trial has seen)."""
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    document = Document.from_json(fresh.current_version.document)
    trial = plan_trial(document, plan_of(fresh, plan_id))
    return {
        name: [
            named_collective(trial, c)
            for c in cost_report(trial, load_profile(name))["collectives"]
        ]
        for name in shipped_profiles()
    }


async def test_a_generated_plan_arrives_with_its_collectives(connect: Any, user: Any) -> None:
    graph, plan_id, _ = await database_sync_to_async(block_graph)(user)
    ann = await connect(user, graph)
    await database_sync_to_async(do_generate_plan)(user, graph.pk, plan_id, 1, edit_id="switch")
    applied = await ann.receive()
    cost = applied["planCost"]
    assert (cost["planId"], cost["plan"], cost["version"]) == (plan_id, MEGATRON["name"], 2)
    # Megatron's two all-reduces (attention's out-projection, the MLP's second matmul), under
    # every shipped profile, exactly as the plan's REST cost has them
    assert sorted(cost["collectives"]) == sorted(shipped_profiles())
    for found in cost["collectives"].values():
        assert [c["kind"] for c in found] == ["all-reduce", "all-reduce"]
    assert cost["collectives"] == await database_sync_to_async(rest_collectives)(graph, plan_id)
    assert cost["collectives"] == await database_sync_to_async(written_collectives)(graph, plan_id)


async def test_the_collectives_follow_each_edit(connect: Any, user: Any) -> None:
    # the model axis split: h1 is all-gathered into the second layer norm
    graph, plan_id, tensors = await database_sync_to_async(block_graph)(user, WORSE)
    ann = await connect(user, graph)
    await database_sync_to_async(do_generate_plan)(user, graph.pk, plan_id, 1, edit_id="switch")
    before = (await ann.receive())["planCost"]["collectives"]["cpu-host"]
    assert (await ann.receive())["type"] == "plans"
    assert ("all-gather", "h1") in [(c["kind"], c["tensorLabel"]) for c in before]
    # h1 relabelled: its collective's label follows in the same message
    answer = await ann.edit("h", 2, [{"op": "update_node", "id": tensors["h1"], "label": "res"}])
    after = answer["planCost"]
    assert after["version"] == 3
    gathered = [
        c["tensorLabel"] for c in after["collectives"]["cpu-host"] if c["kind"] == "all-gather"
    ]
    assert gathered == ["x", "res"]
    assert after["collectives"] == await database_sync_to_async(rest_collectives)(graph, plan_id)
    assert after["collectives"] == await database_sync_to_async(written_collectives)(graph, plan_id)
    # the plan places input x by its label: relabelled, the plan no longer fits, and says why
    answer = await ann.edit("x", 3, [{"op": "update_node", "id": tensors["x"], "label": "v"}])
    refused = answer["planCost"]
    assert (refused["version"], "collectives" in refused) == (4, False)
    assert '"x"' in refused["error"]
    # and a node moved after that does not make it fit again
    moved = await ann.edit("m", 4, [{"op": "set_layout", "id": tensors["h1"], "x": 1, "y": 2}])
    assert moved["planCost"] == {**refused, "version": 5}


async def test_a_moved_node_carries_the_same_collectives(connect: Any, user: Any) -> None:
    graph, plan_id, tensors = await database_sync_to_async(block_graph)(user)
    ann = await connect(user, graph)
    await database_sync_to_async(do_generate_plan)(user, graph.pk, plan_id, 1, edit_id="switch")
    before = (await ann.receive())["planCost"]
    assert (await ann.receive())["type"] == "plans"
    moved = await ann.edit("m", 2, [{"op": "set_layout", "id": tensors["x"], "x": 5, "y": 7}])
    after = moved["planCost"]
    assert after == {**before, "version": 3}


async def test_no_plan_cost_without_a_current_plan_or_over_the_bound(
    connect: Any, user: Any, graph: Any, loom_document: dict[str, Any]
) -> None:
    # the loom graph holds Applications no stored plan wrote
    ann = await connect(user, graph)
    tensor = next(n["id"] for n in loom_document["nodes"] if n["type"].endswith("/Tensor"))
    answer = await ann.edit("n", 1, [{"op": "update_node", "id": tensor, "label": "a"}])
    assert answer["type"] == "applied" and "planCost" not in answer
    # the block's plan, over a bound of one Application: the editor asks the REST cost instead
    block, plan_id, _ = await database_sync_to_async(block_graph)(user)
    bob = await connect(user, block, presence=True)  # (ann, on another graph, hears nothing)
    with override_settings(GEON_LIVE_COST_MAX_APPLICATIONS=1):
        await database_sync_to_async(do_generate_plan)(user, block.pk, plan_id, 1)
        applied = await bob.receive()
    assert applied["type"] == "applied" and "planCost" not in applied


async def test_an_applied_past_what_one_edit_may_carry_says_it_cannot_be_undone(
    connect: Any, user: Any
) -> None:
    # given the block and its data-parallel plan, with edits bounded below the plan's size
    graph, plan_id, _ = await database_sync_to_async(block_graph)(user, PLANS[0])
    ann = await connect(user, graph)
    with override_settings(GEON_MAX_OPS_PER_EDIT=5):
        await database_sync_to_async(do_generate_plan)(user, graph.pk, plan_id, 1, edit_id="dp")
        big = await ann.receive()
        # then its applied says so (its inverse would be refused as an edit)
        assert (big["type"], len(big["ops"]) > 5, big["undoable"]) == ("applied", True, False)
        assert (await ann.receive())["type"] == "plans"
        # while an ordinary edit says nothing of it
        added = next(op["node"]["id"] for op in big["ops"] if op["op"] == "add_node")
        small = await ann.edit("s", 2, [{"op": "set_layout", "id": added, "x": 1, "y": 1}])
        assert small["type"] == "applied" and "undoable" not in small
