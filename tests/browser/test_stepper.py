"""Explain an operation step by step (issue 19, item 1), in headless Chromium against a live
Daphne: from the dot's right-click menu, the stepper shows the formula with the pairing of W-1
and W, steps through the 2x3 · 3x2 multiply-adds highlighting the cells read and written, plays
in another loop order, and its URL reopens it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import Page

from geon import core as gc
from geon.graphs.services import do_create_graph
from tests.browser.helpers import ARTIFACTS, sign_in

DOCS = Path(__file__).resolve().parents[2] / "docs"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def small_dot(user: Any) -> Any:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 2)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1], name="x")
    y = gc.placeholder(axes=[W, N], name="y")
    graph = gc.graph([gc.dot(x, y, name="z")])
    return do_create_graph(owner=user, title="Small dot", document=graph.to_json())


def test_a_dot_explained_step_by_step(
    daphne_server: str, user: Any, password: str, small_dot: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    tab.set_viewport_size({"width": 1400, "height": 900})
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{small_dot.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.boxes().length === 4")
    op = tab.evaluate("window.geon.nodeId('op:dot')")
    box = tab.evaluate("(id) => window.geon.boxes().find(b => b.id === id)", op)
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    tab.mouse.click(
        canvas["x"] + box["x"] + box["w"] / 2, canvas["y"] + box["y"] + box["h"] / 2, button="right"
    )
    tab.click(".geon-menu-item >> text=Explain step by step")
    tab.wait_for_selector(".geon-stepper[open]")
    assert tab.text_content(".geon-stepper-formula") == "z[H, N] = Σ_W x[H, W-1] · y[W, N]"
    assert "W-1 of x pairs with W of y" in (tab.text_content(".geon-stepper-why") or "")
    assert tab.text_content(".geon-stepper-step") == "step 1 of 12"
    assert tab.url.endswith(f"?explain={op}")
    # stepping: the cells read move along W; the third step writes z[0, 0]
    tab.keyboard.press("ArrowRight")
    assert tab.text_content(".geon-stepper-step") == "step 2 of 12"
    assert tab.locator(".geon-stepper-cell.read").count() == 2
    tab.keyboard.press("ArrowRight")
    assert tab.locator(".geon-stepper-cell.written").count() == 1
    assert (
        tab.text_content(".geon-stepper-code .current")
        == "            z[h, n] += x[h, w] * y[w, n]\n"
    )
    tab.screenshot(path=str(ARTIFACTS / "stepper.png"))
    # another loop order: W outermost, the same 12 steps
    tab.select_option(".geon-stepper-order", "W,H,N")
    assert tab.text_content(".geon-stepper-step") == "step 1 of 12"
    assert (tab.text_content(".geon-stepper-code") or "").startswith("for w in range(3):")
    # NumPy's words (issue 36): einsum letters named after the axes, grids labelled by axis,
    # and with W outermost every cell of z holds a partial sum after the first pass
    assert 'np.einsum("hw,wn->hn", x, y)' in (tab.text_content(".geon-stepper") or "")
    heads = tab.locator(".geon-stepper-tensor").first.locator("th")
    assert heads.evaluate_all("hs => hs.map(h => h.textContent)") == [
        "H↓ W-1→",
        "W-1=0",
        "W-1=1",
        "W-1=2",
        "H=0",
        "H=1",
    ]
    for _ in range(3):
        tab.keyboard.press("ArrowRight")
    assert tab.locator(".geon-stepper-cell.partial").count() == 3
    assert tab.locator(".geon-stepper-cell.accumulating").count() == 1
    tab.locator(".geon-stepper").screenshot(path=str(DOCS / "screenshot-stepper-partial-sums.png"))
    # the URL reopens it
    tab.reload()
    tab.wait_for_selector(".geon-stepper[open]")
    assert tab.text_content(".geon-stepper-formula") == "z[H, N] = Σ_W x[H, W-1] · y[W, N]"
    assert errors == []


@pytest.fixture
def small_conv(user: Any) -> Any:
    C = gc.Axis("C", 2, roles="Channel")
    H, W = gc.Axis("H", 3, roles="Height"), gc.Axis("W", 3, roles="Width")
    K, N = gc.Axis("K", 1, roles="Channelout"), gc.Axis("N", 1)
    R, S = gc.Axis("R", 3, roles="Height"), gc.Axis("S", 3, roles="Width")
    P, Q = gc.Axis("P", 3, roles="Height"), gc.Axis("Q", 3, roles="Width")
    x = gc.placeholder(axes=[N, C, H, W], name="x")
    f = gc.placeholder(axes=[K, C - 1, R, S], name="f")
    graph = gc.graph([gc.conv2d(x, f, [K, P, Q, N], padding=1, name="z")])
    return do_create_graph(owner=user, title="Small conv", document=graph.to_json())


def test_a_conv2d_explained_through_its_window(
    daphne_server: str, user: Any, password: str, small_conv: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    tab.set_viewport_size({"width": 1400, "height": 900})
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{small_conv.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.nodeId('op:conv2d') !== null")
    op = tab.evaluate("window.geon.nodeId('op:conv2d')")
    tab.goto(f"{daphne_server}/graphs/{small_conv.pk}/?explain={op}")
    tab.wait_for_selector(".geon-stepper[open]")
    assert (
        tab.text_content(".geon-stepper-formula")
        == "z[K, P, Q, N] = Σ_C,R,S x[N, C, P + R - 1, Q + S - 1] · f[K, C-1, R, S]"
    )
    assert tab.text_content(".geon-stepper-step") == "step 1 of 162"
    # the first reads fall in the padding; the fifth (r = 1, s = 1) reads x[0, 0, 0, 0]
    assert "x[0, 0, -1, -1] = 0 (padding)" in (tab.text_content(".geon-stepper-now") or "")
    for _ in range(4):
        tab.keyboard.press("ArrowRight")
    assert "x[0, 0, 0, 0] = 1" in (tab.text_content(".geon-stepper-now") or "")
    assert tab.locator(".geon-stepper-cell.read").count() == 2
    # x's other axes have sliders: the C slider shows another channel until "follow the step"
    x_caption = tab.locator("figure.geon-stepper-tensor figcaption").first
    assert x_caption.text_content() == "x (N, C, H, W) at N=0, C=0"
    tab.locator("input[aria-label='x: C']").fill("1")
    assert x_caption.text_content() == "x (N, C, H, W) at N=0, C=1"
    assert tab.locator(".geon-stepper-cell.read").count() == 1  # the read is in channel 0
    tab.screenshot(path=str(ARTIFACTS / "stepper-conv.png"))
    tab.click(".geon-stepper-follow:visible")
    assert x_caption.text_content() == "x (N, C, H, W) at N=0, C=0"
    assert tab.locator(".geon-stepper-cell.read").count() == 2
    assert errors == []
