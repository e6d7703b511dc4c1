"""Executing a run in the worker (DESIGN.md §7): :func:`do_execute_run` claims the run for this
attempt (:mod:`geon.runs.services.attempts`), keeps its heartbeat fresh from a thread while
:func:`execute_document` runs it, stores the results ``.npz`` and publishes each progress step
and the outcome, writing only while this attempt still holds the run."""

from __future__ import annotations

import io
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from django.conf import settings
from django.db import close_old_connections, transaction
from django.db import connection as db_connection
from django.utils import timezone

from geon import execute
from geon.core.errors import GeonError
from geon.core.graph import OPERATION, TENSOR, selected_tensor_ids
from geon.core.graph import Graph as Document
from geon.runs.models import Run
from geon.runs.services.attempts import claimed, fail_stranded, worker_gone, worker_identity
from geon.runs.services.events import publish
from geon.runs.services.files import save_file

log = logging.getLogger(__name__)

#: Runs given neither an inputs file nor a seed use ``numpy.random.default_rng(RUN_SEED)``.
RUN_SEED = 0

UNEXPECTED_RUN_FAILURE = "the executor failed unexpectedly; the worker log has the details"


def every_tensor(graph: Document) -> list[str]:
    """The ids of every tensor of ``graph`` (what a run keeping intermediates returns)."""
    return [node.id for node in graph.nodes if node.type == TENSOR]


def mark_intermediates(outputs: list[dict[str, Any]], document: dict[str, Any]) -> None:
    """Mark each of a run's ``outputs`` that an operation of ``document`` reads as
    ``"intermediate"``: kept because the run keeps every tensor, not one of the graph's outputs."""
    read = {
        tensor_id
        for node in document.get("nodes", [])
        if node.get("type") == OPERATION
        for tensor_id in selected_tensor_ids(node.get("body"), "inputs")
    }
    for entry in outputs:
        entry["intermediate"] = entry["id"] in read


def execute_document(
    document: dict[str, Any],
    *,
    backend: str,
    progress: Callable[[execute.Progress], None],
    sharded: bool = False,
    seed: int | None = RUN_SEED,
    inputs: Mapping[str, Any] | None = None,
    outputs: Callable[[Document], list[str]] | None = None,
) -> execute.RunResult:
    """The one call into the executor: a logical or sharded run within the environment's
    limits, with ``inputs`` and the rest generated from ``seed``; ``outputs`` picks the tensors
    returned (default: those no operation reads)."""
    graph = Document.from_json(document)
    return execute.run(
        graph,
        inputs,
        seed=seed,
        sharded=sharded,
        backend=backend,
        on_progress=progress,
        limits=execute.Limits.from_env(),
        outputs=outputs(graph) if outputs is not None else None,
    )


def jax_devices() -> int:
    """The CPU host devices a worker gives JAX (``GEON_JAX_DEVICES``, default 8): a plan whose
    mesh needs more is refused before it is queued (the count is fixed once jax is loaded)."""
    try:
        return max(1, int(os.environ.get("GEON_JAX_DEVICES", "8")))
    except ValueError:
        return 8


def execute_on_jax(
    document: dict[str, Any], *, seed: int | None, inputs: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]]]:
    """A run on the JAX engine (docs/engines.md): the document logically on NumPy and under its
    placed plan on JAX with the same inputs; the summary (``engine``, outputs, ``max_abs_diff``
    per output, devices, timings with the compile apart) and JAX's outputs by key. The worker's
    XLA host devices are ``GEON_JAX_DEVICES``, fixed when jax is first loaded."""
    from geon.engines import run_on_jax
    from geon.interop.jax_engine import force_host_devices

    force_host_devices(jax_devices())
    graph = Document.from_json(document)
    limits = execute.Limits.from_env()
    execute.compile_run(graph, sharded=False, backend="numpy", limits=limits)
    summary, done = run_on_jax(graph, dict(inputs) if inputs else None, seed)
    summary["backend"], summary["mode"] = "jax", "jax"
    summary["timings"] = {"compile": round(done.compile_seconds, 6),
                          "jax": round(done.run_seconds, 6)}  # fmt: skip
    return summary, done.outputs


def compared_collectives(
    document: dict[str, Any], result: execute.RunResult
) -> list[dict[str, Any]]:
    """The collectives the cost model predicts for ``document``
    (:func:`geon.core.plans.cost.infer_collectives`) beside the bytes the sharded run measured
    on the same edge (:func:`geon.execute.runner.measure_moves`, the measure of the kind's
    payload; 0 where nothing moved there); ``[]`` for a logical run."""
    if not result.sharded or result.measured is None:
        return []
    from geon.core.plans.cost import infer_collectives, load_profile, read_placed

    graph = Document.from_json(document)
    out = []
    for c in infer_collectives(read_placed(graph), load_profile()):
        moved = result.measured.get((c.tensor, c.producer, c.consumer))
        tensor = graph.get(c.tensor)
        out.append(
            {
                "kind": c.kind,
                "tensor": c.tensor,
                "tensorLabel": tensor.label if tensor is not None else None,
                "producer": c.producer,
                "consumer": c.consumer,
                "meshAxes": list(c.mesh_axes),
                "predictedBytes": c.bytes,
                "measuredBytes": moved.payload(c.kind) if moved is not None else 0,
            }
        )
    return out


def do_execute_run(run_id: int) -> None:
    """Execute a queued run (in the worker). Idempotent: a finished run is left as it is, and
    one that a live worker runs too. While it runs, a thread refreshes its heartbeat."""
    run = _claim_run(run_id)
    if run is None:
        return

    def progress(step: execute.Progress) -> None:
        run.progress = round(step.fraction, 6)
        run.step = step.to_json()
        run.heartbeat = timezone.now()
        fields = {"progress": run.progress, "step": run.step, "heartbeat": run.heartbeat}
        if claimed(run).update(**fields, updated=run.heartbeat):
            publish(run)

    stop = threading.Event()
    beating = threading.Thread(target=_heartbeat, args=(run.pk, stop), daemon=True)
    beating.start()
    began = time.perf_counter()
    try:
        _execute(run, progress)
    finally:
        stop.set()
        beating.join()
    run.timings = {**run.timings, "execute": round(time.perf_counter() - began, 6)}
    run.finished = timezone.now()
    with transaction.atomic():
        # Only while this attempt still holds the run: a sweep that took this worker for gone
        # (a heartbeat late under load) may have handed the run to another attempt meanwhile,
        # whose outcome is the one that counts.
        if not claimed(run).select_for_update().exists():
            log.warning("run %s: attempt %s was handed over meanwhile; its outcome is dropped",
                        run.pk, run.attempts)  # fmt: skip
            return
        run.save()
    publish(run)


def _execute(run: Run, progress: Callable[[execute.Progress], None]) -> None:
    """Run the executor on the run's document and record the outcome on ``run`` (not saved):
    the results and their summary, or the error."""
    seed = RUN_SEED if run.seed is None and not run.inputs else run.seed
    try:
        # Test-only (tests/faults): hold the run in "running" so that a test can kill its
        # worker mid-run. Unset everywhere else.
        time.sleep(float(os.environ.get("GEON_TEST_RUN_DELAY_SECONDS", "0")))
        if run.engine == Run.Engine.JAX:
            summary, outputs = execute_on_jax(
                run.graph_version.document, seed=seed, inputs=_stored_inputs(run)
            )
            _store(run, summary, outputs)
            return
        result = execute_document(
            run.graph_version.document,
            backend=run.backend,
            progress=progress,
            sharded=run.sharded,
            seed=seed,
            inputs=_stored_inputs(run),
            outputs=every_tensor if run.intermediates else None,
        )
        summary = result.summary()
        if run.intermediates:
            mark_intermediates(summary["outputs"], run.graph_version.document)
        summary["collectives"] = compared_collectives(run.graph_version.document, result)
        _store(run, summary, result.by_key())
    except GeonError as error:
        run.status = Run.Status.FAILED
        run.error = str(error)
    except Exception:
        log.exception("run %s failed unexpectedly", run.pk)
        run.status = Run.Status.FAILED
        run.error = UNEXPECTED_RUN_FAILURE


def _store(run: Run, summary: dict[str, Any], outputs: dict[str, Any]) -> None:
    """Record a finished run's summary, timings and results file on ``run`` (not saved)."""
    run.timings = {**run.timings, **summary.pop("timings")}
    run.result = summary
    buffer = io.BytesIO()
    np.savez(buffer, **outputs)
    save_file(run.results, f"runs/{run.pk}/results.npz", buffer.getvalue())
    run.status = Run.Status.DONE
    run.progress = 1.0


def _claim_run(run_id: int) -> Run | None:
    """Mark the run running on this worker, if it is there to run: queued, or left running by
    a worker that is gone (then it counts as a new attempt, and past the limit it is failed).
    ``None`` when there is nothing to do."""
    host, pid = worker_identity()
    with transaction.atomic():
        run = (
            Run.objects.select_for_update()
            .select_related("graph_version")
            .filter(pk=run_id)
            .first()
        )
        if run is None or run.finished_running:
            return None
        now = timezone.now()
        if run.status == Run.Status.RUNNING:
            if not worker_gone(run, now):
                return None  # a live worker has it (a duplicate message)
            if run.attempts >= settings.GEON_RUN_MAX_ATTEMPTS:
                fail_stranded(run, now)
                return None
            run.attempts += 1
        run.status = Run.Status.RUNNING
        run.progress = 0.0
        run.step = {}
        run.started = now
        run.heartbeat = now
        run.worker_pid = pid
        run.worker_host = host
        run.timings = {"queued": (run.started - run.created).total_seconds()}
        run.save()
        transaction.on_commit(lambda: publish(run))
    return run


def _heartbeat(run_id: int, stop: threading.Event) -> None:
    """Refresh the running run's heartbeat until ``stop`` is set (a thread of the worker)."""
    try:
        while not stop.wait(settings.GEON_RUN_HEARTBEAT_SECONDS):
            Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(
                heartbeat=timezone.now()
            )
    except Exception:  # a missed heartbeat is survivable; the run goes on
        log.exception("run %s: the heartbeat stopped", run_id)
    finally:
        close_old_connections()
        db_connection.close()


def _stored_inputs(run: Run) -> dict[str, np.ndarray[Any, Any]] | None:
    """The arrays of the run's uploaded inputs file, if it has one."""
    if not run.inputs:
        return None
    with run.inputs.open("rb") as f, np.load(f, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}
