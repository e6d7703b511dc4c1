"""Pages: the gallery of graphs and the editor shell that mounts the Vite bundle."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from geon.graphs import services
from geon.graphs.gallery import listing


@login_required
def graph_list(request: HttpRequest) -> HttpResponse:
    # oldest first: the gallery's own order, then the user's graphs as they were made
    graphs = services.visible_graphs(request.user).order_by("created", "title")
    gallery = [
        {"key": key, "title": title, "summary": description.split("\n\n")[0]}
        for key, title, description in listing()
    ]
    return render(request, "graphs/list.html", {"graphs": graphs, "gallery": gallery})


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
def graph_editor(request: HttpRequest, graph_id: uuid.UUID) -> HttpResponse:
    try:
        graph = services.check_can_view(request.user, graph_id)
    except services.GraphNotFound as error:
        raise Http404(str(error)) from None
    context = {
        "graph": graph,
        "ws_path": f"/ws/graphs/{graph.pk}/",
    }
    return render(request, "graphs/editor.html", context)
