"""Browser fixtures (helpers in :mod:`tests.browser.helpers`).

Playwright's sync API runs an event loop while it is open, and Django refuses ORM calls under a
running loop, so browser tests list these fixtures last: users, graphs and servers are made
before the browser starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.browser.helpers import ARGS, CHROMIUM, Browsers


@pytest.fixture
def browsers() -> Iterator[Browsers]:
    """A headless Chromium for pages of their own (list it last, as ``page``)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield Browsers(browser)
        browser.close()


@pytest.fixture
def page(browsers: Browsers) -> tuple[Page, list[str]]:
    """A fresh Chromium page and the console errors and uncaught exceptions it reports."""
    return browsers.new_page(), browsers.errors


@pytest.fixture
def gallery(user: Any) -> dict[str, str]:
    """ann's copies of the gallery: title -> graph id."""
    from geon.graphs.services import do_load_gallery

    return {graph.title: str(graph.pk) for graph, _created in do_load_gallery(user)}
