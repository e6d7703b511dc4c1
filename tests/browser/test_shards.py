"""Sharding in the browser, as a new user would: open the dot example, split the dot along ``H``
into 2, see both applications and full coverage, remove one and see the gap drawn (and the
server's coverage issue), undo to fix it; and the conv2d example's halos."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import click_box, open_graph, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def output_coverage(tab: Page) -> list[str]:
    """The captions of the output coverage maps."""
    return tab.locator(".output .geon-coverage-text").all_text_contents()


def test_shard_the_dot_break_coverage_fix_it_and_download_the_diagram(
    celery_worker: Any,
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "shards")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery["Dual-axis dot in 2-D"])
    version = tab.evaluate("window.geon.state().version")

    # when ann selects the first dot and splits it along H into 2 parts
    click_box(tab, "op:dot")
    tab.select_option(".geon-shard-axis", "H")
    tab.select_option(".geon-shard-mode", "parts")
    tab.fill(".geon-shard-amount", "2")
    tab.click(".geon-shard-apply")
    tab.wait_for_function("(v) => window.geon.state().version === v + 1", arg=version)

    # then both applications are listed with their ranges (once the panel has drawn the new
    # version) and the output is covered exactly
    tab.wait_for_function("() => document.querySelectorAll('.geon-app').length === 2")
    assert tab.locator(".geon-app-index").all_text_contents() == [
        "H, N [0:1, 0:4]",
        "H, N [1:2, 0:4]",
    ]
    assert output_coverage(tab) == ["x·y: covered exactly"]
    assert tab.locator(".geon-coverage-issue").count() == 0
    shot("01-split")

    # when she removes the first application
    tab.locator(".geon-app-remove").first.click()
    tab.wait_for_function("(v) => window.geon.state().version === v + 2", arg=version)

    # then the rows nobody writes are drawn as a gap, and the server reports the coverage issue
    tab.wait_for_function("() => document.querySelectorAll('.geon-app').length === 1")
    assert output_coverage(tab) == ["x·y: gap [0:1, 0:4]"]
    tab.wait_for_selector(".geon-coverage-issue")
    issues = tab.evaluate("window.geon.state().issues.map((i) => i.constraint)")
    assert sorted(issues) == [
        "ApplicationOutputRangeCoverageIsExact",
        "OperationApplicationAgreement",
    ]
    shot("02-gap")

    # when she undoes the removal, the coverage is exact again and the issue goes
    tab.keyboard.press("Control+z")
    tab.wait_for_function("(v) => window.geon.state().version === v + 3", arg=version)
    tab.wait_for_function("() => document.querySelectorAll('.geon-app').length === 2")
    assert output_coverage(tab) == ["x·y: covered exactly"]
    assert tab.evaluate("window.geon.state().issues") == []
    shot("03-fixed")

    # when she runs it sharded with random inputs from seed 0
    tab.select_option(".geon-run-mode", "sharded")
    tab.fill(".geon-run-seed", "0")
    tab.click(".geon-run-go")

    # then the run finishes and each output shows its heat map, with no sharded difference
    tab.wait_for_selector(".geon-run-panel[data-status=done]", timeout=60_000)
    # a function, not an expression: Playwright polls an expression with eval, which the page's
    # Content-Security-Policy refuses
    tab.wait_for_function("() => document.querySelectorAll('.geon-result canvas').length === 2")
    diffs = tab.eval_on_selector_all(
        ".geon-result", "(fs) => fs.map((f) => [f.dataset.key, f.dataset.diff])"
    )
    run = tab.evaluate(
        "fetch(`/api/v1/graphs/${document.getElementById('geon-editor').dataset.graphId}/runs`)"
        ".then((r) => r.json()).then((b) => b.runs[0])"
    )
    assert (run["status"], run["sharded"]) == ("done", True)
    # the difference shown is the server's, per output: zero up to float64 rounding of the sums
    assert dict(diffs) == {k: str(v) for k, v in run["max_abs_diff"].items()}
    assert sorted(dict(diffs)) == ["x·y", "y·x"]
    assert all(abs(v) < 1e-12 for v in run["max_abs_diff"].values())
    assert tab.locator(".geon-run-download").get_attribute("href") is not None
    # each map has its colour bar, and the pointer reads a cell by axis name
    assert tab.locator(".geon-result .geon-colorbar").count() == 2
    tab.locator(".geon-result canvas").first.hover(position={"x": 2, "y": 2})
    said = tab.locator(".geon-result .geon-heat-value").first.text_content() or ""
    assert said.startswith("H=0, N=0: ")
    shot("04-run")

    # when she opens the diagram tab, the worker's SVG of the current version is shown
    tab.click(".geon-diagram-tab")
    tab.wait_for_function(
        "(v) => document.querySelector('.geon-diagram').dataset.version === String(v + 3)",
        arg=version,
        timeout=60_000,
    )
    size = tab.evaluate(
        "(() => { const i = document.querySelector('.geon-diagram-img');"
        " return [i.naturalWidth > 0, i.naturalHeight > 0]; })()"
    )
    assert size == [True, True]
    shot("05-diagram")

    # and downloading the SVG saves the drawing of that version
    with tab.expect_download() as download:
        tab.click(".geon-diagram-svg")
    saved = download.value
    assert saved.suggested_filename == f"diagram-v{version + 3}.svg"
    path = saved.path()
    assert path is not None
    text = Path(path).read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") or text.lstrip().startswith("<svg")
    assert "<svg" in text
    assert errors == []


def test_conv2d_sharded_over_height_shows_its_halo(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery["conv2d sharded over height, with halos"])

    # when ann selects the convolution, already cut into two applications over P
    click_box(tab, "op:conv2d")

    # then the output is covered exactly and the two input windows overlap: the halo
    apps = tab.locator(".geon-app-index").all_text_contents()
    assert apps == ["K, P, Q, N [0:4, 0:4, 0:8, 0:2]", "K, P, Q, N [0:4, 4:8, 0:8, 0:2]"]
    assert tab.locator(".geon-coverage-text").all_text_contents() == [
        "features: covered exactly",
        "images: halo \u00d72 [0:2, 3:5, 0:8, 0:2]",
        "filter: read whole by every application",
    ]
    assert tab.locator(".geon-coverage.halo").count() == 1
    screenshots(tab, "shards")("conv-halo")
    assert errors == []
