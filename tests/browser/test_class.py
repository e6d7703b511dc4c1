"""A class (issue 19, item 5), in two headless Chromium contexts against a live Daphne and a
real Celery worker: a teacher creates a class and assigns a puzzle; a student joins by the
link, solves the puzzle on their own copy; the teacher's dashboard shows it solved."""

from __future__ import annotations

from typing import Any

import pytest

from geon.learn.puzzles import puzzle_of
from tests.browser.helpers import ARTIFACTS, STORE_DOCUMENT, Browsers, sign_in

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
    teacher.click("button:has-text('Assign')")
    link = teacher.input_value("input.join")
    # bob joins by the link and opens the puzzle from the class
    sign_in(student, daphne_server, "bob", password)
    student.goto(link)
    student.click("text=Puzzle: Matrix-vector product with a dual")
    student.wait_for_selector(".geon-puzzle .geon-lesson-title")
    # he builds the solution (here: the reference's graph, stored as his next version)
    assert student.evaluate(STORE_DOCUMENT, puzzle_of("matvec_dual")["reference"]) == 200
    student.click(".geon-puzzle-check")
    student.wait_for_selector(".geon-puzzle .geon-lesson-result.passed", timeout=60_000)
    # ann's dashboard shows him: opened, one check, solved
    teacher.reload()
    cell = teacher.locator("tr[data-student='bob'] td.cell").first
    assert cell.text_content() == "solved · 1 check"
    teacher.screenshot(path=str(ARTIFACTS / "class-dashboard.png"))
    assert browsers.errors == []
