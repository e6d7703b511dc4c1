"""Inspecting a run's intermediates in the editor (issue 21, "Runs"), in headless Chromium
against a live Daphne and a real Celery worker: with "keep intermediates" ticked, the run panel
shows every tensor's heat map with its colour bar, not only the output's."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon import core as gc
from geon.graphs.services import do_create_graph
from tests.browser.helpers import ARTIFACTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def mlp(user: Any) -> Any:
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
    x = gc.placeholder(axes=[N, D], name="x")
    w = gc.placeholder(axes=[D - 1, F], name="w")
    y = gc.relu(gc.dot(x, w, name="h"), name="y")
    return do_create_graph(owner=user, title="One layer", document=gc.graph([y]).to_json())


# Kept for the PostgreSQL + Redis pass: a worker's stored intermediates read back in the editor.
@pytest.mark.story_on_services
def test_a_run_keeping_intermediates_shows_every_tensor(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    password: str,
    mlp: Any,
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{mlp.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.state().version !== null")
    tab.check(".geon-run-intermediates")
    tab.click(".geon-run-go")
    tab.wait_for_selector(".geon-run-panel[data-status=done]", timeout=60_000)
    tab.wait_for_function("() => document.querySelectorAll('.geon-result').length === 4")
    keys = tab.eval_on_selector_all(".geon-result", "(fs) => fs.map((f) => f.dataset.key)")
    assert sorted(keys) == ["h", "w", "x", "y"]
    assert tab.locator(".geon-result .geon-colorbar").count() == 4
    tab.locator(".geon-run-panel").screenshot(path=str(ARTIFACTS / "run-intermediates.png"))
    assert errors == []
