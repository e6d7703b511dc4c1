"""The editor's Reviews panel (issue 18), two people in two browser contexts against a live
Daphne: ann opens a review of the transformer block's Megatron plan asking bob; bob pins a thread
to the second dot's output window with a suggested split; ann applies it as one undo step; an
approval with the thread unresolved is refused by the guardrail; bob resolves it and approves; a
layout move keeps the approval, a placement change makes it stale in both pages without a
reload."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.core.graph import LAYOUT
from geon.examples.transformer import TITLE
from geon.graphs.models import Membership
from tests.browser.helpers import ARTIFACTS, Browsers, open_graph, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MEGATRON, DP = "Megatron tensor parallel", "Data parallel"
REVIEW = "Megatron split of the block"


@pytest.fixture
def block(user: Any, other_user: Any, gallery: dict[str, str]) -> str:
    """ann's transformer block, which bob may review."""
    graph_id = gallery[TITLE]
    Membership.objects.create(graph_id=graph_id, user=other_user, role="reviewer")
    return graph_id


def review_shown(tab: Page) -> Any:
    """The review the panel lists, as window.geon says."""
    return tab.evaluate("window.geon.reviews()")[0]


def state_chip(tab: Page) -> str:
    return tab.text_content(".geon-review-view .geon-review-head .geon-review-state") or ""


def test_a_plan_review_from_opening_to_a_stale_approval(
    daphne_server: str, password: str, block: str, browsers: Browsers
) -> None:
    ann, bob = browsers.new_page(), browsers.new_page()
    sign_in(ann, daphne_server, "ann", password)
    sign_in(bob, daphne_server, "bob", password)
    open_graph(ann, daphne_server, block)
    open_graph(bob, daphne_server, block)
    assert ann.text_content(".geon-reviews-count") == "no open reviews"
    # a reviewer is not offered to open reviews
    assert bob.locator(".geon-review-new-open").is_hidden()

    # when ann opens a review of the Megatron plan asking bob
    ann.click(".geon-review-new-open")
    ann.fill(".geon-review-title", REVIEW)
    ann.wait_for_selector(f".geon-review-plan option:text('{MEGATRON}')", state="attached")
    ann.select_option(".geon-review-plan", label=MEGATRON)
    ann.check(".geon-review-reviewer[data-user='bob'] input")
    ann.fill(".geon-review-description", "Does the **tp** split of the heads hold?")
    ann.click(".geon-review-open")
    # then she sees it open, and bob's panel lists it live with an unread badge
    ann.wait_for_selector(".geon-review-view:not([hidden]) .geon-review-title-text")
    assert state_chip(ann) == "open"
    # and, as its author, she is offered no verdict: the form is disabled, saying why
    ann.wait_for_selector(".geon-verdict-send[disabled]")
    assert (ann.text_content(".geon-verdict-refused") or "").startswith(
        f'you opened review "{REVIEW}", so you cannot give it a verdict; the reviewers it asks '
        '("bob")'
    )
    bob.wait_for_selector(f".geon-review[data-review='{REVIEW}']")
    assert bob.text_content(".geon-reviews-count") == "1 open review"
    assert bob.text_content(".geon-reviews-unread") == "1"
    meta = bob.text_content(f".geon-review[data-review='{REVIEW}'] .geon-review-meta")
    assert meta == f"{MEGATRON} · by ann · asks bob"

    # when bob opens it, the badge clears
    bob.click(f".geon-review[data-review='{REVIEW}'] .geon-review-link")
    bob.wait_for_selector(".geon-review-view:not([hidden]) .geon-thread-new")
    assert bob.locator(".geon-reviews-unread").is_hidden()
    assert bob.inner_html(".geon-review-description-text").strip() == (
        "<p>Does the <strong>tp</strong> split of the heads hold?</p>"
    )

    # when bob opens the second dot's projection window and comments on it with a split
    dots = bob.evaluate(
        "window.geon.state().document.nodes"
        ".filter((n) => n.body.kernel === 'op:dot').map((n) => n.id)"
    )
    second = dots[1]
    bob.evaluate("(id) => window.geon.select([id])", second)
    bob.click(".geon-open-projection")
    bob.wait_for_selector(".geon-projection:not([hidden])")
    bob.evaluate("(id) => window.geon.select([id])", second)
    # then the comment would be pinned to the window the projection window shows
    bob.wait_for_function(
        "() => document.querySelector('.geon-thread-new-anchor').textContent"
        ".startsWith('on op:dot · window [')"
    )
    bob.fill(".geon-thread-new-text", "Split this one over **B** instead")
    bob.check(".geon-suggest")
    bob.select_option(".geon-suggest-axis", "B")
    bob.fill(".geon-suggest-parts", "2")
    bob.click(".geon-thread-new-send")
    bob.wait_for_selector(".geon-thread")
    label = bob.get_attribute(".geon-thread", "data-anchor") or ""
    # the anchor reads as the operation and what it writes (issue 35), then the window
    assert label.startswith("op:dot → k · window "), label
    # then ann sees the thread live, with the suggestion she may apply
    ann.wait_for_selector(".geon-thread .geon-apply-suggestion")
    operation = label.split(" → ")[0]
    assert ann.text_content(".geon-suggestion-text") == f"split {operation} along B into 2 parts"
    assert ann.inner_html(".geon-thread .geon-comment-body").strip() == (
        "<p>Split this one over <strong>B</strong> instead</p>"
    )
    assert bob.locator(".geon-apply-suggestion").count() == 0  # a reviewer does not apply
    # when ann replies, bob sees the reply in the thread live
    ann.fill(".geon-thread-reply-text", "Good catch, @bob")
    ann.click(".geon-thread-reply-send")
    bob.wait_for_function(
        "() => document.querySelectorAll('.geon-thread .geon-comment').length === 2"
    )
    replies = bob.locator(".geon-thread .geon-comment-body").all_text_contents()
    assert [r.strip() for r in replies] == ["Split this one over B instead", "Good catch, @bob"]
    # when bob comments in a verdict, ann sees it live
    bob.select_option(".geon-verdict-kind", "comment")
    bob.fill(".geon-verdict-text", "Fine apart from the **K** projection.")
    bob.click(".geon-verdict-send")
    ann.wait_for_selector(".geon-verdict[data-verdict='comment']")
    assert ann.text_content(".geon-verdict-who") == "bob commented at version 1"
    # when ann shows the thread's anchor, the operation is selected on the canvas
    ann.click(".geon-thread-show")
    assert ann.evaluate("window.geon.state().selected") == [second]
    ann.set_viewport_size({"width": 1400, "height": 900})
    ann.wait_for_timeout(300)  # the canvas follows the new size on the next frame
    ann.screenshot(path=str(ARTIFACTS / "reviews-panel-in-progress.png"))
    before = ann.evaluate("window.geon.state().document")
    version = ann.evaluate("window.geon.state().version")

    # when ann applies the suggestion
    ann.click(".geon-apply-suggestion")
    ann.wait_for_function("(v) => window.geon.state().version === v + 1", arg=version)
    # then it is one step of her history, and the thread says it was applied
    ann.wait_for_function("() => window.geon.state().history.undo.length === 1")
    assert ann.evaluate("window.geon.state().history.undo")[0].startswith("apply suggestion on ")
    ann.wait_for_selector(".geon-suggestion-applied")
    # and the thread is outdated: its operation's split changed
    ann.wait_for_selector(".geon-thread-outdated")
    # when she undoes it, the document is as before in one step
    ann.locator("canvas.geon-canvas").focus()
    ann.keyboard.press("Control+z")
    ann.wait_for_function("(v) => window.geon.state().version === v + 2", arg=version)
    nodes = ann.evaluate("window.geon.state().document.nodes")
    assert sorted(n["id"] for n in nodes) == sorted(n["id"] for n in before["nodes"])

    # when bob approves with the thread unresolved, the guardrail refuses and says why
    bob.select_option(".geon-verdict-kind", "approve")
    bob.click(".geon-verdict-send")
    bob.wait_for_selector(".geon-guardrail")
    assert bob.locator(".geon-guardrail").all_text_contents() == [
        f'1 thread(s) are not resolved (on "{label}"); resolve them first'
    ]
    assert bob.locator(".geon-verdict").count() == 1

    # when bob resolves the thread and approves
    bob.click(".geon-thread-resolve")
    bob.wait_for_selector(".geon-thread-resolved")
    bob.fill(".geon-verdict-text", "The tp split holds.")
    bob.click(".geon-verdict-send")
    # then both pages show the review approved
    bob.wait_for_selector(".geon-verdict[data-verdict='approve']")
    assert bob.locator(".geon-guardrail").count() == 0
    ann.wait_for_selector(".geon-verdict[data-verdict='approve']")
    assert state_chip(ann) == state_chip(bob) == "approved"
    ann.screenshot(path=str(ARTIFACTS / "reviews-panel-approved.png"))

    # when ann moves a node, the approval holds
    version = ann.evaluate("window.geon.state().version")
    move = {"op": "update_node", "id": dots[0], "tags": {LAYOUT: {"x": 40.0, "y": 40.0}}}
    assert ann.evaluate("(op) => window.geon.edit('move', [op])", move) is None
    bob.wait_for_function("(v) => window.geon.state().version === v + 1", arg=version)
    bob.wait_for_function(
        "(v) => window.geon.reviews()[0].currentVersion === v + 1", arg=version, timeout=5000
    )
    assert bob.locator(".geon-verdict-stale").count() == 0
    assert review_shown(bob)["state"] == "approved"

    # when ann switches the document to the data-parallel plan (placements change)
    ann.locator(f".geon-plan[data-plan='{DP}'] .geon-plan-switch").click()
    # then the approval is stale in both pages, without a reload, and says what changed
    for tab in (ann, bob):
        tab.wait_for_selector(".geon-verdict-stale", timeout=20_000)
        assert tab.text_content(".geon-verdict-stale .geon-verdict-mark") == "stale"
        why = tab.text_content(".geon-verdict-stale .geon-verdict-why") or ""
        assert why.startswith("stale since version ")
        tab.wait_for_function("() => window.geon.reviews()[0].state === 'open'")
    assert state_chip(ann) == state_chip(bob) == "open"
    # and the only failed request was the refused approval
    verdicts = f"{daphne_server}/api/v1/graphs/{block}/reviews/{review_shown(bob)['id']}/verdicts"
    assert sorted(browsers.errors) == [
        f"page 2: 409 {verdicts}",
        "page 2: Failed to load resource: the server responded with a status of 409 (Conflict)",
    ]


@pytest.fixture
def asked(user: Any, block: str) -> Any:
    """ann's review of her block, asking bob."""
    from geon.reviews.services.writing import do_open_review

    return do_open_review(user, block, REVIEW, ["bob"])


def test_the_review_in_the_address_opens_in_the_panel(
    daphne_server: str, password: str, block: str, asked: Any, browsers: Browsers
) -> None:
    bob = browsers.new_page()
    sign_in(bob, daphne_server, "bob", password)
    # when bob opens the editor at ?review=<id> (as "Reviews for me" links it)
    bob.goto(f"{daphne_server}/graphs/{block}/?review={asked.pk}")
    # then the panel shows that review, and nothing is left unread
    bob.wait_for_selector(".geon-review-view:not([hidden]) .geon-review-title-text")
    assert bob.text_content(".geon-review-title-text") == REVIEW
    assert bob.locator(".geon-reviews-unread").is_hidden()
    assert browsers.errors == []


@pytest.fixture
def viewer(django_user_model: Any, password: str, block: str) -> Any:
    """carol, who may only look at ann's block."""
    carol = django_user_model.objects.create_user("carol", password=password)
    Membership.objects.create(graph_id=block, user=carol, role="viewer")
    return carol


def test_a_viewer_reads_a_review_and_is_offered_nothing_to_do(
    daphne_server: str, password: str, block: str, asked: Any, viewer: Any, browsers: Browsers
) -> None:
    carol = browsers.new_page()
    sign_in(carol, daphne_server, "carol", password)
    open_graph(carol, daphne_server, block)
    # when carol opens the review
    carol.click(f".geon-review[data-review='{REVIEW}'] .geon-review-link")
    carol.wait_for_selector(".geon-review-view:not([hidden]) .geon-review-title-text")
    # then she reads it, and no control to open, comment, judge or close shows
    assert state_chip(carol) == "open"
    for control in (
        ".geon-review-new-open",
        ".geon-thread-new",
        ".geon-verdict-form",
        ".geon-review-close",
    ):
        assert carol.locator(control).is_hidden(), control
    assert browsers.errors == []


APPLICATION = "2524fb44-d169-4afd-90fa-09711462e4b3"  # the first of the loom add's two


@pytest.fixture
def removed(user: Any, graph: Any) -> Any:
    """A review of the loom add with a thread on an application that was removed since."""
    from geon.graphs.services import do_apply_edit
    from geon.reviews.services.writing import do_add_thread, do_open_review

    review = do_open_review(user, graph.pk, "Two halves", [])
    do_add_thread(user, graph.pk, review.pk, {"node": APPLICATION}, "Is this half right?")
    do_apply_edit(user, graph.pk, 1, [{"op": "remove_node", "id": APPLICATION}])
    return review


def test_a_thread_whose_anchor_was_removed_says_so(
    daphne_server: str, password: str, graph: Any, removed: Any, browsers: Browsers
) -> None:
    ann = browsers.new_page()
    sign_in(ann, daphne_server, "ann", password)
    ann.goto(f"{daphne_server}/graphs/{graph.pk}/?review={removed.pk}")
    ann.wait_for_selector(".geon-thread")
    # then the thread is marked removed, says so, and offers nothing to show on the canvas
    assert ann.get_attribute(".geon-thread", "class") == (
        "geon-thread geon-thread-outdated geon-thread-removed"
    )
    assert ann.text_content(".geon-thread-mark") == "removed"
    assert ann.text_content(".geon-thread-changes") == "its anchor was removed from the graph"
    assert ann.locator(".geon-thread-show").count() == 0
    assert browsers.errors == []


T0, T1 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c", "0308d788-0064-4494-9c18-6e4c3d078b13"


@pytest.fixture
def two_suggestions(user: Any, graph: Any) -> Any:
    """A review of the loom add with two threads suggesting new names for its inputs."""
    from geon.reviews.services.writing import do_add_thread, do_open_review

    review = do_open_review(user, graph.pk, "Names", [])
    for node, label in ((T0, "lhs"), (T1, "rhs")):
        rename = {"ops": [{"op": "update_node", "id": node, "label": label}]}
        do_add_thread(user, graph.pk, review.pk, {"node": node}, f"Call it {label}", rename)
    return review


def test_several_suggestions_apply_as_one_undo_step(
    daphne_server: str, password: str, graph: Any, two_suggestions: Any, browsers: Browsers
) -> None:
    ann = browsers.new_page()
    sign_in(ann, daphne_server, "ann", password)
    ann.goto(f"{daphne_server}/graphs/{graph.pk}/?review={two_suggestions.pk}")
    ann.wait_for_selector(".geon-apply-all")
    assert ann.text_content(".geon-apply-all") == "Apply all 2 suggestions"
    # when ann applies them all
    ann.click(".geon-apply-all")
    # then both inputs are renamed in one version, which is one step of her history
    ann.wait_for_function("() => window.geon.state().version === 2")
    ann.wait_for_function("() => window.geon.nodeId('lhs') && window.geon.nodeId('rhs')")
    ann.wait_for_function("() => window.geon.state().history.undo.length === 1")
    assert ann.evaluate("window.geon.state().history.undo") == ["apply 2 suggestions (t0, t1)"]
    ann.wait_for_function(
        "() => document.querySelectorAll('.geon-suggestion-applied').length === 2"
    )
    assert ann.locator(".geon-apply-all").count() == 0
    # when she undoes, both names come back at once
    ann.locator("canvas.geon-canvas").focus()
    ann.keyboard.press("Control+z")
    ann.wait_for_function("() => window.geon.state().version === 3")
    assert ann.evaluate("[window.geon.nodeId('t0'), window.geon.nodeId('t1')]") == [T0, T1]
    assert browsers.errors == []
