"""Reviews over ``/api/v1/`` (issue 18, docs/reviews.md): every endpoint for owner, editor,
reviewer, viewer and stranger, asserting what is stored; threads that go outdated, approvals that
go stale on a placement change and survive a layout move, guardrails, suggestions applied as one
version, mentions by mail."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core import mail
from django.test import Client

from geon.core.graph import LAYOUT, OPERATION, TENSOR_AXES
from geon.examples.transformer import PLANS, transformer_block
from geon.graphs.models import Graph, Membership, ShardPlan
from geon.graphs.services import do_apply_edit, do_create_graph, live_document
from geon.graphs.services.plans import do_save_plan
from geon.reviews.models import Comment, Review, Thread, Verdict

pytestmark = pytest.mark.django_db

API = "/api/v1"


@pytest.fixture
def cast(user: Any, other_user: Any, django_user_model: Any) -> dict[str, Any]:
    """ann owns the transformer block; bob views it, cat edits it, rex reviews it, dan has no
    role on it."""
    people = {"owner": user, "viewer": other_user}
    for name in ("cat", "rex", "dan"):
        people[name] = django_user_model.objects.create_user(
            name, password="x", email=f"{name}@x.org"
        )
    graph = do_create_graph(owner=user, title="Block", document=transformer_block().to_json())
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    Membership.objects.create(graph=graph, user=people["cat"], role="editor")
    Membership.objects.create(graph=graph, user=people["rex"], role="reviewer")
    for plan in PLANS:
        do_save_plan(
            user, graph, plan["name"], plan["mesh"], {}, None,
            axis_mapping=plan["axisMapping"], inputs=plan["inputs"],
        )  # fmt: skip
    people["editor"], people["reviewer"], people["stranger"] = (
        people["cat"],
        people["rex"],
        people["dan"],
    )
    people["graph"] = graph
    return people


def as_(client: Client, person: Any) -> Client:
    client.force_login(person)
    return client


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(API + path, json.dumps(body), content_type="application/json")


def patch(client: Client, path: str, body: Any) -> Any:
    return client.patch(API + path, json.dumps(body), content_type="application/json")


def megatron(graph: Graph) -> ShardPlan:
    return ShardPlan.objects.get(graph=graph, name="Megatron tensor parallel")


def node_labelled(graph: Graph, label: str) -> dict[str, Any]:
    document = live_document(graph).document.to_json()
    return next(n for n in document["nodes"] if n.get("label") == label)


def second_dot(graph: Graph) -> dict[str, Any]:
    document = live_document(graph).document.to_json()
    dots = [
        n for n in document["nodes"] if n["type"] == OPERATION and n["body"]["kernel"] == "op:dot"
    ]
    return dots[1]


def current(graph: Graph) -> int:
    graph.refresh_from_db()
    return graph.current_version.number


@pytest.fixture
def review(client: Client, cast: dict[str, Any]) -> dict[str, Any]:
    graph = cast["graph"]
    answer = post(
        as_(client, cast["owner"]),
        f"/graphs/{graph.pk}/reviews",
        {"title": "Megatron split", "plan": megatron(graph).pk, "reviewers": ["rex"]},
    )
    assert answer.status_code == 201, answer.content
    return answer.json()


def test_opening_a_review_answers_the_contract_and_stores_it(
    review: dict[str, Any], cast: Any
) -> None:
    assert review["state"] == "open"
    assert review["version"] == current(cast["graph"])
    assert review["plan"]["name"] == "Megatron tensor parallel"
    assert review["reviewers"] == ["rex"] and review["author"] == "ann"
    assert review["threads"] == [] and review["verdicts"] == []
    stored = Review.objects.get(pk=review["id"])
    assert stored.title == "Megatron split" and list(
        stored.reviewers.values_list("username", flat=True)
    ) == ["rex"]


@pytest.mark.parametrize(
    ("persona", "status"),
    [("owner", 201), ("editor", 201), ("reviewer", 403), ("viewer", 403), ("stranger", 404)],
)
def test_who_may_open_a_review(client: Client, cast: Any, persona: str, status: int) -> None:
    graph = cast["graph"]
    answer = post(
        as_(client, cast[persona]),
        f"/graphs/{graph.pk}/reviews",
        {"title": "T", "reviewers": ["rex"]},
    )
    assert answer.status_code == status, answer.content
    assert Review.objects.count() == (1 if status == 201 else 0)


@pytest.mark.parametrize(
    ("persona", "status"), [("viewer", 200), ("reviewer", 200), ("stranger", 404)]
)
def test_who_may_read_reviews(
    client: Client, cast: Any, review: Any, persona: str, status: int
) -> None:
    graph = cast["graph"]
    c = as_(client, cast[persona])
    assert c.get(f"{API}/graphs/{graph.pk}/reviews/{review['id']}").status_code == status
    listed = c.get(f"{API}/graphs/{graph.pk}/reviews")
    assert listed.status_code == status
    if status == 200:
        assert [r["title"] for r in listed.json()["reviews"]] == ["Megatron split"]


def test_reviewers_must_be_members_who_can_review(client: Client, cast: Any) -> None:
    graph = cast["graph"]
    c = as_(client, cast["owner"])
    stranger = post(c, f"/graphs/{graph.pk}/reviews", {"title": "T", "reviewers": ["dan"]})
    assert stranger.status_code == 422
    assert '"dan" has no role on graph "Block"' in stranger.json()["error"]["message"]
    viewer = post(c, f"/graphs/{graph.pk}/reviews", {"title": "T", "reviewers": ["bob"]})
    assert viewer.status_code == 422 and "viewer" in viewer.json()["error"]["message"]
    assert Review.objects.count() == 0


def test_threads_comments_and_resolving_by_role(client: Client, cast: Any, review: Any) -> None:
    graph, rid = cast["graph"], review["id"]
    dot = second_dot(graph)
    body = {"anchor": {"node": dot["id"]}, "body": "Why **not** split `F`?"}
    assert (
        post(
            as_(client, cast["viewer"]), f"/graphs/{graph.pk}/reviews/{rid}/threads", body
        ).status_code
        == 403
    )
    assert (
        post(
            as_(client, cast["stranger"]), f"/graphs/{graph.pk}/reviews/{rid}/threads", body
        ).status_code
        == 404
    )
    made = post(as_(client, cast["reviewer"]), f"/graphs/{graph.pk}/reviews/{rid}/threads", body)
    assert made.status_code == 201, made.content
    thread = made.json()
    # an operation reads by its name and what it writes (issue 35), never just its kernel
    assert (
        thread["anchor"] == {"node": dot["id"]} and thread["anchorLabel"] == f"{dot['label']} → k"
    )
    assert thread["resolved"] is False and thread["outdated"] is False and thread["comments"] == []
    tid = thread["id"]
    reply = post(
        as_(client, cast["owner"]),
        f"/graphs/{graph.pk}/reviews/{rid}/threads/{tid}/comments",
        {"body": "Because."},
    )
    assert reply.status_code == 201 and [c["body"] for c in reply.json()["comments"]] == [
        "Because."
    ]
    assert (
        patch(
            as_(client, cast["viewer"]),
            f"/graphs/{graph.pk}/reviews/{rid}/threads/{tid}",
            {"resolved": True},
        ).status_code
        == 403
    )
    done = patch(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/threads/{tid}",
        {"resolved": True},
    )
    assert done.status_code == 200 and done.json()["resolved"] is True
    assert (
        Thread.objects.get(pk=tid).resolved and Comment.objects.filter(thread_id=tid).count() == 2
    )


@pytest.mark.parametrize(
    ("anchor", "named"),
    [
        ({"node": "nope"}, '"nope"'),
        ({"axis": "Q"}, '"Q"'),
        ({"colour": "red"}, "colour"),
        ({"region": {"operation": "nope", "start": [0], "end": [1]}}, "operation"),
    ],
)
def test_a_bad_anchor_is_refused_by_name(
    client: Client, cast: Any, review: Any, anchor: Any, named: str
) -> None:
    graph = cast["graph"]
    answer = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{review['id']}/threads",
        {"anchor": anchor, "body": "x"},
    )
    assert answer.status_code == 422 and named in answer.json()["error"]["message"]
    assert Thread.objects.count() == 0


def test_a_region_anchor_is_named_for_people(client: Client, cast: Any, review: Any) -> None:
    graph, dot = cast["graph"], second_dot(cast["graph"])
    anchor = {"region": {"operation": dot["id"], "start": [0, 0], "end": [2, 3]}}
    answer = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{review['id']}/threads",
        {"anchor": anchor, "body": "this window"},
    )
    assert answer.status_code == 201
    assert answer.json()["anchorLabel"] == f"{dot['label']} → k · window [0:2, 0:3]"


def test_a_malformed_suggestion_is_refused(client: Client, cast: Any, review: Any) -> None:
    graph, dot = cast["graph"], second_dot(cast["graph"])
    answer = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{review['id']}/threads",
        {"anchor": {"node": dot["id"]}, "body": "x", "suggestion": {"ops": [{"op": "explode"}]}},
    )
    assert answer.status_code == 422 and "suggestion" in answer.json()["error"]["message"]
    assert Thread.objects.count() == 0


def test_a_suggestion_is_applied_as_one_version_and_the_thread_goes_outdated(
    client: Client, cast: Any, review: Any
) -> None:
    graph, dot = cast["graph"], second_dot(cast["graph"])
    suggestion = {
        "ops": [
            {
                "op": "update_node",
                "id": dot["id"],
                "body": {"kernel": "op:dot", "params": {"note": 1}},
            }
        ]
    }
    made = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{review['id']}/threads",
        {"anchor": {"node": dot["id"]}, "body": "try this", "suggestion": suggestion},
    ).json()
    path = f"/graphs/{graph.pk}/reviews/{review['id']}/threads/{made['id']}/apply"
    before = current(graph)
    assert post(as_(client, cast["reviewer"]), path, {"baseVersion": before}).status_code == 403
    assert current(graph) == before
    applied = post(as_(client, cast["editor"]), path, {"baseVersion": before, "editId": "sugg-1"})
    assert applied.status_code == 200, applied.content
    assert applied.json()["version"] == before + 1 == current(graph)
    thread = applied.json()["thread"]
    assert thread["appliedVersion"] == before + 1
    assert thread["outdated"] is True and "body.params" in thread["changes"]
    version = graph.versions.get(number=before + 1)
    assert version.edit_id == "sugg-1" and "review threads" in version.message


def test_approval_survives_a_layout_move_and_goes_stale_on_a_placement_change(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    given = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
        {"verdict": "approve", "body": "LGTM"},
    )
    assert given.status_code == 201, given.content
    assert given.json()["state"] == "approved"
    dot = second_dot(graph)
    do_apply_edit(
        cast["owner"],
        graph.pk,
        current(graph),
        [
            {
                "op": "update_node",
                "id": dot["id"],
                "label": "renamed",
                "tags": {LAYOUT: {"x": 500.0, "y": 40.0}},
            }
        ],
    )
    held = as_(client, cast["viewer"]).get(f"{API}/graphs/{graph.pk}/reviews/{rid}").json()
    assert held["state"] == "approved" and held["verdicts"][0]["stale"] is False
    plan = megatron(graph)
    do_save_plan(
        cast["owner"],
        graph,
        plan.name,
        plan.mesh,
        {},
        plan,
        axis_mapping={"H": "tp"},
        inputs=plan.inputs,
    )
    stale = as_(client, cast["viewer"]).get(f"{API}/graphs/{graph.pk}/reviews/{rid}").json()
    assert stale["state"] == "open"
    assert stale["verdicts"][0]["stale"] is True and stale["verdicts"][0]["staleBecause"] == [
        "plan axisMapping"
    ]
    assert Verdict.objects.get(review_id=rid).version == review["version"]


def test_a_kernel_change_makes_the_approval_stale_and_says_where(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
        {"verdict": "approve"},
    )
    dot = second_dot(graph)
    do_apply_edit(
        cast["owner"],
        graph.pk,
        current(graph),
        [{"op": "update_node", "id": dot["id"], "body": {"params": {"x": 1}}}],
    )
    stale = as_(client, cast["owner"]).get(f"{API}/graphs/{graph.pk}/reviews/{rid}").json()
    assert stale["verdicts"][0]["staleBecause"] == [f'"{dot["label"]}": body.params']


def test_guardrail_refuses_approval_with_an_unresolved_thread(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    dot = second_dot(graph)
    post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/threads",
        {"anchor": {"node": dot["id"]}, "body": "hm"},
    )
    refused = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
        {"verdict": "approve"},
    )
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "guardrail"
    assert [g["name"] for g in error["guardrails"]] == ["requireResolvedThreads"]
    assert dot["label"] in error["message"]
    assert Verdict.objects.count() == 0
    # asking for changes is not an approval: no guardrail applies
    asked = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
        {"verdict": "request_changes"},
    )
    assert asked.status_code == 201 and asked.json()["state"] == "changes_requested"


def test_the_owner_sets_guardrails_and_others_may_not(
    client: Client, cast: Any, review: Any
) -> None:
    graph = cast["graph"]
    path = f"/graphs/{graph.pk}/review-settings"
    assert as_(client, cast["viewer"]).get(API + path).json()["requireResolvedThreads"] is True
    assert (
        patch(as_(client, cast["editor"]), path, {"requireResolvedThreads": False}).status_code
        == 403
    )
    bad = patch(as_(client, cast["owner"]), path, {"requireResolvedThreads": "no"})
    assert bad.status_code == 422 and '"no"' in bad.json()["error"]["message"]
    ok = patch(as_(client, cast["owner"]), path, {"requireResolvedThreads": False})
    assert ok.status_code == 200 and ok.json()["requireResolvedThreads"] is False
    dot = second_dot(graph)
    rid = review["id"]
    post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/threads",
        {"anchor": {"node": dot["id"]}, "body": "hm"},
    )
    assert (
        post(
            as_(client, cast["reviewer"]),
            f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
            {"verdict": "approve"},
        ).status_code
        == 201
    )


def test_guardrail_refuses_approval_while_the_graph_has_errors(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    x = node_labelled(graph, "x")
    undeclared = {TENSOR_AXES: {"axes": ["B", "N", "Q"]}}
    do_apply_edit(
        cast["owner"],
        graph.pk,
        current(graph),
        [{"op": "update_node", "id": x["id"], "tags": undeclared}],
    )
    graph.refresh_from_db()
    assert live_document(graph).checker.issues, "the edit should leave an error"
    refused = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
        {"verdict": "approve"},
    )
    assert refused.status_code == 409
    assert "blockOnErrors" in [g["name"] for g in refused.json()["error"]["guardrails"]]


def test_closing_and_reopening_is_for_editors(client: Client, cast: Any, review: Any) -> None:
    graph, rid = cast["graph"], review["id"]
    path = f"/graphs/{graph.pk}/reviews/{rid}"
    assert patch(as_(client, cast["reviewer"]), path, {"state": "closed"}).status_code == 403
    closed = patch(as_(client, cast["editor"]), path, {"state": "closed"})
    assert closed.status_code == 200 and closed.json()["state"] == "closed"
    assert Review.objects.get(pk=rid).closed
    bad = patch(as_(client, cast["editor"]), path, {"state": "merged"})
    assert bad.status_code == 422 and '"merged"' in bad.json()["error"]["message"]
    assert patch(as_(client, cast["owner"]), path, {"state": "open"}).json()["state"] == "open"


def verified(person: Any) -> None:
    """``person``'s address as allauth holds it once confirmed."""
    from allauth.account.models import EmailAddress

    EmailAddress.objects.create(user=person, email=person.email, verified=True, primary=True)


def test_mentions_and_verdicts_are_mailed_to_verified_addresses(
    client: Client, cast: Any, review: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given cat's and ann's addresses confirmed, and dan's (no role) never
    graph, rid = cast["graph"], review["id"]
    cast["owner"].email = "ann@x.org"
    cast["owner"].save()
    verified(cast["cat"])
    verified(cast["owner"])
    dot = second_dot(graph)
    with_mention = {"anchor": {"node": dot["id"]}, "body": "@cat could you look? (not @nobody)"}
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        thread = post(
            as_(client, cast["reviewer"]), f"/graphs/{graph.pk}/reviews/{rid}/threads", with_mention
        )
    # then cat is mailed, with the thread's permalink
    assert [m.to for m in mail.outbox] == [["cat@x.org"]]
    assert "rex mentioned you" in mail.outbox[0].subject
    tid = thread.json()["id"]
    assert f"http://testserver/graphs/{graph.pk}/?review={rid}&thread={tid}" in mail.outbox[0].body
    assert thread.json()["notices"] == []
    with django_capture_on_commit_callbacks(execute=True):
        post(
            as_(client, cast["reviewer"]),
            f"/graphs/{graph.pk}/reviews/{rid}/verdicts",
            {"verdict": "comment", "body": "ok"},
        )
    assert mail.outbox[-1].to == ["ann@x.org"] and "rex commented on" in mail.outbox[-1].subject
    assert f"/graphs/{graph.pk}/?review={rid}\n" in mail.outbox[-1].body


def test_a_mention_of_someone_without_a_verified_address_says_so(
    client: Client, cast: Any, review: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given cat's address is on the account but never confirmed
    graph, rid = cast["graph"], review["id"]
    body = {"anchor": {"node": second_dot(graph)["id"]}, "body": "@cat please look"}
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        answer = post(
            as_(client, cast["reviewer"]), f"/graphs/{graph.pk}/reviews/{rid}/threads", body
        )
    # then nothing is mailed, the writer is told why, and cat has the mention in the inbox
    assert answer.status_code == 201 and mail.outbox == []
    assert answer.json()["notices"] == [
        "@cat has no verified email address: they see the mention in their inbox only"
    ]
    inbox = as_(client, cast["cat"]).get(f"{API}/notifications").json()
    found = [(n["kind"], n["thread"]) for n in inbox["items"]]
    assert found == [("mentioned", answer.json()["id"])]


def test_muted_mail_still_notifies(
    client: Client, cast: Any, review: Any, django_capture_on_commit_callbacks: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    verified(cast["cat"])
    muted = patch(as_(client, cast["cat"]), "/notifications/settings", {"mail": False})
    assert muted.json() == {"mail": False, "addresses": ["cat@x.org"]}
    bad = patch(as_(client, cast["cat"]), "/notifications/settings", {"mail": "no"})
    assert bad.status_code == 422 and 'mail "no" is not valid' in bad.json()["error"]["message"]
    mail.outbox.clear()
    body = {"anchor": {"node": second_dot(graph)["id"]}, "body": "@cat please look"}
    with django_capture_on_commit_callbacks(execute=True):
        post(as_(client, cast["reviewer"]), f"/graphs/{graph.pk}/reviews/{rid}/threads", body)
    assert mail.outbox == []
    assert as_(client, cast["cat"]).get(f"{API}/notifications").json()["unread"] == 1


def test_reviews_for_me_and_unread(client: Client, cast: Any, review: Any) -> None:
    graph, rid = cast["graph"], review["id"]
    mine = as_(client, cast["reviewer"]).get(f"{API}/reviews").json()["reviews"]
    assert [(r["title"], r["graph"]["title"], r["unread"]) for r in mine] == [
        ("Megatron split", "Block", 1)
    ]
    dot = second_dot(graph)
    post(
        as_(client, cast["owner"]),
        f"/graphs/{graph.pk}/reviews/{rid}/threads",
        {"anchor": {"node": dot["id"]}, "body": "note"},
    )
    assert as_(client, cast["reviewer"]).get(f"{API}/reviews").json()["reviews"][0]["unread"] == 2
    assert (
        post(as_(client, cast["reviewer"]), f"/graphs/{graph.pk}/reviews/{rid}/read", {}).json()[
            "unread"
        ]
        == 0
    )
    assert as_(client, cast["viewer"]).get(f"{API}/reviews").json()["reviews"] == []
    page = as_(client, cast["reviewer"]).get("/reviews/")
    assert page.status_code == 200 and b"Megatron split" in page.content


def test_several_suggestions_are_applied_as_one_edit(
    client: Client, cast: Any, review: Any
) -> None:
    graph, rid = cast["graph"], review["id"]
    ids = []
    for label in ("x", "Wq"):
        node = node_labelled(graph, label)
        ops = [{"op": "update_node", "id": node["id"], "label": label + "!"}]
        made = post(
            as_(client, cast["reviewer"]),
            f"/graphs/{graph.pk}/reviews/{rid}/threads",
            {"anchor": {"node": node["id"]}, "body": "rename", "suggestion": {"ops": ops}},
        )
        ids.append(made.json()["id"])
    before = current(graph)
    applied = post(
        as_(client, cast["owner"]),
        f"/graphs/{graph.pk}/reviews/apply",
        {"threads": ids, "baseVersion": before},
    )
    assert applied.status_code == 200, applied.content
    assert applied.json()["version"] == before + 1 == current(graph)
    assert node_labelled(graph, "x!") and node_labelled(graph, "Wq!")
    assert set(Thread.objects.values_list("applied_version", flat=True)) == {before + 1}


def test_an_anchor_names_the_operation_by_its_output_and_scope(
    client: Client, cast: Any, review: Any
) -> None:
    # given the second dot kept an import's name scope
    graph, rid = cast["graph"], review["id"]
    dot = second_dot(graph)
    scope = {"urn:geon:2026-11:tag_types.jsd#/tags/Group": {"scope": "/layers.0/attn"}}
    do_apply_edit(
        cast["owner"],
        graph.pk,
        current(graph),
        [{"op": "update_node", "id": dot["id"], "tags": scope}],
    )
    # when a thread is pinned to it
    thread = post(
        as_(client, cast["reviewer"]),
        f"/graphs/{graph.pk}/reviews/{rid}/threads",
        {"anchor": {"node": dot["id"]}, "body": "why here?"},
    ).json()
    # then its anchor reads as the operation, what it writes and where it lives
    assert thread["anchorLabel"] == f"{dot['label']} → k in layers.0/attn"
