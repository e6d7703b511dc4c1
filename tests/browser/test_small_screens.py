"""Smaller screens (issue 36), in headless Chromium against a live Daphne: at a tablet's 768 px
the editor keeps a usable canvas with the puzzle and the issues beside it; below 700 px the
page says the editor needs a wider screen and the puzzle's text stays readable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.helpers import Browsers, painted, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _box(tab: Any, selector: str) -> dict[str, float]:
    found = tab.locator(selector).first.bounding_box()
    assert found is not None, selector
    return dict(found)


def test_the_editor_at_a_tablets_width_and_below(
    daphne_server: str, user: Any, password: str, browsers: Browsers
) -> None:
    tab = browsers.new_page()
    sign_in(tab, daphne_server, "ann", password)
    tab.set_viewport_size({"width": 768, "height": 1024})
    tab.goto(f"{daphne_server}/learn/puzzles/matvec_dual/")
    tab.wait_for_selector(".geon-puzzle .geon-lesson-title")
    tab.wait_for_function("() => window.geon && window.geon.boxes().length > 0")
    canvas = _box(tab, ".geon-canvas")
    left, right = _box(tab, ".geon-left"), _box(tab, ".geon-right")
    assert canvas["width"] >= 500 and canvas["x"] + canvas["width"] <= 768
    assert left["width"] == right["width"] and right["y"] > left["y"]  # stacked in one column
    assert tab.locator(".geon-narrow-note").is_hidden()
    assert tab.locator(".geon-puzzle-check").is_visible()
    # the graph is drawn on the canvas and fits it
    tab.evaluate("window.geon.run('zoomToFit')")
    for b in tab.evaluate("window.geon.boxes()"):
        assert b["x"] >= 0 and b["x"] + b["w"] <= canvas["width"], b
    painted(tab)
    tab.screenshot(path=str(DOCS / "screenshot-editor-tablet.png"))
    # a phone: the note says why, the puzzle's text stays readable, the canvas is gone
    tab.set_viewport_size({"width": 420, "height": 800})
    note = tab.locator(".geon-narrow-note")
    assert note.is_visible() and "needs a wider screen" in (note.text_content() or "")
    assert tab.locator(".geon-canvas").is_hidden()
    text = _box(tab, ".geon-puzzle .geon-lesson-text")
    assert text["width"] >= 360 and tab.locator(".geon-puzzle .geon-lesson-text").is_visible()
    tab.screenshot(path=str(DOCS / "screenshot-editor-narrow.png"))
    assert browsers.errors == []
