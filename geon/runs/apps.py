from django.apps import AppConfig


class RunsConfig(AppConfig):
    """Runs of a graph version on a Celery worker, their status events, and the health check.

    ``runs`` depends on ``graphs``, never the reverse: it plugs into the graphs' extension
    points here — its live feed of run events (:mod:`geon.runs.feed`) and the deletion of a
    graph's run files with the graph (:mod:`geon.runs.cleanup`).
    """

    name = "geon.runs"
    label = "runs"

    def ready(self) -> None:
        from geon.graphs.services.feeds import register_feed
        from geon.graphs.services.graphs import on_drop
        from geon.runs.cleanup import delete_files_with_graph
        from geon.runs.feed import RUN_FEED

        register_feed(RUN_FEED)
        on_drop(delete_files_with_graph)
