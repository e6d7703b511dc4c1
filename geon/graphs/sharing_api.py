"""REST endpoints for sharing (issue 17), mounted in :mod:`geon.urls` beside the graphs router:

- ``POST /graphs/<id>/invitations {who, role}``: invite a username or an email address (role
  ``owner`` needed); ``GET`` lists the pending invitations, ``DELETE .../invitations/<id>``
  revokes one;
- ``GET/POST /graphs/<id>/links``, ``DELETE /graphs/<id>/links/<id>``: "anyone with the link can
  view" links (role ``owner``);
- ``PUT /graphs/<id>/team {team}``: give the graph to a team (its owner only);
- ``GET /sharing/graphs?scope=mine|shared|team|all``: the caller's graphs, filtered;
- ``GET/POST /teams``, ``GET /teams/<name>``, ``PUT/DELETE /teams/<name>/members/<username>``.

Someone with no role on a graph, or not in a team, gets 404 as for one that does not exist.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router, Schema, Status
from pydantic import Field

from geon.envelope import answers
from geon.graphs.services import sharing

router = Router(tags=["sharing"])


class InviteIn(Schema):
    who: str = Field(min_length=1, max_length=254, description="a username or an email address")
    role: str = Field(description="viewer, reviewer, editor or owner")


class InviteOut(Schema):
    status: str = Field(description='"added" (a username) or "invited" (an email address)')


class InvitationOut(Schema):
    id: int
    email: str
    role: str
    invited_by: str
    created: datetime
    expires: datetime


class InvitationList(Schema):
    invitations: list[InvitationOut]


class LinkOut(Schema):
    id: int
    url: str
    created: datetime
    created_by: str


class LinkList(Schema):
    links: list[LinkOut]


class GraphTeamIn(Schema):
    team: str | None = Field(description="the team's name, or null for none")


class GraphTeamOut(Schema):
    team: str | None


class GraphRow(Schema):
    id: str
    title: str
    owner: str
    team: str | None


class GraphRows(Schema):
    graphs: list[GraphRow]


class TeamIn(Schema):
    name: str = Field(min_length=1, max_length=100)


class TeamMember(Schema):
    user: str
    role: str


class TeamOut(Schema):
    name: str
    members: list[TeamMember]


class TeamList(Schema):
    teams: list[TeamOut]


class TeamRoleIn(Schema):
    role: str


def base_url(request: HttpRequest) -> str:
    """This site's address as the request reached it (for links in emails and answers)."""
    return request.build_absolute_uri("/")


def link_row(request: HttpRequest, link: Any) -> dict[str, Any]:
    return {
        "id": link.pk,
        "url": request.build_absolute_uri(f"/s/{link.key}/"),
        "created": link.created,
        "created_by": link.created_by.get_username(),
    }


@router.post("/graphs/{graph_id}/invitations", response=answers({202: InviteOut}))
def invite(request: HttpRequest, graph_id: str, payload: InviteIn) -> Status[dict[str, Any]]:
    """Invite a person by username (the role is given at once) or by email address (an
    account with that address gets the role at once; otherwise an invitation link is mailed
    that signs the person up and lands them on the graph). Role ``owner`` needed. Any email
    address is answered ``invited``: whether it has an account is not told."""
    status = sharing.do_invite(request.user, graph_id, payload.who, payload.role, base_url(request))
    return Status(202, {"status": status})


@router.get("/graphs/{graph_id}/invitations", response=answers({200: InvitationList}))
def list_invitations(request: HttpRequest, graph_id: str) -> dict[str, Any]:
    """The graph's pending email invitations (role ``owner`` needed)."""
    rows = sharing.graph_invitations(request.user, graph_id)
    return {
        "invitations": [
            {
                "id": i.pk,
                "email": i.email,
                "role": i.role,
                "invited_by": i.invited_by.get_username(),
                "created": i.created,
                "expires": i.expires,
            }
            for i in rows
        ]
    }


@router.delete("/graphs/{graph_id}/invitations/{invitation_id}", response=answers({204: None}))
def revoke_invitation(request: HttpRequest, graph_id: str, invitation_id: int) -> HttpResponse:
    """Revoke a pending invitation: its link stops working (role ``owner`` needed)."""
    sharing.do_revoke_invitation(request.user, graph_id, invitation_id)
    return HttpResponse(status=204)


@router.get("/graphs/{graph_id}/links", response=answers({200: LinkList}))
def list_links(request: HttpRequest, graph_id: str) -> dict[str, Any]:
    """The graph's live "anyone with the link can view" links (role ``owner`` needed)."""
    rows = sharing.graph_links(request.user, graph_id).select_related("created_by")
    return {"links": [link_row(request, link) for link in rows]}


@router.post("/graphs/{graph_id}/links", response=answers({201: LinkOut}))
def create_link(request: HttpRequest, graph_id: str) -> Status[dict[str, Any]]:
    """A new link that opens the graph read-only for anyone who has it (role ``owner``)."""
    link = sharing.do_create_link(request.user, graph_id)
    return Status(201, link_row(request, link))


@router.delete("/graphs/{graph_id}/links/{link_id}", response=answers({204: None}))
def revoke_link(request: HttpRequest, graph_id: str, link_id: int) -> HttpResponse:
    """Revoke a link: it shows a "turned off" page from now on, and its visitors' open
    editors close (role ``owner`` needed)."""
    sharing.do_revoke_link(request.user, graph_id, link_id)
    return HttpResponse(status=204)


@router.put("/graphs/{graph_id}/team", response=answers({200: GraphTeamOut}))
def set_graph_team(request: HttpRequest, graph_id: str, payload: GraphTeamIn) -> dict[str, Any]:
    """Give the graph to a team of the owner's (null: to none); each team member gets their
    team role on it. The graph's owner only."""
    graph = sharing.do_set_graph_team(request.user, graph_id, payload.team)
    return {"team": graph.team.name if graph.team else None}


@router.get("/sharing/graphs", response=answers({200: GraphRows}))
def graphs_by_scope(request: HttpRequest, scope: str = "all") -> dict[str, Any]:
    """The caller's graphs: ``mine`` (owned), ``shared`` (shared with me), ``team`` (through a
    team of mine) or ``all``."""
    rows = sharing.filtered_graphs(request.user, scope).select_related("owner", "team")
    return {
        "graphs": [
            {
                "id": str(g.pk),
                "title": g.title,
                "owner": g.owner.get_username(),
                "team": g.team.name if g.team else None,
            }
            for g in rows.order_by("created", "title")
        ]
    }


@router.get("/teams", response=answers({200: TeamList}))
def list_teams(request: HttpRequest) -> dict[str, Any]:
    """The caller's teams with their members and team roles."""
    teams = sharing.my_teams(request.user)
    return {"teams": [{"name": t.name, "members": sharing.team_rows(t)} for t in teams]}


@router.post("/teams", response=answers({201: TeamOut}))
def create_team(request: HttpRequest, payload: TeamIn) -> Status[dict[str, Any]]:
    """A new team; its maker is its first member, with the team role ``owner``."""
    team = sharing.do_create_team(request.user, payload.name)
    return Status(201, {"name": team.name, "members": sharing.team_rows(team)})


@router.get("/teams/{name}", response=answers({200: TeamOut}))
def get_team(request: HttpRequest, name: str) -> dict[str, Any]:
    """One of the caller's teams with its members."""
    team = sharing.check_team(request.user, name)
    return {"name": team.name, "members": sharing.team_rows(team)}


@router.put("/teams/{name}/members/{username}", response=answers({202: InviteOut}))
def set_team_member(
    request: HttpRequest, name: str, username: str, payload: TeamRoleIn
) -> Status[dict[str, Any]]:
    """Add a user to the team or change their team role (team role ``owner`` needed); an
    email address is answered ``invited`` (an account with it joins, an unknown one is mailed
    an invitation to sign up)."""
    base = request.build_absolute_uri("/")
    status = sharing.do_set_team_member(request.user, name, username, payload.role, base)
    return Status(202, {"status": status})


@router.delete("/teams/{name}/members/{username}", response=answers({204: None}))
def remove_team_member(request: HttpRequest, name: str, username: str) -> HttpResponse:
    """Remove a user from the team (team role ``owner`` needed; anyone may leave)."""
    sharing.do_remove_team_member(request.user, name, username)
    return HttpResponse(status=204)
