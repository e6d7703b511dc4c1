"""A new user authors a graph in the editor, as a person would: through the page, against a
live Daphne (websocket edits, server-side checking) in headless Chromium.

The story: sign in, create a graph, declare axes H, W, N, add x[H, W-1] and y[W, N], add a
dot (x connected from the selection, y by dragging), see the output [H, N]; make x [H, W] and
see the axis error pinned to the dot; fix it and see it go; undo and redo. Each step leaves a
screenshot in tests/browser/artifacts/.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.helpers import screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOT_ERROR = 'axis "W" appears in both operands at level 0; mark one side as a dual, e.g. W-1'


def settled(tab: Page, condition: str = "true") -> Any:
    """Wait until no edit is in flight and ``condition`` (over ``s``, the state) holds."""
    try:
        tab.wait_for_function(
            f"() => {{ const s = window.geon.state(); return s.inFlight === 0 && ({condition}); }}",
            timeout=15_000,
        )
    except PlaywrightTimeout:
        s = tab.evaluate("window.geon.state()")
        seen = {k: s[k] for k in ("version", "inFlight", "message", "selected", "tool")}
        toast = tab.text_content(".geon-toast")
        raise AssertionError(f"{condition!r} never held: {seen}, toast {toast!r}") from None
    return tab.evaluate("window.geon.state()")


def box(tab: Page, label: str) -> dict[str, Any]:
    node = tab.evaluate("(l) => window.geon.nodeId(l)", label)
    found: list[dict[str, Any]] = [
        b for b in tab.evaluate("window.geon.boxes()") if b["id"] == node
    ]
    assert len(found) == 1, f"no box for {label!r}"
    return found[0]


def click_box(tab: Page, label: str, shift: bool = False) -> None:
    b = box(tab, label)
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    x, y = canvas["x"] + b["x"] + b["w"] / 2, canvas["y"] + b["y"] + 8
    if shift:
        tab.keyboard.down("Shift")
    tab.mouse.click(x, y)
    if shift:
        tab.keyboard.up("Shift")


def drag_onto(tab: Page, tensor: str, operation: str) -> None:
    """Drag from a tensor's right edge onto an operation: the tensor becomes its next input."""
    t, op = box(tab, tensor), box(tab, operation)
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    tab.mouse.move(canvas["x"] + t["x"] + t["w"], canvas["y"] + t["y"] + t["h"] / 2)
    tab.mouse.down()
    tab.mouse.move(
        canvas["x"] + op["x"] + op["w"] / 2, canvas["y"] + op["y"] + op["h"] / 2, steps=8
    )
    tab.mouse.up()


def pixel(tab: Page, x: float, y: float) -> list[int]:
    rgba: list[int] = tab.evaluate(
        """([x, y]) => {
          const c = document.querySelector("canvas.geon-canvas");
          const r = window.devicePixelRatio;
          const data = c.getContext("2d").getImageData(Math.round(x * r), Math.round(y * r), 1, 1);
          return Array.from(data.data);
        }""",
        [x, y],
    )
    return rgba


def rgb(hex_colour: str) -> list[int]:
    return [int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)] + [255]


def set_axes(tab: Page, label: str, axes: str) -> None:
    """Select the tensor and give it other axes in the inspector."""
    click_box(tab, label)
    field = tab.locator(".geon-inspector .geon-tensor-axes")
    field.fill(axes)
    tab.click(".geon-inspector .geon-apply")


def test_a_new_user_authors_a_dot_fixes_an_axis_error_and_undoes(
    daphne_server: str, user: Any, password: str, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    shot = screenshots(tab, "story")
    # given ann signed in, on her (empty) list of graphs
    sign_in(tab, daphne_server, "ann", password)
    # when she creates a graph
    tab.fill(".gallery-new input[name=title]", "My first dot")
    tab.click(".gallery-new button[type=submit]")
    tab.wait_for_url(re.compile(r".*/graphs/[0-9a-f-]{36}/$"))
    author_a_dot(tab, shot)
    assert errors == []


def author_a_dot(tab: Page, shot: Callable[[str], Any]) -> None:
    """From an empty graph open in the editor: the story of the module docstring."""
    state = settled(tab, "s.connection === 'open' && s.version === 1")
    # then the editor opens on an empty, clean document
    assert (state["document"]["nodes"], state["issues"]) == ([], [])
    assert tab.text_content(".graph-title") == "My first dot"
    shot("01-new-graph")

    # when she declares H, W and N in the axes panel
    for name, length in (("H", "2"), ("W", "3"), ("N", "4")):
        tab.fill(".geon-axes .geon-axis-name", name)
        tab.fill(".geon-axes .geon-axis-length", length)
        tab.press(".geon-axes .geon-axis-length", "Enter")
    state = settled(tab, "s.version === 4")
    # then each is listed with its length
    labels = tab.locator(".geon-axis .geon-axis-label").all_text_contents()
    lengths = tab.locator(".geon-axis .geon-axis-len").all_text_contents()
    assert list(zip(labels, lengths, strict=True)) == [("H", "2"), ("W", "3"), ("N", "4")]
    shot("02-axes")

    # when she adds x[H, W-1] and y[W, N]
    for label, axes in (("x", "H, W-1"), ("y", "W, N")):
        tab.click("button[data-action=newTensor]")
        tab.fill(".geon-new-label", label)
        tab.fill(".geon-new-axes", axes)
        tab.click(".geon-new-tensor-add")
    state = settled(tab, "s.version === 6")
    # then both are drawn with one chip per axis
    assert (box(tab, "x")["chips"], box(tab, "y")["chips"]) == (["H", "W-1"], ["W", "N"])
    shot("03-tensors")

    # when she selects x, adds a dot from the palette, and drags y onto it
    click_box(tab, "x")
    tab.click("button[data-action=palette]")
    tab.fill(".geon-palette-search", "dot")
    tab.press(".geon-palette-search", "Enter")
    settled(tab, "s.version === 7")
    drag_onto(tab, "y", "op:dot")
    state = settled(tab, "s.version === 8")
    # then the output tensor, named x·y after its operands, is inferred as [H, N], and the
    # server finds nothing wrong
    assert tab.evaluate("window.geon.axesOf('x·y')") == ["H", "N"]
    assert box(tab, "x·y")["chips"] == ["H", "N"]
    assert state["issues"] == []
    assert tab.text_content(".geon-issues") == "0 issues"
    shot("04-dot-output")

    # when she makes x [H, W]: W is then on both sides of the dot at the same level
    set_axes(tab, "x", "H, W")
    state = settled(tab, "s.version === 9")
    # then the server's issue is pinned to the dot, listed, and outlined on the canvas
    dot_id = tab.evaluate("window.geon.nodeId('op:dot')")
    assert [(i["constraint"], i["message"], i["nodeIds"]) for i in state["issues"]] == [
        (
            "OperationAxesInference",
            f'operation "{dot_id}" (op:dot): {DOT_ERROR}',
            [dot_id],
        )
    ]
    assert box(tab, "op:dot")["issues"] == 1
    item = tab.locator(".geon-issues-panel .geon-issue")
    assert item.get_attribute("data-node") == dot_id
    assert tab.text_content(".geon-issues") == "1 issue"
    dot = box(tab, "op:dot")
    scale = state["viewport"]["scale"]
    badge = pixel(tab, dot["x"] + dot["w"] - 2 * scale + 6 * scale, dot["y"] + 2 * scale)
    assert badge == rgb(tab.evaluate("window.geon.colors.issueStroke"))
    # and the axes panel marks W, the axis the issue names
    assert tab.locator(".geon-axis.has-issue .geon-axis-label").all_text_contents() == ["W"]
    shot("05-axis-error")
    # when she clicks the issue, the dot is selected
    item.click()
    assert tab.evaluate("window.geon.state().selected") == [dot_id]

    # when she fixes x back to [H, W-1]
    set_axes(tab, "x", "H, W-1")
    state = settled(tab, "s.version === 10")
    # then the issue is gone
    assert (state["issues"], box(tab, "op:dot")["issues"]) == ([], 0)
    shot("06-fixed")

    # when she undoes (Ctrl+Z on the canvas), the error is back; redo (Ctrl+Shift+Z) fixes it
    tab.locator("canvas.geon-canvas").focus()
    tab.keyboard.press("Control+z")
    state = settled(tab, "s.version === 11")
    assert [i["constraint"] for i in state["issues"]] == ["OperationAxesInference"]
    assert tab.evaluate("window.geon.axesOf('x')") == ["H", "W"]
    shot("07-undo")
    tab.keyboard.press("Control+Shift+z")
    state = settled(tab, "s.version === 12")
    assert (state["issues"], tab.evaluate("window.geon.axesOf('x')")) == ([], ["H", "W-1"])
    shot("08-redo")
    # and one user action was one undo step each
    assert state["history"] == {
        "undo": [
            "declare axis H", "declare axis W", "declare axis N", "add tensor x", "add tensor y",
            "add op:dot", "connect", "edit tensor", "edit tensor",
        ],
        "redo": [],
    }  # fmt: skip
