"""Websocket routes, mounted by :mod:`geon.asgi`."""

from django.urls import path

from geon.graphs.consumers import GraphConsumer

websocket_urlpatterns = [
    path("ws/graphs/<uuid:graph_id>/", GraphConsumer.as_asgi()),
]
