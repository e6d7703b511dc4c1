"""The stored files of runs and renders under ``GEON_DATA_DIR/files/``: uploaded inputs and
results (``runs/<run id>/``), diagrams (``renders/``); how one is written, and which to delete
with a graph."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.files.base import ContentFile, File

from geon.runs.models import Render, Run, data_files


def save_file(field: Any, name: str, content: bytes | File[Any]) -> None:
    """Write ``content`` as ``name`` in the field's storage, replacing a file left there (by an
    earlier attempt, or a transaction that was rolled back) so that the name stays ``name``."""
    if field.storage.exists(name):
        field.storage.delete(name)
    field.save(name, content if isinstance(content, File) else ContentFile(content), save=False)


def files_of_graph(graph_id: uuid.UUID | str) -> list[str]:
    """The stored files (inputs, results, diagrams) of a graph's runs and renders: what to
    delete with the graph (:func:`do_delete_files`, once its deletion is committed)."""
    names: list[str] = []
    for run in Run.objects.filter(graph_version__graph_id=graph_id).order_by("pk"):
        names += [f.name for f in (run.inputs, run.results) if f.name]
    renders = Render.objects.filter(graph_version__graph_id=graph_id).order_by("pk")
    names += [r.file.name for r in renders if r.file.name]
    return names


def do_delete_files(names: list[str]) -> None:
    """Delete stored files by name (those already gone are skipped)."""
    storage = data_files()
    for name in names:
        storage.delete(name)
