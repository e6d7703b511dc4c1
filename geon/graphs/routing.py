"""Websocket routes, mounted by :mod:`geon.asgi`: a graph's socket, and for any other path a
consumer that accepts and closes with 4404 (an unknown route would otherwise end the
handshake with an error the browser cannot read)."""

from django.urls import path, re_path

from geon.graphs.consumers import GraphConsumer, NoGraph

websocket_urlpatterns = [
    path("ws/graphs/<uuid:graph_id>/", GraphConsumer.as_asgi()),
    re_path(r"", NoGraph.as_asgi()),
]
