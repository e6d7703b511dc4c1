"""Notifications, re-requests and "changes since your last verdict" over ``/api/v1/`` (issue 35,
docs/reviews.md "Notifications"): the inbox's contract, marking read, each kind made by the write
that causes it, an approval going stale told at once, and every refusal naming the bad value with
nothing changed and the next person still answered."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from geon.graphs.services import do_apply_edit
from geon.graphs.services.plans import do_save_plan
from geon.reviews.models import Notification, Review, Verdict
from tests.web import test_reviews_api as reviews_api
from tests.web.test_reviews_api import (
    API,
    as_,
    current,
    megatron,
    patch,
    post,
    second_dot,
)

pytestmark = pytest.mark.django_db

# the reviews' fixtures: ann owns the transformer block, cat edits, rex reviews, bob views
cast = reviews_api.cast
review = reviews_api.review


def inbox(client: Client, person: Any) -> dict[str, Any]:
    answer = as_(client, person).get(f"{API}/notifications")
    assert answer.status_code == 200
    return answer.json()


def test_a_review_request_is_in_the_reviewers_inbox_by_the_contract(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    found = inbox(client, cast["rex"])
    assert found["unread"] == 1
    [item] = found["items"]
    assert set(item) == {"id", "kind", "graph", "review", "text", "url", "read", "created"}
    assert (item["kind"], item["graph"], item["review"], item["read"]) == (
        "review_requested",
        str(graph.pk),
        rid,
        False,
    )
    assert item["url"] == f"/graphs/{graph.pk}/?review={rid}"
    assert item["text"] == 'ann asked you to review "Megatron split" of graph "Block"'
    # the author and a member not asked have nothing
    assert inbox(client, cast["owner"]) == {"items": [], "unread": 0}
    assert inbox(client, cast["viewer"])["unread"] == 0


def test_replies_mentions_and_verdicts_reach_who_they_concern(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    threads = f"/graphs/{graph.pk}/reviews/{rid}/threads"
    body = {"anchor": {"node": second_dot(graph)["id"]}, "body": "why 4? cc @cat"}
    tid = post(as_(client, cast["rex"]), threads, body).json()["id"]
    post(as_(client, cast["owner"]), f"{threads}/{tid}/comments", {"body": "memory"})
    post(
        as_(client, cast["rex"]),
        f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
        {"verdict": "comment"},
    )
    kinds = {
        name: [(n["kind"], n.get("thread")) for n in inbox(client, cast[name])["items"]]
        for name in ("owner", "rex", "cat")
    }
    assert kinds == {
        "owner": [("verdict", None)],
        "rex": [("replied", tid), ("review_requested", None)],
        "cat": [("mentioned", tid)],
    }
    [reply] = [n for n in inbox(client, cast["rex"])["items"] if n["kind"] == "replied"]
    assert reply["url"] == f"/graphs/{graph.pk}/?review={rid}&thread={tid}"


def test_marking_read_by_ids_and_all_and_refusals_change_nothing(
    client: Client, cast: Any, review: Any
) -> None:
    rex = cast["rex"]
    graph = cast["graph"]
    post(
        as_(client, cast["owner"]),
        f"/graphs/{graph.pk}/reviews",
        {"title": "Again", "reviewers": ["rex"]},
    )
    items = inbox(client, rex)["items"]
    assert len(items) == 2
    theirs = Notification.objects.create(
        user=cast["cat"], kind="verdict", graph=graph, review_id=review["id"], text="x"
    )
    # refusals: each names the bad value; nothing is marked
    for body, says in (
        ({"ids": "all"}, 'ids "all" is not valid; expected a list of notification ids'),
        ({"ids": [True]}, 'id "true" is not valid; expected a notification\'s number'),
        ({"ids": [theirs.pk]}, f'notification "{theirs.pk}" is not one of yours; nothing'),
        ({"all": "yes"}, 'all "yes" is not valid; expected true'),
        ({"ids": list(range(501))}, "ids has 501 entries; at most 500 at once"),
        ({}, 'ids "null" is not valid'),
    ):
        refused = post(as_(client, rex), "/notifications/read", body)
        assert refused.status_code == 422, (body, refused.content)
        assert says in refused.json()["error"]["message"], refused.json()
        assert inbox(client, rex)["unread"] == 2
    assert not Notification.objects.get(pk=theirs.pk).read
    # one by id, then all
    one = post(as_(client, rex), "/notifications/read", {"ids": [items[0]["id"]]})
    assert one.status_code == 200 and one.json()["unread"] == 1
    assert [n["read"] for n in one.json()["items"]] == [True, False]
    every = post(as_(client, rex), "/notifications/read", {"all": True})
    assert every.json()["unread"] == 0
    # another person is still answered, and a stranger signed out is refused
    assert inbox(client, cast["cat"])["unread"] == 1
    client.logout()
    assert client.get(f"{API}/notifications").status_code == 401


def test_re_request_asks_again_with_the_changes_since_the_last_verdict(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    path = f"/graphs/{graph.pk}/reviews/{rid}"
    post(as_(client, cast["rex"]), f"{path}/verdicts", {"verdict": "request_changes"})
    judged = current(graph)
    dot = second_dot(graph)
    do_apply_edit(
        cast["owner"],
        graph.pk,
        judged,
        [{"op": "update_node", "id": dot["id"], "body": {"params": {"x": 1}}}],
    )
    # refusals first: a reviewer may not re-request, the author may not be asked, a name that is
    # no member is named; nothing changes and rex is not notified again
    before = inbox(client, cast["rex"])["unread"]
    assert (
        post(as_(client, cast["rex"]), f"{path}/requests", {"reviewers": ["rex"]}).status_code
        == 403
    )
    for names, says in (
        (["ann"], '"ann"'),
        (["zed"], '"zed"'),
        ([], 'reviewers "[]" is not valid'),
        ("rex", 'reviewers "rex" is not valid'),
    ):
        refused = post(as_(client, cast["cat"]), f"{path}/requests", {"reviewers": names})
        assert refused.status_code == 422 and says in refused.json()["error"]["message"], (
            refused.content
        )
    assert inbox(client, cast["rex"])["unread"] == before
    assert list(Review.objects.get(pk=rid).reviewers.values_list("username", flat=True)) == ["rex"]
    # when cat (an editor) asks rex again
    again = post(as_(client, cast["cat"]), f"{path}/requests", {"reviewers": ["rex"]})
    assert again.status_code == 200, again.content
    assert again.json()["reviewers"] == ["rex"]
    newest = inbox(client, cast["rex"])["items"][0]
    assert newest["kind"] == "review_requested"
    assert newest["text"] == (
        f'cat asked you again to review "Megatron split" of graph "Block" (changes since your '
        f"verdict at version {judged})"
    )
    # then rex reads the changes since his verdict: the versions, what changed, where to read it
    since = as_(client, cast["rex"]).get(API + path).json()["sinceYourVerdict"]
    now = current(graph)
    assert since == {
        "verdict": Verdict.objects.get(review_id=rid).pk,
        "given": "request_changes",
        "version": judged,
        "currentVersion": now,
        "stale": True,
        "changes": [f'"{dot["label"]}": body.params'],
        "versionDiff": f"/api/v1/graphs/{graph.pk}/versions/{judged}/diff/{now}",
        "page": f"/graphs/{graph.pk}/diff/{judged}/{now}/",
    }
    assert as_(client, cast["owner"]).get(API + path).json()["sinceYourVerdict"] is None


def test_an_approval_going_stale_is_told_once(
    client: Client, cast: Any, review: Any, django_capture_on_commit_callbacks: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    post(
        as_(client, cast["rex"]),
        f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
        {"verdict": "approve"},
    )
    plan = megatron(graph)
    with django_capture_on_commit_callbacks(execute=True):
        do_save_plan(
            cast["owner"], graph, plan.name, plan.mesh, {}, plan,
            axis_mapping={"H": "tp"}, inputs=plan.inputs,
        )  # fmt: skip
    told = [n for n in inbox(client, cast["owner"])["items"] if n["kind"] == "stale"]
    assert [n["text"] for n in told] == [
        'the approval by rex of review "Megatron split" went stale: the plan or the graph '
        f"changed since version {review['version']}"
    ]
    assert inbox(client, cast["rex"])["items"][0]["kind"] == "stale"
    assert Verdict.objects.get(review_id=rid).stale_told
    # a second change tells nobody again
    with django_capture_on_commit_callbacks(execute=True):
        do_save_plan(
            cast["owner"], graph, plan.name, plan.mesh, {}, megatron(graph),
            axis_mapping={"H": "tp", "F": "tp"}, inputs=plan.inputs,
        )  # fmt: skip
    assert Notification.objects.filter(kind="stale").count() == 2


def test_an_open_thread_after_approval_counts_as_unresolved(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    path = f"/graphs/{graph.pk}/reviews/{rid}"
    post(as_(client, cast["rex"]), f"{path}/verdicts", {"verdict": "approve"})
    post(
        as_(client, cast["rex"]),
        f"{path}/threads",
        {"anchor": {"node": second_dot(graph)["id"]}, "body": "nit"},
    )
    found = as_(client, cast["viewer"]).get(API + path).json()
    assert (found["state"], found["openThreads"]) == ("approved", 1)
    assert (
        patch(as_(client, cast["viewer"]), "/notifications/settings", {"sound": True}).status_code
        == 422
    )


def test_a_person_who_lost_their_role_reads_nothing_more_of_the_graph(
    client: Client, cast: Any, review: Any
) -> None:
    # given rex was asked to review, then removed from the graph
    from geon.graphs.models import Membership

    assert inbox(client, cast["rex"])["unread"] == 1
    Membership.objects.filter(graph=cast["graph"], user=cast["rex"]).delete()
    # then his inbox no longer shows it (nor the graph's title in it), and nothing is unread
    assert inbox(client, cast["rex"]) == {"items": [], "unread": 0}
    # and marking it read by id is refused as not his to see
    stored = Notification.objects.get(user=cast["rex"])
    refused = post(as_(client, cast["rex"]), "/notifications/read", {"ids": [stored.pk]})
    assert refused.status_code == 422 and not Notification.objects.get(pk=stored.pk).read


def test_a_reply_notifies_no_earlier_writer_who_lost_their_role(
    client: Client, cast: Any, review: Any
) -> None:
    from geon.graphs.models import Membership

    graph, rid = cast["graph"], review["id"]
    threads = f"/graphs/{graph.pk}/reviews/{rid}/threads"
    body = {"anchor": {"node": second_dot(graph)["id"]}, "body": "why 4?"}
    tid = post(as_(client, cast["rex"]), threads, body).json()["id"]
    Membership.objects.filter(graph=graph, user=cast["rex"]).delete()
    post(as_(client, cast["owner"]), f"{threads}/{tid}/comments", {"body": "memory"})
    assert not Notification.objects.filter(user=cast["rex"], kind="replied").exists()
