"""Finding collectives and seeing pipeline stages on the canvas. Issue 35: "clicking a ledger or
Compare row pans to the edge and highlights it; Fit fits what is visible, groups expanded or
not". Issue 33: "the editor draws the stages as bands over the groups"."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.examples.transformer import TITLE
from geon.graphs.services import do_create_graph
from geon.graphs.services.plan_trials import check_plan
from geon.graphs.services.plans import do_save_plan
from tests.browser.helpers import (
    ARTIFACTS,
    highlighted_edge,
    off_loop,
    open_graph,
    painted,
    screenshots,
    sign_in,
)
from tests.core.plans.pipeline_docs import chain

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MEGATRON = "Megatron tensor parallel"


def test_a_ledger_row_pans_to_its_edge_and_highlights_it(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "canvas-marks")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    # given the document on Megatron's plan, its ledger open, the view panned far from its edges
    tab.locator(f".geon-plan[data-plan='{MEGATRON}'] .geon-plan-switch").click()
    tab.wait_for_function("() => window.geon.edgeLabels().length === 2", timeout=20_000)
    ledger = tab.locator(f".geon-ledger-current .geon-ledger[data-plan='{MEGATRON}']")
    ledger.locator("summary").click()
    tab.evaluate("window.geon.setViewport({ scale: 0.3, dx: -5000, dy: -5000 })")
    painted(tab)
    assert tab.evaluate("window.geonMarks.highlight()") is None
    # when ann clicks the collective of the attention's sum
    row = ledger.locator(".geon-collective", has_text="attn out partial")
    row.click()
    painted(tab)
    # then both ends of its edge are selected, and the edge is highlighted in the middle of the
    # canvas, zoomed in far enough to read
    shown = highlighted_edge(tab)
    boxes = {b["id"]: b["title"] for b in tab.evaluate("window.geon.boxes()")}
    assert boxes[shown["from"]] == "attn out partial"
    shot("01-ledger-edge")
    # and once something else is selected, the highlight goes
    tab.evaluate(f"window.geon.select(['{shown['to']}'])")
    painted(tab)
    assert tab.evaluate("window.geonMarks.highlight()") is None
    assert errors == []


def test_the_current_plans_pipeline_stages_are_bands_over_the_groups(
    daphne_server: str, user: Any, password: str, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    # given four layers (operations scoped layers.0 .. layers.3) and a plan that runs them in
    # two pipeline stages on pp=2 (data parallel inside each stage)
    document = chain(layers=4).to_json()
    graph = off_loop(lambda: do_create_graph(owner=user, title="Layers", document=document))
    pipeline = {
        "axis": "pp",
        "microbatches": 4,
        "schedule": "1f1b",
        "stages": [["layers.0", "layers.1"], ["layers.2", "layers.3"]],
    }

    def save() -> None:
        fields = ("Two stages", {"axes": {"pp": 2, "dp": 2}}, {}, {"N": "dp"}, {}, pipeline)
        checked = check_plan(*fields).to_json()
        do_save_plan(
            user,
            graph,
            checked["name"],
            checked["mesh"],
            checked["spec"],
            None,
            axis_mapping=checked["axisMapping"],
            inputs=checked["inputs"],
            pipeline=checked.get("pipeline"),
        )

    off_loop(save)
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, str(graph.pk))
    assert tab.evaluate("window.geonMarks.bands()") == []
    # when ann switches the document to it
    tab.locator(".geon-plan[data-plan='Two stages'] .geon-plan-switch").click()
    tab.wait_for_selector(".geon-plan[data-plan='Two stages'] .geon-plan-current", timeout=20_000)
    tab.evaluate("window.geon.run('zoomToFit')")
    tab.wait_for_function("() => window.geonMarks.bands().length === 2", timeout=20_000)
    # then each stage is a labelled band around its two layers' groups, stage 0 before stage 1
    bands = tab.evaluate("window.geonMarks.bands()")
    assert [b["label"] for b in bands] == ["stage 0", "stage 1"]
    groups = {g["path"]: g for g in tab.evaluate("window.geonGroups.list()")}
    stages = (("/layers.0", "/layers.1"), ("/layers.2", "/layers.3"))
    for band, layers in zip(bands, stages, strict=True):
        for path in layers:
            g = groups[path]
            assert band["x"] <= g["x"] and band["y"] <= g["y"], (band, g)
            assert band["x"] + band["w"] >= g["x"] + g["w"], (band, g)
            assert band["y"] + band["h"] >= g["y"] + g["h"], (band, g)
    painted(tab)
    tab.locator(".geon-canvas").screenshot(path=str(ARTIFACTS / "screenshot-stage-bands.png"))
    assert errors == []
