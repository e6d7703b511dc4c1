"""The runs services, one topic per module (the Zulip way; DESIGN.md §6-7). Views, tasks and
consumers call them; every refusal is a :class:`RunRefused` with an error code and the HTTP
status it answers with.

- :mod:`.queueing`: check a run request in the web process and queue it
  (:func:`check_can_run`, :func:`do_queue_run`);
- :mod:`.fields`: the request's fields (version, integers, booleans);
- :mod:`.inputs`: uploaded ``.npz`` inputs, checked from their headers before their data;
- :mod:`.execution`: a run executed in the worker (:func:`do_execute_run`);
- :mod:`.attempts`: which worker attempt holds a run, and the fence on its writes;
- :mod:`.sweep`: runs and renders stranded by a worker that is gone, handed over again;
- :mod:`.results`: reading runs and their results;
- :mod:`.events`: a run as JSON, published to its graph's group;
- :mod:`.renders`: diagrams, cached by document hash and drawn by the worker;
- :mod:`.imports`: ONNX models uploaded, converted to graphs by the worker;
- :mod:`.files`: the stored files of runs and renders;
- :mod:`.errors`: :class:`RunRefused`, :class:`RunNotFound`;
- :mod:`.worker`: work handed to the Celery worker, by task name.

Files live under ``GEON_DATA_DIR/files/``: inputs and results in ``runs/<run id>/``, diagrams in
``renders/``; model imports in ``imports/<import id>/`` (the upload until it is read, then
``weights.npz``).
"""

from geon.runs.services.errors import RunNotFound, RunRefused
from geon.runs.services.events import run_json
from geon.runs.services.execution import do_execute_run, execute_document
from geon.runs.services.files import do_delete_files, files_of_graph
from geon.runs.services.queueing import RunRequest, check_can_run, do_queue_run
from geon.runs.services.renders import (
    CONTENT_TYPES,
    RENDER_RETRY_SECONDS,
    check_can_render,
    do_render,
    do_request_render,
    document_hash,
    render_json,
)
from geon.runs.services.results import (
    check_can_view_run,
    check_results,
    graph_runs,
    result_view,
)
from geon.runs.services.sweep import start_sweeper, sweep

__all__ = [
    "CONTENT_TYPES",
    "RENDER_RETRY_SECONDS",
    "RunNotFound",
    "RunRefused",
    "RunRequest",
    "check_can_render",
    "check_can_run",
    "check_can_view_run",
    "check_results",
    "do_delete_files",
    "do_execute_run",
    "do_queue_run",
    "do_render",
    "do_request_render",
    "document_hash",
    "execute_document",
    "files_of_graph",
    "graph_runs",
    "render_json",
    "result_view",
    "run_json",
    "start_sweeper",
    "sweep",
]
