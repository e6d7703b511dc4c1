"""Someone asks the editor to suggest plans (issue 33): on the transformer block and a tp=2 mesh
the Plans panel lists the search's best five with step time, memory and why, and one click saves
one as a plan; on a layered training step and a pp=2, dp=2 mesh the suggestions are pipelines and
the schedule chart draws each microbatch's forward and backward per stage, the bubble between;
saved, a pipelined suggestion keeps its pipeline and its card says the schedule."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.examples.transformer import TITLE
from geon.graphs.services import do_create_graph
from tests.browser.helpers import ARTIFACTS, off_loop, open_graph, screenshots, sign_in
from tests.core.plans.pipeline_docs import chain

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def suggest(tab: Page, mesh: str) -> None:
    tab.click(".geon-suggest > summary")
    tab.fill(".geon-suggest-mesh", mesh)
    tab.click(".geon-suggest-go")
    tab.wait_for_selector(".geon-suggestion")


def test_suggested_plans_are_listed_and_one_click_saves_one(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "plan-suggestions")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    # when ann asks for plans on two devices
    suggest(tab, "tp=2")
    # then the best five are listed, fastest first, each with its time, memory and why
    rows = tab.locator(".geon-suggestion")
    assert rows.count() == 5
    assert rows.first.locator(".geon-suggestion-name").text_content() == "B→tp"
    assert rows.first.locator(".geon-suggestion-why").text_content() == "compute"
    assert "µs" in (rows.first.locator(".geon-suggestion-time").text_content() or "")
    assert "kB" in (rows.first.locator(".geon-suggestion-memory").text_content() or "")
    assert "The best 5 on tp=2 under h100-sxm-8" in (tab.text_content(".geon-suggest-status") or "")
    shot("01-suggested")
    tab.locator(".geon-suggest").screenshot(path=str(ARTIFACTS / "plan-suggestions-panel.png"))
    # and one click saves the best as a plan of the graph
    rows.first.locator(".geon-suggestion-save").click()
    tab.wait_for_selector(".geon-plan[data-plan='suggested: B→tp']")
    assert tab.text_content(".geon-suggest-status") == 'Saved plan "suggested: B→tp".'
    # and one click saves the third and compares it with the graph's first plan (the document
    # places nothing yet)
    rows.nth(2).locator(".geon-suggestion-compare").click()
    tab.wait_for_selector(".geon-plan[data-plan='suggested: N→tp']")
    tab.wait_for_selector(".geon-ledgers .geon-ledger[data-plan='suggested: N→tp']")
    assert tab.text_content(".geon-compare-table thead") == (
        "at version 1Data parallelsuggested: N→tp"
    )
    assert errors == []


def test_pipelined_suggestions_draw_the_schedule_chart(
    daphne_server: str, user: Any, password: str, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    shot = screenshots(tab, "plan-suggestions")
    document = chain(train=True).to_json()
    graph = off_loop(lambda: do_create_graph(owner=user, title="Layers", document=document))
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, str(graph.pk))
    # when ann asks for plans on a mesh with a pipeline axis
    suggest(tab, "pp=2, dp=2")
    # then every suggestion is a pipeline, and the chart of the best draws two devices'
    # forward and backward boxes, 8 microbatches each
    first = tab.locator(".geon-suggestion").first
    assert "pp 1f1b" in (first.locator(".geon-suggestion-name").text_content() or "")
    chart = tab.locator(".geon-schedule")
    chart.wait_for()
    assert chart.locator(".geon-schedule-forward").count() == 16
    assert chart.locator(".geon-schedule-backward").count() == 16
    assert chart.locator(".geon-schedule-idle").count() == 2
    caption = chart.locator(".geon-schedule-caption").text_content() or ""
    assert caption.startswith("1f1b: 2 stages, 8 microbatches, bubble ")
    chart.scroll_into_view_if_needed()
    shot("02-schedule")
    chart.screenshot(path=str(ARTIFACTS / "plan-suggestions-schedule.png"))
    # and saved, the plan keeps its pipeline: its card says the schedule (issue 33)
    first.locator(".geon-suggestion-save").click()
    card = tab.locator(".geon-plan", has_text="pp 1f1b").locator(".geon-plan-info")
    card.wait_for()
    info = card.text_content() or ""
    assert "1F1B · 2 balanced stages · 8 microbatches · bubble 11%" in info, info
    assert errors == []
