"""Every gallery example opens in the editor in headless Chromium: drawn whole, checked clean by
the server, and without a console error."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import painted, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def examples(user: Any) -> list[tuple[str, str, int]]:
    """ann's copies of the gallery: (graph id, title, tensors and operations drawn)."""
    from geon.core.graph import OPERATION, TENSOR
    from geon.graphs.services import do_load_gallery

    loaded = []
    for graph, _created in do_load_gallery(user):
        version = graph.current_version
        assert version is not None
        nodes = version.document["nodes"]
        drawn = sum(1 for n in nodes if n["type"] in (TENSOR, OPERATION))
        loaded.append((str(graph.pk), graph.title, drawn))
    return loaded


def test_every_gallery_example_opens_drawn_and_clean(
    daphne_server: str,
    user: Any,
    password: str,
    examples: list[tuple[str, str, int]],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    seen = []
    for graph_id, title, drawn in examples:
        # when ann opens the example
        tab.goto(f"{daphne_server}/graphs/{graph_id}/")
        tab.wait_for_function("() => window.geon && window.geon.state().version === 1")
        # a large one (the training step) opens with its groups collapsed: expand them all
        tab.evaluate("window.geon.run('expandAll')")
        tab.wait_for_function("(n) => window.geon.boxes().length === n", arg=drawn)
        # then every tensor and operation is drawn and the server reports no issue
        state = tab.evaluate("window.geon.state()")
        seen.append((title, len(state["issues"])))
        if title == "A small MLP":
            tab.evaluate("window.geon.run('zoomToFit')")
            painted(tab)
            screenshots(tab, "example")("mlp")
    assert seen == [(title, 0) for _id, title, _n in examples]
    assert errors == []
