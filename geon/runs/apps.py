from django.apps import AppConfig


class RunsConfig(AppConfig):
    """Runs of a graph version on a Celery worker, their status events, and the health check."""

    name = "geon.runs"
    label = "runs"
