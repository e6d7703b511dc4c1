from django.apps import AppConfig


class GraphsConfig(AppConfig):
    """Graphs, their immutable versions, and the live websocket on each graph."""

    name = "geon.graphs"
    label = "graphs"

    def ready(self) -> None:
        """Every Django process (web, realtime, worker) loads documents: tune the collector for
        them (:func:`geon.core.collector.tune_for_documents`)."""
        from geon.core.collector import tune_for_documents

        tune_for_documents()
