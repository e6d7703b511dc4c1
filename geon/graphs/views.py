"""Pages: the gallery of graphs and the editor shell that mounts the Vite bundle."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from geon.accounts.models import Role
from geon.graphs import services
from geon.graphs.gallery import listing
from geon.graphs.models import Graph, Membership


def about(description: str) -> dict[str, str]:
    r"""A description (Markdown) as the list shows it: ``summary`` (its first paragraph) and
    ``full`` (the whole text, shown on request; empty when the summary is all of it).

    >>> about("Two layers.\n\nThe *first* is wide.")
    {'summary': 'Two layers.', 'full': 'Two layers.\n\nThe *first* is wide.'}
    >>> about("One line.")
    {'summary': 'One line.', 'full': ''}
    """
    text = description.strip()
    summary = text.split("\n\n")[0].strip()
    return {"summary": summary, "full": text if text != summary else ""}


@login_required
def graph_list(request: HttpRequest) -> HttpResponse:
    # most recently changed first (issue 21: a new graph is at the top, not below the gallery's)
    graphs = services.visible_graphs(request.user).order_by("-updated", "title")
    direct = set(
        Membership.objects.filter(user_id=request.user.pk or 0).values_list("graph_id", flat=True)
    )

    def scope(graph: Graph) -> str:
        """Mine (owned), shared with me (a role of my own), or through a team of mine."""
        if graph.owner_id == request.user.pk:
            return "mine"
        return "shared" if graph.pk in direct or graph.team_id is None else "team"

    rows = [{"graph": g, "scope": scope(g), **about(g.description)} for g in graphs]
    gallery = [
        {"key": key, "title": title, **about(description)} for key, title, description in listing()
    ]
    return render(request, "graphs/list.html", {"rows": rows, "gallery": gallery})


@login_required
@require_POST
def gallery_open(request: HttpRequest, key: str) -> HttpResponse:
    """Open the gallery example ``key`` as the person's own copy (made on first use, with its
    title, description and shard plans), in the editor."""
    person = request.user
    assert person.is_authenticated  # login_required
    try:
        graph, _ = services.do_load_example(person, key)
    except KeyError as error:
        raise Http404(error.args[0]) from None
    return redirect("graph-editor", graph_id=graph.pk)


@login_required
def graph_diff(request: HttpRequest, graph_id: uuid.UUID, base: int, target: int) -> HttpResponse:
    """Two versions of a graph side by side, read-only (viewers and up; others: 404); the page
    asks the API for the documents and the difference, which refuses a missing version."""
    try:
        graph = services.check_can_view(request.user, graph_id)
        for number in (base, target):
            services.version_of(graph, number)
    except services.GraphNotFound as error:
        raise Http404(str(error)) from None
    return render(request, "graphs/diff.html", {"graph": graph, "base": base, "target": target})


@login_required
def graph_editor(request: HttpRequest, graph_id: uuid.UUID) -> HttpResponse:
    try:
        graph = services.check_can_view(request.user, graph_id)
    except services.GraphNotFound as error:
        raise Http404(str(error)) from None
    role = services.role_on(request.user, graph)
    context = {
        "graph": graph,
        "ws_path": f"/ws/graphs/{graph.pk}/",
        # the About panel lets editors change the title and description (the API checks again)
        "can_edit": role is not None and Role.rank(role) >= Role.rank(Role.EDITOR),
    }
    return render(request, "graphs/editor.html", context)
