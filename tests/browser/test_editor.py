"""The editor in headless Chromium against a live Daphne and a real Celery worker.

Chromium is Debian's (``make test`` installs it when missing); Playwright drives it through
``executable_path``, never a downloaded browser. Screenshots land in ``tests/browser/artifacts``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

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

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page() -> Iterator[tuple[Page, list[str]]]:
    """A fresh Chromium page and the console errors and uncaught exceptions it reports.

    Playwright's sync API runs an event loop while it is open, and Django refuses ORM calls
    under a running loop, so tests list this fixture last: users, graphs and servers are made
    before the browser starts.
    """
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context(
            viewport={"width": 1280, "height": 720}, device_scale_factor=1
        )
        opened = context.new_page()
        errors: list[str] = []
        opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        opened.on("pageerror", lambda e: errors.append(str(e)))
        opened.on(
            "response",
            lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None,
        )
        yield opened, errors
        browser.close()


def rgba(hex_colour: str) -> list[int]:
    return [int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)] + [255]


READ_PIXELS = """(boxes) => {
  const canvas = document.querySelector("canvas.geon-canvas");
  const ctx = canvas.getContext("2d");
  const ratio = window.devicePixelRatio;
  const at = (x, y) =>
    Array.from(ctx.getImageData(Math.round(x * ratio), Math.round(y * ratio), 1, 1).data);
  return { boxes: boxes.map((b) => at(b.x + b.w / 2, b.y + 6)), corner: at(2, 2) };
}"""


def sign_in(page: Page, base: str, password: str) -> None:
    page.goto(f"{base}/")
    assert page.url == f"{base}/accounts/login/?next=/"
    page.fill("#id_username", "ann")
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


def test_the_editor_draws_the_graph_and_runs_it_live(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    password: str,
    graph: Any,
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    # given ann signed in
    sign_in(tab, daphne_server, password)
    # when she opens the example graph from the gallery
    tab.click("text=Loom add")
    tab.wait_for_function(
        "() => window.geon && window.geon.state().version !== null && window.geon.draws() > 0"
    )
    state = tab.evaluate("window.geon.state()")
    # then the snapshot arrived and the toolbar shows its version and issue count
    assert (state["connection"], state["version"], state["issues"]) == ("open", 1, [])
    assert tab.text_content(".geon-version") == "version 1"
    assert tab.text_content(".geon-issues") == "0 issues"
    # and each tensor and the operation is painted in its colour on the canvas
    boxes = tab.evaluate("window.geon.boxes()")
    colours = tab.evaluate("window.geon.colors")
    pixels = tab.evaluate(READ_PIXELS, boxes)
    assert sorted(b["kind"] for b in boxes) == ["operation", "tensor", "tensor", "tensor"]
    assert pixels["boxes"] == [rgba(colours[f"{b['kind']}Fill"]) for b in boxes]
    assert pixels["corner"] == rgba(colours["background"])
    # when she clicks Run
    tab.click("button.geon-run")
    tab.wait_for_function(
        "() => ['done', 'failed'].includes(window.geon.state().run?.status)", timeout=60_000
    )
    state = tab.evaluate("window.geon.state()")
    # then the page followed the run from queued to done, executed by the worker process
    run = state["run"]
    assert (run["status"], run["error"], run["workerPid"]) == ("done", "", celery_worker.pid)
    assert state["runStatuses"][0] == "queued"
    assert state["runStatuses"][-1] == "done"
    assert tab.text_content(".geon-run-status") == f"run {run['id']}: done"
    z = run["result"]["outputs"][0]
    assert tab.text_content(".geon-run-result") == f"outputs: z 10\u00d75 int32, sum {z['sum']}"
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / "editor.png"))
    assert errors == []


def test_an_anonymous_visitor_of_the_editor_gets_the_login(
    daphne_server: str, graph: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    tab.goto(f"{daphne_server}/graphs/{graph.pk}/")
    assert tab.url == f"{daphne_server}/accounts/login/?next=/graphs/{graph.pk}/"
    assert tab.text_content("h1") == "Sign in"
    assert errors == []
