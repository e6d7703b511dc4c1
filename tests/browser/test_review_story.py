"""Review that works like code review (issue 35), two people in two browsers against a live
Daphne: ann asks bob to review the transformer block's Megatron plan; bob's nav badge rises live
and his inbox links the review; bob pins a thread with a suggested split and requests changes;
ann applies the suggestion and asks bob again; bob reads "changes since your last verdict",
resolves, approves; a new thread shows "1 unresolved" beside the approval; ann switches the plan
and the approval shows stale live in bob's browser, with a "stale" notification."""

from __future__ import annotations

from typing import Any

import pytest

from geon.examples.transformer import TITLE
from geon.graphs.models import Membership
from tests.browser.helpers import ARTIFACTS, Browsers, open_graph, painted, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MEGATRON, DP = "Megatron tensor parallel", "Data parallel"
REVIEW = "Megatron split"


@pytest.fixture
def block(user: Any, other_user: Any, gallery: dict[str, str]) -> str:
    """ann's transformer block, which bob may review."""
    graph_id = gallery[TITLE]
    Membership.objects.create(graph_id=graph_id, user=other_user, role="reviewer")
    return graph_id


def chip(tab: Any) -> str:
    return tab.text_content(".geon-review-view .geon-review-head .geon-review-state") or ""


PIN = [0x7A, 0x3F, 0xC4, 255]
"""The pin's colour (render/canvas.ts, COLORS.pin)."""


def pin_colour(tab: Any, node: str) -> list[int]:
    """The canvas's pixel where a pin on ``node`` is drawn (left of its count), once the
    layout worker has placed the node's box (a box is drawn only where it has a place; a
    thread's edit can arrive while the worker lays the view out again)."""
    tab.wait_for_function("(id) => window.geon.boxes().some((b) => b.id === id)", arg=node)
    painted(tab)
    return tab.evaluate(
        """(id) => {
          const box = window.geon.boxes().find((b) => b.id === id);
          const scale = window.geon.state().viewport.scale;
          const canvas = document.querySelector("canvas.geon-canvas");
          const ratio = window.devicePixelRatio;
          const x = box.x + (2 - 6) * scale, y = box.y + 2 * scale;
          const ctx = canvas.getContext("2d");
          const [px, py] = [Math.round(x * ratio), Math.round(y * ratio)];
          return Array.from(ctx.getImageData(px, py, 1, 1).data);
        }""",
        node,
    )


def badge(tab: Any) -> str:
    return tab.text_content("header.site .geon-nav-reviews .geon-unread") or ""


def test_request_notify_thread_suggest_re_request_approve_and_stale_live(
    daphne_server: str, password: str, block: str, browsers: Browsers
) -> None:
    ann, bob = browsers.new_page(), browsers.new_page()
    sign_in(ann, daphne_server, "ann", password)
    sign_in(bob, daphne_server, "bob", password)
    open_graph(ann, daphne_server, block)
    open_graph(bob, daphne_server, block)
    assert bob.locator("header.site .geon-unread").count() == 0

    # ann asks bob to review the Megatron plan
    ann.click(".geon-review-new-open")
    ann.fill(".geon-review-title", REVIEW)
    ann.wait_for_selector(f".geon-review-plan option:text('{MEGATRON}')", state="attached")
    ann.select_option(".geon-review-plan", label=MEGATRON)
    ann.check(".geon-review-reviewer[data-user='bob'] input")
    ann.click(".geon-review-open")
    ann.wait_for_selector(".geon-review-view:not([hidden]) .geon-review-title-text")

    # bob's open editor hears of it at once: the nav's badge, from the websocket
    bob.wait_for_selector("header.site .geon-nav-reviews .geon-unread")
    assert badge(bob) == "1"
    # his inbox links the review; following it opens the review in the editor
    bob.click("header.site .geon-nav-reviews")
    bob.click("ul.geon-inbox li.unread a")
    bob.wait_for_selector(".geon-review-view:not([hidden]) .geon-thread-new")
    assert bob.text_content(".geon-review-title-text") == REVIEW
    assert bob.locator("header.site .geon-unread").count() == 0

    # bob pins a thread to the second dot with a suggested split, and requests changes
    dots = bob.evaluate(
        "window.geon.state().document.nodes"
        ".filter((n) => n.body.kernel === 'op:dot').map((n) => n.id)"
    )
    bob.evaluate("(id) => window.geon.select([id])", dots[1])
    bob.wait_for_selector(".geon-suggest-row:not([hidden])")
    bob.fill(".geon-thread-new-text", "Split this one over **B**, @ann")
    bob.check(".geon-suggest")
    bob.select_option(".geon-suggest-axis", "B")
    bob.click(".geon-thread-new-send")
    bob.wait_for_selector(".geon-thread")
    # the open thread is pinned on the canvas, at the operation's top left corner
    bob.screenshot(path=str(ARTIFACTS / "review-story-pin.png"))
    assert pin_colour(bob, dots[1]) == PIN
    assert pin_colour(bob, dots[0]) != PIN
    bob.select_option(".geon-verdict-kind", "request_changes")
    bob.click(".geon-verdict-send")
    bob.wait_for_selector(".geon-verdict[data-verdict='request_changes']")
    # ann is told of the mention and the verdict, live, and sees both in the panel
    ann.wait_for_function(
        "() => document.querySelector('header.site .geon-nav-reviews .geon-unread')"
        "?.textContent === '2'"
    )
    ann.wait_for_selector(".geon-verdict[data-verdict='request_changes']")
    assert chip(ann) == "changes requested · 1 unresolved"

    # ann applies the suggestion and asks bob again
    version = ann.evaluate("window.geon.state().version")
    ann.click(".geon-apply-suggestion")
    ann.wait_for_function("(v) => window.geon.state().version === v + 1", arg=version)
    # the document is no saved plan's now, and keeps its cost: the ledger names it
    ann.wait_for_function(
        "() => (document.querySelector('.geon-ledger-current summary')?.textContent ?? '')"
        ".startsWith('current document: ')"
    )
    # and Compare offers the current document beside the saved plans
    ann.select_option(".geon-compare-a", label="current document")
    ann.select_option(".geon-compare-b", label=MEGATRON)
    ann.click(".geon-compare-go")
    ann.wait_for_selector(".geon-compare-table")
    heads = ann.locator(".geon-compare-table thead th").all_text_contents()
    assert heads[1:] == ["current document", MEGATRON]
    ann.wait_for_selector(".geon-plan-diff summary")
    diff = ann.text_content(".geon-plan-diff summary") or ""
    assert diff.startswith(f'From "current document" to "{MEGATRON}": '), diff
    # a collective's row pans to its edge and selects its ends (those the document holds)
    row = ann.locator(".geon-plan-diff .geon-edge-link").first
    line = row.text_content() or ""
    row.click()
    ends = ann.evaluate(
        "window.geon.state().selected.map((id) =>"
        " window.geon.state().document.nodes.find((n) => n.id === id)?.label ?? null)"
    )
    assert ends and None not in ends and all(label in line for label in ends), (ends, line)
    ann.screenshot(path=str(ARTIFACTS / "review-story-current-document-cost.png"))
    # the comparison opens wide as a decision table, the profile's assumptions beside the times
    ann.click(".geon-compare-widen")
    ann.wait_for_selector(".geon-compare.geon-compare-wide")
    assumes = ann.text_content(".geon-compare-assumes") or ""
    assert assumes.startswith("h100-sxm-8 assumes links of 450 GB/s with 2 µs latency"), assumes
    assert ann.locator(".geon-compare-row[data-label='step time dominated by']").count() == 1
    ann.screenshot(path=str(ARTIFACTS / "review-story-compare-wide.png"))
    ann.click(".geon-compare-widen")
    ann.wait_for_selector(".geon-compare:not(.geon-compare-wide)", state="attached")
    ann.click(".geon-review-request:text('bob')")
    # bob is notified again, and reads what changed since his verdict, with the diff's link
    bob.wait_for_function(
        "() => document.querySelector('header.site .geon-nav-reviews .geon-unread')"
        "?.textContent === '1'"
    )
    bob.wait_for_selector(".geon-review-since")
    since = bob.text_content(".geon-review-since") or ""
    assert since.startswith(
        f"Changes since your last verdict (requested changes at version {version}; version "
        f"{version} → {version + 1})"
    ), since
    assert bob.get_attribute(".geon-review-since a", "href") == (
        f"/graphs/{block}/diff/{version}/{version + 1}/"
    )
    bob.screenshot(path=str(ARTIFACTS / "review-story-changes-since.png"))

    # bob resolves the thread and approves: approved in both browsers
    bob.click(".geon-thread-resolve")
    bob.wait_for_selector(".geon-thread-resolved")
    bob.select_option(".geon-verdict-kind", "approve")
    bob.click(".geon-verdict-send")
    bob.wait_for_selector(".geon-verdict[data-verdict='approve']")
    ann.wait_for_function(
        "() => document.querySelector('.geon-review-view .geon-review-state')"
        "?.dataset.state === 'approved'"
    )
    # a thread opened after the approval reads beside the state
    bob.evaluate("(id) => window.geon.select([id])", dots[0])
    bob.fill(".geon-thread-new-text", "nit: name this one")
    bob.click(".geon-thread-new-send")
    ann.wait_for_function(
        "() => document.querySelector('.geon-review-view .geon-review-state')?.textContent"
        " === 'approved · 1 unresolved'"
    )

    # ann switches the document to the data-parallel plan: bob's browser shows the approval
    # stale at once, without a reload, and he is told
    ann.locator(f".geon-plan[data-plan='{DP}'] .geon-plan-switch").click()
    bob.wait_for_selector(".geon-verdict[data-verdict='approve'].geon-verdict-stale")
    bob.wait_for_function(
        "() => document.querySelector('.geon-review-view .geon-review-state')?.dataset.state"
        " === 'open'"
    )
    bob.wait_for_selector("header.site .geon-nav-reviews .geon-unread")
    bob.screenshot(path=str(ARTIFACTS / "review-story-stale.png"))
    # and nothing failed on either page
    assert browsers.errors == []


def test_a_reviewer_sees_the_plan_controls_disabled_with_the_reason_from_the_first_paint(
    daphne_server: str, password: str, block: str, browsers: Browsers
) -> None:
    bob = browsers.new_page()
    sign_in(bob, daphne_server, "bob", password)
    open_graph(bob, daphne_server, block)
    # when the plans have loaded (after the snapshot: the rows are drawn by the load)
    bob.wait_for_selector(f".geon-plan[data-plan='{DP}'] .geon-plan-switch")
    # then every control that would change a plan is disabled, saying why, with nothing done
    for control in (".geon-plan-switch", ".geon-plan-rename", ".geon-plan-delete"):
        buttons = bob.locator(control)
        assert buttons.count() == 3, control
        for k in range(3):
            assert buttons.nth(k).is_disabled(), control
            assert "reviewer" in (buttons.nth(k).get_attribute("title") or ""), control
    assert browsers.errors == []


WORSE = "Model axis split (worse on purpose)"


def test_a_bad_plan_says_why_on_its_card_by_name(
    daphne_server: str, password: str, block: str, browsers: Browsers
) -> None:
    ann = browsers.new_page()
    sign_in(ann, daphne_server, "ann", password)
    open_graph(ann, daphne_server, block)
    # when ann switches the document to the plan that maps the model axis D
    ann.locator(f".geon-plan[data-plan='{WORSE}'] .geon-plan-switch").click()
    # then its card says which operations run whole and why, by name and output, never an id
    why = ann.locator(f".geon-plan[data-plan='{WORSE}'] .geon-plan-why")
    why.wait_for()
    assert why.locator("summary").text_content() == "2 operations run whole"
    lines = why.locator("li").all_text_contents()
    assert [line.split(" runs whole: ")[0] for line in lines] == [
        "op:layer_norm → ln1",
        "op:layer_norm → ln2",
    ]
    assert all('it contracts or reduces "D" (mesh axis "tp")' in line for line in lines)
    why.locator("summary").click()
    ann.locator(f".geon-plan[data-plan='{WORSE}']").scroll_into_view_if_needed()
    ann.screenshot(path=str(ARTIFACTS / "review-story-plan-why.png"))
    assert browsers.errors == []
