"""Graphs and their versions. Writes go through :mod:`geon.graphs.services`."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models

from geon.core.errors import DocumentError


class Graph(models.Model):
    """A graph document owned by a user; its content lives in its versions."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="graphs"
    )
    title = models.CharField(max_length=200)
    # The gallery example this graph was loaded from ("" for the user's own graphs): makes
    # loading the gallery idempotent.
    example = models.CharField(max_length=100, blank=True, default="")
    current_version = models.ForeignKey(
        "GraphVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title", "created"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "example"],
                condition=~models.Q(example=""),
                name="graph_example_once_per_owner",
            )
        ]

    def __str__(self) -> str:
        return self.title


class GraphVersion(models.Model):
    """An immutable snapshot of a graph's LoomGraph JSON, numbered 1, 2, ... per graph."""

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    document = models.JSONField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    message = models.CharField(max_length=500, blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["graph", "number"]
        constraints = [
            models.UniqueConstraint(fields=["graph", "number"], name="graph_version_number_unique")
        ]

    def __str__(self) -> str:
        return f"{self.graph_id} v{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise DocumentError(
                f'graph version "{self.number}" is immutable; store a new version instead'
            )
        super().save(*args, **kwargs)
