"""Sharing (issue 17) through REST: invitations, share links, teams, the graph list's scopes,
and the pages of an invitation and a link. Owner / member / stranger, asserting the database.
Runs on SQLite and PostgreSQL alike (no database marker)."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client

from geon.accounts.models import Team, TeamMembership
from geon.graphs.models import Graph, Invitation, Membership, ShareLink

pytestmark = pytest.mark.django_db


def post(client: Client, url: str, body: dict[str, Any]) -> Any:
    return client.post(url, json.dumps(body), content_type="application/json")


def put(client: Client, url: str, body: dict[str, Any]) -> Any:
    return client.put(url, json.dumps(body), content_type="application/json")


def accept(visitor: Client, link: str) -> Any:
    """Accept an invitation as a person does: its page (GET changes nothing), then its form's
    POST with the page's CSRF token."""
    page = visitor.get(link)
    assert page.status_code == 200, page.content.decode()[:2000]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token is not None
    return visitor.post(link, {"csrfmiddlewaretoken": token.group(1)})


def members(graph: Graph) -> list[tuple[str, str]]:
    rows = Membership.objects.filter(graph=graph).values_list("user__username", "role")
    return sorted(rows)


def test_owner_invites_by_username_and_the_role_is_stored(
    client: Client, user: User, other_user: User, graph: Graph
) -> None:
    client.force_login(user)
    answer = post(
        client, f"/api/v1/graphs/{graph.pk}/invitations", {"who": "bob", "role": "reviewer"}
    )
    assert answer.status_code == 202, answer.content
    assert answer.json() == {"status": "added"}
    assert members(graph) == [("bob", "reviewer")]


def test_unknown_email_gets_a_mailed_link_that_signs_up_and_lands_on_the_graph(
    client: Client,
    user: User,
    graph: Graph,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.GEON_SIGNUP = "invite"
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        answer = post(
            client,
            f"/api/v1/graphs/{graph.pk}/invitations",
            {"who": "Eve@Example.org", "role": "reviewer"},
        )
    assert answer.json() == {"status": "invited"}
    invitation = Invitation.objects.get(graph=graph)
    assert (invitation.email, invitation.role, invitation.accepted_by) == (
        "eve@example.org",
        "reviewer",
        None,
    )
    [message] = mail.outbox
    assert message.to == ["eve@example.org"]
    link = re.search(r"http://testserver(/invite/[^/\s]+/)", message.body)
    assert link is not None and invitation.key in link.group(1)

    listed = client.get(f"/api/v1/graphs/{graph.pk}/invitations").json()["invitations"]
    assert [(i["email"], i["role"], i["invited_by"]) for i in listed] == [
        ("eve@example.org", "reviewer", "ann")
    ]

    visitor = Client()
    follow = visitor.get(link.group(1))
    assert follow.status_code == 302 and follow["Location"].startswith("/accounts/signup/")
    signup = visitor.post(
        "/accounts/signup/",
        {
            "email": "eve@example.org",
            "username": "eve",
            "password1": "tensor-axes-42",
            "password2": "tensor-axes-42",
        },
    )
    assert signup.status_code == 302, signup.content.decode()[:2000]
    assert signup["Location"] == link.group(1)
    assert members(graph) == []  # the page shows the invitation; accepting is its form's POST
    landed = accept(visitor, link.group(1))
    assert landed.status_code == 302 and landed["Location"] == f"/graphs/{graph.pk}/"
    assert members(graph) == [("eve", "reviewer")]
    assert Invitation.objects.get(pk=invitation.pk).accepted_by == User.objects.get(username="eve")
    assert visitor.get(f"/graphs/{graph.pk}/").status_code == 200
    # used once: the link no longer works
    again = Client().get(link.group(1))
    assert again.status_code == 404 and b"does not work" in again.content


def test_signup_follows_geon_signup(client: Client, settings: Any) -> None:
    form = {
        "email": "x@example.org",
        "username": "x",
        "password1": "tensor-axes-42",
        "password2": "tensor-axes-42",
    }
    settings.GEON_SIGNUP = "invite"
    client.post("/accounts/signup/", form)
    assert not User.objects.filter(username="x").exists()
    settings.GEON_SIGNUP = "closed"
    client.post("/accounts/signup/", form)
    assert not User.objects.filter(username="x").exists()
    settings.GEON_SIGNUP = "open"
    assert client.post("/accounts/signup/", form).status_code == 302
    assert User.objects.filter(username="x", email="x@example.org").exists()


def test_email_of_an_existing_account_is_answered_like_an_unknown_one(
    client: Client, user: User, other_user: User, graph: Graph
) -> None:
    other_user.email = "bob@example.org"
    other_user.save()
    client.force_login(user)
    known = post(
        client,
        f"/api/v1/graphs/{graph.pk}/invitations",
        {"who": "bob@example.org", "role": "editor"},
    )
    unknown = post(
        client,
        f"/api/v1/graphs/{graph.pk}/invitations",
        {"who": "zed@example.org", "role": "editor"},
    )
    assert known.status_code == unknown.status_code == 202
    assert known.json() == unknown.json() == {"status": "invited"}
    assert members(graph) == [("bob", "editor")]
    assert list(Invitation.objects.values_list("email", flat=True)) == ["zed@example.org"]


@pytest.mark.parametrize("persona", ["editor", "stranger"])
def test_only_an_owner_invites_and_strangers_get_404(
    client: Client, user: User, other_user: User, graph: Graph, persona: str
) -> None:
    if persona == "editor":
        Membership.objects.create(graph=graph, user=other_user, role="editor")
    client.force_login(other_user)
    answer = post(
        client, f"/api/v1/graphs/{graph.pk}/invitations", {"who": "x@example.org", "role": "owner"}
    )
    assert answer.status_code == (403 if persona == "editor" else 404)
    assert answer.json()["error"]["code"] in ("forbidden", "not_found")
    assert not Invitation.objects.exists()
    assert client.post(f"/api/v1/graphs/{graph.pk}/links").status_code == (
        403 if persona == "editor" else 404
    )
    assert not ShareLink.objects.exists()


def test_bad_role_and_email_are_named(client: Client, user: User, graph: Graph) -> None:
    client.force_login(user)
    answer = post(client, f"/api/v1/graphs/{graph.pk}/invitations", {"who": "x@", "role": "viewer"})
    assert (
        answer.status_code == 422
        and '"x@" is not a valid email address' in answer.json()["error"]["message"]
    )
    answer = post(
        client, f"/api/v1/graphs/{graph.pk}/invitations", {"who": "x@example.org", "role": "boss"}
    )
    assert (
        answer.status_code == 422
        and 'role "boss" is not known' in answer.json()["error"]["message"]
    )


def test_revoked_invitation_stops_working(client: Client, user: User, graph: Graph) -> None:
    client.force_login(user)
    post(
        client,
        f"/api/v1/graphs/{graph.pk}/invitations",
        {"who": "eve@example.org", "role": "viewer"},
    )
    invitation = Invitation.objects.get()
    assert (
        client.delete(f"/api/v1/graphs/{graph.pk}/invitations/{invitation.pk}").status_code == 204
    )
    assert not Invitation.objects.exists()
    assert Client().get(f"/invite/{invitation.key}/").status_code == 404


def test_share_link_opens_read_only_and_a_revoked_one_shows_a_clear_page(
    client: Client, user: User, graph: Graph
) -> None:
    client.force_login(user)
    made = client.post(f"/api/v1/graphs/{graph.pk}/links")
    assert made.status_code == 201
    link = ShareLink.objects.get(graph=graph)
    assert made.json()["url"] == f"http://testserver/s/{link.key}/"
    assert len(link.key) >= 40
    visitor = Client()
    page = visitor.get(f"/s/{link.key}/")
    assert page.status_code == 200
    assert f'data-ws-path="/ws/graphs/{graph.pk}/?link={link.key}"'.encode() in page.content
    assert visitor.get(f"/graphs/{graph.pk}/").status_code == 302  # the link opens only itself
    assert client.delete(f"/api/v1/graphs/{graph.pk}/links/{link.pk}").status_code == 204
    assert ShareLink.objects.get(pk=link.pk).revoked is not None
    closed = visitor.get(f"/s/{link.key}/")
    assert closed.status_code == 410 and b"This link was turned off" in closed.content
    assert visitor.get("/s/not-a-key/").status_code == 404


def test_teams_give_their_members_a_role_and_the_list_filters_by_scope(
    client: Client, user: User, other_user: User, graph: Graph, django_user_model: Any
) -> None:
    from geon.graphs.services import do_create_graph

    cat = django_user_model.objects.create_user("cat", password="x")
    client.force_login(user)
    made = post(client, "/api/v1/teams", {"name": "Loom lab"})
    assert made.status_code == 201 and made.json()["members"] == [{"user": "ann", "role": "owner"}]
    assert put(client, "/api/v1/teams/Loom lab/members/bob", {"role": "editor"}).status_code == 202
    assert put(client, f"/api/v1/graphs/{graph.pk}/team", {"team": "Loom lab"}).json() == {
        "team": "Loom lab"
    }
    team = Team.objects.get(name="Loom lab")
    assert sorted(
        TeamMembership.objects.filter(team=team).values_list("user__username", "role")
    ) == [
        ("ann", "owner"),
        ("bob", "editor"),
    ]
    assert Graph.objects.get(pk=graph.pk).team == team
    # cat shares one graph with bob directly
    shared = do_create_graph(owner=cat, title="Cat's", document=graph.current_version.snapshot)
    Membership.objects.create(graph=shared, user=other_user, role="viewer")

    client.force_login(other_user)
    titles = {
        s: [g["title"] for g in client.get(f"/api/v1/sharing/graphs?scope={s}").json()["graphs"]]
        for s in ("mine", "shared", "team")
    }
    assert titles == {"mine": [], "shared": ["Cat's"], "team": ["Loom add"]}
    assert client.get("/api/v1/sharing/graphs?scope=everything").status_code == 422
    # bob (team editor) may not add members; a stranger to the team sees 404
    assert put(client, "/api/v1/teams/Loom lab/members/cat", {"role": "owner"}).status_code == 403
    client.force_login(cat)
    assert client.get("/api/v1/teams/Loom lab").status_code == 404
    assert put(client, f"/api/v1/graphs/{shared.pk}/team", {"team": "Loom lab"}).status_code == 404
    assert not TeamMembership.objects.filter(user=cat).exists()


def test_only_the_owner_deletes(client: Client, user: User, other_user: User, graph: Graph) -> None:
    Membership.objects.create(graph=graph, user=other_user, role="owner")
    client.force_login(other_user)
    assert client.delete(f"/api/v1/graphs/{graph.pk}").status_code == 403
    assert Graph.objects.filter(pk=graph.pk).exists()
    client.force_login(user)
    assert client.delete(f"/api/v1/graphs/{graph.pk}").status_code == 204
    assert not Graph.objects.filter(pk=graph.pk).exists()


def test_only_the_owner_hands_over_to_a_member_and_becomes_an_editor(
    client: Client, user: User, other_user: User, graph: Graph
) -> None:
    # given ann owns the graph, bob has the role "owner" on it and a stranger has none
    Membership.objects.create(graph=graph, user=other_user, role="owner")
    url = f"/api/v1/graphs/{graph.pk}/owner"
    # when bob, a member with the role but not the graph's owner, tries to take it: refused
    client.force_login(other_user)
    assert post(client, url, {"username": other_user.username}).status_code == 403
    # and ann hands it to someone who is not a member: refused, naming them
    client.force_login(user)
    refused = post(client, url, {"username": "nobody"})
    assert refused.status_code == 404
    assert 'user "nobody" is not a member of graph' in refused.json()["error"]["message"]
    graph.refresh_from_db()
    assert graph.owner == user
    assert members(graph) == [(other_user.username, "owner")]
    # when ann hands it to bob
    answer = post(client, url, {"username": other_user.username})
    # then bob owns it, ann is an editor, and the answer lists them so
    assert answer.status_code == 200
    graph.refresh_from_db()
    assert graph.owner == other_user
    assert members(graph) == [(user.username, "editor")]
    assert answer.json()["owner"] == other_user.username
    assert [(m["user"], m["role"]) for m in answer.json()["members"]] == [(user.username, "editor")]
    # and ann can no longer delete it or hand it on
    assert client.delete(f"/api/v1/graphs/{graph.pk}").status_code == 403
    assert post(client, url, {"username": user.username}).status_code == 403
    assert Graph.objects.get(pk=graph.pk).owner == other_user


def test_account_page_creates_and_revokes_tokens(client: Client, user: User) -> None:
    client.force_login(user)
    page = client.post("/accounts/profile/", {"action": "create_token", "name": "ci", "days": "7"})
    assert page.status_code == 200 and b'id="new-token"' in page.content
    token = user.api_tokens.get()
    assert token.name == "ci"
    client.post("/accounts/profile/", {"action": "revoke_token", "token": str(token.pk)})
    assert not user.api_tokens.exists()
    client.post("/accounts/profile/", {"action": "name", "first_name": "Ann", "last_name": "Lee"})
    user.refresh_from_db()
    assert (user.first_name, user.last_name) == ("Ann", "Lee")


def test_sign_in_by_email_and_reset_reveals_nothing(
    client: Client, user: User, password: str
) -> None:
    user.email = "ann@example.org"
    user.save()
    answer = client.post("/accounts/login/", {"username": "ann@example.org", "password": password})
    assert answer.status_code == 302
    other = Client()
    known = other.post("/accounts/password/reset/", {"email": "ann@example.org"})
    unknown = other.post("/accounts/password/reset/", {"email": "nobody@example.org"})
    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"]


def test_sign_up_answers_a_taken_address_like_a_new_one(
    client: Client, user: User, settings: Any
) -> None:
    # given open sign-up and ann's address on her account
    settings.GEON_SIGNUP = "open"
    user.email = "ann@example.org"
    user.save()

    def sign_up(email: str, username: str) -> Any:
        form = {"email": email, "username": username}
        form |= {"password1": "tensor-axes-42", "password2": "tensor-axes-42"}
        return Client().post("/accounts/signup/", form)

    # when a stranger signs up with ann's address, and another with a new one
    taken, new = sign_up("ann@example.org", "mallory"), sign_up("new@example.org", "newcomer")
    # then both are answered alike (a confirmation to look for), nobody is signed in, and the
    # taken address's owner is told by mail instead of the stranger by the page
    assert taken.status_code == new.status_code == 302
    assert taken["Location"] == new["Location"] == "/accounts/confirm-email/"
    assert not User.objects.filter(username="mallory").exists()
    assert sorted(m.to[0] for m in mail.outbox) == ["ann@example.org", "new@example.org"]


def test_a_signed_up_account_signs_in_once_its_address_is_confirmed(settings: Any) -> None:
    from allauth.account.models import EmailAddress

    settings.GEON_SIGNUP = "open"
    form = {"email": "new@example.org", "username": "newcomer"}
    Client().post(
        "/accounts/signup/", form | {"password1": "tensor-axes-42", "password2": "tensor-axes-42"}
    )
    sign_in = {"username": "newcomer", "password": "tensor-axes-42"}
    refused = Client().post("/accounts/login/", sign_in)
    assert (
        refused.status_code == 200
        and "confirm your email address first" in refused.content.decode()
    )
    EmailAddress.objects.filter(email="new@example.org").update(verified=True)
    assert Client().post("/accounts/login/", sign_in).status_code == 302


def test_sign_up_is_throttled(settings: Any) -> None:
    # given open sign-up, when one address keeps posting sign-ups (allauth's "signup" limit):
    # an address of its own (a documentation range, new each run), so that the count it leaves
    # in a shared cache holds back no other test
    settings.GEON_SIGNUP = "open"
    client = Client(REMOTE_ADDR=f"198.51.100.{secrets.randbelow(250) + 1}")
    answers = [
        client.post("/accounts/signup/", {"email": f"u{n}@example.org", "username": f"u{n}"})
        for n in range(25)
    ]
    # then the first 20 get the form back with its errors (no password), and from the 21st on
    # the address is refused with 429
    assert [a.status_code for a in answers] == [200] * 20 + [429] * 5


def test_teams_page_creates_a_team_adds_a_member_and_names_errors(
    client: Client, user: User, other_user: User
) -> None:
    client.force_login(user)
    assert client.post("/teams/", {"action": "create", "name": "Kernels"}).status_code == 302
    answer = client.post(
        "/teams/", {"action": "member", "team": "Kernels", "username": "bob", "role": "editor"}
    )
    assert answer.status_code == 302
    team = Team.objects.get(name="Kernels")
    assert sorted(
        TeamMembership.objects.filter(team=team).values_list("user__username", "role")
    ) == [
        ("ann", "owner"),
        ("bob", "editor"),
    ]
    page = client.get("/teams/")
    assert b"Kernels" in page.content and b"bob" in page.content
    refused = client.post(
        "/teams/", {"action": "member", "team": "Kernels", "username": "bob", "role": "boss"}
    )
    assert refused.status_code == 400 and b"role &quot;boss&quot; is not known" in refused.content
    # the last owner cannot leave; bob can
    assert (
        client.post(
            "/teams/", {"action": "remove", "team": "Kernels", "username": "ann"}
        ).status_code
        == 400
    )
    client.force_login(other_user)
    assert (
        client.post(
            "/teams/", {"action": "remove", "team": "Kernels", "username": "bob"}
        ).status_code
        == 302
    )
    assert list(
        TeamMembership.objects.filter(team=team).values_list("user__username", flat=True)
    ) == ["ann"]


def test_a_team_invites_by_email_and_the_invited_sign_up_into_it(
    client: Client, user: User, other_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    client.force_login(user)
    client.post("/teams/", {"action": "create", "name": "Kernels"})
    other_user.email = "bob@example.org"
    other_user.save()

    def invite(who: str) -> Any:
        form = {"action": "member", "team": "Kernels", "username": who, "role": "editor"}
        with django_capture_on_commit_callbacks(execute=True):
            return client.post("/teams/", form, follow=True)

    # an address with an account joins at once; an unknown one is answered alike and mailed
    known, unknown = invite("bob@example.org"), invite("zed@example.org")
    said = "was invited to Kernels (if it is new here)"
    assert said in known.content.decode() and said in unknown.content.decode()
    team = Team.objects.get(name="Kernels")
    members = TeamMembership.objects.filter(team=team).values_list("user__username", "role")
    assert sorted(members) == [("ann", "owner"), ("bob", "editor")]
    [message] = mail.outbox
    assert message.to == ["zed@example.org"] and 'the team "Kernels"' in message.subject
    link = re.search(r"http://testserver(/invite/[^/\s]+/)", message.body)
    assert link is not None
    # zed follows it, signs up (the invitation proves the address) and is in the team
    visitor = Client()
    assert visitor.get(link.group(1))["Location"].startswith("/accounts/signup/")
    form = {"email": "zed@example.org", "username": "zed"}
    signed = visitor.post(
        "/accounts/signup/", form | {"password1": "tensor-axes-42", "password2": "tensor-axes-42"}
    )
    assert signed["Location"] == link.group(1)
    assert accept(visitor, link.group(1))["Location"] == "/teams/"
    assert TeamMembership.objects.get(team=team, user__username="zed").role == "editor"


def test_graph_list_marks_each_row_mine_shared_or_team(
    client: Client, user: User, other_user: User, graph: Graph
) -> None:
    from geon.graphs.services import do_create_graph

    own = do_create_graph(
        owner=other_user, title="Bob graph", document=graph.current_version.snapshot
    )
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    client.force_login(other_user)
    page = client.get("/").content.decode()
    scopes = dict(re.findall(r'data-title="([^"]+)" data-scope="(\w+)"', page))
    assert scopes == {"Loom add": "shared", own.title: "mine"}
    assert 'href="#team"' in page
    # a graph given to a team of bob's: "team", unless bob also has a role of his own on it
    team = Team.objects.create(name="Infra")
    TeamMembership.objects.create(team=team, user=other_user, role="viewer")
    other = do_create_graph(owner=user, title="Team graph", document=graph.current_version.snapshot)
    Graph.objects.filter(pk__in=[graph.pk, other.pk]).update(team=team)
    page = client.get("/").content.decode()
    scopes = dict(re.findall(r'data-title="([^"]+)" data-scope="(\w+)"', page))
    assert scopes == {"Loom add": "shared", own.title: "mine", "Team graph": "team"}


def test_an_invitation_followed_then_signed_in_lands_on_the_graph(
    client: Client, user: User, other_user: User, graph: Graph, password: str
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    invitation = Invitation.objects.create(
        email="bob.old@example.org",
        role="editor",
        graph=graph,
        invited_by=user,
        expires=timezone.now() + timedelta(days=1),
    )
    visitor = Client()
    assert visitor.get(f"/invite/{invitation.key}/").status_code == 302
    signed_in = visitor.post("/accounts/login/", {"username": "bob", "password": password})
    assert signed_in["Location"] == f"/invite/{invitation.key}/"
    # bob accepts with the invited address confirmed on his account (a second address)
    EmailAddress.objects.create(user=other_user, email="bob.old@example.org", verified=True)
    assert accept(visitor, signed_in["Location"])["Location"] == f"/graphs/{graph.pk}/"
    assert members(graph) == [("bob", "editor")]
