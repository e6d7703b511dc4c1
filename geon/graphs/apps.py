from django.apps import AppConfig


class GraphsConfig(AppConfig):
    """Graphs, their immutable versions, and the live websocket on each graph."""

    name = "geon.graphs"
    label = "graphs"
