"""Import to compare (issue 35's "Done when"), one person in one browser session against a live
Daphne and a real Celery worker: ann imports the committed encoder layer, reads the axis names the
importer inferred and keeps them; writes a bad plan (``hidden`` over tp) in the Plans panel and
reads in the Issues panel why it is bad, by name; clicks a collective in its ledger and the canvas
pans to that edge and highlights it; and compares the current document against a good plan
(``heads`` and ``ffn`` over tp), devices and memory side by side. The parts are each tested on
their own (test_import_names, test_plans_explain, test_canvas_marks, test_review_story); this is
them in the order a person meets them. Screenshots in
tests/browser/artifacts/import-to-compare-*.png; the wide comparison is also
docs/screenshot-import-to-compare.png.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.browser.helpers import (
    UUID,
    Browsers,
    compare_rows,
    highlighted_edge,
    painted,
    screenshots,
    sign_in,
    texts,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parent.parent.parent
ENCODER = ROOT / "tests" / "interop" / "models" / "encoder.onnx"
BAD, GOOD = "hidden over tp", "heads and ffn over tp"
ID_PREFIX = re.compile(r"→ [0-9a-f]{8}\b")
BYTES = re.compile(r"^[\d.]+ (B|KiB|MiB)$")


def write_plan(tab: Any, name: str, mesh: str, mapping: str) -> None:
    """Create a plan with "New plan by axis mapping…", as a person types it."""
    tab.fill(".geon-plan-name", name)
    if not tab.evaluate("document.querySelector('.geon-plan-by-mapping').open"):
        tab.click(".geon-plan-by-mapping > summary")
    tab.fill(".geon-plan-mesh", mesh)
    tab.fill(".geon-plan-mapping", mapping)
    tab.click(".geon-plan-create")
    tab.wait_for_selector(f".geon-plan[data-plan='{name}'] .geon-plan-switch")


def test_import_an_encoder_plan_it_badly_find_a_collective_and_compare(
    daphne_server: str, celery_worker: Any, user: Any, password: str, browsers: Browsers
) -> None:
    tab = browsers.new_page()
    tab.set_viewport_size({"width": 1400, "height": 900})
    shot = screenshots(tab, "import-to-compare")
    sign_in(tab, daphne_server, "ann", password)

    # 1. ann imports the encoder layer with "Import model…", its batch of length 3
    tab.fill(".gallery-import-dims", "batch=3")
    tab.set_input_files(".gallery-import-model", str(ENCODER))
    # the page lists its axes with the names the importer read off the model
    tab.wait_for_selector(".gallery-import-review", timeout=60_000)
    rows = tab.eval_on_selector_all(
        ".gallery-import-axes tbody tr",
        "rows => rows.map(r => [r.dataset.axis, r.children[2].textContent,"
        " r.querySelector('input').value])",
    )
    assert rows == [
        ["batch", "batch", "batch"],
        ["d10", "sequence", "sequence"],
        ["d10_2", "sequence", "sequence_q"],
        ["d4", "heads", "heads"],
        ["d8", "head size", "head_size"],
        ["d32", "hidden", "hidden"],
        ["d64", "ffn", "ffn"],
        ["d3", "—", "d3"],
    ]
    shot("01-inferred-names")
    # she keeps them, creates the graph and opens it
    tab.click(".gallery-import-create")
    tab.wait_for_selector(".gallery-import-open", timeout=60_000)
    tab.click(".gallery-import-open")
    tab.wait_for_function(
        "() => window.geon && window.geon.state().version === 1 && window.geon.boxes().length > 0"
    )
    # the axes list shows the inferred names and hides the length-1 axes behind a count
    listed = ".geon-axes .geon-axis .geon-axis-label"
    tab.wait_for_selector(listed)
    assert sorted(texts(tab, listed)) == [
        "batch", "d3", "ffn", "head_size", "heads", "hidden", "sequence", "sequence_q",
    ]  # fmt: skip
    assert tab.locator(".geon-axis-ones").inner_text() == "3 length-1 axes hidden Show"
    assert tab.locator(".geon-issue.info").count() == 0
    shot("02-axes")

    # 2. she writes a bad plan in the Plans panel, hidden over tp
    write_plan(tab, BAD, "tp=2", "hidden=tp")
    # Compare offers the document placed by no plan beside it, costed whole on one device with
    # its memory (never 0 B), and never better for a device it does not use
    picked = "(s) => document.querySelector(s).selectedOptions[0].text"
    assert [tab.evaluate(picked, s) for s in (".geon-compare-a", ".geon-compare-b")] == [
        "current document",
        BAD,
    ]
    tab.click(".geon-compare-go")
    tab.wait_for_selector(".geon-compare-table")
    unplaced = compare_rows(tab)
    assert unplaced["devices used"] == ["1", "2"]
    assert BYTES.match(unplaced["peak memory per device"][0]), unplaced
    assert unplaced["peak memory per device"][0] != "0 B"
    assert unplaced["device (0)"][0] == unplaced["device (1)"][0] == "unused"
    assert tab.locator(".geon-compare-row[data-label^='device ('] .plan-a.better").count() == 0
    # and she switches to the bad plan
    tab.locator(f".geon-plan[data-plan='{BAD}'] .geon-plan-switch").click()
    tab.wait_for_selector(f".geon-plan[data-plan='{BAD}'] .geon-plan-current")
    # the Issues panel says which layer norms run whole, why, and what that forces, by name
    tab.wait_for_function(
        "() => [...document.querySelectorAll('.geon-issue.info')]"
        ".some((i) => i.textContent.includes('forces'))",
        timeout=30_000,
    )
    notes = texts(tab, ".geon-issue.info .geon-issue-message")
    assert [n.split(" runs whole: ")[0] for n in notes] == [
        f'plan "{BAD}": op:layer_norm → /layer/norm1/LayerNormalization_output_0 in layer/norm1',
        f'plan "{BAD}": op:layer_norm → y in layer/norm2',
    ]
    for note in notes:
        assert 'it contracts or reduces "hidden" (mesh axis "tp")' in note, note
        assert re.search(r"; forces \d+ all-gathers? of [\d.]+ (B|KiB|MiB) before it$", note), note
        assert not UUID.search(note), note
    why = tab.locator(f".geon-plan[data-plan='{BAD}'] .geon-plan-why summary")
    assert why.text_content() == "2 operations run whole"
    # and Compare still offers the current document beside the plan, not the plan with itself
    assert [tab.evaluate(picked, s) for s in (".geon-compare-a", ".geon-compare-b")] == [
        "current document",
        BAD,
    ]
    tab.locator(".geon-issue.info").first.scroll_into_view_if_needed()
    shot("03-why-the-plan-is-bad")

    # 3. she opens the plan's ledger, the view far from its edges, and clicks an all-gather the
    # layer norm forces
    ledger = tab.locator(f".geon-ledger-current .geon-ledger[data-plan='{BAD}']")
    ledger.locator("summary").click()
    tab.evaluate("window.geon.setViewport({ scale: 0.3, dx: -5000, dy: -5000 })")
    painted(tab)
    assert tab.evaluate("window.geonMarks.highlight()") is None
    row = ledger.locator(".geon-collective", has_text="/layer/Add_output_0: op:add → op:layer_norm")
    assert row.locator(".geon-collective-what").text_content() == "all-gather over tp"
    row.click()
    painted(tab)
    # the canvas pans to that edge, in the middle, zoomed in to read, highlighted and selected
    shown = highlighted_edge(tab)
    boxes = {b["id"]: b["title"] for b in tab.evaluate("window.geon.boxes()")}
    assert (boxes[shown["from"]], boxes[shown["to"]]) == ("/layer/Add_output_0", "op:layer_norm")
    shot("04-ledger-row-to-its-edge")

    # 4. she writes the plan she should have (heads and ffn over tp) and compares the current
    # document, still on the bad plan, against it
    write_plan(tab, GOOD, "tp=2", "heads=tp, ffn=tp")
    tab.select_option(".geon-compare-a", label="current document")
    tab.select_option(".geon-compare-b", label=GOOD)
    tab.click(".geon-compare-go")
    # (the table of the unplaced document is there already: wait for this one's)
    tab.wait_for_selector(f".geon-compare-table thead th.plan-b:text-is('{GOOD}')")
    heads = tab.locator(".geon-compare-table thead th").all_text_contents()
    assert heads[1:] == ["current document", GOOD]
    table = compare_rows(tab)
    # both on two devices, each with its memory (never 0 B), the good plan's lower
    assert table["devices used"] == ["2", "2"]
    for label in ("peak memory per device", "device (0)", "device (1)"):
        assert all(BYTES.match(v) and v != "0 B" for v in table[label]), (label, table[label])
    better = tab.locator(".geon-compare-row[data-label='peak memory per device'] .better")
    assert better.get_attribute("class") == "plan-b better"
    assert table["collectives"][1] == "all-reduce \N{MULTIPLICATION SIGN}2"
    assert "all-gather" in table["collectives"][0]
    # every operation row is named by its kernel and output, never an id
    operations = texts(tab, ".geon-compare-row.operation th")
    assert operations and not any(UUID.search(o) or ID_PREFIX.search(o) for o in operations)
    # the good plan's rows say it splits the heads and ffn operations over tp (read from what it
    # places: a plan made by axis mapping names no operation), the document's hidden over tp
    splits = [table[o] for o in operations]
    assert any("heads over tp (2)" in b for _, b in splits), splits
    assert any("ffn over tp (2)" in b for _, b in splits), splits
    assert any("hidden over tp (2)" in a for a, _ in splits), splits
    # and the diff names the two sides
    tab.wait_for_selector(".geon-plan-diff summary")
    diff = tab.text_content(".geon-plan-diff summary") or ""
    assert diff.startswith(f'From "current document" to "{GOOD}": '), diff
    # wide, as a decision table
    tab.click(".geon-compare-widen")
    tab.wait_for_selector(".geon-compare.geon-compare-wide")
    painted(tab)
    wide = shot("05-compare-wide")
    shutil.copyfile(wide, ROOT / "docs" / "screenshot-import-to-compare.png")
    assert browsers.errors == []
