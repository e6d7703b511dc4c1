"""Deleting a wrong attempt (issue 36), in headless Chromium against a live Daphne: a student
shift-clicks every operation of their wrong puzzle answer and the tensors those write, presses
Delete, and the server takes it as one edit (before, it refused it naming node ids and an API
flag); one Undo brings all of it back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.helpers import ARTIFACTS, STORE_DOCUMENT, Browsers, sign_in
from tests.browser.test_authoring import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCS = Path(__file__).resolve().parents[2] / "docs"
WRONG = Path(__file__).resolve().parents[1] / "teaching" / "wrong" / "matvec_dual.json"
TENSOR = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Tensor"
OPERATION = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Operation"


def test_a_multi_selection_of_operations_and_tensors_deletes_in_one_undoable_edit(
    daphne_server: str, user: Any, password: str, browsers: Browsers
) -> None:
    tab = browsers.new_page()
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/learn/puzzles/matvec_dual/")
    tab.wait_for_selector(".geon-puzzle .geon-lesson-title")
    wrong = json.loads(WRONG.read_text())
    assert tab.evaluate(STORE_DOCUMENT, wrong) == 200
    tab.reload()
    tab.wait_for_function(
        "() => window.geon && window.geon.state().version === 2 && window.geon.boxes().length >= 8"
    )
    tab.evaluate("window.geon.run('zoomToFit')")
    doomed = [
        n["id"]
        for n in wrong["nodes"]
        if n["type"] == OPERATION or (n["type"] == TENSOR and n.get("label") not in ("m", "v"))
    ]
    boxes = {b["id"]: b for b in tab.evaluate("window.geon.boxes()")}
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    # the operations last, as a person picking the tensors first would
    order = sorted(
        doomed, key=lambda i: next(n["type"] == OPERATION for n in wrong["nodes"] if n["id"] == i)
    )
    tab.keyboard.down("Shift")
    for node_id in order:
        b = boxes[node_id]
        tab.mouse.click(canvas["x"] + b["x"] + b["w"] / 2, canvas["y"] + b["y"] + 8)
    tab.keyboard.up("Shift")
    assert sorted(tab.evaluate("window.geon.state().selected")) == sorted(doomed)
    tab.keyboard.press("Delete")
    state = settled(tab, "s.version === 3")
    left = sorted(n.get("label") or "" for n in state["document"]["nodes"])
    assert left == ["H", "W", "m", "v"]
    assert state["history"]["undo"] == [f"delete {len(doomed)}"]
    toast = tab.text_content(".geon-toast") or ""
    assert "refused" not in toast and "cascade" not in toast
    tab.screenshot(path=str(ARTIFACTS / "multi-delete.png"))
    # one undo brings every node back, as one edit
    tab.keyboard.press("Control+z")
    state = settled(tab, "s.version === 4")
    assert sorted(n["id"] for n in state["document"]["nodes"]) == sorted(
        n["id"] for n in wrong["nodes"]
    )
    assert browsers.errors == []


def test_the_outer_product_is_no_mistake_inside_its_puzzle(
    daphne_server: str, user: Any, password: str, browsers: Browsers
) -> None:
    """a * b with no axis in common is an AccidentalBroadcast anywhere else; inside the outer
    product puzzle the editor shows no issue for it."""
    from geon import core as gc

    i_axis, j_axis = gc.Axis("I", 3), gc.Axis("J", 2)
    a = gc.placeholder(axes=[i_axis], name="a", dtype="float64")
    b = gc.placeholder(axes=[j_axis], name="b", dtype="float64")
    answer = gc.graph([a * b]).to_json()
    assert [i.constraint for i in gc.graph([a * b]).check()] == ["AccidentalBroadcast"]
    tab = browsers.new_page()
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/learn/puzzles/outer_product/")
    tab.wait_for_selector(".geon-puzzle .geon-lesson-title")
    assert tab.evaluate(STORE_DOCUMENT, answer) == 200
    tab.reload()
    tab.wait_for_selector(".geon-puzzle .geon-lesson-title")
    state = settled(tab, "s.version === 2")
    assert state["issues"] == [] and state["issueCounts"] == {"error": 0, "warning": 0}
    assert "No issues" in (tab.text_content(".geon-right") or "")
    # the operation picker lists the puzzle's allowed kernels first, an exact name before them
    tab.click("button:has-text('+ Operation')")
    options = tab.locator(".geon-palette-list [data-kernel]")
    listed = options.evaluate_all("os => os.slice(0, 2).map(o => o.dataset.kernel)")
    assert listed == ["op:add", "op:multiply"]
    assert "allowed in this puzzle" in (options.first.text_content() or "")
    tab.fill(".geon-palette-search", "max")
    assert options.first.get_attribute("data-kernel") == "op:max"
    tab.screenshot(path=str(DOCS / "screenshot-puzzle-picker.png"))
    tab.keyboard.press("Escape")
    # the params box shows a valid example in the operation's own axes
    tab.evaluate(
        "(id) => window.geon.select([id])", tab.evaluate("window.geon.nodeId('op:multiply')")
    )
    placeholder = tab.get_attribute(".geon-params", "placeholder") or ""
    assert placeholder in ('e.g. {"axes":["I","J"]}', 'e.g. {"axes":["J","I"]}'), placeholder
    assert browsers.errors == []
