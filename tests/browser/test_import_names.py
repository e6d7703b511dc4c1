"""Imported models read like their source (issue 35), in headless Chromium against a live Daphne
and a real Celery worker: the import part of the issue's story. Screenshots in
tests/browser/artifacts/import-names-*.png; the rename step is also
docs/screenshot-import-rename.png.

Ann imports the committed encoder layer with "Import model…". Before the graph is made, the page
lists its axes with the roles the importer read off the model (batch, sequence, heads, head size,
hidden, ffn) as names she may edit. A bad name is refused as she types it, naming it; she renames
the queries' axis and creates the graph from the keyboard. The graph carries her names, and its
axes list hides the length-1 axes behind a count until she asks for them.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.browser.helpers import Browsers, off_loop, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parent.parent.parent
ENCODER = ROOT / "tests" / "interop" / "models" / "encoder.onnx"
NAMES = ".gallery-import-name"


def test_import_an_encoder_read_its_axes_names_rename_and_make_the_graph(
    daphne_server: str, celery_worker: Any, user: Any, password: str, browsers: Browsers
) -> None:
    tab = browsers.new_page()
    shot = screenshots(tab, "import-names")
    # given ann on her list of graphs
    sign_in(tab, daphne_server, "ann", password)
    # when she picks the encoder layer with "Import model…", its batch of length 3
    tab.fill(".gallery-import-dims", "batch=3")
    tab.set_input_files(".gallery-import-model", str(ENCODER))
    # then, before any graph is made, the page lists its axes with the names read off the model
    tab.wait_for_selector(".gallery-import-review", timeout=60_000)
    rows = tab.eval_on_selector_all(
        ".gallery-import-axes tbody tr",
        """rows => rows.map(r => [r.dataset.axis, r.children[1].textContent,
            r.children[2].textContent, r.querySelector('input').value])""",
    )
    assert rows == [
        ["batch", "3", "batch", "batch"],
        ["d10", "10", "sequence", "sequence"],
        ["d10_2", "10", "sequence", "sequence_q"],
        ["d4", "4", "heads", "heads"],
        ["d8", "8", "head size", "head_size"],
        ["d32", "32", "hidden", "hidden"],
        ["d64", "64", "ffn", "ffn"],
        ["d3", "3", "—", "d3"],
    ]
    seen = tab.locator('tr[data-axis="d32"] .gallery-import-seen').inner_text()
    assert seen == 'normalised by LayerNormalization "/layer/norm1/LayerNormalization"'
    assert (
        tab.locator(".gallery-import-hidden").inner_text().strip()
        == "3 length-1 axes keep their names."
    )
    assert tab.locator(".gallery-import-progress").inner_text() == (
        "Read encoder.onnx: name its axes, then create the graph."
    )
    from geon.graphs.models import Graph

    assert off_loop(lambda: Graph.objects.count()) == 0
    # and the first name has the keyboard
    assert tab.evaluate("document.activeElement.dataset.axis") == "batch"
    shot("01-rename")
    shutil.copyfile(shot("01-rename"), ROOT / "docs" / "screenshot-import-rename.png")

    # when she names the queries' axis "2 queries"
    queries = tab.locator(f'{NAMES}[data-axis="d10_2"]')
    queries.fill("2 queries")
    # then the row says why, and the graph cannot be created
    error = tab.locator('tr[data-axis="d10_2"] .gallery-import-name-error')
    assert error.inner_text() == (
        'the name for axis "d10_2": axis name "2 queries" is invalid; expected a letter or "_" '
        'followed by letters, digits or "_"'
    )
    assert tab.locator(".gallery-import-create").is_disabled()
    assert queries.get_attribute("aria-invalid") == "true"
    shot("02-bad-name")
    # when she names it "queries" and presses Enter
    queries.fill("queries")
    assert error.inner_text() == ""
    queries.press("Enter")
    # then the graph is made, with her names
    tab.wait_for_selector(".gallery-import-open", timeout=60_000)
    assert tab.locator(".gallery-import-review").count() == 0
    graph = off_loop(lambda: Graph.objects.get(owner=user))
    document = off_loop(lambda: graph.current_version.document)
    axes = {
        n["label"]: n["body"]["length"] for n in document["nodes"] if n["type"].endswith("Axis")
    }
    assert axes == {
        "batch": 3, "sequence": 10, "queries": 10, "heads": 4, "head_size": 8, "hidden": 32,
        "ffn": 64, "d3": 3, "d1_43": 1, "d1_44": 1, "d1_45": 1,
    }  # fmt: skip

    # when she opens it
    tab.click(".gallery-import-open")
    tab.wait_for_function("() => window.geon && window.geon.state().version === 1")
    # then the axes list shows the model's axes and counts the length-1 ones it hides
    listed = ".geon-axes .geon-axis .geon-axis-label"
    tab.wait_for_selector(listed)
    assert sorted(tab.eval_on_selector_all(listed, "ls => ls.map(l => l.textContent)")) == [
        "batch", "d3", "ffn", "head_size", "heads", "hidden", "queries", "sequence",
    ]  # fmt: skip
    ones = tab.locator(".geon-axis-ones")
    assert ones.inner_text() == "3 length-1 axes hidden Show"
    shot("03-axes")
    # and asked, it shows them
    tab.click(".geon-axis-ones-toggle")
    labels = tab.eval_on_selector_all(listed, "ls => ls.map(l => l.textContent)")
    assert {"d1_43", "d1_44", "d1_45"} <= set(labels) and len(labels) == 11
    assert tab.locator(".geon-axis-ones-toggle").inner_text() == "Hide length-1 axes"
    assert browsers.errors == []
