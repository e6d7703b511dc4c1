"""Downloads that say why they failed (issue 35: "every failed download, export or request says
why on the page"), in headless Chromium against a live Daphne: ann exports the transformer block
placed by Megatron's plan as ONNX and the Export menu says that the file is its logical model; on
the graph list an export saves the file, and the export of a graph deleted since the list was
drawn says why on the page; on a class page the progress CSV of a class that is no longer hers
(handed to another teacher) says why under the link. The links stay plain <a download> links
(they work without script)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils.text import slugify
from playwright.sync_api import Page

from geon.examples.transformer import TITLE
from geon.graphs.services.graphs import do_delete_graph
from tests.browser.helpers import ARTIFACTS, off_loop, open_graph, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MEGATRON = "Megatron tensor parallel"


def test_a_placed_graph_exports_its_logical_model_and_says_so(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "downloads")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[TITLE])
    # given the transformer block placed by Megatron's plan
    tab.locator(f".geon-plan[data-plan='{MEGATRON}'] .geon-plan-switch").click()
    tab.wait_for_selector(f".geon-plan[data-plan='{MEGATRON}'] .geon-plan-current")
    # when ann exports it as ONNX
    tab.click(".geon-export > summary")
    with tab.expect_download() as saving:
        tab.click(".geon-export-list a[data-to='onnx']")
    # then the file is saved under the graph's title
    download = saving.value
    assert download.suggested_filename.endswith(".onnx"), download.suggested_filename
    path = ARTIFACTS / "downloads-transformer.onnx"
    download.save_as(path)
    # (the ONNX checker, an outside oracle, takes the file: the logical model, no mesh)
    import onnx

    onnx.checker.check_model(onnx.load(str(path)))
    # and the menu opens again saying it exported the logical model, not the placement
    tab.wait_for_selector(".geon-export-notice:not([hidden])")
    assert tab.evaluate("document.querySelector('.geon-export').open") is True
    notice = tab.text_content(".geon-export-notice") or ""
    assert notice.startswith("Exported the logical model; the plan's placement is not part of"), (
        notice
    )
    assert "the mesh left out" in notice, notice
    assert tab.is_hidden(".geon-export-error")
    shot("01-export-notice")
    assert errors == []


def test_an_export_on_the_graph_list_saves_the_file_or_says_why(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "downloads")
    sign_in(tab, daphne_server, "ann", password)
    row = f"tr[data-graph='{gallery[TITLE]}']"
    link = tab.locator(f"{row} a[data-act=export]")
    # given the Export link, still a plain download link for a page without script
    assert link.get_attribute("download") == f"{slugify(TITLE)}.json"
    assert link.get_attribute("href") == f"/api/v1/graphs/{gallery[TITLE]}/export"
    # when ann exports the transformer block, the file is saved under the server's name
    with tab.expect_download() as saving:
        link.click()
    assert saving.value.suggested_filename.endswith(".json"), saving.value.suggested_filename
    assert tab.text_content(".gallery-message") == ""
    # when the graph is deleted (in another tab) after the list was drawn and she exports it
    off_loop(lambda: do_delete_graph(user, gallery[TITLE]))
    link.click()
    # then the page says which export failed and why, in the server's words
    tab.wait_for_function("() => document.querySelector('.gallery-message').textContent !== ''")
    said = tab.text_content(".gallery-message") or ""
    assert said.startswith(f'Export of "{TITLE}" failed: '), said
    assert "the server answered" not in said, said
    assert tab.url == f"{daphne_server}/"
    shot("02-list-export-refused")
    # and the page's only failures are the deleted graph's: the refused export (the browser
    # logs each twice), and its thumbnail where the list happened to load it again
    gone = f"{daphne_server}/api/v1/graphs/{gallery[TITLE]}/"
    export = f"{gone}export"
    logged_404 = (
        "page 1: Failed to load resource: the server responded with a status of 404 (Not Found)"
    )
    assert f"page 1: 404 {export}" in errors, errors
    others = [e for e in errors if e != logged_404 and not e.startswith(f"page 1: 404 {gone}")]
    assert others == [], errors


def test_a_refused_progress_csv_says_why_under_the_link(
    daphne_server: str,
    user: Any,
    other_user: Any,
    password: str,
    page: tuple[Page, list[str]],
) -> None:
    from geon.learn.models import Classroom

    tab, errors = page
    classroom = off_loop(
        lambda: Classroom.objects.create(name="Axes 101", teacher=user, key="axes-101-key")
    )
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/learn/classes/{classroom.pk}/")
    link = tab.locator("a.class-csv")
    assert link.get_attribute("href") == f"/api/v1/classes/{classroom.pk}/progress.csv"
    assert link.get_attribute("download") == ""
    # when ann downloads the progress, the CSV is saved under the server's name
    with tab.expect_download() as saving:
        link.click()
    assert saving.value.suggested_filename == f"class-{classroom.pk}-progress.csv"
    assert tab.is_hidden(".class-csv-error")

    # when, after the page was drawn, the class is handed to bob (ann stays in it, as a student)
    # and she downloads the progress again
    def hand_over() -> None:
        Classroom.objects.filter(pk=classroom.pk).update(teacher=other_user)
        classroom.students.add(user)

    off_loop(hand_over)
    link.click()
    # then the page says why under the link, naming the class and its teacher
    tab.wait_for_selector(".class-csv-error:not([hidden])")
    said = tab.text_content(".class-csv-error") or ""
    assert said == (
        'Download of the progress as CSV failed: only the teacher of class "Axes 101" (bob) '
        "reads the class's progress"
    ), said
    tab.locator("section.panel", has_text="Progress").screenshot(
        path=str(ARTIFACTS / "downloads-03-csv-refused.png")
    )
    csv = f"{daphne_server}/api/v1/classes/{classroom.pk}/progress.csv"
    assert errors == [
        f"page 1: 403 {csv}",
        "page 1: Failed to load resource: the server responded with a status of 403 (Forbidden)",
    ], errors
