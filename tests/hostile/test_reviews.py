"""Hostile input to reviews (issue 18 under the hardening rules of issue 13): every size and
count is refused by name before anything is stored, and a refusal changes nothing; the graph's
other reviews still answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Membership
from geon.reviews.models import Comment, Review, Thread
from geon.reviews.services import checks
from geon.reviews.services.writing import do_open_review

pytestmark = pytest.mark.django_db

API = "/api/v1"
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"


@pytest.fixture
def review(user: Any, other_user: Any, graph: Any) -> Review:
    Membership.objects.create(graph=graph, user=other_user, role="reviewer")
    return do_open_review(user, graph.pk, "Loom add", ["bob"])


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(API + path, json.dumps(body), content_type="application/json")


def stored() -> tuple[int, int, int]:
    return Review.objects.count(), Thread.objects.count(), Comment.objects.count()


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"anchor": {"node": T0}, "body": "x" * (checks.BODY_MAX + 1)}, "at most 20000"),
        ({"anchor": {"node": T0}, "body": "   "}, "non-blank"),
        ({"anchor": {"node": T0}, "body": ["not", "text"]}, "body"),
        (
            {
                "anchor": {"node": T0},
                "body": "x",
                "suggestion": {"ops": [{"op": "remove_node", "id": T0}] * 201},
            },
            "1 to 200",
        ),
        (
            {
                "anchor": {"region": {"operation": T0, "start": [0] * 33, "end": [1] * 33}},
                "body": "x",
            },
            "operation",
        ),
        ({"anchor": {"node": T0, "colour": 1}, "body": "x"}, "colour"),
    ],
)
def test_oversized_or_malformed_threads_are_refused_by_name(
    client: Client, other_user: Any, graph: Any, review: Review, body: Any, named: str
) -> None:
    client.force_login(other_user)
    before = stored()
    answer = post(client, f"/graphs/{graph.pk}/reviews/{review.pk}/threads", body)
    assert answer.status_code == 422, answer.content
    assert named in answer.json()["error"]["message"]
    assert stored() == before
    # and the review still answers
    assert client.get(f"{API}/graphs/{graph.pk}/reviews/{review.pk}").status_code == 200


def test_too_many_reviewers_are_refused(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    answer = post(client, f"/graphs/{graph.pk}/reviews", {"title": "T", "reviewers": ["bob"] * 51})
    assert answer.status_code == 422 and "at most 50" in answer.json()["error"]["message"]
    assert Review.objects.count() == 0


def test_a_full_review_refuses_one_more_thread_and_keeps_the_rest(
    client: Client, other_user: Any, graph: Any, review: Review, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(checks.COUNTS_MAX, "threads", 2)
    client.force_login(other_user)
    path = f"/graphs/{graph.pk}/reviews/{review.pk}/threads"
    for _ in range(2):
        assert post(client, path, {"anchor": {"node": T0}, "body": "x"}).status_code == 201
    refused = post(client, path, {"anchor": {"node": T0}, "body": "x"})
    assert refused.status_code == 422
    assert "already holds 2 threads" in refused.json()["error"]["message"]
    assert Thread.objects.count() == 2
