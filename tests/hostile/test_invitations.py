"""Invitation links (issue 30, finding 9), replayed through the real pages with CSRF enforced: a
GET shows the invitation and changes nothing; accepting is the page's POST with its CSRF token;
only an account holding the invited address, confirmed, may accept (anyone else holding the link
sees the button disabled with the reason, and a POST of theirs is refused alike); two
acceptances at once give one role, and the loser gets the page of a used link, not a 500. Runs on
SQLite and PostgreSQL alike."""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from typing import Any

import pytest
from allauth.account.models import EmailAddress
from django.db import connection
from django.test import Client
from django.utils import timezone

from geon.graphs.models import Invitation, Membership
from geon.graphs.services import sharing

INVITED = "eve@example.org"


@pytest.fixture
def eve(django_user_model: Any, password: str) -> Any:
    """eve, whose account holds the invited address, confirmed."""
    person = django_user_model.objects.create_user("eve", password=password, email=INVITED)
    EmailAddress.objects.create(user=person, email=INVITED, verified=True, primary=True)
    return person


@pytest.fixture
def invitation(user: Any, graph: Any) -> Invitation:
    """ann's pending invitation of eve@example.org to her graph as editor."""
    return Invitation.objects.create(
        email=INVITED,
        role="editor",
        graph=graph,
        invited_by=user,
        expires=timezone.now() + timedelta(days=1),
    )


def page_of(person: Any) -> Client:
    """A browser of ``person``'s with CSRF enforced, as a real one is."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(person)
    return client


def token(page: Any) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert found is not None, page.content.decode()[:2000]
    return found.group(1)


def link(invitation: Invitation) -> str:
    return f"/invite/{invitation.key}/"


def state(invitation: Invitation) -> tuple[Any, list[tuple[str, str]]]:
    invitation.refresh_from_db()
    roles = Membership.objects.filter(graph=invitation.graph)
    return invitation.accepted_by_id, sorted(roles.values_list("user__username", "role"))


@pytest.mark.django_db
def test_a_get_shows_the_invitation_and_accepting_is_a_post_with_csrf(
    eve: Any, invitation: Invitation, graph: Any
) -> None:
    browser = page_of(eve)
    # when eve follows the link (a GET, as a mail client's preview or a prefetch would)
    shown = browser.get(link(invitation))
    # then she sees who invited her to what, with a form that POSTs, and nothing is accepted
    assert shown.status_code == 200
    html = shown.content.decode()
    assert f"ann invited {INVITED} to graph &quot;Loom add&quot; as" in html
    assert '<form method="post" class="geon-invitation-accept">' in html
    assert "disabled" not in html.split('class="geon-invitation-accept"')[1].split("</form>")[0]
    assert state(invitation) == (None, [])
    # when a page elsewhere POSTs to the link without her CSRF token
    forged = browser.post(link(invitation))
    # then it is refused (403) and nothing is accepted
    assert forged.status_code == 403
    assert state(invitation) == (None, [])
    # when she presses Accept (the POST with the page's token), she lands on the graph as editor
    accepted = browser.post(link(invitation), {"csrfmiddlewaretoken": token(shown)})
    assert accepted.status_code == 302 and accepted["Location"] == f"/graphs/{graph.pk}/"
    assert state(invitation) == (eve.pk, [("eve", "editor")])
    # and the link is used: the same page as any link that no longer works
    again = page_of(eve).get(link(invitation))
    assert again.status_code == 404 and b"was used already" in again.content


@pytest.mark.django_db
def test_a_link_held_by_another_account_does_not_accept(
    other_user: Any, eve: Any, invitation: Invitation, graph: Any
) -> None:
    bob = page_of(other_user)
    # when bob, who got hold of eve's link, opens it
    shown = bob.get(link(invitation))
    # then the page says whose it is and what would work, with the button disabled (403)
    assert shown.status_code == 403
    html = shown.content.decode()
    reason = (
        f'this invitation to graph "Loom add" was sent to {INVITED}, which is not a confirmed '
        'address of your account "bob"; sign in with the account of eve@example.org, add and '
        "confirm that address on your account page, or ask ann to invite this account"
    )
    assert reason.replace('"', "&quot;") in html
    assert re.search(r'<button class="primary" type="submit" disabled', html)
    # when he POSTs anyway, with a valid token, it is refused alike and nothing is accepted
    forced = bob.post(link(invitation), {"csrfmiddlewaretoken": token(shown)})
    assert forced.status_code == 403 and reason.replace('"', "&quot;") in forced.content.decode()
    assert state(invitation) == (None, [])
    # an address he added but never confirmed does not make it his either
    EmailAddress.objects.create(user=other_user, email=INVITED.upper(), verified=False)
    assert bob.post(link(invitation), {"csrfmiddlewaretoken": token(shown)}).status_code == 403
    assert state(invitation) == (None, [])
    # and eve, whose address it is, is still answered
    browser = page_of(eve)
    page = browser.get(link(invitation))
    assert browser.post(link(invitation), {"csrfmiddlewaretoken": token(page)}).status_code == 302
    assert state(invitation) == (eve.pk, [("eve", "editor")])


@pytest.mark.django_db
def test_other_methods_change_nothing(eve: Any, invitation: Invitation) -> None:
    browser = page_of(eve)
    assert browser.put(link(invitation)).status_code in (403, 405)  # CSRF or method: refused
    assert state(invitation) == (None, [])


@pytest.mark.django_db
def test_an_acceptance_that_loses_the_claim_gets_the_used_page(
    eve: Any, invitation: Invitation, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conditional update is what decides (PostgreSQL lets both read the invitation as
    pending): another acceptance is committed between this one's read and its claim."""
    browser = page_of(eve)
    page = browser.get(link(invitation))
    checked = sharing.invitation_refusal

    def meanwhile(user: Any, found: Invitation) -> str | None:
        refused = checked(user, found)
        if connection.in_atomic_block:  # inside do_accept_invitation: the other one wins now
            Invitation.objects.filter(pk=found.pk).update(accepted_by=user)
        return refused

    monkeypatch.setattr(sharing, "invitation_refusal", meanwhile)
    lost = browser.post(link(invitation), {"csrfmiddlewaretoken": token(page)})
    assert lost.status_code == 404, lost.content.decode()[:2000]
    assert b"Invitation not valid" in lost.content and b"was used already" in lost.content
    # nothing but the winner's claim is stored: the loser gave no role
    assert state(invitation) == (eve.pk, [])


@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_acceptances_give_one_role_and_the_loser_the_used_page(
    eve: Any, invitation: Invitation, graph: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # eve presses Accept in two tabs (two sessions) at once
    browsers = [page_of(eve), page_of(eve)]
    tokens = [token(b.get(link(invitation))) for b in browsers]
    # both pass the page's own check before either accepts
    ready = threading.Barrier(2, timeout=10)
    waited = threading.local()
    checked = sharing.invitation_refusal

    def together(user: Any, found: Invitation) -> str | None:
        if not getattr(waited, "done", False):
            waited.done = True
            ready.wait()
        return checked(user, found)

    monkeypatch.setattr(sharing, "invitation_refusal", together)
    answers: list[Any] = [None, None]

    def press(n: int) -> None:
        try:
            answers[n] = browsers[n].post(link(invitation), {"csrfmiddlewaretoken": tokens[n]})
        finally:
            connection.close()

    threads = [threading.Thread(target=press, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    # then one lands on the graph, the other gets the used-link page, not a 500
    codes = sorted(a.status_code for a in answers)
    assert codes == [302, 404], [a.content.decode()[:500] for a in answers]
    lost = next(a for a in answers if a.status_code == 404)
    assert b"was used already" in lost.content
    assert state(invitation) == (eve.pk, [("eve", "editor")])
    # and the server still answers eve
    assert page_of(eve).get(f"/graphs/{graph.pk}/").status_code == 200
