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
