"""The accidental-broadcast warning's one-click fix in the editor (issue 19 item 2): the seed's
``[C1, N] + [C2, N]`` pitfall shows an ``AccidentalBroadcast`` row with a fix button; the button
inserts a ``cast_axes`` as one server-checked edit, the warning goes, one undo brings it back;
the graph's "strict broadcasting" setting (About) makes the same issue an error."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import off_loop, open_graph, screenshots, sign_in
from tests.web.test_strict_broadcasting import pitfall

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ACCIDENTAL = "[data-constraint='AccidentalBroadcast']"


def titles(tab: Page) -> list[str]:
    return sorted(b["title"] for b in tab.evaluate("window.geon.boxes()"))


def test_the_fix_inserts_cast_axes_and_one_undo_takes_it_back(
    daphne_server: str, user: Any, password: str, page: tuple[Page, list[str]]
) -> None:
    from geon.graphs.services import do_create_graph

    graph = off_loop(lambda: do_create_graph(owner=user, title="pitfall", document=pitfall()))
    tab, errors = page
    shot = screenshots(tab, "broadcast-fix")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, str(graph.pk))
    # given the pitfall: the Issues panel warns, names both axes and offers the fix
    row = tab.wait_for_selector(f"{ACCIDENTAL}.warning")
    assert "C1" in row.inner_text() and "C2" in row.inner_text()
    before = titles(tab)
    assert "op:cast_axes" not in before
    shot("01-warning")
    # when ann clicks the fix
    tab.click(f"{ACCIDENTAL} .geon-issue-fix")
    # then the server accepted one edit that inserted a cast_axes, and the warning is gone
    tab.wait_for_function("() => window.geon.state().version === 2")
    tab.wait_for_selector(ACCIDENTAL, state="detached")
    # (boxes are drawn once the layout has placed them)
    tab.wait_for_function(
        "(n) => window.geon.boxes().length === n", arg=len(before) + 2, timeout=15_000
    )
    after = titles(tab)
    assert "op:cast_axes" in after and len(after) == len(before) + 2  # the cast and its output
    shot("02-fixed")
    # and one undo takes the whole fix back
    tab.evaluate("window.geon.run('undo')")
    tab.wait_for_function("() => window.geon.state().version === 3")
    tab.wait_for_selector(f"{ACCIDENTAL}.warning")
    tab.wait_for_function("(n) => window.geon.boxes().length === n", arg=len(before))
    assert titles(tab) == before

    # when ann makes the graph strict about broadcasting (About, one checkbox)
    tab.click(".graph-about-open")
    tab.check(".geon-about-strict")
    # then the same issue is an error, on her editor at once, and the setting holds on reload
    tab.wait_for_selector(f"{ACCIDENTAL}.error")
    tab.keyboard.press("Escape")
    shot("03-strict")
    tab.reload()
    tab.wait_for_selector(f"{ACCIDENTAL}.error")
    tab.click(".graph-about-open")
    assert tab.is_checked(".geon-about-strict")
    assert errors == []
