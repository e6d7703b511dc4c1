"""The first hour of an author (issue 21), told as one story in headless Chromium against a live
Daphne and a real Celery worker; each chapter leaves a screenshot for the README's tour in
tests/browser/artifacts/first-hour-*.png.

Ann signs in and creates "First hour MLP" from her list of graphs. She declares the axes N, D,
Hd and O, adds x[N, D], w1[D-1, Hd] and w2[Hd-1, O], and builds a two-layer MLP from the
palette: x·w1 (a dot, inferred as (Hd, N)), relu(x·w1), then relu(x·w1)·w2 (O, N). She gives w1
the axes "D, Hd" by mistake: the dot turns red and the Issues panel names it by name, not id;
she fixes it. She runs the graph keeping its intermediates and inspects relu(x·w1) in the run
panel. She reads the history (versions say what they did), restores the version before the
relu, and shares the graph with bob as a viewer, who opens it read-only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import Browsers, screenshots, sign_in
from tests.browser.test_authoring import box, click_box, drag_onto, set_axes, settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HIDDEN = "relu(x·w1)"
"""The intermediate tensor inspected after the run: the hidden layer."""
OUTPUT = "relu(x·w1)·w2"
"""The MLP's output, named after its operands like every output the editor creates."""
Shot = Callable[[str], Any]


def declare(tab: Page, name: str, length: str) -> None:
    """Declare an axis in the axes panel."""
    tab.fill(".geon-axes .geon-axis-name", name)
    tab.fill(".geon-axes .geon-axis-length", length)
    tab.press(".geon-axes .geon-axis-length", "Enter")


def add_tensor(tab: Page, label: str, axes: str) -> None:
    """Add a tensor with the toolbar's "+ Tensor" dialog."""
    tab.click("button[data-action=newTensor]")
    tab.fill(".geon-new-label", label)
    tab.fill(".geon-new-axes", axes)
    tab.click(".geon-new-tensor-add")


def add_from_palette(tab: Page, kernel: str) -> None:
    """Add an operation from the palette; the selected tensor becomes its first input."""
    tab.click("button[data-action=palette]")
    tab.fill(".geon-palette-search", kernel)
    tab.press(".geon-palette-search", "Enter")


def fit_and_drag_onto(tab: Page, tensor: str, operation: str) -> None:
    """Fit the graph to the screen, then drag the tensor onto the operation."""
    tab.evaluate("window.geon.run('zoomToFit')")
    drag_onto(tab, tensor, operation)


def test_the_first_hour_of_an_author(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    other_user: Any,
    password: str,
    browsers: Browsers,
) -> None:
    base = daphne_server
    tab = browsers.new_page()
    shot = screenshots(tab, "first-hour")
    # given ann signed in, on her list of graphs
    sign_in(tab, base, "ann", password)
    # when she creates a graph
    tab.fill(".gallery-new input[name=title]", "First hour MLP")
    tab.click(".gallery-new button[type=submit]")
    tab.wait_for_url(re.compile(r".*/graphs/[0-9a-f-]{36}/$"))
    graph_url = tab.url
    state = settled(tab, "s.connection === 'open' && s.version === 1")
    # then the editor opens on an empty document
    assert state["document"]["nodes"] == []
    assert tab.text_content(".graph-title") == "First hour MLP"

    build_the_mlp(tab, shot)
    make_and_fix_an_axis_error(tab, shot)
    run_and_inspect_the_hidden_layer(tab, shot)
    restore_the_version_before_the_relu(tab, shot)
    a_viewer_opens_it_read_only(tab, browsers, base, graph_url, password)
    assert browsers.errors == []


def build_the_mlp(tab: Page, shot: Shot) -> None:
    """Axes, three parameters and dot -> relu -> dot from the palette (versions 2 to 13)."""
    # when she declares N=4, D=3, Hd=5, O=2
    for name, length in (("N", "4"), ("D", "3"), ("Hd", "5"), ("O", "2")):
        declare(tab, name, length)
    settled(tab, "s.version === 5")
    # and adds x[N, D], w1[D-1, Hd] and w2[Hd-1, O]
    for label, axes in (("x", "N, D"), ("w1", "D-1, Hd"), ("w2", "Hd-1, O")):
        add_tensor(tab, label, axes)
    settled(tab, "s.version === 8")
    assert box(tab, "w1")["chips"] == ["D-1", "Hd"]

    # when she selects x, adds a dot and drags w1 onto it
    click_box(tab, "x")
    add_from_palette(tab, "dot")
    settled(tab, "s.version === 9")
    fit_and_drag_onto(tab, "w1", "op:dot")
    settled(tab, "s.version === 10")
    # then its output is named after its operands, with the dot rule's axes (Hd, N)
    assert box(tab, "x·w1")["chips"] == ["Hd", "N"]

    # when she selects that output and adds a relu: its output comes with it
    click_box(tab, "x·w1")
    add_from_palette(tab, "relu")
    settled(tab, "s.version === 11")
    assert box(tab, HIDDEN)["chips"] == ["Hd", "N"]

    # when she selects the hidden layer, adds a second dot and drags w2 onto it
    click_box(tab, HIDDEN)
    add_from_palette(tab, "dot")
    settled(tab, "s.version === 12")
    fit_and_drag_onto(tab, "w2", "op:dot 2")
    state = settled(tab, "s.version === 13")
    # then the output is (O, N) and the graph checks clean
    assert tab.evaluate("(l) => window.geon.axesOf(l)", OUTPUT) == ["O", "N"]
    assert box(tab, OUTPUT)["chips"] == ["O", "N"]
    assert state["issues"] == []
    assert tab.text_content(".geon-issues") == "0 issues"
    tab.evaluate("window.geon.run('zoomToFit')")
    shot("01-mlp")


def make_and_fix_an_axis_error(tab: Page, shot: Shot) -> None:
    """w1 as "D, Hd" puts D on both sides of the first dot at level 0 (versions 14 and 15)."""
    dot = tab.evaluate("window.geon.nodeId('op:dot')")
    # when she gives w1 the axes "D, Hd" in the inspector
    set_axes(tab, "w1", "D, Hd")
    state = settled(tab, "s.version === 14")
    # then the dot has an axis-inference issue, and the Issues panel names it, never by its id
    assert [(i["constraint"], i["nodeIds"]) for i in state["issues"]] == [
        ("OperationAxesInference", [dot])
    ]
    assert box(tab, "op:dot")["issues"] == 1
    assert tab.text_content(".geon-issues") == "1 issue"
    message = tab.text_content(".geon-issues-panel .geon-issue .geon-issue-message") or ""
    assert "op:dot" in message and "D-1" in message, message
    assert dot not in message, message
    shot("02-axis-error")

    # when she fixes w1 back to "D-1, Hd"
    set_axes(tab, "w1", "D-1, Hd")
    state = settled(tab, "s.version === 15")
    # then the graph checks clean again
    assert (state["issues"], box(tab, "op:dot")["issues"]) == ([], 0)
    assert tab.text_content(".geon-issues") == "0 issues"


def run_and_inspect_the_hidden_layer(tab: Page, shot: Shot) -> None:
    """x, w1 and w2 get random values from the run panel's seed; relu(x·w1) is kept."""
    # when she runs the graph, keeping intermediates
    tab.check(".geon-run-intermediates")
    tab.click(".geon-run-go")
    tab.wait_for_selector(".geon-run-panel[data-status=done]", timeout=60_000)
    # then every tensor of the MLP is shown, by name, the hidden layer among them
    tab.wait_for_function("() => document.querySelectorAll('.geon-result').length === 6")
    keys = tab.eval_on_selector_all(".geon-result", "(fs) => fs.map((f) => f.dataset.key)")
    assert sorted(keys) == sorted(["x", "w1", "w2", "x·w1", HIDDEN, OUTPUT])
    hidden = tab.locator(f'.geon-result[data-key="{HIDDEN}"]')
    # and the hidden layer reads as Hd x N (5x4), its map labelled by axis, never below zero
    caption = hidden.locator(".geon-result-caption").text_content() or ""
    assert caption.startswith(f"{HIDDEN} 5\u00d74 float32"), caption
    minimum = float(caption.split("min ")[1].split(" ")[0])
    assert minimum >= 0, caption
    assert hidden.locator(".geon-map-axis.left").text_content() == "Hd"
    assert hidden.locator(".geon-map-axis.top").text_content() == "N"
    # when she points at a cell, its value is read by axis name
    hidden.locator("canvas.geon-heat").hover(position={"x": 2, "y": 2})
    assert (hidden.locator(".geon-heat-value").text_content() or "").startswith("Hd=0, N=0: ")
    hidden.scroll_into_view_if_needed()
    shot("03-run-intermediates")


def restore_the_version_before_the_relu(tab: Page, shot: Shot) -> None:
    """The history reads what each version did; version 10 (x·w1, no relu yet) comes back."""
    # when she opens the history from the toolbar's version
    tab.click(".geon-version")
    tab.wait_for_selector(".geon-history-version[data-version='1']")
    # then the versions say what they did, newest first, by name
    texts = tab.eval_on_selector_all(
        ".geon-history > .geon-history-list > .geon-history-version .geon-history-text",
        "els => els.map(e => e.textContent)",
    )
    assert texts == [
        'gave "w1" the axes (D-1, Hd)',
        'gave "w1" the axes (D, Hd)',
        f'connected "w2" to "op:dot 2"; added tensor "{OUTPUT}"',
        'added operation "op:dot 2"',
        f'added operation "op:relu"; added tensor "{HIDDEN}"',
        'connected "w1" to "op:dot"; added tensor "x·w1"',
        'added operation "op:dot"',
        'added tensor "w2"',
        'added tensor "w1"',
        'added tensor "x"',
        'added axis "O"',
        'added axis "Hd"',
        'added axis "D"',
        'added axis "N"',
        "created",
    ]
    who = tab.text_content(".geon-history-version[data-version='15'] .geon-history-who") or ""
    assert who.startswith("ann · "), who
    # when she restores version 10, the one before the relu (confirming)
    tab.once("dialog", lambda dialog: dialog.accept())
    tab.click(".geon-history-version[data-version='10'] .geon-history-restore")
    # then it is stored as version 16, and the editor shows it live: x·w1 without the relu
    state = settled(tab, "s.version === 16")
    tab.wait_for_selector(".geon-history-version[data-version='16']")
    assert "restored version 10" in (
        tab.text_content(".geon-history-version[data-version='16']") or ""
    )
    shot("04-history-restored")
    nodes = state["document"]["nodes"]
    drawn = [n["label"] for n in nodes if n["type"].endswith(("/Tensor", "/Operation"))]
    assert sorted(drawn) == sorted(["x", "w1", "w2", "op:dot", "x·w1"])
    assert tab.evaluate("(l) => window.geon.nodeId(l)", HIDDEN) is None
    assert state["issues"] == []
    # and the run panel says its results are of an older version
    tab.wait_for_selector(".geon-run-panel.stale")
    assert "of version 15; the graph is at version 16 now" in (
        tab.text_content(".geon-run-panel .geon-run-line") or ""
    )
    tab.click(".geon-history .geon-history-head button")


def a_viewer_opens_it_read_only(
    tab: Page, browsers: Browsers, base: str, graph_url: str, password: str
) -> None:
    """Ann adds bob as a viewer from the Share dialog; bob's editor is read-only."""
    # when ann adds bob as a viewer from the Share dialog
    tab.click(".geon-share-button")
    tab.wait_for_selector(".geon-share[open] .geon-share-people tr")
    tab.fill(".geon-share input[name=who]", "bob")
    tab.select_option(".geon-share-invite select", "viewer")
    tab.click(".geon-share-invite button[type=submit]")
    tab.locator(".geon-share-note").filter(has_text="bob is now a viewer").wait_for()
    tab.click(".geon-share-done")
    # and bob signs in and opens the graph
    bob = browsers.new_page()
    sign_in(bob, base, "bob", password)
    bob.goto(graph_url)
    bob.wait_for_function(
        "() => window.geon && window.geon.state().connection === 'open'"
        " && window.geon.state().role === 'viewer' && window.geon.boxes().length > 0"
    )
    # then the toolbar says his role, the editing controls are disabled with the reason, and an
    # edit is refused before it is sent
    assert bob.text_content(".geon-role") == "viewer · read-only"
    tensor = bob.locator("button[data-action=newTensor]")
    assert tensor.is_disabled()
    assert "viewer" in (tensor.get_attribute("title") or "")
    # so are the side panels' (declare an axis, save a plan), each saying why
    for control in (".geon-axes .geon-axis-add", ".geon-plan-save"):
        assert bob.locator(control).is_disabled(), control
        assert "you are a viewer" in (bob.get_attribute(control, "title") or ""), control
    refusal = bob.evaluate(
        "() => window.geon.edit('rename', [{op: 'update_node',"
        " id: window.geon.nodeId('x'), label: 'y'}])"
    )
    assert refusal is not None and "you are a viewer" in refusal, refusal
    assert bob.evaluate("window.geon.state().version") == 16
    screenshots(bob, "first-hour")("05-viewer")
