"""A lesson in the editor (issue 19, item 3), in headless Chromium against a live Daphne: from
the Lessons page a student opens "dot and duals" as their own copy, steps through with the
step's nodes selected and the URL following, fails the task's check with a message by name,
fixes the graph, and passes."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import ARTIFACTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIX_X = """() => {
  const x = window.geon.nodeId("x");
  return window.geon.edit("x gets W-1", [{op: "update_node", id: x,
    tags: {"urn:geon:2026-11:tag_types.jsd#/tags/TensorAxes": {axes: ["H", "W-1"]}}}]);
}"""


def test_a_student_steps_through_a_lesson_and_passes_its_task(
    daphne_server: str, user: Any, password: str, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    tab.click("header.site >> text=Lessons")
    tab.click("[data-lesson='dot-and-duals'] >> text=Start")
    tab.wait_for_selector(".geon-lesson-title")
    tab.wait_for_function("() => window.geon && window.geon.state().selected.length === 2")
    # step 1 selects x and the dot
    selected = tab.evaluate("window.geon.state().selected")
    assert sorted(selected) == sorted(
        tab.evaluate("[window.geon.nodeId('x'), window.geon.nodeId('x·y')]")
    )
    assert tab.text_content(".geon-lesson-count") == "step 1 of 3"
    tab.click(".geon-lesson-next")
    tab.click(".geon-lesson-next")
    assert tab.text_content(".geon-lesson-title") == "Fix it"
    assert tab.url.endswith("?lesson=dot-and-duals&step=3")
    # the check fails and says why, by name
    tab.click(".geon-lesson-check")
    tab.wait_for_selector(".geon-lesson-result.failed")
    assert (
        tab.text_content(".geon-lesson-result")
        == '"x" has the axes (H, W); the task asks for (H, W-1)'
    )
    # after the fix (one edit, stored), it passes
    assert tab.evaluate(FIX_X) is None
    tab.wait_for_function(
        "() => window.geon.state().version === 2 && window.geon.state().issues.length === 0"
    )
    tab.click(".geon-lesson-check")
    tab.wait_for_selector(".geon-lesson-result.passed")
    tab.screenshot(path=str(ARTIFACTS / "lesson.png"))
    # and the link reopens the lesson at that step
    tab.reload()
    tab.wait_for_selector(".geon-lesson-title")
    assert tab.text_content(".geon-lesson-title") == "Fix it"
    assert errors == []


@pytest.fixture
def dot_graph(user: Any) -> Any:
    from geon.graphs.services import do_create_graph
    from geon.learn.content.lessons import LESSONS

    document = LESSONS["dot-and-duals"].build().to_json()
    return do_create_graph(owner=user, title="My dot", document=document)


def test_a_teacher_writes_a_lesson_in_the_editor_and_opens_it_as_a_student(
    daphne_server: str, user: Any, password: str, dot_graph: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{dot_graph.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.nodeId('x') !== null")
    tab.click(".geon-writer > summary")
    tab.fill(".geon-writer-title", "Pairing by hand")
    tab.fill(".geon-writer-step-title", "Fix the pairing")
    tab.fill(".geon-writer-text", "Give **x** the axes `(H, W-1)`.")
    tab.evaluate("window.geon.select([window.geon.nodeId('x')])")
    tab.click(".geon-writer-use-selection")
    assert tab.text_content(".geon-writer-highlight") == "x"
    tab.fill(".geon-writer-tensor", "x")
    tab.fill(".geon-writer-axes", "H, W-1")
    tab.click(".geon-writer-save")
    tab.wait_for_selector(".geon-writer-links")
    assert (tab.text_content(".geon-writer-said") or "").startswith("Saved: 1 step")
    tab.screenshot(path=str(ARTIFACTS / "lesson-writer.png"))
    # the student's view: the lesson's own copy, the step, its check by name
    tab.goto(daphne_server + (tab.get_attribute(".geon-writer-links a", "href") or ""))
    tab.wait_for_selector(".geon-lesson .geon-lesson-title")
    assert tab.text_content(".geon-lesson h2") == "Lesson · Pairing by hand"
    assert tab.text_content(".geon-lesson-title") == "Fix the pairing"
    tab.click(".geon-lesson-check")
    tab.wait_for_selector(".geon-lesson-result.failed")
    assert "the task asks for (H, W-1)" in (tab.text_content(".geon-lesson-result") or "")
    assert errors == []
