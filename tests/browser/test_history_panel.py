"""The History panel (issue 21, "No history"), in headless Chromium against a live Daphne: the
toolbar's version opens it; versions read what they did by name, layout moves fold into one row,
View opens a version beside the current one, and Restore stores an old version as a new one that
the open editor shows."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.core.graph import LAYOUT
from geon.graphs.services import do_apply_edit
from tests.browser.helpers import ARTIFACTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"


@pytest.fixture
def edited(user: Any, graph: Any) -> Any:
    """The loom graph with t0 renamed, two nodes moved one at a time, then t1 renamed
    (versions 2 to 5)."""
    do_apply_edit(user, graph.pk, 1, [{"op": "update_node", "id": T0, "label": "lhs"}])
    for number, (node, y) in enumerate([(T0, 200.0), (T1, 400.0)], start=2):
        move = {"op": "update_node", "id": node, "tags": {LAYOUT: {"x": 40.0, "y": y}}}
        do_apply_edit(user, graph.pk, number, [move])
    do_apply_edit(user, graph.pk, 4, [{"op": "update_node", "id": T1, "label": "rhs"}])
    return graph


def test_history_lists_versions_by_name_and_restores_one(
    daphne_server: str, user: Any, password: str, edited: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    graph = edited
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{graph.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.state().version === 5")
    # when ann clicks the toolbar's version
    tab.click(".geon-version")
    tab.wait_for_selector(".geon-history-version[data-version='2']")
    # then the versions say what they did, and the two moves fold into one row
    texts = tab.eval_on_selector_all(
        ".geon-history > .geon-history-list > .geon-history-version .geon-history-text",
        "els => els.map(e => e.textContent)",
    )
    assert texts == ['renamed "t1" to "rhs"', 'renamed "t0" to "lhs"', "created"]
    assert tab.text_content(".geon-history-moves summary") == "versions 3\u20134: layout moves (2)"
    view = tab.get_attribute(".geon-history-version[data-version='1'] .geon-history-view", "href")
    assert view == f"/graphs/{graph.pk}/diff/1/5/"
    assert tab.text_content(".geon-history-version[data-version='5'] .geon-history-current")
    tab.screenshot(path=str(ARTIFACTS / "history-panel.png"))
    # and restoring version 1 (confirmed) makes version 6, which the editor shows live
    tab.once("dialog", lambda dialog: dialog.accept())
    tab.click(".geon-history-version[data-version='1'] .geon-history-restore")
    tab.wait_for_function("() => window.geon.state().version === 6")
    tab.wait_for_selector(".geon-history-version[data-version='6']")
    assert tab.evaluate("[window.geon.nodeId('t0'), window.geon.nodeId('t1')]") == [T0, T1]
    assert "restored version 1" in tab.text_content(".geon-history-version[data-version='6']")
    assert errors == []
