"""A sharded run records the plan it exercises (issue 21, "Runs": "a sharded run records
plan: null"): named in the request, or, when the request names none, the plan whose generated
Applications the document holds; a document whose Applications no plan generated records none."""

from __future__ import annotations

from typing import Any

import pytest

from geon.examples.transformer import PLANS, transformer_block
from geon.graphs.models import ShardPlan
from geon.graphs.services import do_create_graph
from geon.graphs.services.plans import do_generate_plan, do_save_plan
from geon.runs.services import do_queue_run
from geon.runs.services.events import run_json
from geon.runs.services.queueing import check_can_run

pytestmark = pytest.mark.django_db


def test_a_sharded_run_of_the_generated_plan_records_it(user: Any) -> None:
    graph = do_create_graph(owner=user, title="Block", document=transformer_block().to_json())
    for plan in PLANS[:2]:
        do_save_plan(
            user, graph, plan["name"], plan["mesh"], {}, None,
            axis_mapping=plan["axisMapping"], inputs=plan["inputs"],
        )  # fmt: skip
    megatron = ShardPlan.objects.get(graph=graph, name="Megatron tensor parallel")
    # no plan generated yet: a logical document, nothing to record
    assert check_can_run(user, graph.pk, sharded=True).plan is None
    do_generate_plan(user, graph.pk, megatron.pk, 1)
    request = check_can_run(user, graph.pk, sharded=True)
    assert request.plan == megatron and request.sharded
    # a logical run of the same document records none
    assert check_can_run(user, graph.pk, sharded=False).plan is None


def test_the_runs_json_names_its_plan(user: Any) -> None:
    graph = do_create_graph(owner=user, title="Block", document=transformer_block().to_json())
    plan = PLANS[0]
    saved = do_save_plan(
        user, graph, plan["name"], plan["mesh"], {}, None,
        axis_mapping=plan["axisMapping"], inputs=plan["inputs"],
    )  # fmt: skip
    do_generate_plan(user, graph.pk, saved.pk, 1)
    run = do_queue_run(check_can_run(user, graph.pk, sharded=True), user)
    assert (run_json(run)["plan"], run_json(run)["planName"]) == (saved.pk, "Data parallel")
