"""A puzzle in the editor (issue 19, item 4), in headless Chromium against a live Daphne and a
real Celery worker: a student's wrong graph is checked on 50 draws and the first difference is
shown in axis names; after they change it, the check says solved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from geon.graphs.models import Graph
from geon.graphs.services import do_update_graph
from geon.learn.puzzles import do_open_puzzle, puzzle_of
from tests.browser.helpers import ARTIFACTS, STORE_DOCUMENT, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WRONG = Path(__file__).resolve().parents[1] / "teaching" / "wrong" / "matvec_dual.json"


@pytest.fixture
def wrong_try(user: Any) -> Graph:
    """ann's graph for the matrix-vector puzzle, holding a plausible wrong answer."""
    graph, _ = do_open_puzzle(user, "matvec_dual")
    do_update_graph(user, graph.pk, base_version=1, document=json.loads(WRONG.read_text()))
    return graph


def test_a_student_fails_then_solves_a_puzzle(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    password: str,
    wrong_try: Graph,
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/learn/")
    tab.click("[data-puzzle='matvec_dual'] >> text=Solve")
    tab.wait_for_selector(".geon-puzzle .geon-lesson-title")
    assert (
        tab.text_content(".geon-puzzle .geon-lesson-title") == "Matrix-vector product with a dual"
    )
    # the wrong try: the first difference, in axis names
    tab.click(".geon-puzzle-check")
    tab.wait_for_selector(".geon-puzzle .geon-lesson-result.failed", timeout=60_000)
    said = tab.text_content(".geon-puzzle .geon-lesson-result") or ""
    assert said.startswith("Not yet. With ") and "expected" in said
    assert said.lower().count("with ") == 1, said  # the lengths are named once
    tab.screenshot(path=str(ARTIFACTS / "puzzle-not-yet.png"))
    # the student changes the graph (to the reference's) and checks again
    reference = puzzle_of("matvec_dual")["reference"]
    assert tab.evaluate(STORE_DOCUMENT, reference) == 200
    tab.click(".geon-puzzle-check")
    tab.wait_for_selector(".geon-puzzle .geon-lesson-result.passed", timeout=60_000)
    assert "all 50 draws" in (tab.text_content(".geon-puzzle .geon-lesson-result") or "")
    assert errors == []
