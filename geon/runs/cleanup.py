"""A deleted graph's run files (inputs, results, diagrams) are deleted with it: the hook that
:class:`geon.runs.apps.RunsConfig` registers with
:func:`geon.graphs.services.graphs.on_drop`."""

from __future__ import annotations

import uuid

from django.db import transaction

from geon.runs.services import do_delete_files, files_of_graph


def delete_files_with_graph(graph_id: uuid.UUID) -> None:
    """Inside the transaction that deletes the graph, while its runs are still there: read the
    names of their files, and delete the files once the deletion commits."""
    names = files_of_graph(graph_id)
    transaction.on_commit(lambda: do_delete_files(names))
