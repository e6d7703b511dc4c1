"""Training steps in the editor (issue 32): the Train menu makes the training step of the graph
and opens it; on a step, "Show the forward pass only" collapses the backward pass and the
update, and the whole step comes back; variables read "variable" on their boxes."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.examples.training import TITLE as STEP_TITLE
from tests.browser.helpers import off_loop, open_graph, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


#: Both step groups drawn, collapsed (or not).
STEP_GROUPS_ARE = """() => {
  const shown = window.geonGroups.list()
    .filter((g) => ['/backward', '/optimizer'].includes(g.path));
  return shown.length === 2 && shown.every((g) => g.collapsed === COLLAPSED);
}"""


def _collapsed(tab: Page) -> dict[str, bool]:
    groups = tab.evaluate("window.geonGroups.list()")
    return {g["path"]: g["collapsed"] for g in groups if g["path"] in ("/backward", "/optimizer")}


def test_the_train_menu_switches_a_step_between_forward_only_and_whole(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "training-step")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery[STEP_TITLE])
    tab.wait_for_function("() => window.geonGroups.list().some((g) => g.path === '/backward')")
    # when ann opens the Train menu on the gallery's training step
    tab.click(".geon-train > summary")
    view = tab.locator(".geon-train-view")
    view.wait_for(state="visible")
    shot("01-menu")
    if view.get_attribute("data-forward-only") == "1":  # remembered from an earlier visit
        view.click()
    assert view.text_content() == "Show the forward pass only"
    # then the forward-only view collapses the backward pass and the update
    view.click()
    tab.wait_for_function(STEP_GROUPS_ARE.replace("COLLAPSED", "true"))
    assert _collapsed(tab) == {"/backward": True, "/optimizer": True}
    assert view.text_content() == "Show the whole step"
    tab.evaluate("window.geon.run('zoomToFit')")
    shot("02-forward-only")
    # and the whole step comes back
    view.click()
    tab.wait_for_function(STEP_GROUPS_ARE.replace("COLLAPSED", "false"))
    assert errors == []


def _regression(owner: Any) -> str:
    from geon import core as gc
    from geon.graphs.services import do_create_graph

    B, D, E = gc.Axis("B", 4), gc.Axis("D", 3), gc.Axis("E", 2)
    w = gc.variable([D - 1, E], name="w", init="normal")
    x, t = gc.placeholder([B, D], name="x"), gc.placeholder([E, B], name="t")
    loss = gc.mean(gc.square(gc.dot(x, w, name="y") - t), name="loss")
    graph = do_create_graph(owner=owner, title="Regression", document=gc.graph([loss]).to_json())
    return str(graph.pk)


def test_the_train_menu_makes_the_step_of_a_graph_and_opens_it(
    daphne_server: str, user: Any, password: str, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    shot = screenshots(tab, "training-step")
    graph_id = off_loop(lambda: _regression(user))
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{graph_id}/")
    tab.wait_for_selector(".geon-train > summary")
    tab.click(".geon-train > summary")
    # a bad learning rate is refused in the menu, naming it
    tab.fill(".geon-train-lr", "fast")
    tab.click(".geon-train-make")
    said = tab.locator(".geon-train-said")
    assert said.text_content() == 'learning rate "fast" is invalid; expected a number in (0, 1e6]'
    # a loss that is not a scalar: the server says why, nothing is made, the page stays
    tab.fill(".geon-train-lr", "0.01")
    tab.fill(".geon-train-loss", "y")
    tab.click(".geon-train-make")
    tab.wait_for_function(
        "() => document.querySelector('.geon-train-said').textContent.startsWith('the loss')"
    )
    assert (said.text_content() or "").startswith('the loss "y" has axes (E, B); expected a scalar')
    shot("03-refused")
    assert tab.url.endswith(f"/graphs/{graph_id}/")
    # when ann asks for the Adam step of the loss
    tab.fill(".geon-train-loss", "loss")
    tab.click(".geon-train-make")
    # then the new graph opens, holding the step
    tab.wait_for_url(lambda url: "/graphs/" in url and graph_id not in url)
    tab.wait_for_function("() => window.geon && window.geon.boxes().length > 0", timeout=20_000)
    from geon.graphs.models import Graph

    def stored() -> tuple[str, Any, set[Any]]:
        made = Graph.objects.select_related("current_version", "owner").get(
            pk=tab.url.rstrip("/").rsplit("/", 1)[1]
        )
        assert made.current_version is not None
        nodes = made.current_version.document["nodes"]
        return made.title, made.owner, {n.get("label") for n in nodes}

    title, owner, labels = off_loop(stored)
    assert (title, owner) == ("Regression (training step)", user)
    assert {"w.next", "w.m.next", "w.v.next", "loss"} <= labels
    shot("04-step")
    assert [e for e in errors if "422" not in e] == []
