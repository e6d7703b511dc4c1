"""Who judges a review (issue 30, finding 6), replayed through the REST API: a review's author
cannot give it a verdict (nor ask themself), "approved" needs an approval from a reviewer the
review asks, and a thread is resolved or reopened only by its author, the review's reviewers or
the graph's owner. A suggestion is checked as an edit when its thread is written (finding 9).
Each refusal names what is wrong and what would be valid, stores nothing, and the next person is
still answered."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.graphs.models import Membership
from geon.graphs.services import live_document
from geon.reviews.models import Comment, Review, Thread, Verdict

pytestmark = pytest.mark.django_db

API = "/api/v1"
T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"  # a tensor of the loom example


@pytest.fixture
def cast(user: Any, other_user: Any, graph: Any, django_user_model: Any) -> dict[str, Any]:
    """ann owns the loom add; cat edits it; rex and ray review it; bob views it."""
    people: dict[str, Any] = {"ann": user, "bob": other_user, "graph": graph}
    for name, role in (("cat", "editor"), ("rex", "reviewer"), ("ray", "reviewer")):
        people[name] = django_user_model.objects.create_user(name, password="x")
        Membership.objects.create(graph=graph, user=people[name], role=role)
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    return people


def signed(person: Any) -> Client:
    client = Client()
    client.force_login(person)
    return client


def send(client: Client, method: str, path: str, body: Any) -> Any:
    call = getattr(client, method)
    return call(API + path, json.dumps(body), content_type="application/json")


def opened(cast: dict[str, Any], author: str = "cat", reviewers: tuple[str, ...] = ("rex",)) -> Any:
    """A review of the whole graph, opened by ``author`` asking ``reviewers``."""
    graph = cast["graph"]
    answer = send(
        signed(cast[author]),
        "post",
        f"/graphs/{graph.pk}/reviews",
        {"title": "Loom split", "reviewers": list(reviewers)},
    )
    assert answer.status_code == 201, answer.content
    return answer.json()


def stored(review_id: int) -> tuple[Any, ...]:
    review = Review.objects.get(pk=review_id)
    return (
        review.activity,
        Verdict.objects.filter(review=review).count(),
        list(Thread.objects.filter(review=review).values_list("resolved", flat=True)),
        Comment.objects.count(),
    )


@pytest.mark.parametrize("verdict", ["approve", "request_changes", "comment"])
def test_the_author_of_a_review_cannot_give_it_a_verdict(cast: Any, verdict: str) -> None:
    graph = cast["graph"]
    review = opened(cast)
    path = f"/graphs/{graph.pk}/reviews/{review['id']}"
    before = stored(review["id"])
    # when cat, who opened it, judges her own review
    refused = send(signed(cast["cat"]), "post", f"{path}/verdicts", {"verdict": verdict})
    # then it is refused (403), saying why and who gives verdicts, and nothing is stored
    assert refused.status_code == 403, refused.content
    assert refused.json()["error"]["message"] == (
        'you opened review "Loom split", so you cannot give it a verdict; the reviewers it asks '
        '("rex") give verdicts, and it is approved only by one of them; answer them in a thread '
        "instead"
    )
    assert stored(review["id"]) == before
    # and her review says so, for the panel's disabled form; rex's does not
    shown = signed(cast["cat"]).get(API + path).json()
    assert shown["verdictRefused"] == refused.json()["error"]["message"]
    assert shown["state"] == "open"
    assert signed(cast["rex"]).get(API + path).json()["verdictRefused"] is None
    # and rex, whom it asks, is answered: his approval approves it
    given = send(signed(cast["rex"]), "post", f"{path}/verdicts", {"verdict": "approve"})
    assert given.status_code == 201, given.content
    assert given.json()["state"] == "approved"
    assert [(v["user"], v["requested"]) for v in given.json()["verdicts"]] == [("rex", True)]


def test_the_graph_owner_who_opened_a_review_cannot_approve_it_either(cast: Any) -> None:
    graph = cast["graph"]
    review = opened(cast, author="ann")
    path = f"/graphs/{graph.pk}/reviews/{review['id']}/verdicts"
    before = stored(review["id"])
    refused = send(signed(cast["ann"]), "post", path, {"verdict": "approve"})
    assert refused.status_code == 403
    assert 'you opened review "Loom split"' in refused.json()["error"]["message"]
    assert stored(review["id"]) == before
    assert send(signed(cast["rex"]), "post", path, {"verdict": "comment"}).status_code == 201


def test_an_author_cannot_ask_themself_to_review(cast: Any) -> None:
    graph = cast["graph"]
    # when cat opens a review asking herself (and rex)
    refused = send(
        signed(cast["cat"]),
        "post",
        f"/graphs/{graph.pk}/reviews",
        {"title": "Mine", "reviewers": ["rex", "cat"]},
    )
    # then it is refused by name, listing whom she may ask, and no review is stored
    assert refused.status_code == 422, refused.content
    assert refused.json()["error"]["message"] == (
        'reviewer "cat" is opening this review and cannot review it (its author gives it no '
        'verdict); ask other members of graph "Loom add": ann, bob, ray, rex'
    )
    assert Review.objects.count() == 0
    # and asking rex alone is answered
    assert opened(cast)["reviewers"] == ["rex"]


def test_approved_needs_an_approval_from_a_reviewer_it_asks(cast: Any) -> None:
    graph = cast["graph"]
    review = opened(cast)
    path = f"/graphs/{graph.pk}/reviews/{review['id']}"
    # when ray, a reviewer of the graph the review does not ask, approves
    given = send(signed(cast["ray"]), "post", f"{path}/verdicts", {"verdict": "approve"})
    # then his verdict is kept, marked as not asked, and the review is still open
    assert given.status_code == 201, given.content
    assert given.json()["state"] == "open"
    assert [(v["user"], v["requested"]) for v in given.json()["verdicts"]] == [("ray", False)]
    # and the owner's approval is not the review's either
    send(signed(cast["ann"]), "post", f"{path}/verdicts", {"verdict": "approve"})
    assert signed(cast["bob"]).get(API + path).json()["state"] == "open"
    # when rex, whom it asks, approves, it is approved
    send(signed(cast["rex"]), "post", f"{path}/verdicts", {"verdict": "approve"})
    assert signed(cast["bob"]).get(API + path).json()["state"] == "approved"
    # and anyone's request for changes still holds it back
    send(signed(cast["ray"]), "post", f"{path}/verdicts", {"verdict": "request_changes"})
    assert signed(cast["bob"]).get(API + path).json()["state"] == "changes_requested"


def test_an_author_verdict_stored_before_the_rule_never_approves(cast: Any) -> None:
    """A verdict the author gave before this rule (stored directly) is shown but decides
    nothing, even if the author was asked too."""
    from geon.reviews.services.writing import do_open_review

    graph = cast["graph"]
    review = do_open_review(cast["cat"], graph.pk, "Old", ["rex"])
    review.reviewers.add(cast["cat"])
    Verdict.objects.create(
        review=review, user=cast["cat"], verdict="approve", version=1, fingerprint="x"
    )
    shown = signed(cast["bob"]).get(f"{API}/graphs/{graph.pk}/reviews/{review.pk}").json()
    assert [v["user"] for v in shown["verdicts"]] == ["cat"] and shown["state"] == "open"


def test_resolving_is_for_the_thread_author_the_reviewers_or_the_owner(cast: Any) -> None:
    graph = cast["graph"]
    review = opened(cast)  # cat's, asking rex
    base = f"/graphs/{graph.pk}/reviews/{review['id']}/threads"
    made = send(signed(cast["ray"]), "post", base, {"anchor": {"node": T0}, "body": "Why?"})
    assert made.status_code == 201, made.content
    tid = made.json()["id"]
    before = stored(review["id"])
    # when cat, the review's author (an editor), resolves ray's thread to clear the guardrail
    refused = send(signed(cast["cat"]), "patch", f"{base}/{tid}", {"resolved": True})
    # then it is refused (403), naming who may, and the thread stays open
    assert refused.status_code == 403, refused.content
    message = refused.json()["error"]["message"]
    assert message == (
        'you may not resolve or reopen the thread on "t0": that is for its author ("ray"), the '
        'reviewers the review asks ("rex") or the graph\'s owner; reply in the thread instead'
    )
    assert stored(review["id"]) == before
    # and the review tells her so, for the panel's disabled button
    shown = signed(cast["cat"]).get(f"{API}/graphs/{graph.pk}/reviews/{review['id']}").json()
    assert [t["resolveRefused"] for t in shown["threads"]] == [message]
    # and rex (asked), ray (its author) and ann (the owner) are answered
    for who, resolved in (("rex", True), ("ray", False), ("ann", True)):
        done = send(signed(cast[who]), "patch", f"{base}/{tid}", {"resolved": resolved})
        assert done.status_code == 200, (who, done.content)
        assert done.json()["resolved"] is resolved and done.json()["resolveRefused"] is None
    assert Thread.objects.get(pk=tid).resolved is True


def test_a_suggestion_is_checked_as_an_edit_when_the_thread_is_written(cast: Any) -> None:
    graph = cast["graph"]
    review = opened(cast)
    base = f"/graphs/{graph.pk}/reviews/{review['id']}/threads"
    version = live_document(graph).version
    missing = "00000000-0000-4000-8000-00000000dead"
    before = (Thread.objects.count(), Comment.objects.count(), stored(review["id"]))
    # when rex suggests changing a node that does not exist (well-formed ops, a bad edit)
    refused = send(
        signed(cast["rex"]),
        "post",
        base,
        {
            "anchor": {"node": T0},
            "body": "Rename it",
            "suggestion": {"ops": [{"op": "update_node", "id": missing, "label": "x"}]},
        },
    )
    # then the thread is refused now (422), naming the node and the version, not when applied
    assert refused.status_code == 422, refused.content
    message = refused.json()["error"]["message"]
    assert message.startswith(f"suggestion is not an edit version {version} of the graph accepts: ")
    assert missing in message and message.endswith("suggest ops on the nodes as they are now")
    assert (Thread.objects.count(), Comment.objects.count(), stored(review["id"])) == before
    assert live_document(graph).version == version
    # and a suggestion the document accepts is stored, the document unchanged until applied
    ok = send(
        signed(cast["ray"]),
        "post",
        base,
        {
            "anchor": {"node": T0},
            "body": "Rename it",
            "suggestion": {"ops": [{"op": "update_node", "id": T0, "label": "renamed"}]},
        },
    )
    assert ok.status_code == 201, ok.content
    assert live_document(graph).version == version
    labels = {n.id: n.label for n in live_document(graph).document.nodes}
    assert labels[T0] != "renamed"
