"""Reading runs: who may see a run, a graph's runs, and a done run's results, whole (the
``results.npz``) or one output as a 1-D or 2-D view for the editor's heat map, refused from the
file's header before anything is loaded when it is over :data:`RESULT_VIEW_LIMIT` values."""

from __future__ import annotations

import uuid
import zipfile
from typing import Any

import numpy as np

from geon.core.graph import TENSOR, TENSOR_AXES
from geon.core.limits import INT64_MAX
from geon.graphs.services import GraphNotFound, User, check_can_view
from geon.runs.models import Run
from geon.runs.services.errors import RunNotFound, RunRefused
from geon.runs.services.inputs import npy_header

#: The most values one answer of :func:`result_view` carries (a 256 x 256 slice).
RESULT_VIEW_LIMIT = 65_536


def check_can_view_run(user: User, run_id: int) -> Run:
    """The run, if ``user`` may see its graph; raises :class:`RunNotFound` otherwise."""
    run = None
    if 1 <= run_id <= INT64_MAX:  # larger ids in a URL name no run
        run = Run.objects.select_related("graph_version").filter(pk=run_id).first()
    if run is not None:
        try:
            check_can_view(user, run.graph_version.graph_id)
        except GraphNotFound:
            run = None
    if run is None:
        raise RunNotFound(f'run "{run_id}" does not exist or you do not have access to it')
    return run


def graph_runs(user: User, graph_id: uuid.UUID | str) -> list[Run]:
    """The graph's runs, newest first, if ``user`` may see the graph."""
    graph = check_can_view(user, graph_id)
    return list(Run.objects.filter(graph_version__graph=graph).select_related("graph_version"))


def check_results(run: Run) -> Run:
    """The run, if its results file can be downloaded (it is done)."""
    if run.status != Run.Status.DONE or not run.results:
        why = f"failed: {run.error}" if run.status == Run.Status.FAILED else f"is {run.status}"
        raise RunRefused(
            "results_not_ready",
            f'run "{run.pk}" {why}; results can be downloaded once it is done',
            status=409,
        )
    return run


def result_view(run: Run, key: str, at: str | None = None) -> dict[str, Any]:
    """One output of a done run as JSON, for the editor's heat map: its shape, dtype, axes (the
    tensor's TensorAxes), min and max, and the values of a 1-D or 2-D view: the whole tensor for
    rank 1 or 2, else the slice that ``at`` (``"i,j"``: one index per leading dim, all but the
    last two) picks. A view over :data:`RESULT_VIEW_LIMIT` values is refused (413) from the
    file's header, before anything is loaded. ``maxAbsDiff`` is the sharded (or JAX) run's
    difference from the logical run for this output (``null`` for a logical run)."""
    check_results(run)
    with run.results.open("rb") as raw, zipfile.ZipFile(raw) as archive:
        members = sorted(n[: -len(".npy")] for n in archive.namelist() if n.endswith(".npy"))
        if key not in members:
            raise RunRefused(
                "unknown_result",
                f'run "{run.pk}" has no result "{key}"; expected one of '
                + ", ".join(f'"{m}"' for m in members),
                status=404,
            )
        header = npy_header(archive, f"{key}.npy")
        shape, dtype = header.shape, header.dtype
        index = _view_index(key, shape, at)
        view_shape = shape[len(index) :]
        cells = int(np.prod(view_shape)) if view_shape else 1
        if cells > RESULT_VIEW_LIMIT:
            raise RunRefused(
                "view_too_large",
                f'the view of result "{key}" has {cells} values (shape {list(view_shape)}); '
                f"at most {RESULT_VIEW_LIMIT} are sent; download results.npz for all of it",
                status=413,
            )
        with archive.open(f"{key}.npy") as f:
            array = np.lib.format.read_array(f, allow_pickle=False)
    view = array[index] if index else array
    numeric = np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_
    if np.iscomplexobj(view):
        view = np.abs(view)
    values = view.astype(np.float64) if numeric else np.zeros(view.shape)
    diffs = run.result.get("max_abs_diff") if run.sharded or run.engine == Run.Engine.JAX else None
    finite = values[np.isfinite(values)]
    return {
        "run": run.pk,
        "key": key,
        "shape": list(shape),
        "dtype": str(dtype),
        "axes": _tensor_axes(run.graph_version.document, key),
        "at": list(index),
        "viewShape": list(view_shape),
        "limit": RESULT_VIEW_LIMIT,
        "min": float(finite.min()) if finite.size else None,
        "max": float(finite.max()) if finite.size else None,
        "values": [None if not np.isfinite(v) else float(v) for v in values.ravel()],
        "maxAbsDiff": diffs.get(key) if isinstance(diffs, dict) else None,
    }


def _view_index(key: str, shape: tuple[int, ...], at: str | None) -> tuple[int, ...]:
    """The leading indices that pick a 2-D view of a result of rank 3 or more (``at``, default
    all zeros); ``()`` for rank 1 or 2, where ``at`` must be empty."""
    lead = shape[:-2] if len(shape) > 2 else ()
    if not lead:
        if at:
            raise RunRefused(
                "invalid_slice",
                f'result "{key}" has rank {len(shape)}; a slice "{at}" is only for rank 3 and more',
                status=400,
            )
        return ()
    parts = (at or ",".join("0" for _ in lead)).split(",")
    try:
        index = tuple(int(p) for p in parts)
    except ValueError:
        index = ()
    inside = all(0 <= i < n for i, n in zip(index, lead, strict=False))
    if len(index) != len(lead) or not inside:
        raise RunRefused(
            "invalid_slice",
            f'slice "{at}" does not pick a 2-D view of shape {list(shape)}; expected '
            f"{len(lead)} indices below {list(lead)}, separated by commas",
            status=400,
        )
    return index


def _tensor_axes(document: dict[str, Any], key: str) -> list[str] | None:
    """The TensorAxes of the tensor whose label or id is ``key``, if it has them."""
    for node in document.get("nodes", []):
        if node.get("type") == TENSOR and key in (node.get("label"), node.get("id")):
            tag = (node.get("tags") or {}).get(TENSOR_AXES)
            if isinstance(tag, dict) and isinstance(tag.get("axes"), list):
                return [str(a) for a in tag["axes"]]
            return None
    return None
