"""The graph list in headless Chromium: rename, duplicate, export, import and delete graphs
through the REST API from the page, as a person would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Dialog, Page

from geon.graphs.services.copies import ABOUT_TAG
from tests.browser.helpers import ARTIFACTS, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def titles(tab: Page) -> list[str]:
    return tab.locator(
        "table.graphs tbody tr td:first-child a:not(.graph-thumb-link)"
    ).all_text_contents()


def row(tab: Page, title: str) -> Any:
    return tab.locator(f'table.graphs tbody tr[data-title="{title}"]')


def test_graphs_are_renamed_duplicated_exported_imported_and_deleted_from_the_list(
    daphne_server: str,
    user: Any,
    password: str,
    graph: Any,
    loom_document: dict[str, Any],
    tmp_path: Path,
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "gallery")
    answers: list[str | None] = []

    def answer(dialog: Dialog) -> None:
        reply = answers.pop(0)
        if reply is None:
            dialog.dismiss()
        else:
            dialog.accept(reply)

    tab.on("dialog", answer)
    # given ann with one graph
    sign_in(tab, daphne_server, "ann", password)
    assert titles(tab) == ["Loom add"]
    # when she renames it
    answers.append("Loom sum")
    with tab.expect_navigation():
        row(tab, "Loom add").locator("button[data-act=rename]").click()
    # then the list shows the new title
    assert titles(tab) == ["Loom sum"]
    # when she duplicates it
    with tab.expect_navigation():
        row(tab, "Loom sum").locator("button[data-act=duplicate]").click()
    # (most recently changed first: the copy on top)
    assert titles(tab) == ["Loom sum (copy)", "Loom sum"]
    shot("01-list")
    # when she exports the original, she gets its LoomGraph document as it is, with its title
    # and description in the About tag, in a file named after the title
    with tab.expect_download() as download:
        row(tab, "Loom sum").locator("[data-act=export]").click()
    assert download.value.suggested_filename == "loom-sum.json"
    saved = tmp_path / "exported.json"
    download.value.save_as(saved)
    about = {"title": "Loom sum", "description": ""}
    assert json.loads(saved.read_text(encoding="utf-8")) == {
        **loom_document,
        "tags": {ABOUT_TAG: about},
    }
    # when she imports that file (renamed), it opens in the editor as a new graph with the same
    # nodes and the title the file carries
    imported = tmp_path / "loom again.json"
    imported.write_text(saved.read_text(encoding="utf-8"), encoding="utf-8")
    tab.set_input_files(".gallery-import", str(imported))
    tab.wait_for_url(f"{daphne_server}/graphs/*/")
    tab.wait_for_function("() => window.geon && window.geon.state().version === 1")
    assert tab.text_content(".graph-title") == "Loom sum"
    assert tab.evaluate("window.geon.state().document") == loom_document
    # when she deletes the copy (after saying no once)
    tab.goto(f"{daphne_server}/")
    answers.append(None)
    row(tab, "Loom sum (copy)").locator("button[data-act=delete]").click()
    assert titles(tab) == ["Loom sum", "Loom sum (copy)", "Loom sum"]  # the import on top
    answers.extend([""])
    with tab.expect_navigation():
        row(tab, "Loom sum (copy)").locator("button[data-act=delete]").click()
    # then it is gone
    assert titles(tab) == ["Loom sum", "Loom sum"]
    # when she imports a file that is not JSON, she is told so and nothing is stored
    broken = tmp_path / "notes.json"
    broken.write_text("not json", encoding="utf-8")
    tab.set_input_files(".gallery-import", str(broken))
    message = tab.locator(".gallery-message")
    message.filter(has_text="notes.json").wait_for()
    assert message.text_content() == (
        '"notes.json" is not JSON; expected a LoomGraph document {"id", "nodes": [...]}'
    )
    assert titles(tab) == ["Loom sum", "Loom sum"]
    shot("02-after")
    assert errors == []


@pytest.fixture
def two_graphs(user: Any) -> None:
    from geon.examples.gallery import EXAMPLES
    from geon.graphs.services import do_create_graph

    for title in ("Two-layer MLP", "A padded conv"):
        document = EXAMPLES["dot-2d"].build().to_json()
        do_create_graph(owner=user, title=title, document=document)


def test_the_list_shows_each_graphs_diagram_and_searches_by_title(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    password: str,
    two_graphs: None,
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    # each row gets the worker's diagram of its graph as a thumbnail
    tab.wait_for_function(
        "() => [...document.querySelectorAll('img.graph-thumb')]"
        ".filter((i) => !i.hidden && i.complete && i.naturalWidth > 0).length === 2",
        timeout=60_000,
    )
    tab.screenshot(path=str(ARTIFACTS / "graph-list.png"))
    # the search keeps the rows whose title or description has every word
    tab.fill(".graph-search", "mlp")
    visible = tab.locator("table.graphs tbody tr:visible")
    assert visible.count() == 1 and visible.get_attribute("data-title") == "Two-layer MLP"
    tab.fill(".graph-search", "")
    assert tab.locator("table.graphs tbody tr:visible").count() == 2
    assert errors == []
