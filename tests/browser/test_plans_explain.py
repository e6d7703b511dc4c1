"""Plans that explain themselves, diffs people can read, no silent failures (issues 35 and 33),
in headless Chromium against a live Daphne: ann switches the transformer block to the plan that
maps the model axis D, and the Issues panel says, by name and scope, which operations run whole,
why, and what that forces; she sends a suggested plan for review in one click; the version diff
centres a change on both canvases and names it without ids; a refused export says why on the
page; the toast closes; a node she drops stays exactly where she dropped it after a reload."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page

from geon.core.graph import OPERATION, TENSOR, TENSOR_AXES
from geon.examples.transformer import TITLE
from geon.graphs.services import do_apply_edit, live_document
from geon.graphs.services.gallery import do_load_example
from tests.browser.helpers import (
    ARTIFACTS,
    UUID,
    open_graph,
    painted,
    screenshots,
    sign_in,
    texts,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORSE = "Model axis split (worse on purpose)"


def test_the_issues_panel_says_why_the_plan_runs_operations_whole(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "plans-explain")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    # given no plan yet: the Issues panel has no information entries
    assert tab.locator(".geon-issue.info").count() == 0
    # when ann switches the document to the plan that splits the model axis D over tp
    tab.locator(f".geon-plan[data-plan='{WORSE}'] .geon-plan-switch").click()
    tab.wait_for_selector(f".geon-plan[data-plan='{WORSE}'] .geon-plan-current")
    # then the Issues panel lists each layer_norm that runs whole, as information, by name and
    # output, with the card's reason and what it forces (an all-gather of D before it)
    tab.wait_for_function(
        "() => [...document.querySelectorAll('.geon-issue.info')]"
        ".some((i) => i.textContent.includes('forces'))",
        timeout=30_000,
    )
    notes = texts(tab, ".geon-issue.info .geon-issue-message")
    assert [n.split(" runs whole: ")[0] for n in notes] == [
        f'plan "{WORSE}": op:layer_norm → ln1',
        f'plan "{WORSE}": op:layer_norm → ln2',
    ]
    for note in notes:
        assert 'it contracts or reduces "D" (mesh axis "tp")' in note, note
        assert re.search(r"; forces 1 all-gather of [\d.]+ (B|KiB|MiB) before it$", note), note
        assert not UUID.search(note), note
    # and the plan's card says the same, what each forces included
    card = tab.locator(f".geon-plan[data-plan='{WORSE}'] .geon-plan-why li").all_text_contents()
    assert card == [n.removeprefix(f'plan "{WORSE}": ') for n in notes]
    # and the title counts only the graph's problems (the entries are not errors)
    assert tab.text_content(".geon-issues-panel h2") == "Issues"
    # and an entry jumps to its operation
    tab.locator(".geon-issue.info").first.click()
    selected = tab.evaluate("window.geon.state().selected")
    ln1 = tab.evaluate("() => window.geon.state().document.nodes.find((n) => n.label === 'ln1').id")
    producer = tab.evaluate(
        "(t) => window.geon.state().document.nodes.find((n) => "
        "JSON.stringify(n.body.outputs ?? {}).includes(t)).id",
        ln1,
    )
    assert selected == [producer]
    tab.locator(".geon-issues-panel").screenshot(path=str(ARTIFACTS / "plans-explain-issues.png"))
    shot("01-issues-say-why")
    # when she switches to Megatron's plan, which leaves nothing whole, the entries go
    tab.locator(".geon-plan[data-plan='Megatron tensor parallel'] .geon-plan-switch").click()
    tab.wait_for_selector(".geon-plan[data-plan='Megatron tensor parallel'] .geon-plan-current")
    tab.wait_for_function("() => !document.querySelector('.geon-issue.info')", timeout=30_000)
    assert errors == []


def test_a_suggested_plan_is_one_click_from_review(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "plans-explain")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    tab.click(".geon-suggest > summary")
    tab.fill(".geon-suggest-mesh", "tp=2")
    tab.click(".geon-suggest-go")
    tab.wait_for_selector(".geon-suggestion")
    # then each suggestion offers Save, Switch, Compare and Review
    first = tab.locator(".geon-suggestion").first
    buttons = first.locator(".geon-suggestion-actions button")
    assert buttons.evaluate_all("(bs) => bs.map((b) => b.textContent)") == [
        "Save",
        "Switch",
        "Compare",
        "Review",
    ]
    # when ann clicks Review on the best
    first.locator(".geon-suggestion-review").click()
    # then the plan is saved and the Reviews panel's New review form opens on it, titled
    tab.wait_for_selector(".geon-plan[data-plan='suggested: B→tp']")
    tab.wait_for_selector(".geon-review-new:not([hidden])")
    tab.wait_for_function(
        "() => document.querySelector('.geon-review-plan').selectedOptions[0]?.text"
        " === 'suggested: B→tp'"
    )
    assert tab.input_value(".geon-review-title") == 'Review plan "suggested: B→tp"'
    assert tab.text_content(".geon-suggest-status") == (
        'Saved plan "suggested: B→tp"; choose its reviewers in the Reviews panel.'
    )
    shot("02-suggestion-to-review")
    # and opening it asks for the review of that plan
    tab.click(".geon-review-open")
    tab.wait_for_selector(".geon-review-new", state="hidden")
    reviews = tab.evaluate("window.geon.reviews()")
    assert [(r["title"], r["plan"]["name"]) for r in reviews] == [
        ('Review plan "suggested: B→tp"', "suggested: B→tp")
    ]
    assert errors == []


NEG_OP = "5f1c1c1c-0000-4000-8000-0000000000b1"
NEG = "5f1c1c1c-0000-4000-8000-0000000000b2"


@pytest.fixture
def changed(user: Any) -> Any:
    """ann's transformer block with, in version 2, the first layer_norm and its output renamed
    and a new operation "op:negative" reading that output and writing "neg"."""
    graph, _ = do_load_example(user, "transformer-block")
    nodes = live_document(graph).document.nodes
    ln1 = next(n for n in nodes if n.label == "ln1")
    norm = next(n for n in nodes if n.type == OPERATION and ln1.id in str(n.body.get("outputs")))
    whole = {"tensorId": ln1.id, "range": ln1.body["range"]}
    ops = [
        {"op": "update_node", "id": ln1.id, "label": "normed"},
        {"op": "update_node", "id": norm.id, "label": "first norm"},
        {
            "op": "add_node",
            "node": {
                "id": NEG,
                "type": TENSOR,
                "label": "neg",
                "body": dict(ln1.body),
                "tags": {TENSOR_AXES: ln1.tags[TENSOR_AXES]},
            },
        },
        {
            "op": "add_node",
            "node": {
                "id": NEG_OP,
                "type": OPERATION,
                "body": {
                    "kernel": "op:negative",
                    "inputs": {"tensor": [whole]},
                    "outputs": {"result": [{**whole, "tensorId": NEG}]},
                },
            },
        },
    ]
    do_apply_edit(user, graph.pk, 1, ops)
    return graph, norm.id, ln1.id


def test_the_version_diff_names_and_centres_a_change_on_both_canvases(
    daphne_server: str, user: Any, password: str, changed: Any, page: tuple[Page, list[str]]
) -> None:
    graph, norm, ln1 = changed
    tab, errors = page
    tab.set_viewport_size({"width": 1400, "height": 900})
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{graph.pk}/diff/1/2/")
    tab.wait_for_function("() => window.geonDiff && window.geonDiff.ready()")
    # then each change is named by its name and output, never an id
    rows = tab.eval_on_selector_all(".geon-diff-changes li", "els => els.map(e => e.textContent)")
    assert rows == [
        "neg added",
        "op:negative → neg added",
        "normed changed: label",
        "first norm → normed changed: label",
    ]
    # when ann clicks the renamed operation's row
    tab.get_by_role("button", name="first norm → normed changed: label").click()
    painted(tab)
    # then both canvases centre it and select it, and each says so
    located = tab.evaluate("window.geonDiff.located()")
    for side in ("before", "after"):
        assert located[side]["node"] == norm, located
        assert abs(located[side]["dx"]) < 1 and abs(located[side]["dy"]) < 1, located
    said = tab.eval_on_selector_all(".geon-diff-where", "(ps) => ps.map((p) => p.textContent)")
    assert said == ["first norm → normed: here, selected"] * 2
    tab.screenshot(path=str(ARTIFACTS / "plans-explain-diff-located.png"))
    # and a pan keeps both on it together
    box = tab.locator(".geon-diff-pane canvas").first.bounding_box()
    assert box is not None
    tab.mouse.move(box["x"] + 100, box["y"] + 100)
    tab.mouse.down()
    tab.mouse.move(box["x"] + 140, box["y"] + 120)
    tab.mouse.up()
    moved = tab.evaluate("window.geonDiff.located()")
    for side in ("before", "after"):
        assert (moved[side]["dx"], moved[side]["dy"]) == pytest.approx((40, 20), abs=1)
    # when she clicks the added operation, the version before (without it) centres its input,
    # named as that version names it
    tab.get_by_role("button", name="op:negative → neg added").click()
    painted(tab)
    located = tab.evaluate("window.geonDiff.located()")
    assert (located["before"]["node"], located["after"]["node"]) == (ln1, NEG_OP)
    for side in ("before", "after"):
        assert abs(located[side]["dx"]) < 1 and abs(located[side]["dy"]) < 1, located
    said = tab.eval_on_selector_all(".geon-diff-where", "(ps) => ps.map((p) => p.textContent)")
    assert said == [
        "op:negative → neg: not in this version; centred on its neighbour ln1",
        "op:negative → neg: here, selected",
    ]
    tab.screenshot(path=str(ARTIFACTS / "plans-explain-diff-added.png"))
    assert errors == []


def test_a_refused_export_says_why_and_the_toast_closes(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "plans-explain")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    # given a document whose export the server refuses: an operation with an unknown kernel
    tab.evaluate(
        """() => {
          const doc = window.geon.state().document;
          const op = doc.nodes.find((n) => n.body.kernel === 'op:layer_norm');
          window.geon.edit('custom kernel', [
            {op: 'update_node', id: op.id, body: {kernel: 'my_norm'}},
          ]);
        }"""
    )
    tab.wait_for_function("() => window.geon.state().version === 2")
    # when ann exports it as ONNX
    tab.click(".geon-export > summary")
    tab.click(".geon-export-list a[data-to='onnx']")
    # then the menu says why, in the server's words, and no file is saved
    tab.wait_for_selector(".geon-export-error:not([hidden])")
    said = tab.text_content(".geon-export-error") or ""
    assert said.startswith("Export as ONNX failed: "), said
    assert "my_norm" in said, said
    shot("03-export-refused")
    # when an edit is refused, the toast says why and has a close button
    tab.click(".geon-export > summary")
    assert tab.evaluate("document.querySelector('.geon-export').open") is False
    tab.evaluate("() => window.geon.edit('bad', [{op: 'remove_node', id: 'no-such-node'}])")
    tab.wait_for_selector(".geon-toast[data-shown='1']")
    assert "no-such-node" in (tab.text_content(".geon-toast-text") or "")
    shot("04-toast")
    tab.click(".geon-toast-close")
    tab.wait_for_selector(".geon-toast", state="hidden")
    # and the page saw only the refused export as a failure (the browser logs it twice)
    export = f"{daphne_server}/api/v1/graphs/{gallery[TITLE]}/export?to=onnx"
    assert errors == [
        f"page 1: 400 {export}",
        "page 1: Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ], errors


def test_a_dropped_node_stays_where_it_was_dropped_after_a_reload(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    tab.evaluate("window.geon.run('zoomToFit')")
    painted(tab)
    # when ann drags the tensor x by (37, 23) screen pixels and lets go
    x = tab.evaluate("window.geon.nodeId('x')")
    [box] = [b for b in tab.evaluate("window.geon.boxes()") if b["id"] == x]
    canvas = tab.locator("canvas.geon-canvas").bounding_box()
    assert canvas is not None
    scale = tab.evaluate("window.geon.state().viewport.scale")
    start = (canvas["x"] + box["x"] + box["w"] / 2, canvas["y"] + box["y"] + 6)
    version = tab.evaluate("window.geon.state().version")
    before = rect_of(tab, x)
    tab.mouse.move(*start)
    tab.mouse.down()
    tab.mouse.move(start[0] + 37, start[1] + 23, steps=6)
    tab.mouse.up()
    tab.wait_for_function("(v) => window.geon.state().version === v + 1", arg=version)
    dropped = rect_of(tab, x)
    # (the Layout tag keeps whole graph units: under half a unit, here a fifth of a pixel, off)
    assert (dropped["x"] - before["x"], dropped["y"] - before["y"]) == pytest.approx(
        (37 / scale, 23 / scale), abs=0.5
    )
    # then after a reload it is exactly there
    tab.reload()
    tab.wait_for_function(
        "(v) => window.geon && window.geon.state().version === v + 1 "
        "&& window.geon.scene().rects.length > 0",
        arg=version,
    )
    tab.wait_for_function("(id) => window.geon.scene().rects.some((r) => r.id === id)", arg=x)
    assert rect_of(tab, x) == dropped
    assert errors == []


def rect_of(tab: Page, node: str) -> dict[str, float]:
    """The node's rectangle in graph coordinates (the layout's)."""
    found: dict[str, float] = tab.evaluate(
        "(id) => window.geon.scene().rects.find((r) => r.id === id)", node
    )
    return {k: found[k] for k in ("x", "y", "w", "h")}
