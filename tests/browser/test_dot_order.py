"""A dot's result order in the inspector (issue 21): ``x[N, D] · w1[D-1, Hd]`` gives ``(Hd, N)``
by the DESIGN rule; the inspector says why and offers every order, and choosing ``(N, Hd)``
sets ``params.axes`` as one edit that the server checks and keeps."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon import core as gc
from geon.graphs.services import do_create_graph
from tests.browser.helpers import ARTIFACTS, open_graph, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def layer(user: Any) -> Any:
    N, D, Hd = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("Hd", 5)
    x = gc.placeholder(axes=[N, D], name="x")
    w1 = gc.placeholder(axes=[D - 1, Hd], name="w1")
    document = gc.graph([gc.dot(x, w1, name="h")]).to_json()
    return do_create_graph(owner=user, title="One layer", document=document)


def test_the_inspector_offers_a_dots_result_order(
    daphne_server: str, user: Any, password: str, layer: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, str(layer.pk))
    tab.evaluate("window.geon.select([window.geon.nodeId('op:dot')])")
    order = tab.locator(".geon-inspector .geon-result-order")
    assert order.input_value() == "Hd,N"
    assert order.locator("option").all_text_contents() == ["(Hd, N) default", "(N, Hd)"]
    assert "operand holding the dual (lower) levels" in (
        tab.text_content(".geon-inspector .geon-order-why") or ""
    )
    order.select_option("N,Hd")
    tab.wait_for_function(
        "() => { const s = window.geon.state(); return s.inFlight === 0 && s.version === 2; }"
    )
    assert tab.evaluate("window.geon.axesOf('h')") == ["N", "Hd"]
    assert tab.evaluate("window.geon.state().issues") == []
    tab.screenshot(path=str(ARTIFACTS / "dot-order.png"))
    # back to the rule's order: params.axes is dropped again
    tab.locator(".geon-inspector .geon-result-order").select_option("Hd,N")
    tab.wait_for_function("() => window.geon.state().version === 3")
    assert tab.evaluate("window.geon.axesOf('h')") == ["Hd", "N"]
    assert errors == []
