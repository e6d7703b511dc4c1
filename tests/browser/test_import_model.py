"""Import an ONNX model from the graph list and export it from the editor (issue 20), in headless
Chromium against a live Daphne and a real Celery worker; screenshots in
tests/browser/artifacts/import-model-*.png.

Ann gives the model's batch a length and picks the committed transformer encoder layer with
"Import model…": the list says how the worker is getting on, then links to the new graph and to
its weights, and lists the graph without a reload. She opens the graph and
the editor's Export menu offers the document as JSON, ONNX, NumPy, einsum and builder code.
Then she writes Megatron's plan for it (heads and the MLP's width over tp) and sees its two
all-reduces on the graph.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.helpers import Browsers, off_loop, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ENCODER = Path(__file__).resolve().parent.parent / "interop" / "models" / "encoder.onnx"

#: Records every status the progress line shows (installed before the upload).
WATCH = """() => {
  const line = document.querySelector('.gallery-import-progress');
  window.importStatuses = [];
  new MutationObserver(() => {
    const s = line.dataset.status;
    if (s && window.importStatuses.at(-1) !== s) window.importStatuses.push(s);
  }).observe(line, { attributes: true, childList: true });
}"""


def test_import_a_model_then_open_the_export_menu(
    daphne_server: str, celery_worker: Any, user: Any, password: str, browsers: Browsers
) -> None:
    base = daphne_server
    tab = browsers.new_page()
    shot = screenshots(tab, "import-model")
    # given ann on her list of graphs
    sign_in(tab, base, "ann", password)
    tab.evaluate(WATCH)
    # when she gives the model's batch a length and picks the encoder layer with "Import model…"
    tab.fill(".gallery-import-dims", "batch=3")
    tab.set_input_files(".gallery-import-model", str(ENCODER))
    tab.wait_for_selector(".gallery-import-progress[data-status]")
    shot("01-progress")
    # and creates the graph with the axes' names the importer proposes (issue 35's rename step,
    # tests/browser/test_import_names.py)
    tab.click(".gallery-import-create", timeout=60_000)
    # then the list says how it goes, and ends with links to the graph and its weights
    tab.wait_for_selector(".gallery-import-open", timeout=60_000)
    shot("02-done")
    from geon.graphs.models import Graph

    graph = off_loop(lambda: Graph.objects.get(owner=user))
    assert graph.title == "encoder"
    statuses = tab.evaluate("window.importStatuses")
    assert (statuses[0], statuses[-1]) == ("queued", "done")
    progress = tab.locator(".gallery-import-progress")
    assert progress.inner_text() == "Imported encoder.onnx. Open encoder · weights (.npz)"
    assert tab.get_attribute(".gallery-import-open", "href") == f"/graphs/{graph.pk}/"
    weights = tab.get_attribute(".gallery-import-weights", "href")
    assert weights is not None and weights.endswith("/weights")
    assert tab.locator(".gallery-message").inner_text() == ""
    # the list shows the new graph without a reload, and its batch axis has the length she gave
    tab.wait_for_selector(f'tr[data-graph="{graph.pk}"]')
    assert tab.locator(f'tr[data-graph="{graph.pk}"] td').first.inner_text().strip() == "encoder"
    document = off_loop(lambda: graph.current_version.document)
    [batch] = [n for n in document["nodes"] if n.get("label") == "batch"]
    assert batch["body"]["length"] == 3
    # when she opens it
    tab.click(".gallery-import-open")
    tab.wait_for_function(
        "() => window.geon && window.geon.state().version === 1 && window.geon.boxes().length > 0"
    )
    tab.evaluate("window.geon.run('zoomToFit')")
    # then the toolbar, still one line, has the Export menu, opened from the keyboard
    toolbar = tab.locator(".geon-toolbar").bounding_box()
    assert toolbar is not None and toolbar["height"] < 48
    tab.focus(".geon-export > summary")
    tab.keyboard.press("Enter")
    tab.wait_for_selector(".geon-export-list a", state="visible")
    links = tab.eval_on_selector_all(
        ".geon-export-list a", "as => as.map(a => [a.textContent, a.getAttribute('href')])"
    )
    export = f"/api/v1/graphs/{graph.pk}/export?to="
    assert links == [
        ["LoomGraph JSON", f"{export}json"],
        ["ONNX", f"{export}onnx"],
        ["NumPy script", f"{export}numpy"],
        ["einsum strings", f"{export}einsum"],
        ["geon builder code", f"{export}python"],
    ]
    tab.keyboard.press("Tab")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.textContent") == "ONNX"
    shot("03-export-menu")
    # and a link downloads the file the server names
    with tab.expect_download() as download:
        tab.keyboard.press("Enter")
    assert download.value.suggested_filename == "encoder.onnx"
    # Escape closes the menu
    tab.focus(".geon-export > summary")
    tab.keyboard.press("Enter")
    tab.keyboard.press("Escape")
    assert tab.evaluate("document.querySelector('.geon-export').open") is False

    # when she writes Megatron's plan for it in the Plans panel: heads and the MLP's width (ffn)
    # over a mesh axis tp of 2, and switches the graph to it
    tab.fill(".geon-plan-name", "Megatron")
    tab.click(".geon-plan-by-mapping summary")
    tab.fill(".geon-plan-mesh", "tp=2")
    tab.fill(".geon-plan-mapping", "heads=tp, ffn=tp")
    tab.click(".geon-plan-create")
    tab.wait_for_selector(".geon-plan[data-plan='Megatron']")
    tab.click(".geon-plan[data-plan='Megatron'] .geon-plan-switch")
    # then the two row-parallel matmuls' partial sums are all-reduced over tp, and only they
    tab.wait_for_function("() => window.geon.edgeLabels().length === 2", timeout=30_000)
    labels = tab.evaluate("window.geon.edgeLabels()")
    assert all(label["text"].startswith("all-reduce over tp · ") for label in labels), labels
    ledger = tab.locator(".geon-ledger-current .geon-ledger[data-plan='Megatron']")
    assert (ledger.locator("summary").text_content() or "").startswith("Megatron: 2 collectives")
    # and, grouped by name scope with every sub-scope of the layer collapsed, the graph reads at
    # fit-to-screen beside the plan
    tab.click("text=Collapse all")
    tab.evaluate("window.geonGroups.toggle('/layer')")
    tab.wait_for_function("() => window.geonGroups.laidOutAt() !== null", timeout=15_000)
    collapsed = [g["collapsed"] for g in tab.evaluate("window.geonGroups.list()")]
    assert collapsed == [False, True, True, True, True, True]
    tab.evaluate("window.geon.run('zoomToFit')")
    tab.click(".geon-ledger-current .geon-ledger[data-plan='Megatron'] summary")
    shot("04-megatron")
    assert browsers.errors == []
