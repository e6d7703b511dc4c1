"""Help in the editor (issue 21, "No help"), in headless Chromium against a live Daphne: "?"
opens the shortcut overlay generated from the action registry; right-click opens a menu with
the actions for what is under the pointer (editing disabled, with the reason, for a viewer);
the toolbar offers the tour until it was seen."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.graphs.models import Membership
from tests.browser.helpers import ARTIFACTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_graph(tab: Page, server: str, graph: Any) -> None:
    tab.goto(f"{server}/graphs/{graph.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.boxes().length === 4")


def box_centre(tab: Page, label: str) -> tuple[float, float]:
    box = tab.evaluate(
        "(l) => window.geon.boxes().find(b => b.id === window.geon.nodeId(l))", label
    )
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    return canvas["x"] + box["x"] + box["w"] / 2, canvas["y"] + box["y"] + box["h"] / 2


def test_shortcuts_menu_and_tour(
    daphne_server: str, user: Any, password: str, graph: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, graph)
    # the first visit offers the tour (the help button in blue), which points at the canvas first
    assert "tour" in (tab.get_attribute(".geon-act-help", "title") or "")
    assert "geon-tour-new" in (tab.get_attribute(".geon-act-help", "class") or "")
    tab.click(".geon-act-help")
    tab.wait_for_selector(".geon-tour:not([hidden])")
    assert tab.text_content(".geon-tour h3") == "The graph"
    tab.click(".geon-tour >> text=Next")
    assert tab.text_content(".geon-tour-count") == "2 of 5"
    tab.keyboard.press("Escape")
    tab.wait_for_selector(".geon-tour", state="hidden")
    assert "geon-tour-new" not in (tab.get_attribute(".geon-act-help", "class") or "")
    # "?" opens every shortcut, from the registry
    tab.locator("canvas.geon-canvas").focus()
    tab.keyboard.press("Shift+?")
    tab.wait_for_selector(".geon-help[open]")
    keys = tab.eval_on_selector_all(
        ".geon-help dt[data-action]", "els => els.map(e => e.dataset.action)"
    )
    assert {"undo", "redo", "palette", "history", "help"} <= set(keys)
    assert tab.text_content(".geon-help dt[data-action='redo']") == "Ctrl+Shift+ZCtrl+Y"
    tab.screenshot(path=str(ARTIFACTS / "help-overlay.png"))
    tab.keyboard.press("Escape")
    # right-click on the operation: its own commands (explain, index space), then copy and delete
    x, y = box_centre(tab, "op:add")
    tab.mouse.click(x, y, button="right")
    tab.wait_for_selector(".geon-menu:not([hidden])")
    labels = tab.eval_on_selector_all(".geon-menu-item span", "els => els.map(e => e.textContent)")
    assert labels[:2] == ["Explain step by step", "Index space & projections"]
    assert "Delete the selection" in labels
    assert tab.evaluate("window.geon.state().selected") == [
        tab.evaluate("window.geon.nodeId('op:add')")
    ]
    tab.click(".geon-menu-item >> text=Index space & projections")
    tab.wait_for_selector(".geon-projection", state="visible")
    assert errors == []


@pytest.fixture
def viewer(other_user: Any, graph: Any) -> Any:
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    return other_user


def test_a_viewers_menu_disables_editing_with_the_reason(
    daphne_server: str, password: str, graph: Any, viewer: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "bob", password)
    open_graph(tab, daphne_server, graph)
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    tab.mouse.click(canvas["x"] + 8, canvas["y"] + canvas["height"] - 8, button="right")
    tab.wait_for_selector(".geon-menu:not([hidden])")
    paste = tab.locator(".geon-menu-item", has_text="Paste")
    assert paste.is_disabled()
    assert "viewer" in (paste.get_attribute("title") or "")
    assert not tab.locator(".geon-menu-item", has_text="Zoom to fit").is_disabled()
    assert errors == []
