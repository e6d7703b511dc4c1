"""Runs of a graph version on a worker. Writes go through :mod:`geon.runs.services`."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from geon.graphs.models import GraphVersion


class Run(models.Model):
    """One execution of a graph version: queued, then running with progress, then done/failed."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    class Backend(models.TextChoices):
        NUMPY = "numpy"
        CUPY = "cupy"

    graph_version = models.ForeignKey(GraphVersion, on_delete=models.CASCADE, related_name="runs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    backend = models.CharField(max_length=16, choices=Backend.choices, default=Backend.NUMPY)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True, db_index=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # Seconds per phase, e.g. {"queued": 0.21, "execute": 0.003}.
    timings = models.JSONField(default=dict, blank=True)
    # What the executor reported: per output tensor a summary, never the arrays themselves.
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    # The process id of the worker that executed the run.
    worker_pid = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def finished_running(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)
