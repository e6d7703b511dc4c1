"""The graph's guardrails on approvals in the Reviews panel (issue 18, "Guardrails, per graph"),
in headless Chromium against a live Daphne: the owner turns one off and the server stores it; a
reviewer sees them, disabled, with the reason."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.graphs.models import Membership
from tests.browser.helpers import Browsers, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def reviewer(other_user: Any, graph: Any) -> Any:
    Membership.objects.create(graph=graph, user=other_user, role="reviewer")
    return other_user


def open_settings(tab: Page, server: str, graph: Any) -> None:
    tab.goto(f"{server}/graphs/{graph.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.state().version !== null")
    tab.click(".geon-guardrails-settings > summary")
    tab.wait_for_selector("[data-setting=requireResolvedThreads]")


def test_the_owner_sets_guardrails_and_a_reviewer_reads_them(
    daphne_server: str, password: str, graph: Any, reviewer: Any, browsers: Browsers
) -> None:
    ann, bob = browsers.new_page(), browsers.new_page()
    sign_in(ann, daphne_server, "ann", password)
    open_settings(ann, daphne_server, graph)
    box = ann.locator("[data-setting=requireResolvedThreads]")
    assert box.is_checked() and box.is_enabled()
    box.uncheck()
    ann.wait_for_function(
        "() => !document.querySelector('[data-setting=requireResolvedThreads]').disabled"
        " && !document.querySelector('[data-setting=requireResolvedThreads]').checked"
    )
    # bob's page reads the stored settings from the server: the owner's change is there
    sign_in(bob, daphne_server, "bob", password)
    open_settings(bob, daphne_server, graph)
    theirs = bob.locator("[data-setting=requireResolvedThreads]")
    assert not theirs.is_checked() and theirs.is_disabled()
    assert "owner" in (theirs.get_attribute("title") or "")
    assert browsers.errors == []
