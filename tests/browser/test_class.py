"""A class (issue 19, item 5; issue 36), in two headless Chromium contexts against a live
Daphne and a real Celery worker: a teacher creates a class and assigns a puzzle with a due
date; a student joins by the link, checks a wrong answer (the counterexample's inputs, result
and expected values drawn as grids), then solves it on their own copy; the teacher's progress
shows it solved, the cell opens the student's attempts with the counterexample, the comment
reaches the student, and the CSV has the row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from geon.learn.puzzles import puzzle_of
from tests.browser.helpers import STORE_DOCUMENT, Browsers, sign_in

WRONG = Path(__file__).resolve().parents[1] / "teaching" / "wrong" / "matvec_dual.json"
DOCS = Path(__file__).resolve().parents[2] / "docs"
CSV = """async (url) => {
  const r = await fetch(url);
  return [r.status, r.headers.get("content-type"), await r.text()];
}"""
DRAWN = """() => {
  const i = document.querySelector("img.drawn");
  return i.complete && i.naturalWidth > 0;
}"""

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# Kept for the PostgreSQL + Redis pass: two people, a class, a puzzle checked by the worker.
@pytest.mark.story_on_services
def test_a_teacher_sees_a_student_solve_an_assigned_puzzle(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    other_user: Any,
    password: str,
    browsers: Browsers,
) -> None:
    teacher, student = browsers.new_page(), browsers.new_page()
    # ann makes a class and assigns the matrix-vector puzzle
    sign_in(teacher, daphne_server, "ann", password)
    teacher.goto(f"{daphne_server}/learn/classes/")
    teacher.fill("input[name=name]", "Axes 101")
    teacher.click("text=Create class")
    teacher.select_option("select[name=item]", "puzzle:matvec_dual")
    teacher.fill("input[name=due]", "2030-06-01")
    teacher.click("button:has-text('Assign')")
    link = teacher.input_value("input.join")
    # bob joins by the link and opens the puzzle from the class
    sign_in(student, daphne_server, "bob", password)
    student.goto(link)
    assert "due 1 Jun 2030" in (student.text_content("main") or "")
    student.click("text=Puzzle: Matrix-vector product with a dual")
    student.wait_for_selector(".geon-puzzle .geon-lesson-title")
    # a wrong answer first: the counterexample with the inputs that failed, as grids
    assert student.evaluate(STORE_DOCUMENT, json.loads(WRONG.read_text())) == 200
    student.click(".geon-puzzle-check")
    student.wait_for_selector(".geon-puzzle .geon-lesson-result.failed", timeout=60_000)
    grids = student.locator(".geon-counterexample [data-grid]")
    assert grids.evaluate_all("gs => gs.map(g => g.dataset.grid)") == [
        "input m",
        "input v",
        "your result",
        "expected",
    ]
    assert student.locator("[data-grid='input m'] th").first.is_visible()
    assert "W-1=0" in (student.text_content("[data-grid='input m'] table") or "")
    # "Load into a run": the draw's lengths set as one undoable edit, its inputs in the Run
    # panel; the run shows what the graph makes of them, the counterexample's "got"
    student.click(".geon-counterexample-load")
    said = student.text_content(".geon-counterexample-said") or ""
    assert said.startswith("Axes set to H=1 (Undo puts them back)"), said  # W is 2 already
    student.locator(".geon-puzzle").screenshot(
        path=str(DOCS / "screenshot-puzzle-counterexample.png")
    )
    student.click(".geon-run-go")
    student.wait_for_selector(".geon-run-panel[data-status=done]", timeout=60_000)
    caption = student.text_content('.geon-result[data-key="out"] .geon-result-caption') or ""
    got = student.text_content("[data-grid='your result'] td")  # the counterexample's 0.0
    assert got == "0.0" and caption == "out 1 float64 · min 0 · max 0", caption
    student.keyboard.press("Control+z")
    student.wait_for_function("() => window.geon.state().history.undo.length === 0")
    # he builds the solution (here: the reference's graph, stored as his next version)
    assert student.evaluate(STORE_DOCUMENT, puzzle_of("matvec_dual")["reference"]) == 200
    student.click(".geon-puzzle-check")
    student.wait_for_selector(".geon-puzzle .geon-lesson-result.passed", timeout=60_000)
    assert student.locator(".geon-counterexample").count() == 0
    # solved in a class: the way back to it (the class has nothing after this puzzle)
    back = student.wait_for_selector(".geon-puzzle .geon-after-class")
    assert back.text_content() == "Back to class Axes 101"
    assert student.locator(".geon-after-next").count() == 0
    # ann's progress shows him: solved after two checks
    teacher.reload()
    cell = teacher.locator("tr[data-student='bob'] td.cell").first
    assert cell.text_content() == "solved · 2 checks"
    teacher.screenshot(path=str(DOCS / "screenshot-class.png"))
    # the cell opens his work: the graph drawn, both attempts, the counterexample's grids
    cell.locator("a").click()
    teacher.wait_for_selector("img.drawn")
    assert teacher.locator(".attempt").count() == 2
    assert teacher.locator(".attempt h3").first.text_content().startswith("Solved")  # type: ignore[union-attr]
    assert teacher.locator(".attempt [data-grid='input m'] table").count() == 1
    teacher.wait_for_function(DRAWN)
    teacher.fill("textarea[name=comment]", "Good: you paired W-1 with W.")
    teacher.click("text=Save comment")
    teacher.wait_for_function(DRAWN)
    teacher.screenshot(path=str(DOCS / "screenshot-class-drill-down.png"), full_page=True)
    # the CSV a spreadsheet opens
    class_id = teacher.url.split("/classes/")[1].split("/")[0]
    status, kind, text = teacher.evaluate(CSV, f"/api/v1/classes/{class_id}/progress.csv")
    assert status == 200 and kind.startswith("text/csv")
    assert text.splitlines() == ["student,Puzzle: Matrix-vector product with a dual", "bob,solved"]
    # bob reads the comment on his progress page
    student.goto(f"{daphne_server}/learn/progress/")
    assert "Good: you paired W-1 with W." in (student.text_content("main") or "")
    student.screenshot(path=str(DOCS / "screenshot-class-progress.png"))
    assert browsers.errors == []
