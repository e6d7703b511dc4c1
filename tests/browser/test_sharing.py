"""Sharing in the browser (issue 17): the owner invites an email address from the Share dialog;
the invited person follows the link from the mail (read from the server's mail folder: this
module's server uses Django's file-based email backend), signs up, lands on the graph as a
reviewer and sees the owner's edits live; demoted to viewer from the dialog, their editor turns
read-only without reloading. A link visitor sees the graph read-only; a revoked link shows a
clear page."""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from geon.cli.serve import daphne_command
from tests.browser.helpers import Browsers, off_loop, screenshots, sign_in
from tests.processes import Child, free_port, start_child, stop_process

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MAIL = Path(os.environ["GEON_DATA_DIR"]) / "sharing-mail"
"""Where the module's Daphne writes its mail (in the suite's data folder, set by conftest)."""


@pytest.fixture(scope="module")
def mail_server(subprocess_env: dict[str, str]) -> Iterator[str]:
    """A Daphne of this module's own that writes mail to files and signs up by invitation."""
    MAIL.mkdir(exist_ok=True)
    env = {
        **subprocess_env,
        "GEON_EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "GEON_EMAIL_FILE_PATH": str(MAIL),
        "GEON_SIGNUP": "invite",
    }
    port = free_port()

    def listening(child: Child) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    child = start_child("daphne-sharing", daphne_command("127.0.0.1", port), env, listening)
    yield f"http://127.0.0.1:{port}"
    stop_process(child.process)


def mailed_link(to: str) -> str:
    """The invitation link in the one mail sent to ``to`` (waiting for it to be written)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for path in sorted(Path(MAIL).glob("*.log")):
            text = path.read_text()
            if f"To: {to}" in text:
                found = re.search(r"(http://\S+/invite/\S+/)", text)
                assert found is not None, text
                return found.group(1)
        time.sleep(0.1)
    raise AssertionError(f"no mail to {to} in {MAIL}")


def open_editor(tab: Page) -> None:
    tab.wait_for_function("() => window.geon && window.geon.state().connection === 'open'")


def test_invite_sign_up_live_edits_demotion_and_links(
    mail_server: str, user: Any, password: str, graph: Any, browsers: Browsers
) -> None:
    base = mail_server
    owner = browsers.new_page()
    sign_in(owner, base, "ann", password)
    owner.goto(f"{base}/graphs/{graph.pk}/")
    open_editor(owner)
    shot = screenshots(owner, "sharing")
    # the owner invites eve@example.org as reviewer from the Share dialog
    owner.click(".geon-share-button")
    owner.wait_for_selector(".geon-share[open] .geon-share-people tr")
    owner.fill(".geon-share input[name=who]", "eve@example.org")
    owner.select_option(".geon-share-invite select", "reviewer")
    owner.click(".geon-share-invite button[type=submit]")
    owner.locator(".geon-share-note").filter(has_text="invitation was sent").wait_for()
    owner.locator(".geon-share-pending li").filter(has_text="eve@example.org").wait_for()
    shot("01-dialog")

    # eve follows the mailed link, signs up and lands on the graph as a reviewer
    eve = browsers.new_page()
    eve.goto(mailed_link("eve@example.org"))
    assert "/accounts/signup/" in eve.url
    eve.fill("input[name=email]", "eve@example.org")
    eve.fill("input[name=username]", "eve")
    eve.fill("input[name=password1]", "tensor-axes-42")
    eve.fill("input[name=password2]", "tensor-axes-42")
    screenshots(eve, "sharing")("02-signup")
    eve.click("form button[type=submit]")
    # then she sees the invitation, and accepting it is the page's form (a POST), not the link
    eve.wait_for_selector(".geon-invitation-accept button[type=submit]:not([disabled])")
    assert "invited eve@example.org" in (eve.text_content(".geon-invitation") or "")
    eve.click(".geon-invitation-accept button[type=submit]")
    eve.wait_for_url(f"{base}/graphs/{graph.pk}/")
    open_editor(eve)
    eve.wait_for_function("() => window.geon.state().role === 'reviewer'")

    # eve sees the owner's edit live
    owner.click(".geon-share-done")
    owner.fill(".geon-axes .geon-axis-name", "K")
    owner.fill(".geon-axes .geon-axis-length", "5")
    owner.press(".geon-axes .geon-axis-length", "Enter")
    eve.locator('.geon-axis[data-axis="K"]').wait_for()

    # the owner demotes eve to viewer: her role changes without reloading
    owner.click(".geon-share-button")
    owner.wait_for_selector(".geon-share tr[data-user=eve] select")
    owner.select_option(".geon-share tr[data-user=eve] select", "viewer")
    eve.wait_for_function("() => window.geon.state().role === 'viewer'")
    # and her editor is read-only: the role shown, editing controls disabled, an edit refused
    eve.wait_for_function("() => document.querySelector('.geon-role').textContent !== ''")
    assert eve.text_content(".geon-role") == "viewer · read-only"
    assert eve.locator("button[data-action=newTensor]").is_disabled()
    assert eve.locator(".geon-axes .geon-axis-add").is_disabled()
    refused = eve.evaluate(
        "() => window.geon.edit('rename', [{op: 'update_node',"
        " id: window.geon.state().document.nodes[0].id, label: 'renamed'}])"
    )
    assert refused is not None and "you are a viewer" in refused, refused
    assert eve.locator(".geon-share-button").count() == 0  # people are managed by owners
    screenshots(eve, "sharing")("03-viewer")

    # the owner turns on the view-only link; a stranger opens it read-only
    owner.check(".geon-share-link-toggle")
    owner.wait_for_function(
        "() => document.querySelector('.geon-share-link-url').value.includes('/s/')"
    )
    link = owner.input_value(".geon-share-link-url")
    visitor = browsers.new_page()
    visitor.goto(link)
    open_editor(visitor)
    visitor.wait_for_function("() => window.geon.state().role === 'viewer'")
    visitor.wait_for_function("() => window.geon.boxes().length > 0")  # the graph is drawn
    assert visitor.locator(".geon-link-note").count() == 1
    assert "eve" not in (visitor.locator(".geon-present").text_content() or "")
    refused = visitor.evaluate(
        "() => window.geon.edit('rename', [{op: 'update_node',"
        " id: window.geon.state().document.nodes[0].id, label: 'renamed'}])"
    )
    assert refused is not None and "viewer" in refused, refused
    screenshots(visitor, "sharing")("04-link")

    # the owner turns the link off: the link shows a clear page
    owner.uncheck(".geon-share-link-toggle")
    owner.locator(".geon-share-note").filter(has_text="turned off").wait_for()
    closed = browsers.new_page()
    answer = closed.goto(link)
    assert answer is not None and answer.status == 410
    assert closed.locator("h1").text_content() == "This link was turned off"
    screenshots(closed, "sharing")("05-revoked")


@pytest.fixture
def team_and_member(user: Any, other_user: Any, graph: Any) -> None:
    """ann's team "kernels", and bob an editor of her graph."""
    from geon.accounts.models import Team, TeamMembership
    from geon.graphs.models import Membership

    team = Team.objects.create(name="kernels")
    TeamMembership.objects.create(team=team, user=user, role="owner")
    Membership.objects.create(graph=graph, user=other_user, role="editor")


def test_the_owner_gives_the_graph_to_a_team_and_hands_it_over(
    daphne_server: str, user: Any, password: str, graph: Any, team_and_member: None, page: Any
) -> None:
    tab, errors = page

    def saved() -> tuple[str, str | None]:
        graph.refresh_from_db()
        return graph.owner.username, graph.team.name if graph.team else None

    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{graph.pk}/")
    open_editor(tab)
    tab.click(".geon-share-button")
    tab.wait_for_selector(".geon-share tr[data-user=bob] .geon-share-owner")
    # the graph goes to her team, chosen in the dialog
    assert tab.locator(".geon-share-team option").all_text_contents() == ["no team", "kernels"]
    tab.select_option(".geon-share-team", "kernels")
    tab.locator(".geon-share-note").filter(has_text="team kernels").wait_for()
    assert off_loop(saved) == ("ann", "kernels")
    # (and back to none: as the team's owner she would keep owning the graph through it)
    tab.select_option(".geon-share-team", "")
    tab.locator(".geon-share-note").filter(has_text="no team").wait_for()
    # she hands it over to bob (confirming): she is an editor now, and Share is his; her
    # dialog closes and her Share button goes without reloading
    tab.once("dialog", lambda dialog: dialog.accept())
    tab.click(".geon-share tr[data-user=bob] .geon-share-owner")
    tab.wait_for_function("() => window.geon.state().role === 'editor'")
    tab.locator(".geon-share-button").wait_for(state="detached")
    assert tab.locator(".geon-share[open]").count() == 0
    assert errors == []
    assert off_loop(saved) == ("bob", None)
