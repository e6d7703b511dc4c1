"""Sharing a graph beyond its members (issue 17): invitations by username or email, "anyone with
the link can view" links, and teams (their members, team roles, a team's role on a graph).

- an invitation by **username** (or by the email of an existing account) gives the role at
  once, like ``PUT /graphs/<id>/members/<username>``; one to an **unknown email** stores an
  :class:`~geon.graphs.models.Invitation` and mails its link, which signs the person up and
  lands them on the graph with the role. Both answer alike: whether an address has an account
  is never told. The link is not a bearer token: it is accepted by a POST (with CSRF) of an
  account that holds the invited address, confirmed (:func:`invitation_refusal`), and only
  once, even when two acceptances race (:func:`do_accept_invitation`);
- a **share link** is an unguessable key (256 bits) that opens the graph read-only for anyone;
  revoking it keeps the row, so the link shows a clear "revoked" page;
- a **team** is made by a signed-in user, who becomes its ``owner``; team owners add members
  with team roles; a graph's owner gives the graph to a team (each team member then gets their
  team role on it, :func:`~geon.graphs.services.access.roles_on`).

Every change of who may do what reaches the graph's open websockets at once
(:func:`~geon.graphs.services.access.announce_access_changed`).
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User as Account
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from geon.accounts.models import Role, Team, TeamMembership
from geon.core.errors import DocumentError, quote
from geon.graphs.models import Graph, Invitation, Membership, ShareLink
from geon.graphs.services.access import (
    AccessDenied,
    GraphNotFound,
    User,
    announce_access_changed,
    check_can_manage,
    visible_graphs,
)
from geon.graphs.services.members import check_member, do_set_member

#: Pending invitations one graph or team may hold, and share links one graph may hold.
MAX_PENDING_INVITATIONS = 200
MAX_LINKS = 20
TEAM_NAME_MAX = 100
SCOPES = ("all", "mine", "shared", "team")


def account(user: User) -> Account:
    """``user`` as an account; an anonymous one gets :class:`GraphNotFound` (the API lets only
    signed-in users through, so this is a safeguard)."""
    if not isinstance(user, Account):
        raise GraphNotFound("sign in first")
    return user


class InvitationNotFound(GraphNotFound):
    """No pending invitation with that key (or it expired, or was accepted or revoked)."""


#: What a link that no longer works says, however it stopped working (used, by a race too).
INVITATION_GONE = (
    "this invitation link does not work: it expired, was revoked or was used already; "
    "ask the person who invited you for a new one"
)


class InvitationForAnother(AccessDenied):
    """The signed-in account does not hold the address the invitation was sent to (403)."""


class TeamNotFound(GraphNotFound):
    """The team does not exist or the user is not in it (the two look the same)."""


def check_role_name(role: Any, *, allow_owner: bool = True) -> str:
    """``role`` if it is a known role name, else a :class:`DocumentError` listing them."""
    known = [r for r in Role.values if allow_owner or r != Role.OWNER]
    if role not in known:
        expected = ", ".join(f'"{r}"' for r in known)
        raise DocumentError(f'role "{role}" is not known; expected one of {expected}')
    return str(role)


def is_email(text: str) -> bool:
    """Whether ``text`` is an email address (anything with an ``@`` is taken for one).

    >>> is_email("ann@example.org"), is_email("ann")
    (True, False)
    """
    return "@" in text


def check_email(text: str) -> str:
    """``text`` if it is a valid email address, else a :class:`DocumentError` saying so."""
    try:
        validate_email(text)
    except ValidationError:
        raise DocumentError(
            f'"{text}" is not a valid email address; expected e.g. "ann@example.org", or a '
            "username without @"
        ) from None
    return text.strip().lower()


def account_with_email(email: str) -> Account | None:
    """The account whose (primary or confirmed) email is ``email``, if any."""
    from allauth.account.models import EmailAddress

    address = EmailAddress.objects.filter(email__iexact=email).select_related("user").first()
    if address is not None:
        return address.user
    return Account.objects.filter(email__iexact=email).first()


def invitation_link(base_url: str, invitation: Invitation) -> str:
    """The absolute link that accepts ``invitation``."""
    return f"{base_url.rstrip('/')}/invite/{invitation.key}/"


@transaction.atomic
def do_invite(user: User, graph_id: uuid.UUID | str, who: Any, role: Any, base_url: str) -> str:
    """Invite ``who`` (a username or an email address) to the graph with ``role`` (role
    ``owner`` needed). Returns what the answer says: ``"added"`` for a username, ``"invited"``
    for any email address (known or not: the two are answered alike)."""
    if not isinstance(who, str) or not who.strip():
        raise DocumentError('"who" must be a username or an email address, e.g. "ann@example.org"')
    who = who.strip()
    if not is_email(who):
        graph, member, clean_role = check_member(user, graph_id, who, role)
        do_set_member(graph, member, clean_role)
        return "added"
    graph = check_can_manage(user, graph_id)
    clean_role = check_role_name(role)
    email = check_email(who)
    existing = account_with_email(email)
    if existing is not None:
        if existing.pk != graph.owner_id:
            do_set_member(graph, existing, clean_role)
        return "invited"
    full = "revoke some first (DELETE /api/v1/graphs/<id>/invitations/<id>)"
    where = {"graph": graph}
    _new_invitation(user, email, clean_role, where, f"graph {quote(graph.title)}", full, base_url)
    return "invited"


def _new_invitation(
    user: User, email: str, role: str, to: dict[str, Any], what: str, full: str, base_url: str
) -> None:
    """Invite ``email`` with ``role`` to ``to`` (``{"graph": ...}`` or ``{"team": ...}``, named
    ``what``): a pending invitation to the same address is replaced, at most
    :data:`MAX_PENDING_INVITATIONS` are pending (``full`` says what to do then), and its link
    is mailed once the transaction commits."""
    pending = Invitation.objects.filter(**to, accepted_by=None)
    if pending.count() >= MAX_PENDING_INVITATIONS:
        raise DocumentError(
            f"{what} has {MAX_PENDING_INVITATIONS} pending invitations, the most allowed; {full}"
        )
    pending.filter(email=email).delete()
    invitation = Invitation.objects.create(
        email=email,
        role=role,
        invited_by=account(user),
        expires=timezone.now() + timedelta(days=settings.GEON_INVITATION_DAYS),
        **to,
    )
    link = invitation_link(base_url, invitation)
    inviter = user.get_username()
    days = settings.GEON_INVITATION_DAYS
    transaction.on_commit(
        lambda: send_mail(
            f"{inviter} invited you to the {what} on geon",
            f"{inviter} invited you to the {what} on geon as {role}.\n\n"
            f"Follow this link to create your account and open it:\n\n{link}\n\n"
            f"The link works for {days} days, and only for an account with this address "
            f"({invitation.email}).\n",
            None,
            [invitation.email],
        )
    )


def graph_invitations(user: User, graph_id: uuid.UUID | str) -> QuerySet[Invitation]:
    """The graph's pending invitations (role ``owner`` needed)."""
    graph = check_can_manage(user, graph_id)
    return Invitation.objects.filter(graph=graph, accepted_by=None).select_related("invited_by")


@transaction.atomic
def do_revoke_invitation(user: User, graph_id: uuid.UUID | str, invitation_id: int) -> None:
    """Revoke a pending invitation of the graph (role ``owner`` needed): its link stops working."""
    graph = check_can_manage(user, graph_id)
    deleted, _ = Invitation.objects.filter(graph=graph, pk=invitation_id, accepted_by=None).delete()
    if not deleted:
        raise InvitationNotFound(
            f"graph {quote(graph.title)} has no pending invitation {invitation_id}; "
            "GET /api/v1/graphs/<id>/invitations lists them"
        )


def pending_invitation(key: Any) -> Invitation:
    """The pending, unexpired invitation with ``key``; :class:`InvitationNotFound` otherwise."""
    invitation = (
        Invitation.objects.filter(key=str(key), accepted_by=None, expires__gt=timezone.now())
        .select_related("graph", "team", "invited_by")
        .first()
        if isinstance(key, str) and len(key) <= 64
        else None
    )
    if invitation is None:
        raise InvitationNotFound(INVITATION_GONE)
    return invitation


def confirmed_addresses(user: Account) -> list[str]:
    """The addresses ``user`` has confirmed (allauth's verified addresses), lower-cased."""
    from allauth.account.models import EmailAddress

    rows = EmailAddress.objects.filter(user=user, verified=True).values_list("email", flat=True)
    return sorted({e.lower() for e in rows})


def invitation_refusal(user: Account, invitation: Invitation) -> str | None:
    """Why ``user`` may not accept ``invitation`` (None: they may): it is accepted only by an
    account holding the invited address, confirmed — signing up from the link confirms it."""
    if invitation.email.lower() in confirmed_addresses(user):
        return None
    what = (
        f"graph {quote(invitation.graph.title)}"
        if invitation.graph is not None
        else f"team {quote(invitation.team.name if invitation.team else '')}"
    )
    return (
        f"this invitation to {what} was sent to {invitation.email}, which is not a confirmed "
        f"address of your account {quote(user.get_username())}; sign in with the account of "
        f"{invitation.email}, add and confirm that address on your account page, or ask "
        f"{invitation.invited_by.get_username()} to invite this account"
    )


@transaction.atomic
def do_accept_invitation(user: Account, key: str) -> Invitation:
    """Give ``user`` the invitation's role on its graph (or in its team) and mark it accepted.
    A role the user holds already is raised, never lowered. Refused
    (:class:`InvitationForAnother`) when the user does not hold the invited address.

    Only one acceptance wins: the invitation is claimed by a conditional update (``accepted_by
    IS NULL``) before any role is given. On PostgreSQL a second acceptance waits on the first's
    row lock and then finds it claimed; on SQLite the transactions run one at a time. The loser
    gets :class:`InvitationNotFound`, the page of a used link."""
    invitation = pending_invitation(key)
    refused = invitation_refusal(user, invitation)
    if refused is not None:
        raise InvitationForAnother(refused)
    claimed = Invitation.objects.filter(pk=invitation.pk, accepted_by=None).update(accepted_by=user)
    if not claimed:
        raise InvitationNotFound(INVITATION_GONE)
    if invitation.graph is not None:
        graph = invitation.graph
        if graph.owner_id != user.pk:
            held = Membership.objects.filter(graph=graph, user=user).first()
            if held is None or Role.rank(held.role) < Role.rank(invitation.role):
                do_set_member(graph, user, invitation.role)
    elif invitation.team is not None:
        held_team = TeamMembership.objects.filter(team=invitation.team, user=user).first()
        if held_team is None or Role.rank(held_team.role) < Role.rank(invitation.role):
            TeamMembership.objects.update_or_create(
                team=invitation.team, user=user, defaults={"role": invitation.role}
            )
            announce_team_changed(invitation.team)
    invitation.accepted_by = user
    return invitation


# --- share links ------------------------------------------------------------------------------


def graph_links(user: User, graph_id: uuid.UUID | str) -> QuerySet[ShareLink]:
    """The graph's live share links (role ``owner`` needed)."""
    graph = check_can_manage(user, graph_id)
    return ShareLink.objects.filter(graph=graph, revoked=None)


@transaction.atomic
def do_create_link(user: User, graph_id: uuid.UUID | str) -> ShareLink:
    """A new "anyone with the link can view" link (role ``owner`` needed)."""
    graph = check_can_manage(user, graph_id)
    if ShareLink.objects.filter(graph=graph, revoked=None).count() >= MAX_LINKS:
        raise DocumentError(
            f"graph has {MAX_LINKS} live links, the most allowed; revoke one first "
            "(DELETE /api/v1/graphs/<id>/links/<id>)"
        )
    return ShareLink.objects.create(graph=graph, created_by=account(user))


@transaction.atomic
def do_revoke_link(user: User, graph_id: uuid.UUID | str, link_id: int | None) -> int:
    """Revoke one live link of the graph (``link_id``) or all of them (None); returns how many.
    Open websockets of link visitors close at once."""
    graph = check_can_manage(user, graph_id)
    rows = ShareLink.objects.filter(graph=graph, revoked=None)
    if link_id is not None:
        rows = rows.filter(pk=link_id)
    count = rows.update(revoked=timezone.now())
    if link_id is not None and not count:
        raise GraphNotFound(
            f"graph {quote(graph.title)} has no live link {link_id}; GET /api/v1/graphs/<id>/links "
            "lists them"
        )
    announce_access_changed(graph.pk)
    return count


class LinkRevoked(GraphNotFound):
    """The share link existed and was revoked (its page says so)."""


def link_graph(key: Any) -> Graph:
    """The graph a live share link opens; :class:`LinkRevoked` for a revoked one,
    :class:`GraphNotFound` for a key that never existed."""
    link = (
        ShareLink.objects.filter(key=str(key)).select_related("graph").first()
        if isinstance(key, str) and 0 < len(key) <= 64
        else None
    )
    if link is None:
        raise GraphNotFound("this link does not open any graph; check that it was copied whole")
    if link.revoked is not None:
        raise LinkRevoked(
            "this link was turned off by the graph's owner; ask them for access or a new link"
        )
    return link.graph


def link_is_live(graph_id: Any, key: Any) -> bool:
    """Whether ``key`` is a live share link of the graph ``graph_id``."""
    try:
        graph_id = uuid.UUID(str(graph_id))
    except ValueError:
        return False
    return (
        isinstance(key, str)
        and 0 < len(key) <= 64
        and ShareLink.objects.filter(key=key, graph_id=graph_id, revoked=None).exists()
    )


# --- teams --------------------------------------------------------------------------------------


def my_teams(user: User) -> QuerySet[Team]:
    """The teams ``user`` is a member of."""
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user_id=user.pk).distinct()


def check_team(user: User, name: Any, needed: str = Role.VIEWER) -> Team:
    """The team named ``name`` if ``user`` is in it with at least ``needed`` (else
    :class:`TeamNotFound` for no membership, :class:`AccessDenied` for too small a role)."""
    team = my_teams(user).filter(name=str(name)).first() if isinstance(name, str) else None
    if team is None:
        raise TeamNotFound(f'team "{name}" does not exist or you are not in it')
    role = TeamMembership.objects.get(team=team, user=account(user)).role
    if Role.rank(role) < Role.rank(needed):
        raise AccessDenied(f'your role in team "{team.name}" is "{role}"; this needs "{needed}"')
    return team


@transaction.atomic
def do_create_team(user: User, name: Any) -> Team:
    """A new team named ``name`` whose first member, ``user``, has the team role ``owner``."""
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= TEAM_NAME_MAX:
        raise DocumentError(
            f'team name "{name}" is not valid; expected 1 to {TEAM_NAME_MAX} characters'
        )
    clean = name.strip()
    if Team.objects.filter(name=clean).exists():
        raise DocumentError(f'a team named "{clean}" exists already; choose another name')
    team = Team.objects.create(name=clean)
    TeamMembership.objects.create(team=team, user=account(user), role=Role.OWNER)
    return team


def announce_team_changed(team: Team) -> None:
    """Have the open websockets of every graph of ``team`` check their roles again."""
    for graph_id in Graph.objects.filter(team=team).values_list("pk", flat=True):
        announce_access_changed(graph_id)


@transaction.atomic
def do_set_team_member(user: User, team_name: Any, who: Any, role: Any, base_url: str) -> str:
    """Give ``who`` (a username or an email address) ``role`` in the team (team role ``owner``
    needed). A username is answered ``"added"``, an email address ``"invited"``, whether or not
    an account has it: an account joins at once, an unknown address is mailed an invitation to
    sign up (its link under ``base_url``), and a username with no account stores nothing."""
    team = check_team(user, team_name, Role.OWNER)
    clean_role = check_role_name(role)
    if isinstance(who, str) and is_email(who.strip()):
        email = check_email(who.strip())
        member, said = account_with_email(email), "invited"
        if member is None:
            full = "wait for some to be accepted or to expire"
            where = f"team {quote(team.name)}"
            _new_invitation(user, email, clean_role, {"team": team}, where, full, base_url)
    else:
        if not isinstance(who, str) or not 1 <= len(who) <= 150:
            raise DocumentError(f'username "{who}" is not valid; expected 1 to 150 characters')
        member, said = Account.objects.filter(username=who).first(), "added"
    if member is not None:
        TeamMembership.objects.update_or_create(
            team=team, user=member, defaults={"role": clean_role}
        )
        announce_team_changed(team)
    return said


@transaction.atomic
def do_remove_team_member(user: User, team_name: Any, username: Any) -> None:
    """Remove ``username`` from the team (team role ``owner`` needed; anyone may leave)."""
    own = getattr(user, "username", None) == username
    team = check_team(user, team_name, Role.VIEWER if own else Role.OWNER)
    rows = TeamMembership.objects.filter(team=team, user__username=username)
    if not rows.exists():
        raise TeamNotFound(f'user "{username}" is not in team "{team.name}"')
    owners = TeamMembership.objects.filter(team=team, role=Role.OWNER)
    if owners.count() == 1 and owners.filter(user__username=username).exists():
        raise DocumentError(
            f'user "{username}" is the last owner of team "{team.name}"; make another member '
            "owner first"
        )
    rows.delete()
    announce_team_changed(team)


@transaction.atomic
def do_set_graph_team(user: User, graph_id: uuid.UUID | str, team_name: Any) -> Graph:
    """Give the graph to a team (None: to none): its members get their team role on it. The
    graph's owner only, and only to a team they are in."""
    from geon.graphs.services.access import check_owner

    graph = check_can_manage(user, graph_id)
    check_owner(user, graph, "give it to a team")
    graph.team = None if team_name is None else check_team(user, team_name)
    graph.save(update_fields=["team"])
    announce_access_changed(graph.pk)
    return graph


def filtered_graphs(user: User, scope: Any) -> QuerySet[Graph]:
    """The graphs ``user`` sees, narrowed to ``scope``: ``mine`` (owned), ``shared`` (shared
    with them as a member), ``team`` (through a team of theirs) or ``all``."""
    if scope not in SCOPES:
        expected = ", ".join(f'"{s}"' for s in SCOPES)
        raise DocumentError(f'scope "{scope}" is not known; expected one of {expected}')
    rows = visible_graphs(user)
    if scope == "mine":
        return rows.filter(owner_id=user.pk)
    if scope == "shared":
        return rows.filter(memberships__user=account(user)).exclude(owner_id=user.pk)
    if scope == "team":
        return rows.filter(team__memberships__user=account(user)).exclude(owner_id=user.pk)
    return rows


def team_rows(team: Team) -> list[dict[str, Any]]:
    """A team's members as ``{"user", "role"}`` by username."""
    rows = TeamMembership.objects.filter(team=team).select_related("user")
    return [
        {"user": m.user.get_username(), "role": m.role} for m in rows.order_by("user__username")
    ]


def share_link_key(scope: dict[str, Any]) -> str | None:
    """The ``link`` parameter of a websocket's query string (a share link's key), if any.

    >>> share_link_key({"query_string": b"link=abc"})
    'abc'
    >>> share_link_key({"query_string": b""}) is None
    True
    """
    from urllib.parse import parse_qs

    raw = scope.get("query_string", b"")
    values = parse_qs(raw.decode("latin-1") if isinstance(raw, bytes) else str(raw))
    key = (values.get("link") or [""])[0]
    return key if 0 < len(key) <= 64 else None


def check_link_access(user: User, graph_id: Any, key: str | None) -> tuple[Graph, str, bool]:
    """The graph, the role and whether it comes from a share link only: a user's own role when
    they have one, else ``viewer`` through the live share link ``key``; :class:`GraphNotFound`
    when neither (a revoked link included)."""
    from geon.graphs.services.access import check_access

    try:
        graph, role = check_access(user, graph_id)
        return graph, role, False
    except GraphNotFound:
        if key is None or not link_is_live(graph_id, key):
            raise
    linked = Graph.objects.filter(pk=graph_id).select_related("current_version").first()
    if linked is None or linked.current_version is None:
        raise GraphNotFound(f'graph "{graph_id}" does not exist or you do not have access to it')
    return linked, Role.VIEWER.value, True
