"""A reviewer compares the transformer block's plans in the editor (issue 16 items 3-7): under a
chosen hardware profile the comparison shows step time, the collectives by kind and the peak
memory, Megatron's all-reduces appear in its collectives table and data parallel's devices each
hold a replica of the weights; the profile choice survives a reload."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.core.plans.cost.profiles import DEFAULT_PROFILE, shipped_profiles
from geon.examples.transformer import TITLE
from tests.browser.helpers import compare_rows, open_graph, screenshots, sign_in, texts

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DP, MEGATRON = "Data parallel", "Megatron tensor parallel"
WORSE = "Model axis split (worse on purpose)"


def compare(tab: Page) -> None:
    tab.select_option(".geon-compare-a", label=DP)
    tab.select_option(".geon-compare-b", label=MEGATRON)
    tab.click(".geon-compare-go")
    tab.wait_for_selector(".geon-ledgers .geon-ledger")


def test_comparing_plans_shows_time_collectives_and_memory_under_a_profile(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "plan-costs")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    # given the shipped profiles offered, the default chosen
    tab.wait_for_selector(".geon-profile option", state="attached")
    offered = tab.eval_on_selector_all(".geon-profile option", "(os) => os.map((o) => o.value)")
    assert offered == list(shipped_profiles())
    assert tab.input_value(".geon-profile") == DEFAULT_PROFILE
    # when ann compares data parallel with Megatron
    compare(tab)
    table = compare_rows(tab, ".geon-compare-row.cost")
    # then both step-time bounds, the collectives by kind and the memory verdict are compared
    assert f"step time, at most ({DEFAULT_PROFILE})" in table
    assert "step time, at least" in table
    dp, megatron = table["collectives"]
    assert "all-reduce" in megatron and dp != megatron
    assert set(table["device memory"]) <= {"fits"} | {
        v for v in table["device memory"] if v.startswith("over ")
    }
    # and each plan's ledger lists its devices, Megatron's collectives table its all-reduces
    mega = tab.locator(f".geon-ledgers .geon-ledger[data-plan='{MEGATRON}']")
    mega.locator("summary").click()
    kinds = mega.locator(".geon-collective").evaluate_all("(rs) => rs.map((r) => r.dataset.kind)")
    assert "all-reduce" in kinds
    assert mega.locator(".geon-ledger-row").count() == 2
    # and what changes from data parallel to Megatron: its two all-reduces added, by name
    summary = tab.text_content(".geon-plan-diff > summary")
    assert summary == f'From "{DP}" to "{MEGATRON}": 2 collectives added, 0 removed, 0 changed'
    added = texts(tab, ".geon-plan-diff-added")
    assert [line.split(" · ")[1].split(":")[0] for line in added] == [
        "attn out partial",
        "mlp out partial",
    ]
    tab.locator(".geon-plans").screenshot(path=str(shot("01-compared").with_suffix(".panel.png")))
    shot("01-compared")

    # when ann picks another profile, the comparison is computed again on it, and remembered
    other = next(p for p in shipped_profiles() if p != DEFAULT_PROFILE)
    tab.select_option(".geon-profile", other)
    tab.wait_for_function(
        "(p) => [...document.querySelectorAll('.geon-compare-row.cost th')]"
        ".some((th) => th.textContent.includes(p))",
        arg=other,
    )
    tab.reload()
    tab.wait_for_selector(".geon-profile option", state="attached")
    assert tab.input_value(".geon-profile") == other

    # when ann switches the document to Megatron's plan (a mapped plan: the server places it)
    assert tab.locator(f".geon-plan[data-plan='{MEGATRON}'] .geon-plan-current").count() == 0
    tab.locator(f".geon-plan[data-plan='{MEGATRON}'] .geon-plan-switch").click()
    tab.wait_for_function("() => window.geon.edgeLabels().length === 2", timeout=20_000)
    # then the two edges into the sums carry their all-reduce, over tp, thicker than plain edges
    tab.wait_for_selector(f".geon-plan[data-plan='{MEGATRON}'] .geon-plan-current")
    assert tab.locator(".geon-plan-current").count() == 1
    labels = tab.evaluate("window.geon.edgeLabels()")
    assert all(label["text"].startswith("all-reduce over tp · ") for label in labels)
    assert all(label["width"] > 2 for label in labels)
    # and the Plans panel shows Megatron's ledger without comparing: the summary line, and per
    # device a peak-memory bar split into what it holds, against the profile's capacity
    ledger = tab.locator(f".geon-ledger-current .geon-ledger[data-plan='{MEGATRON}']")
    summary = ledger.locator("summary").text_content() or ""
    assert summary.startswith(f"{MEGATRON}: 2 collectives · "), summary
    assert " per step · peak " in summary and "(max vs mean +" in summary, summary
    ledger.locator("summary").click()
    assert ledger.locator(".geon-ledger-row").count() == 2
    bars = ledger.locator(".geon-bar").evaluate_all(
        "(bs) => bs.map((b) => b.getAttribute('aria-label'))"
    )
    # (the block's weights are constants: parameters; x is data: activations)
    assert len(bars) == 2 and all(b.startswith("peak ") and "parameters " in b for b in bars), bars
    assert ledger.locator(".geon-bar").first.locator(".geon-bar-part").count() == 6
    assert "bars to" in (ledger.locator("caption").text_content() or "")
    ledger.screenshot(path=str(shot("04-ledger").with_suffix(".panel.png")))
    tab.wait_for_function("() => window.geon.boxes().some((b) => b.title === 'attn out partial')")
    tab.evaluate("window.geon.run('zoomToFit')")
    shot("02-megatron-edges")
    # and close up, the edge into the attention's sum reads its collective
    tab.wait_for_function("() => window.geon.boxes().some((b) => b.title === 'attn out partial')")
    box = next(b for b in tab.evaluate("window.geon.boxes()") if b["title"] == "attn out partial")
    tab.evaluate(
        "([x, y]) => { const v = window.geon.state().viewport;"
        " window.geon.setViewport({ scale: 1, dx: 60 - (x - v.dx) / v.scale,"
        " dy: 300 - (y - v.dy) / v.scale }); }",
        [box["x"], box["y"]],
    )
    shot("03-collective-label")
    assert errors == []


#: Records, in the first animation frame after each websocket message that carries a plan cost,
#: the edge labels the editor has then (its own frame callback, registered while it handled the
#: message, ran first: this listener is added after the editor's).
FRAME_AFTER_PLAN_COST = """
window.planCostFrames = [];
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener("open", () => this.addEventListener("message", (event) => {
      if (typeof event.data !== "string" || !event.data.includes('"planCost"')) return;
      const version = JSON.parse(event.data).version;
      requestAnimationFrame(() => window.planCostFrames.push(
        { version, labels: window.geon.edgeLabels().map((l) => l.text) }));
    }));
  }
};
"""


def test_edge_labels_follow_an_applied_in_its_first_frame_with_no_request(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    tab.add_init_script(FRAME_AFTER_PLAN_COST)
    # given the plans' REST cost unreachable: the labels can only come with the applied
    asked: list[str] = []
    tab.route("**/plans/*/cost*", lambda route: (asked.append(route.request.url), route.abort()))
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    tab.wait_for_selector(".geon-profile option", state="attached")
    # when ann switches to Megatron's plan, then to the plan that splits the model axis
    tab.locator(f".geon-plan[data-plan='{MEGATRON}'] .geon-plan-switch").click()
    tab.wait_for_function("() => window.planCostFrames.length === 1", timeout=20_000)
    tab.wait_for_selector(f".geon-plan[data-plan='{MEGATRON}'] .geon-plan-current")
    tab.locator(f".geon-plan[data-plan='{WORSE}'] .geon-plan-switch").click()
    tab.wait_for_function("() => window.planCostFrames.length === 2", timeout=20_000)
    megatron, worse = tab.evaluate("window.planCostFrames")
    # then in the first frame after each applied the edges carry that plan's collectives
    assert (megatron["version"], worse["version"]) == (2, 3)
    assert len(megatron["labels"]) == 2
    assert all(t.startswith("all-reduce over tp · ") for t in megatron["labels"])
    assert any(t.startswith("all-gather over tp · ") for t in worse["labels"])
    assert len(worse["labels"]) > 2
    # although every REST cost the Plans panel asked (for its ledger) failed, and stays drawn;
    # where the ledger would be, the panel says why there is none
    assert asked
    said = f'No cost for plan "{WORSE}": the server could not be reached; try again'
    tab.wait_for_function(
        "(t) => document.querySelector('.geon-ledger-current .geon-ledger-refused')"
        "?.textContent === t",
        arg=said,
    )
    assert tab.evaluate("window.geon.edgeLabels().length") == len(worse["labels"])
    assert [e for e in errors if not e.endswith("Failed to load resource: net::ERR_FAILED")] == []
