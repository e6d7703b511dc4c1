"""The diff page (issue 18 "Diffs", issue 21's history "View"), in headless Chromium against a
live Daphne: two versions of the transformer block drawn read-only, the added node ringed green
and the changed one amber, the changes listed by name; Before / After / Side by side with one
pan and zoom for both canvases. Strangers get 404, as for the editor."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from playwright.sync_api import Page

from geon.core.graph import LAYOUT, TENSOR, TENSOR_AXES
from geon.graphs.services import do_apply_edit, live_document
from geon.graphs.services.gallery import do_load_example
from tests.browser.helpers import ARTIFACTS, painted, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEW = "5f1c1c1c-0000-4000-8000-0000000000aa"


@pytest.fixture
def changed(user: Any) -> Any:
    """ann's transformer block with, in version 2, the output tensor y renamed "out", a new
    tensor "bias" beside it, and the last addition adding h1 to itself instead of "mlp out"."""
    graph, _ = do_load_example(user, "transformer-block")
    nodes = live_document(graph).document.nodes
    y = next(n for n in nodes if n.label == "y")
    bias = {
        "id": NEW,
        "type": TENSOR,
        "label": "bias",
        "body": {"dtype": "float32", "range": {"start": [0], "end": [8]}},
        "tags": {TENSOR_AXES: {"axes": ["D"]}, LAYOUT: {"x": 40.0, "y": 40.0}},
    }
    add = next(n for n in nodes if y.id in str(n.body.get("outputs")))
    inputs = add.body["inputs"]["tensors"]
    ops = [
        {"op": "update_node", "id": y.id, "label": "out"},
        {"op": "add_node", "node": bias},
        # out = h1 + h1: the edge from "mlp out" goes
        {
            "op": "update_node",
            "id": add.id,
            "body": {"inputs": {"tensors": [inputs[0], inputs[0]]}},
        },
    ]
    do_apply_edit(user, graph.pk, 1, ops)
    gone = f"{inputs[1]['tensorId']}->{add.id}"
    return graph, y.id, add.id, gone


def test_two_versions_side_by_side(
    daphne_server: str, user: Any, password: str, changed: Any, page: tuple[Page, list[str]]
) -> None:
    graph, y, add, gone = changed
    tab, errors = page
    tab.set_viewport_size({"width": 1400, "height": 900})
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{graph.pk}/diff/1/2/")
    tab.wait_for_function("() => window.geonDiff && window.geonDiff.ready()")
    assert tab.evaluate("window.geonDiff.statuses()") == {
        NEW: "added",
        y: "changed",
        add: "changed",
    }
    # the renamed output keeps its edge and the new tensor has none; "mlp out" is no longer added
    assert tab.evaluate("window.geonDiff.edges()") == {"added": [], "removed": [gone]}
    rows = tab.eval_on_selector_all(".geon-diff-changes li", "els => els.map(e => e.textContent)")
    # (an operation by its name and what it writes, issue 35)
    assert rows == ["bias added", "out changed: label", "op:add → out changed: inputs"]
    assert tab.evaluate("window.geonDiff.mode()") == "side"
    assert tab.locator(".geon-diff-pane:not([hidden])").count() == 2
    painted(tab)
    tab.screenshot(path=str(ARTIFACTS / "diff-page.png"))
    # a change in the list centres both canvases on it, close enough to read
    tab.get_by_role("button", name="out changed: label").click()
    focused = tab.evaluate("window.geonDiff.viewport()")
    assert focused["scale"] >= 0.6
    painted(tab)
    tab.screenshot(path=str(ARTIFACTS / "diff-page-focused.png"))
    # one pan moves both canvases (one viewport)
    before = tab.evaluate("window.geonDiff.viewport()")
    box = tab.locator(".geon-diff-pane canvas").first.bounding_box()
    assert box is not None
    tab.mouse.move(box["x"] + 100, box["y"] + 100)
    tab.mouse.down()
    tab.mouse.move(box["x"] + 160, box["y"] + 130)
    tab.mouse.up()
    after = tab.evaluate("window.geonDiff.viewport()")
    moved = (after["dx"] - before["dx"], after["dy"] - before["dy"])
    assert moved == pytest.approx((60, 30))
    # a wheel on the other canvas zooms the same one viewport
    second = tab.locator(".geon-diff-pane .geon-canvas").nth(1).bounding_box()
    assert second is not None
    tab.mouse.move(second["x"] + 200, second["y"] + 200)
    tab.mouse.wheel(0, -200)
    tab.wait_for_function(f"() => window.geonDiff.viewport().scale > {after['scale']}")
    # keys switch what is shown
    tab.keyboard.press("b")
    assert tab.evaluate("window.geonDiff.mode()") == "before"
    assert tab.locator(".geon-diff-pane:not([hidden]) h2").text_content() == "version 1"
    tab.keyboard.press("a")
    assert tab.locator(".geon-diff-pane:not([hidden]) h2").text_content() == "version 2"
    assert errors == []


def test_strangers_do_not_see_a_diff(client: Client, other_user: Any, changed: Any) -> None:
    graph, *_ = changed
    client.force_login(other_user)
    assert client.get(f"/graphs/{graph.pk}/diff/1/2/").status_code == 404
    client.logout()
    assert client.get(f"/graphs/{graph.pk}/diff/1/2/").status_code == 302
