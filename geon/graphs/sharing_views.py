"""Pages of sharing (issue 17): an invitation link (``/invite/<key>/``) and a share link
(``/s/<key>/``); and the teams page (``/teams/``).

An invitation link followed while signed out remembers its key in the session and sends the
person to sign up (or, with an account, to sign in); once signed in, the same page shows the
invitation with an "Accept" button, a form that POSTs (with its CSRF token) to the same address,
which accepts it and lands them on the graph with its role. A GET changes nothing. Only an
account holding the invited address, confirmed, may accept: anyone else sees the button disabled
with the reason (403), and a POST of theirs is refused alike. A link that was used, revoked or
expired — also for the loser of two acceptances at once — answers the same 404 page. A share
link opens the editor read-only for anyone; a revoked one shows a page saying it was turned off
(410).
"""

from __future__ import annotations

from allauth.account.adapter import get_adapter
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse

from geon.accounts.adapter import INVITATION_SESSION_KEY
from geon.accounts.models import Role
from geon.core.errors import GeonError
from geon.graphs.models import Graph
from geon.graphs.services import sharing
from geon.graphs.services.access import GraphNotFound


def _gone(request: HttpRequest, error: Exception) -> HttpResponse:
    """The page of an invitation link that does not work (used, revoked, expired, unknown)."""
    request.session.pop(INVITATION_SESSION_KEY, None)
    context = {"title": "Invitation not valid", "message": str(error)}
    return render(request, "graphs/link_closed.html", context, status=404)


def invitation(request: HttpRequest, key: str) -> HttpResponse:
    """Follow an invitation: sign up (or in) first; then GET shows it, and POST (the page's
    form, with its CSRF token) accepts it and lands on its graph with its role."""
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    try:
        found = sharing.pending_invitation(key)
    except sharing.InvitationNotFound as error:
        return _gone(request, error)
    if not request.user.is_authenticated:
        request.session[INVITATION_SESSION_KEY] = key
        if found.email:  # the link came to this address: signing up with it needs no confirming
            get_adapter(request).stash_verified_email(request, found.email)
        return redirect(f"{reverse('account_signup')}?email={found.email}")
    refused = sharing.invitation_refusal(request.user, found)
    if request.method == "POST" and refused is None:
        try:
            accepted = sharing.do_accept_invitation(request.user, key)
        except sharing.InvitationNotFound as error:  # another acceptance won meanwhile
            return _gone(request, error)
        except sharing.InvitationForAnother as error:  # its addresses changed meanwhile
            refused = str(error)
        else:
            request.session.pop(INVITATION_SESSION_KEY, None)
            if accepted.graph is not None:
                return redirect("graph-editor", graph_id=accepted.graph.pk)
            return redirect("teams")
    context = {
        "invitation": found,
        "to": f'graph "{found.graph.title}"' if found.graph is not None else f'team "{found.team}"',
        "refused": refused,
    }
    return render(request, "graphs/invitation.html", context, status=403 if refused else 200)


def shared_link(request: HttpRequest, key: str) -> HttpResponse:
    """The graph of a live share link, read-only; a revoked link's page says so (410)."""
    try:
        graph = sharing.link_graph(key)
    except sharing.LinkRevoked as error:
        context = {"title": "This link was turned off", "message": str(error)}
        return render(request, "graphs/link_closed.html", context, status=410)
    except GraphNotFound as error:
        context = {"title": "This link does not work", "message": str(error)}
        return render(request, "graphs/link_closed.html", context, status=404)
    page: dict[str, object] = {
        "graph": graph,
        "ws_path": f"/ws/graphs/{graph.pk}/?link={key}",
        "read_only": True,
    }
    return render(request, "graphs/editor.html", page)


@login_required
def teams_page(request: HttpRequest) -> HttpResponse:
    """The teams page: the user's teams, their members and graphs; create a team, add a member
    or change a team role, remove one. POST ``action`` = ``create`` | ``member`` | ``remove``."""
    error = None
    if request.method == "POST":
        action = request.POST.get("action")
        team = request.POST.get("team", "")
        try:
            if action == "create":
                sharing.do_create_team(request.user, request.POST.get("name", ""))
            elif action == "member":
                username, role = request.POST.get("username", ""), request.POST.get("role")
                base = request.build_absolute_uri("/")
                said = sharing.do_set_team_member(request.user, team, username, role, base)
                if said == "invited":
                    messages.info(request, f"{username} was invited to {team} (if it is new here)")
            elif action == "remove":
                sharing.do_remove_team_member(request.user, team, request.POST.get("username"))
            else:
                error = f'action "{action}" is not known; expected create, member or remove'
        except GeonError as refused:
            error = str(refused)
        if error is None:
            return redirect("teams")
    teams = [
        {
            "name": t.name,
            "members": sharing.team_rows(t),
            "graphs": list(
                Graph.objects.filter(team=t).order_by("title").values_list("title", flat=True)
            ),
            "manages": any(
                m["user"] == request.user.get_username() and m["role"] == Role.OWNER
                for m in sharing.team_rows(t)
            ),
        }
        for t in sharing.my_teams(request.user)
    ]
    context = {"teams": teams, "error": error, "roles": Role.values}
    return render(request, "graphs/teams.html", context, status=400 if error else 200)
