"""Imported graphs grouped by name scope, with collapse and expand (issue 20), in headless
Chromium against a live Daphne; screenshots in tests/browser/artifacts/groups-*.png.

Ann imports two layers of the committed PyTorch encoder chained (102 operations, name scopes
``/layers.0/self_attn/...``). The graph opens collapsed to its two layers, each one box with the
tensor between them; a double-click expands one into a frame with its sub-scopes collapsed;
search finds a tensor inside the other, collapsed layer and reveals it; G and Enter collapse and
expand from the keyboard; the state survives a reload and never reaches the server.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import off_loop, open_graph, painted, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STACK = Path(__file__).resolve().parents[2] / "benchmarks" / "canvas" / "stack.py"
SOFTMAX = "l1./layer/self_attn/Softmax_output_0"
GROUP_COLOUR = [
    91,
    107,
    191,
    255,
]  # groupPaint.ts GROUP_COLORS.boxStroke (a tensor's: 47, 111, 222)


def two_layers() -> dict[str, Any]:
    """The encoder chained twice (benchmarks/canvas/stack.py), imported with a batch of 2."""
    spec = importlib.util.spec_from_file_location("stack", STACK)
    assert spec is not None and spec.loader is not None
    stack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stack)
    from geon.interop.onnx_import import import_onnx

    doc = import_onnx(stack.stacked_encoder(2), dims={"batch": 2}).graph.to_json()
    return json.loads(doc) if isinstance(doc, str) else doc


def groups(tab: Page) -> list[tuple[str, str, bool]]:
    return [(g["path"], g["title"], g["collapsed"]) for g in tab.evaluate("geonGroups.list()")]


def group_box(tab: Page, path: str) -> dict[str, float]:
    [g] = [g for g in tab.evaluate("geonGroups.list()") if g["path"] == path]
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    return {"x": canvas["x"] + g["x"], "y": canvas["y"] + g["y"], "w": g["w"], "h": g["h"]}


#: Show a box at 1:1 with its top left at (300, 300) on the canvas.
CLOSE_UP = """(id) => {
  const vp = window.geon.state().viewport;
  const b = window.geon.boxes().find((q) => q.id === id);
  const x = (b.x - vp.dx) / vp.scale, y = (b.y - vp.dy) / vp.scale;
  window.geon.setViewport({ scale: 1, dx: 300 - x, dy: 300 - y });
}"""


def laid_out(tab: Page) -> None:
    """Wait until every drawn box is in place, with ELK's layout (not a provisional one)."""
    tab.wait_for_function(
        "() => geonGroups.laidOutAt() !== null && !geonGroups.provisional()", timeout=15_000
    )


#: The minimap's pixel at the middle of a group's rect (the minimap shows the whole graph).
MINIMAP_PIXEL = """(id) => {
  const m = document.querySelector("canvas.geon-minimap");
  const rects = window.geon.scene().rects;
  const x0 = Math.min(...rects.map((r) => r.x)) - 40, y0 = Math.min(...rects.map((r) => r.y)) - 40;
  const x1 = Math.max(...rects.map((r) => r.x + r.w)) + 40;
  const y1 = Math.max(...rects.map((r) => r.y + r.h)) + 40;
  const s = Math.min(m.clientWidth / (x1 - x0), m.clientHeight / (y1 - y0));
  const ox = (m.clientWidth - (x1 - x0) * s) / 2 - x0 * s;
  const oy = (m.clientHeight - (y1 - y0) * s) / 2 - y0 * s;
  const r = rects.find((q) => q.id === id);
  const ratio = window.devicePixelRatio;
  const px = Math.round((ox + (r.x + r.w / 2) * s) * ratio);
  const py = Math.round((oy + (r.y + r.h / 2) * s) * ratio);
  return Array.from(m.getContext("2d").getImageData(px, py, 1, 1).data);
}"""


def test_groups_collapse_expand_and_search_reveals(
    daphne_server: str, user: Any, password: str, page: tuple[Page, list[str]]
) -> None:
    from geon.graphs.services import do_create_graph

    document = two_layers()
    graph = off_loop(lambda: do_create_graph(owner=user, title="encoder x2", document=document))
    tab, errors = page
    shot = screenshots(tab, "groups")
    sign_in(tab, daphne_server, "ann", password)
    # given the two imported layers (102 operations, more than 60): they open collapsed
    open_graph(tab, daphne_server, str(graph.pk))
    laid_out(tab)
    assert groups(tab) == [
        ("/layers.0", "layers.0 · 51 ops", True),
        ("/layers.1", "layers.1 · 51 ops", True),
    ]
    # only the tensors between and after the layers are drawn, joined to the layers' boxes
    assert sorted(b["title"] for b in tab.evaluate("window.geon.boxes()")) == ["l0.y", "l1.y"]
    edges = tab.evaluate("window.geon.scene().edges")
    l0y, l1y = (
        tab.evaluate("window.geon.nodeId('l0.y')"),
        tab.evaluate("window.geon.nodeId('l1.y')"),
    )
    assert sorted(edges) == sorted(
        [["group:/layers.0", l0y], [l0y, "group:/layers.1"], ["group:/layers.1", l1y]]
    )
    assert tab.is_visible(".geon-groups-bar")
    # the minimap shows each collapsed layer as a block of the groups' colour (under the tint
    # of the part in view)
    painted(tab)
    pixel = tab.evaluate(MINIMAP_PIXEL, "group:/layers.1")
    assert max(abs(a - b) for a, b in zip(pixel, GROUP_COLOUR, strict=True)) <= 8, pixel
    shot("01-collapsed")

    # when ann double-clicks the first layer's box
    box = group_box(tab, "/layers.0")
    tab.mouse.dblclick(box["x"] + box["w"] / 2, box["y"] + box["h"] / 2)
    laid_out(tab)
    # then it is a frame around its operations, with its own scopes collapsed in it
    assert groups(tab) == [
        ("/layers.0", "layers.0 · 51 ops", False),
        ("/layers.0/self_attn", "self_attn · 37 ops", True),
        ("/layers.0/norm1", "norm1 · 2 ops", True),
        ("/layers.0/linear2", "linear2 · 3 ops", True),
        ("/layers.0/linear1", "linear1 · 3 ops", True),
        ("/layers.0/norm2", "norm2 · 3 ops", True),
        ("/layers.1", "layers.1 · 51 ops", True),
    ]
    titles = {b["title"] for b in tab.evaluate("window.geon.boxes()")}
    assert {"x", "op:gelu", "l0./layer/Add_output_0", "l0.y", "l1.y"} <= titles
    frame = group_box(tab, "/layers.0")
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    inside = [
        b
        for b in tab.evaluate("window.geon.boxes()")
        if b["title"] in {"x", "op:gelu", "l0./layer/Add_output_0"}
    ]
    for b in inside:
        assert frame["x"] <= canvas["x"] + b["x"] and canvas["x"] + b["x"] + b["w"] <= (
            frame["x"] + frame["w"]
        )
        assert frame["y"] <= canvas["y"] + b["y"] and canvas["y"] + b["y"] + b["h"] <= (
            frame["y"] + frame["h"]
        )
    shot("02-expanded")

    # when she searches for a tensor inside the second, collapsed layer's attention
    softmax = tab.evaluate(f"window.geon.nodeId('{SOFTMAX}')")
    assert tab.evaluate(f"geonGroups.hiddenIn('{softmax}')") == "/layers.1"
    tab.fill(".geon-search", SOFTMAX)
    tab.focus(".geon-search")
    tab.keyboard.press("Enter")
    laid_out(tab)
    tab.wait_for_function(
        "(id) => window.geon.boxes().some((b) => b.id === id)", arg=softmax, timeout=15_000
    )
    # then the groups around it expanded, it is selected and centred
    assert tab.evaluate(f"geonGroups.hiddenIn('{softmax}')") is None
    collapsed = {p: c for p, _t, c in groups(tab)}
    assert (collapsed["/layers.1"], collapsed["/layers.1/self_attn"]) == (False, False)
    assert tab.evaluate("window.geon.state().selected") == [softmax]
    [found] = [b for b in tab.evaluate("window.geon.boxes()") if b["id"] == softmax]
    assert abs(found["x"] + found["w"] / 2 - canvas["width"] / 2) < 2
    assert abs(found["y"] + found["h"] / 2 - canvas["height"] / 2) < 2
    # and the inspector shows it
    assert tab.input_value(".geon-inspector .geon-label-input") == SOFTMAX
    shot("03-found")

    # when she presses G with it selected: its scope collapses and is selected; Enter expands it
    tab.locator("canvas.geon-canvas").focus()
    tab.keyboard.press("g")
    laid_out(tab)
    assert ("/layers.1/self_attn", "self_attn · 37 ops", True) in groups(tab)
    assert tab.evaluate("geonGroups.focus()") == "group:/layers.1/self_attn"
    assert tab.evaluate("window.geon.state().selected") == []
    tab.keyboard.press("Enter")
    laid_out(tab)
    assert ("/layers.1/self_attn", "self_attn · 37 ops", False) in groups(tab)
    # when she right-clicks the attention's frame: its menu offers it, then all groups
    frame = group_box(tab, "/layers.1/self_attn")
    tab.mouse.click(frame["x"] + 40, frame["y"] + 3, button="right")  # on its title bar
    tab.wait_for_selector(".geon-menu:not([hidden])")
    shot("04-group-menu")
    items = tab.eval_on_selector_all(
        ".geon-menu .geon-menu-item span", "(s) => s.map((x) => x.textContent)"
    )
    assert items == [
        'Collapse group "self_attn"',
        "Collapse every group to one box",
        "Expand every group",
    ]
    tab.click(".geon-menu .geon-menu-item >> nth=0")
    laid_out(tab)
    assert ("/layers.1/self_attn", "self_attn · 37 ops", True) in groups(tab)
    # and Shift+E expands every group
    tab.locator("canvas.geon-canvas").focus()
    tab.keyboard.press("Shift+E")
    laid_out(tab)
    assert [c for _p, _t, c in groups(tab)] == [False] * len(groups(tab))
    # (the help overlay lists the group keys under Groups)
    tab.keyboard.press("Shift+?")
    tab.wait_for_selector(".geon-help[open]")
    assert tab.text_content(".geon-help dt[data-action='toggleGroup']") == "EnterG"
    tab.keyboard.press("Escape")

    # when she collapses everything with the button and reloads the page
    tab.click(".geon-groups-bar >> text=Collapse all")
    laid_out(tab)
    expected = [(p, t, True) for p, t, _c in groups(tab)]
    assert expected[:2] == [
        ("/layers.0", "layers.0 · 51 ops", True),
        ("/layers.1", "layers.1 · 51 ops", True),
    ]
    open_graph(tab, daphne_server, str(graph.pk))
    laid_out(tab)
    # then this browser remembered it; and none of it was an edit: still version 1, nothing to undo
    assert groups(tab) == expected[:2]
    state = tab.evaluate("window.geon.state()")
    assert (state["version"], state["history"]["undo"]) == (1, [])

    # when she opens the second layer's attention again and drags the softmax within it
    tab.evaluate("geonGroups.toggle('/layers.1')")
    laid_out(tab)
    tab.evaluate("geonGroups.toggle('/layers.1/self_attn')")
    laid_out(tab)
    tab.evaluate(f"window.geon.select(['{softmax}'])")
    tab.evaluate(CLOSE_UP, softmax)
    [b] = [b for b in tab.evaluate("window.geon.boxes()") if b["id"] == softmax]
    x, y = canvas["x"] + b["x"] + 30, canvas["y"] + b["y"] + 12
    tab.mouse.move(x, y)
    tab.mouse.down()
    tab.mouse.move(x + 20, y + 10, steps=4)
    tab.mouse.move(x + 60, y + 40, steps=4)
    tab.mouse.up()
    # then the move is one edit, and the attention's frame still holds the box where it went
    tab.wait_for_function("() => window.geon.state().version === 2")
    [moved] = [b for b in tab.evaluate("window.geon.boxes()") if b["id"] == softmax]
    assert (round(moved["x"] - b["x"]), round(moved["y"] - b["y"])) == (60, 40)
    frame = group_box(tab, "/layers.1/self_attn")
    assert frame["x"] <= canvas["x"] + moved["x"] and frame["y"] <= canvas["y"] + moved["y"]
    assert canvas["x"] + moved["x"] + moved["w"] <= frame["x"] + frame["w"]
    assert canvas["y"] + moved["y"] + moved["h"] <= frame["y"] + frame["h"]
    assert errors == []
