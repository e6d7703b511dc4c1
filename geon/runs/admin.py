"""Django admin for runs, renders and model imports: read mostly; the worker writes their
state."""

from __future__ import annotations

from django.contrib import admin

from geon.runs.models import ModelImport, Render, Run


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = (
        "id", "graph_version", "status", "sharded", "backend", "progress", "attempts", "created",
    )  # fmt: skip
    list_filter = ("status", "sharded", "backend")
    search_fields = ("graph_version__graph__title", "requested_by__username", "error")
    raw_id_fields = ("graph_version", "requested_by")
    readonly_fields = (
        "created", "updated", "started", "finished", "worker_pid", "worker_host", "heartbeat",
    )  # fmt: skip


@admin.register(Render)
class RenderAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "graph_version",
        "format",
        "status",
        "attempts",
        "content_hash",
        "created",
    )
    list_filter = ("status", "format")
    search_fields = ("content_hash", "graph_version__graph__title", "error")
    raw_id_fields = ("graph_version",)
    readonly_fields = ("created", "finished", "content_hash")


@admin.register(ModelImport)
class ModelImportAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "owner", "status", "step", "graph", "created")
    list_filter = ("status",)
    search_fields = ("name", "owner__username", "error")
    raw_id_fields = ("owner", "graph")
    readonly_fields = ("created", "finished")
