"""Two people on one graph, each in a browser context of their own: an edit in one appears in
the other, presence shows who is there and what they selected, and remote edits never enter
the local undo history."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import Browsers, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_graph(tab: Page, base: str, password: str, graph: Any) -> None:
    sign_in(tab, base, "ann", password)
    tab.click("text=Loom add")
    tab.wait_for_function("() => window.geon && window.geon.state().connection === 'open'")


def declare(tab: Page, name: str, length: str) -> None:
    tab.fill(".geon-axes .geon-axis-name", name)
    tab.fill(".geon-axes .geon-axis-length", length)
    tab.press(".geon-axes .geon-axis-length", "Enter")


# Kept for the PostgreSQL + Redis pass: two editors' edits through the channel layer.
@pytest.mark.story_on_services
def test_an_edit_in_one_browser_appears_in_the_other(
    daphne_server: str, user: Any, password: str, graph: Any, browsers: Browsers
) -> None:
    # given ann's graph open in two browser contexts (her laptop and her desktop)
    one, two = browsers.new_page(), browsers.new_page()
    open_graph(one, daphne_server, password, graph)
    open_graph(two, daphne_server, password, graph)
    # then each sees two people here
    for tab in (one, two):  # each hears of the other when its presence message arrives
        tab.wait_for_function("() => window.geon.state().present.length === 2")
    assert one.locator(".geon-present .geon-person").count() == 2
    # when the first declares an axis K of length 5
    declare(one, "K", "5")
    # then it appears in the second's axes panel, at the same version
    two.locator('.geon-axis[data-axis="K"] .geon-axis-len').filter(has_text="5").wait_for()
    assert two.evaluate("window.geon.state().version") == 2
    assert one.evaluate("window.geon.state().version") == 2
    # and it is the first's to undo, not the second's
    assert one.evaluate("window.geon.state().history.undo") == ["declare axis K"]
    assert two.evaluate("window.geon.state().history.undo") == []
    # when the second selects the tensor z, the first sees that selection
    z = two.evaluate("window.geon.nodeId('z')")
    two.evaluate("(id) => window.geon.select([id])", z)
    one.wait_for_function(
        "(id) => window.geon.state().present.some((p) => (p.selection || []).includes(id))", arg=z
    )
    # when the second undoes, nothing happens: the edit was not theirs
    two.locator("canvas.geon-canvas").focus()
    two.keyboard.press("Control+z")
    assert two.evaluate("window.geon.state().inFlight") == 0
    # when the first undoes, the axis goes away on both sides
    one.locator("canvas.geon-canvas").focus()
    one.keyboard.press("Control+z")
    two.wait_for_function("() => window.geon.state().version === 3")
    # (the panels redraw on the next frame after the state changes)
    two.locator('.geon-axis[data-axis="K"]').wait_for(state="detached")
    screenshots(one, "together")("one")
    screenshots(two, "together")("two")
    assert browsers.errors == []
