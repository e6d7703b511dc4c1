"""Puzzle attempts (issue 19, item 4): each Check of a student's graph, run by a worker, with
its answer — what the class dashboard counts."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from geon.graphs.models import Graph


class Attempt(models.Model):
    """One check of a puzzle's solution: the graph at a version, queued, then done (with the
    checker's answer) or failed (the worker could not check it: ``error`` says why)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        DONE = "done"
        FAILED = "failed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    puzzle = models.CharField(max_length=100)
    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="attempts")
    version = models.PositiveIntegerField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    solved = models.BooleanField(default=False)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
