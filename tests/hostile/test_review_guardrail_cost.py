"""An approval's capacity guardrail at the documented maxima (the leftover of issue 30 finding 7):
approving a review of a plan on 65,536 devices cost the plan in the web process (~16 s). It now
reads the cost as the REST cost does: past the web budget the worker's cached answer, else the job
is queued and the approval refused with "being computed; approve again in a moment", nothing
stored; once the worker has answered, the same approval is judged on its answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client, override_settings

from geon.graphs.models import Membership, ShardPlan
from geon.graphs.services import plans
from geon.graphs.services.plan_jobs import CACHE, cost_key
from geon.graphs.tasks import plan_cost_job
from geon.reviews.models import Verdict
from tests.hostile.test_plan_cost_maxima import (
    UNCONSUMED,
    another_client_is_answered,
    chain,
    made,
    stored,
)

API = "/api/v1"


def refuse_to_cost(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the web process costed a plan past its budget")


def review_of_plan(client: Client, graph: Any, plan: int, reviewer: str) -> str:
    answer = client.post(
        f"{API}/graphs/{graph.pk}/reviews",
        json.dumps({"title": "wide", "plan": plan, "reviewers": [reviewer]}),
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content[:300]
    return f"{API}/graphs/{graph.pk}/reviews/{answer.json()['id']}/verdicts"


def approve(reviewer: Any, url: str) -> Any:
    client = Client()
    client.force_login(reviewer)
    return client.post(url, json.dumps({"verdict": "approve"}), content_type="application/json")


@pytest.mark.django_db
@override_settings(GEON_PLAN_COST_QUEUE=UNCONSUMED)
def test_approving_a_plan_at_the_maxima_queues_its_cost_and_refuses_until_it_is_answered(
    client: Client, user: Any, other_user: Any, django_user_model: Any, monkeypatch: Any
) -> None:
    # given a review of a plan on 4,096 x 16 = 65,536 devices, asking rex
    client.force_login(user)
    graph, _, (plan,) = made(client, user, chain(5, 4096), [{"d": 4096, "r": 16}])
    rex = django_user_model.objects.create_user("rex", password="x")
    Membership.objects.create(graph=graph, user=rex, role="reviewer")
    url = review_of_plan(client, graph, plan, "rex")
    caches[CACHE].clear()
    before = (stored(), Verdict.objects.count())
    # (the web process must not cost it: that took ~16 s at these maxima)
    monkeypatch.setattr(plans, "costed", refuse_to_cost)
    # when rex approves it
    answer = approve(rex, url)
    # then he is answered without the web process costing it, 409: the cost is being
    # computed, approve again in a moment; the job waits in the cost cache
    assert answer.status_code == 409, answer.content[:500]
    error = answer.json()["error"]
    assert error["code"] == "guardrail"
    assert [g["name"] for g in error["guardrails"]] == ["costPending"]
    assert error["guardrails"][0]["message"] == (
        'the cost of plan "p0" is being computed (it is past what the web process computes at '
        "once; a worker computes it) and the capacity guardrail needs it; approve again in a "
        "moment"
    )
    saved = ShardPlan.objects.get(pk=plan)
    assert set(caches[CACHE].get(cost_key(graph, 1, saved, "h100-sxm-8"))) == {"pending", "work"}
    # and nothing was stored: no verdict, no version, the plan as it was
    assert (stored(), Verdict.objects.count()) == before
    # and approving again while the worker works is the same refusal, queued once
    again = approve(rex, url)
    assert (again.status_code, again.json()["error"]["guardrails"]) == (409, error["guardrails"])
    # and another client is still answered (its small plan costed in the web process)
    monkeypatch.undo()
    another_client_is_answered(client, other_user)


@pytest.mark.django_db
@override_settings(GEON_PLAN_COST_QUEUE=UNCONSUMED, GEON_PLAN_COST_WEB_MAX_WORK=100)
def test_once_the_worker_has_costed_the_plan_the_approval_reads_its_answer(
    client: Client, user: Any, django_user_model: Any
) -> None:
    # given a plan over 512 devices, past a web budget of 100, under review by rex
    client.force_login(user)
    graph, _, (plan,) = made(client, user, chain(2, 512), [{"d": 512}])
    rex = django_user_model.objects.create_user("rex", password="x")
    Membership.objects.create(graph=graph, user=rex, role="reviewer")
    url = review_of_plan(client, graph, plan, "rex")
    caches[CACHE].clear()
    # when rex approves: refused while the cost is queued
    first = approve(rex, url)
    assert [g["name"] for g in first.json()["error"]["guardrails"]] == ["costPending"]
    assert Verdict.objects.count() == 0
    # and the worker's task costs it (as the queued job asks)
    saved = ShardPlan.objects.get(pk=plan)
    key = cost_key(graph, 1, saved, "h100-sxm-8")
    plan_cost_job(
        {
            "kind": "cost",
            "graph": str(graph.pk),
            "version": 1,
            "plans": [plan],
            "profile": "h100-sxm-8",
            "key": key,
        }
    )
    assert "answer" in caches[CACHE].get(key)
    # then approving again reads the worker's answer: every device fits, so it is approved
    answer = approve(rex, url)
    assert answer.status_code == 201, answer.content[:500]
    assert answer.json()["state"] == "approved"
    assert Verdict.objects.filter(user=rex, verdict="approve").count() == 1
