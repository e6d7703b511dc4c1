"""The "Reviews for me" page (issue 18), in headless Chromium against a live Daphne: a reviewer
sees the open reviews that ask them, by graph and plan name, with their unread count, linked to
the editor."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.graphs.models import Membership
from geon.reviews.services.writing import do_open_review
from tests.browser.helpers import ARTIFACTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def asked(user: Any, other_user: Any, graph: Any) -> Any:
    """bob reviews ann's graph, and ann asks him to review it."""
    Membership.objects.create(graph=graph, user=other_user, role="reviewer")
    return do_open_review(user, graph.pk, "Check the add's split", ["bob"])


def test_a_reviewer_finds_the_reviews_that_ask_them(
    daphne_server: str, password: str, asked: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "bob", password)
    tab.click("header.site >> text=Reviews")
    row = tab.locator(f"tr[data-review='{asked.pk}']")
    assert row.locator("td").all_text_contents()[:6] == [
        "Check the add's split",
        "Loom add",
        "whole graph",
        "open",
        "ann",
        "0",
    ]
    tab.screenshot(path=str(ARTIFACTS / "reviews-for-me.png"))
    row.locator("a").click()
    tab.wait_for_function("() => window.geon && window.geon.state().version !== null")
    assert tab.url.endswith(f"/graphs/{asked.graph_id}/?review={asked.pk}")
    assert errors == []


def test_the_inbox_shows_the_request_with_a_badge_and_clicking_it_marks_it_read(
    daphne_server: str, password: str, asked: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "bob", password)
    # the nav's Reviews link carries bob's one unread notification
    badge = tab.locator("header.site .geon-nav-reviews .geon-unread")
    assert badge.text_content() == "1"
    tab.click("header.site .geon-nav-reviews")
    item = tab.locator("ul.geon-inbox li.unread")
    assert item.locator("a").text_content() == (
        'ann asked you to review "Check the add\'s split" of graph "Loom add"'
    )
    mail = tab.locator(".geon-mail-toggle")
    assert mail.is_disabled()  # bob has no verified address, and the label says so
    assert "(no verified address)" in (
        tab.locator("label:has(.geon-mail-toggle)").text_content() or ""
    )
    tab.screenshot(path=str(ARTIFACTS / "reviews-inbox.png"))
    # clicking it opens the review in the editor and marks it read
    item.locator("a").click()
    tab.wait_for_function("() => window.geon && window.geon.state().version !== null")
    assert tab.url.endswith(f"/graphs/{asked.graph_id}/?review={asked.pk}")
    tab.goto(f"{daphne_server}/reviews/")
    assert tab.locator("header.site .geon-unread").count() == 0
    assert tab.locator("ul.geon-inbox li.unread").count() == 0
    assert tab.locator(".geon-read-all").is_disabled()
    assert errors == []
