"""Browser fixtures (helpers in :mod:`tests.browser.helpers`).

Playwright's sync API runs an event loop while it is open, and Django refuses ORM calls under a
running loop, so browser tests list these fixtures last: users, graphs and servers are made
before the browser starts.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest
from playwright.sync_api import Error, Page, sync_playwright

from tests.browser.helpers import ARGS, CHROMIUM, Browsers

#: What a page says at a failure: its address, the editor's version, and every message shown to
#: the person (alerts, status lines, live regions), so a failure in CI says what the page saw.
SAID = """() => ({
  url: location.href,
  version: window.geon?.state().version ?? null,
  said: [...document.querySelectorAll('[role=alert], [role=status], [aria-live]')]
    .map((e) => (e.textContent ?? '').trim().slice(0, 300))
    .filter((t) => t),
})"""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    """A failed browser test's report has a section with what each of its pages showed then."""
    outcome = yield
    report = outcome.get_result()
    opened = getattr(item, "funcargs", {}).get("browsers")
    if report.when != "call" or not report.failed or not isinstance(opened, Browsers):
        return
    lines = []
    for n, context in enumerate(opened.contexts, 1):
        for tab in context.pages:
            try:
                lines.append(f"page {n}: {tab.evaluate(SAID)}")
            except Error as error:
                lines.append(f"page {n}: unreadable ({error.message.splitlines()[0]})")
    report.sections.append(("pages at the failure", "\n".join(lines)))


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
