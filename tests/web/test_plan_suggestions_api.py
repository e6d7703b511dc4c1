"""``GET /api/v1/graphs/<id>/plans/suggestions?mesh=...`` (issue 33): the best five plans of the
search on the current document, each one ShardPlan away from being saved; refusals name the bad
value, store nothing, and leave the server answering others."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from geon.examples.transformer import transformer_block
from geon.graphs.models import Graph, GraphVersion, Membership, ShardPlan
from geon.graphs.services import do_create_graph

pytestmark = pytest.mark.django_db

API = "/api/v1"


@pytest.fixture
def block(user: Any) -> Any:
    return do_create_graph(owner=user, title="Block", document=transformer_block().to_json())


def _stored() -> tuple[int, int, int]:
    return Graph.objects.count(), GraphVersion.objects.count(), ShardPlan.objects.count()


def test_a_viewer_gets_the_best_five_and_saves_one(
    client: Client, block: Any, user: Any, other_user: Any
) -> None:
    Membership.objects.create(graph=block, user=other_user, role="viewer")
    client.force_login(other_user)
    before = _stored()
    answer = client.get(f"{API}/graphs/{block.pk}/plans/suggestions", {"mesh": "tp=2"})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["profile"] == "h100-sxm-8" and body["complete"]
    assert len(body["candidates"]) == 5 and body["best"] == body["candidates"][0]
    assert body["best"]["fits"] and body["best"]["axisMapping"] == {"B": "tp"}
    assert {"name", "axisMapping", "seconds", "fits", "why", "peakBytes", "plan"} <= set(
        body["best"]
    )
    assert _stored() == before
    # and the owner saves the suggestion as it is
    client.force_login(user)
    saved = client.post(
        f"{API}/graphs/{block.pk}/plans", body["best"]["plan"], content_type="application/json"
    )
    assert saved.status_code in (200, 201), saved.content


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"mesh": "tp=x"}, 'mesh "tp=x" is not valid at "tp=x"; expected axis=size pairs'),
        ({"mesh": "dp=16,tp=8"}, 'mesh "dp=16,tp=8" has 128 devices; the web searches at most 64'),
        ({"mesh": "tp=2", "profile": "nope"}, 'profile "nope" is not a shipped profile; expected'),
    ],
)
def test_refusals_name_the_value_store_nothing_and_others_are_answered(
    client: Client, block: Any, user: Any, query: dict[str, str], message: str
) -> None:
    client.force_login(user)
    before = _stored()
    answer = client.get(f"{API}/graphs/{block.pk}/plans/suggestions", query)
    assert answer.status_code == 422
    assert message in answer.json()["error"]["message"]
    assert "Traceback" not in answer.content.decode()
    assert _stored() == before
    # another request is still answered
    again = client.get(f"{API}/graphs/{block.pk}/plans/suggestions", {"mesh": "tp=2"})
    assert again.status_code == 200


def test_someone_with_no_role_gets_404(client: Client, block: Any, other_user: Any) -> None:
    client.force_login(other_user)
    answer = client.get(f"{API}/graphs/{block.pk}/plans/suggestions", {"mesh": "tp=2"})
    assert answer.status_code == 404
