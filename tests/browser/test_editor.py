"""The editor in headless Chromium against a live Daphne and a real Celery worker.

Chromium is Debian's (``make test`` installs it when missing); Playwright drives it through
``executable_path``, never a downloaded browser. Screenshots land in ``tests/browser/artifacts``.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import ARTIFACTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


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


# Kept for the PostgreSQL + Redis pass: a run through the worker, its events over the channel layer.
@pytest.mark.story_on_services
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
    sign_in(tab, daphne_server, "ann", password)
    # when she opens the example graph from the gallery
    tab.click("text=Loom add")
    tab.wait_for_function(
        "() => window.geon && window.geon.state().version !== null"
        " && window.geon.boxes().length > 0"
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
