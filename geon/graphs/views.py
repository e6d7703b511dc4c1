"""Pages: the gallery of graphs and the editor shell that mounts the Vite bundle."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from geon.graphs import services


@login_required
def graph_list(request: HttpRequest) -> HttpResponse:
    # oldest first: the gallery's own order, then the user's graphs as they were made
    graphs = services.visible_graphs(request.user).order_by("created", "title")
    return render(request, "graphs/list.html", {"graphs": graphs})


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
