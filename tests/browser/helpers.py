"""Helpers of the browser tests: Debian's Chromium driven by Playwright (never a downloaded
browser), the pages it opens and the errors they report, signing in and screenshots."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Response,
)

CHROMIUM = os.environ.get("GEON_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
T = TypeVar("T")
VIEWPORT = {"width": 1280, "height": 800}
#: A node id as the server makes them: what a person should never read.
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: A script for ``page.evaluate``: the canvas's size in CSS pixels.
CANVAS = "(() => { const c = document.querySelector('.geon-canvas');"
CANVAS += " return { w: c.clientWidth, h: c.clientHeight }; })()"


@dataclass
class Browsers:
    """A Chromium, its pages, and every console error, page error and 4xx/5xx any page saw."""

    browser: Browser
    errors: list[str] = field(default_factory=list)
    contexts: list[BrowserContext] = field(default_factory=list)

    def new_page(self) -> Page:
        """A page in a fresh context (its own cookies: another person, or another device)."""
        context = self.browser.new_context(viewport=VIEWPORT, device_scale_factor=1)  # type: ignore[arg-type]
        self.contexts.append(context)
        opened = context.new_page()
        name = f"page {len(self.contexts)}"

        def console(message: ConsoleMessage) -> None:
            if message.type == "error":
                self.errors.append(f"{name}: {message.text}")

        def response(answer: Response) -> None:
            if answer.status >= 400:
                self.errors.append(f"{name}: {answer.status} {answer.url}")

        opened.on("console", console)
        opened.on("pageerror", lambda e: self.errors.append(f"{name}: {e}"))
        opened.on("response", response)
        return opened


NEXT_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def painted(tab: Page) -> None:
    """Wait until the page has drawn what it last scheduled: the canvases draw on the next
    animation frame, so once a second frame begins the first one's drawing is done (the event
    to wait for, rather than a fixed sleep)."""
    tab.evaluate(NEXT_FRAMES)


def screenshots(tab: Page, story: str) -> Callable[[str], Path]:
    """``shot("02-axes")`` saves ``artifacts/<story>-02-axes.png`` and returns its path."""
    ARTIFACTS.mkdir(exist_ok=True)

    def shot(step: str) -> Path:
        path = ARTIFACTS / f"{story}-{step}.png"
        tab.screenshot(path=str(path))
        return path

    return shot


def texts(tab: Page, selector: str) -> list[str]:
    """The text of every element ``selector`` matches, in document order."""
    return tab.eval_on_selector_all(selector, "(es) => es.map((e) => e.textContent)")


def compare_rows(tab: Page, selector: str = ".geon-compare-row") -> dict[str, list[str]]:
    """The Plans panel's Compare table rows ``selector`` matches, by label: each side's text,
    less the better mark."""
    return {
        r[0]: r[1:]
        for r in tab.eval_on_selector_all(
            selector,
            "(rs) => rs.map((r) => [...r.children].map((c) => c.textContent.replace(' ✓', '')))",
        )
    }


def highlighted_edge(tab: Page) -> dict[str, Any]:
    """The edge the canvas highlights, once asserted selected (both its ends), in the middle of
    the canvas and zoomed in far enough to read: ``{from, to, x, y, w, h}``."""
    shown = tab.evaluate("window.geonMarks.highlight()")
    assert shown is not None
    assert sorted(tab.evaluate("window.geon.state().selected")) == sorted(
        [shown["from"], shown["to"]]
    )
    size = tab.evaluate(CANVAS)
    middle = (shown["x"] + shown["w"] / 2, shown["y"] + shown["h"] / 2)
    assert abs(middle[0] - size["w"] / 2) < 2 and abs(middle[1] - size["h"] / 2) < 2, middle
    assert tab.evaluate("window.geon.state().viewport.scale") >= 0.6
    return shown


def sign_in(tab: Page, base: str, username: str, password: str) -> None:
    """Sign in through the login form, starting from the graph list."""
    tab.goto(f"{base}/")
    assert tab.url == f"{base}/accounts/login/?next=/"
    tab.fill("#id_username", username)
    tab.fill("#id_password", password)
    tab.click("button[type=submit]")
    tab.wait_for_url(f"{base}/")


def open_graph(tab: Page, base: str, graph_id: str) -> None:
    """Open a graph in the editor and wait for its first version to be drawn."""
    tab.goto(f"{base}/graphs/{graph_id}/")
    tab.wait_for_function(
        "() => window.geon && window.geon.state().version === 1 && window.geon.boxes().length > 0"
    )


def click_box(tab: Page, title: str, nth: int = 0) -> None:
    """Click the middle of the ``nth`` box titled ``title`` on the canvas."""
    tab.evaluate("window.geon.run('zoomToFit')")
    boxes = [b for b in tab.evaluate("window.geon.boxes()") if b["title"] == title]
    b = boxes[nth]
    canvas = tab.locator(".geon-canvas").bounding_box()
    assert canvas is not None
    tab.mouse.click(canvas["x"] + b["x"] + b["w"] / 2, canvas["y"] + b["y"] + b["h"] / 2)
    tab.wait_for_selector(".geon-shards:not([hidden])")


def off_loop(work: Callable[[], T]) -> T:
    """Run ``work`` (ORM calls) on a thread of its own and return its result: Playwright's sync
    API keeps an event loop running on this thread, under which Django refuses ORM calls."""

    def run() -> T:
        from django.db import connection

        try:
            return work()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result(timeout=60)


#: A script for ``page.evaluate``: store ``document`` as the next version of the graph open in the
#: editor (its id from the URL), as a student's or author's REST PATCH would; answers the status.
STORE_DOCUMENT = """async (document) => {
  const id = location.pathname.split("/")[2];
  const csrf = window.document.querySelector("input[name=csrfmiddlewaretoken]").value;
  const headers = {"Content-Type": "application/json", "X-CSRFToken": csrf};
  const now = await (await fetch(`/api/v1/graphs/${id}`, {headers})).json();
  const answer = await fetch(`/api/v1/graphs/${id}`, {method: "PATCH", headers,
    body: JSON.stringify({baseVersion: now.version, document})});
  return answer.status;
}"""
