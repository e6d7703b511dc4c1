"""The About panel of the editor (issue 21, "Explanations cut off"): a gallery graph's whole
description rendered from Markdown (and in the graph list, under "Full description"), the title
edited in place by its owner (Enter saves, a refusal is shown under it, Escape puts the saved
title back), the description edited as Markdown, and a viewer who reads both and can change
neither."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.helpers import Browsers, off_loop, open_graph, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BLOCK = "Transformer block, with three shard plans"
DIALOG = "dialog.geon-about"
TITLE_REFUSED = 'title "  " is not valid; expected a non-empty string of at most 200 characters'


def stored(graph_id: str) -> tuple[str, str]:
    from geon.graphs.models import Graph

    graph = off_loop(lambda: Graph.objects.get(pk=graph_id))
    return graph.title, graph.description


def test_the_about_panel_shows_the_whole_description_and_editors_change_the_title(
    daphne_server: str,
    user: Any,
    other_user: Any,
    password: str,
    gallery: dict[str, str],
    browsers: Browsers,
) -> None:
    from geon.graphs.models import Membership

    graph_id = gallery[BLOCK]
    _, description = stored(graph_id)
    off_loop(lambda: Membership.objects.create(graph_id=graph_id, user=other_user, role="viewer"))
    tab = browsers.new_page()
    shot = screenshots(tab, "about")
    # given ann, whose list shows the first paragraph of her copy's description as Markdown
    sign_in(tab, daphne_server, "ann", password)
    listed = tab.locator(f'table.graphs tr[data-title="{BLOCK}"] .graph-about')
    assert listed.locator(".graph-about-summary strong").text_content() == "x (B, N, D)"
    assert not listed.locator(".graph-about-full").is_visible()
    # when she asks for the full description, the whole text is there
    listed.get_by_text("Full description").click()
    assert listed.locator(".graph-about-full ol > li").count() == 4
    assert not listed.locator(".graph-about-summary").is_visible()
    assert (
        listed.locator(".graph-about-full")
        .inner_text()
        .endswith("Split the axes a layer produces (heads, F), not the one it contracts first.")
    )
    shot("00-list")
    # given ann in the editor of her copy of the transformer block
    open_graph(tab, daphne_server, graph_id)
    # when she clicks the title in the header
    tab.click("header .graph-title")
    about = tab.locator(DIALOG)
    about.wait_for()
    # then the whole description is there, its Markdown as HTML: bold, a numbered list, a list
    text = about.locator(".geon-about-description")
    assert text.locator("strong").first.text_content() == "x (B, N, D)"
    assert text.locator("ol > li").count() == 4
    assert text.locator("ul > li").count() == 3
    assert text.locator("em").first.text_content() == "contract"
    assert "Split the axes a layer produces (heads, F), not the one it contracts first." in (
        text.inner_text()
    )
    assert "**" not in text.inner_text()
    shot("01-open")
    # when she empties the title and presses Enter, she is told why under it, nothing is stored
    title = about.locator("input.geon-about-title-input")
    assert title.input_value() == BLOCK
    title.fill("  ")
    title.press("Enter")
    error = about.locator(".geon-about-error").first
    error.filter(has_text="not valid").wait_for()
    assert error.text_content() == TITLE_REFUSED
    shot("02-refused")
    assert stored(graph_id) == (BLOCK, description)
    # Escape puts the saved title back (and keeps the panel open)
    title.press("Escape")
    assert title.input_value() == BLOCK
    assert error.text_content() == ""
    assert about.is_visible()
    # when she types a new title and presses Enter, the header and the page title follow
    title.fill("My transformer")
    title.press("Enter")
    tab.locator("header .graph-title", has_text="My transformer").wait_for()
    assert tab.title() == "My transformer · geon"
    assert stored(graph_id) == ("My transformer", description)
    # when she edits the description as Markdown and saves it with Ctrl+Enter
    about.get_by_role("button", name="Edit description").click()
    box = about.locator("textarea")
    assert box.input_value() == description
    box.fill("One *block*:\n\n- attention\n- MLP")
    box.press("Control+Enter")
    text.locator("em", has_text="block").wait_for()
    assert text.locator("ul > li").all_text_contents() == ["attention", "MLP"]
    assert stored(graph_id) == ("My transformer", "One *block*:\n\n- attention\n- MLP")
    shot("03-edited")
    # Escape closes the panel
    title.press("Escape")
    about.wait_for(state="hidden")

    # given bob, who views the graph
    viewer = browsers.new_page()
    sign_in(viewer, daphne_server, "bob", password)
    open_graph(viewer, daphne_server, graph_id)
    # the toolbar says he reads only, and its editing controls are off with the reason why
    # (issue 21, "role-blind editor")
    viewer.wait_for_selector(".geon-role:not([hidden])")
    assert viewer.text_content(".geon-role") == "viewer · read-only"
    reason = "you are a viewer on this graph, so edits are refused; an owner can make you an editor"
    for control in (".geon-act-newTensor", ".geon-act-palette", ".geon-act-undo"):
        assert viewer.is_disabled(control), control
        assert viewer.get_attribute(control, "title") == reason, control
    assert tab.locator(".geon-role").is_hidden()  # ann edits: no badge, controls on
    assert tab.is_enabled(".geon-act-newTensor")
    # when he opens About from its button
    viewer.click("header .graph-about-open")
    seen = viewer.locator(DIALOG)
    seen.wait_for()
    # then he reads the title and the description, and has nothing to change them with
    assert seen.locator("h2.geon-about-title").text_content() == "My transformer"
    assert seen.locator(".geon-about-description em").text_content() == "block"
    assert seen.locator("input, textarea").count() == 0
    assert seen.get_by_role("button", name="Edit description").count() == 0
    assert seen.locator(".geon-about-readonly").text_content() == (
        "Only the graph's editors can change its title, description and settings."
    )
    screenshots(viewer, "about")("04-viewer")
    # the one refusal (the blank title), as the page saw it and as its console said it
    assert browsers.errors == [
        f"page 1: 422 {daphne_server}/api/v1/graphs/{graph_id}",
        "page 1: Failed to load resource: the server responded with a status of 422 "
        "(Unknown Status)",
    ]
