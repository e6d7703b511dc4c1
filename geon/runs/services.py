"""Runs and renders: check a request, queue it on the worker, execute it there, publish events.

The web process calls :func:`check_can_run` then :func:`do_queue_run`; the worker's task calls
:func:`do_execute_run`. Every status change of a run is published to the graph's channel-layer
group as a ``run`` event (DESIGN.md §6); with the in-memory channel layer the websocket consumers
poll the rows instead, since the worker is another process.

Renders: :func:`check_can_render` then :func:`do_request_render`, which finds the cached diagram
of the version's document (by content hash and format) or stores a queued one for the worker's
:func:`do_render`.

Uploaded inputs and results are ``.npz`` files under ``GEON_DATA_DIR/files/runs/<run id>/``;
diagrams under ``GEON_DATA_DIR/files/renders/``. Every refusal is a :class:`RunRefused` with an
error code and the HTTP status it answers with.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
import math
import os
import socket
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import IO, Any

import numpy as np
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.models import User as Account
from django.core.files.base import ContentFile, File
from django.db import close_old_connections, transaction
from django.db import connection as db_connection
from django.db.models import QuerySet
from django.utils import timezone

from geon import execute, render
from geon.core.errors import GeonError, LimitError
from geon.core.graph import TENSOR, TENSOR_AXES
from geon.core.graph import Graph as Document
from geon.execute.limits import format_bytes
from geon.graphs.models import Graph, GraphVersion, ShardPlan
from geon.graphs.services import (
    GraphNotFound,
    User,
    check_can_edit,
    check_can_view,
    document_issues,
    graph_group,
    version_of,
)
from geon.runs.models import Render, Run, data_files

log = logging.getLogger(__name__)

#: Runs given neither an inputs file nor a seed use ``numpy.random.default_rng(RUN_SEED)``.
RUN_SEED = 0

#: The largest seed (numpy's generators take any non-negative integer; the column is 64-bit).
MAX_SEED = 2**63 - 1

#: The largest row id a database stores (larger ids in a URL name no run).
MAX_ID = 2**63 - 1

#: The ``event`` of a run message for each run status.
EVENT_OF_STATUS = {
    Run.Status.QUEUED: "queued",
    Run.Status.RUNNING: "progress",
    Run.Status.DONE: "done",
    Run.Status.FAILED: "failed",
}

#: The content type of each render format.
CONTENT_TYPES = {
    "svg": "image/svg+xml",
    "png": "image/png",
    "dot": "text/vnd.graphviz; charset=utf-8",
}

#: A render still queued or drawing this many seconds after it was handed to a worker is handed
#: over again (its message was lost, or its worker died); drawing is idempotent.
RENDER_RETRY_SECONDS = 60.0

UNEXPECTED_RUN_FAILURE = "the executor failed unexpectedly; the worker log has the details"
UNEXPECTED_RENDER_FAILURE = "the renderer failed unexpectedly; the worker log has the details"


class RunRefused(GeonError):
    """A run or render request is refused: ``code`` says why, ``status`` is the HTTP status
    (400 malformed, 404 unknown version or format, 409 graph with errors or results not ready,
    413 over the limits, 422 inputs that do not fit the document)."""

    def __init__(
        self,
        code: str,
        message: str,
        issues: list[dict[str, Any]] | None = None,
        *,
        status: int = 400,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.issues = issues
        self.status = status


class RunNotFound(GeonError):
    """The run does not exist, or the user may not see its graph (the two look the same)."""


@dataclass(frozen=True)
class RunRequest:
    """A checked run request: what :func:`do_queue_run` stores and queues."""

    version: GraphVersion
    backend: str
    sharded: bool = False
    seed: int | None = RUN_SEED
    plan: ShardPlan | None = None
    # The uploaded .npz, already checked against the document (rewound before it is stored).
    inputs: IO[bytes] | None = None


# --- versions and fields ---------------------------------------------------------------------


def check_version(graph: Graph, number: Any) -> GraphVersion:
    """The graph's version ``number`` (``None``: the current one); an unknown number raises
    :class:`~geon.graphs.services.VersionNotFound` (a 404, as everywhere in the API)."""
    current = graph.current_version
    assert current is not None  # check_can_view refuses graphs without a version
    if number is None or number == "":
        return current
    wanted = _check_int("version", number, minimum=1, example="1")
    return current if wanted == current.number else version_of(graph, wanted)


def _shown(value: Any) -> str:
    """A request value as the user wrote it: strings as they are, other values as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def _check_int(name: str, value: Any, *, minimum: int, example: str) -> int:
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():  # JSON's 3.0 is the integer 3
        number = int(value)
    elif isinstance(value, str) and value.strip().isdecimal():
        number = int(value.strip())
    if number is None or number < minimum or number > MAX_SEED:
        raise RunRefused(
            "invalid_request",
            f'{name} "{_shown(value)}" is not valid; expected an integer from {minimum} to '
            f"{MAX_SEED} such as {example}",
        )
    return number


def _check_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0"):
        return False
    raise RunRefused(
        "invalid_request", f'{name} "{_shown(value)}" is not valid; expected true or false'
    )


# --- runs: checking a request -----------------------------------------------------------------


def check_can_run(
    user: User,
    graph_id: uuid.UUID | str,
    backend: Any = "numpy",
    *,
    version: Any = None,
    sharded: Any = None,
    seed: Any = None,
    plan: Any = None,
    inputs: IO[bytes] | None = None,
    inputs_name: str = "inputs.npz",
    limits: execute.Limits | None = None,
) -> RunRequest:
    """Check a run request from ``user`` before anything is stored or queued.

    The graph must be visible to the user (else :class:`~geon.graphs.services.GraphNotFound`)
    and writable by them (editors and owners; else :class:`~geon.graphs.services.AccessDenied`),
    the backend known, the version exist and have no error issues, the run fit the executor's
    ``limits`` (default :meth:`geon.execute.Limits.from_env`), and the ``inputs`` ``.npz``
    (loaded without pickles) hold arrays for the document's inputs with their shapes and dtypes.
    Inputs the file does not hold are generated from ``seed``; without a file the seed defaults
    to :data:`RUN_SEED`. ``plan`` (the id of one of the graph's shard plans) records which plan's
    Applications a run exercises, and makes it sharded. Raises :class:`RunRefused` naming what
    is wrong.
    """
    graph = check_can_edit(user, graph_id)
    if backend not in Run.Backend.values:
        expected = ", ".join(f'"{b}"' for b in Run.Backend.values)
        raise RunRefused(
            "invalid_backend", f'backend "{backend}" is not known; expected one of {expected}'
        )
    chosen_plan = _check_plan(graph, plan)
    is_sharded = chosen_plan is not None if sharded is None else _check_bool("sharded", sharded)
    if chosen_plan is not None and not is_sharded:
        raise RunRefused(
            "invalid_request",
            f'plan "{chosen_plan.name}" is given with sharded "false"; a run of a plan is sharded '
            "(leave sharded out, or set it true)",
        )
    chosen_seed = None
    if seed is not None and seed != "":
        chosen_seed = _check_int("seed", seed, minimum=0, example="0")
    stored = check_version(graph, version)
    errors = [i for i in document_issues(stored.document) if i["severity"] == "error"]
    if errors:
        raise RunRefused(
            "graph_has_errors",
            f'graph "{graph.title}" version {stored.number} has {len(errors)} error issue(s); '
            "fix them before running",
            errors,
            status=409,
        )
    lim = limits if limits is not None else execute.Limits.from_env()
    if inputs is not None:
        _check_npz_size(inputs, inputs_name, lim)
    plan = _check_fits(stored.document, is_sharded, lim)
    if inputs is None:
        chosen_seed = RUN_SEED if chosen_seed is None else chosen_seed
    else:
        _read_npz(inputs, inputs_name, plan, chosen_seed)
        inputs.seek(0)
    return RunRequest(
        version=stored,
        backend=str(backend),
        sharded=is_sharded,
        seed=chosen_seed,
        plan=chosen_plan,
        inputs=inputs,
    )


def _check_plan(graph: Graph, plan: Any) -> ShardPlan | None:
    """The graph's shard plan with id ``plan`` (``None``: no plan)."""
    if plan is None or plan == "":
        return None
    wanted = _check_int("plan", plan, minimum=1, example="1")
    found = ShardPlan.objects.filter(graph=graph, pk=wanted).first()
    if found is None:
        names = ", ".join(
            f'{p.pk} ("{p.name}")' for p in ShardPlan.objects.filter(graph=graph).order_by("pk")
        )
        raise RunRefused(
            "plan_not_found",
            f'graph "{graph.title}" has no shard plan "{wanted}"; expected one of '
            f"{names or 'none (the graph has no shard plans)'}",
            status=404,
        )
    return found


def _check_fits(document: dict[str, Any], sharded: bool, limits: execute.Limits) -> execute.Plan:
    """The logical plan of ``document`` (compiled on NumPy, nothing allocated), once the run is
    known to fit ``limits``: the executor's own checks, made before the run is queued."""
    graph = Document.from_json(document)
    try:
        plan, _ = execute.compile_run(graph, sharded=sharded, backend="numpy", limits=limits)
    except LimitError as error:
        raise RunRefused("limit_exceeded", str(error), status=413) from None
    except GeonError as error:
        raise RunRefused("cannot_run", str(error), status=422) from None
    return plan


#: Bytes an ``.npz`` may hold beyond its arrays' data: each member's zip entries and ``.npy``
#: header, and the archive's directory.
NPZ_OVERHEAD_BYTES = 64 * 1024
NPZ_MEMBER_OVERHEAD_BYTES = 4096

#: The widest element an uploaded array may have (complex128): an input's upload is capped at
#: its elements times this, whatever dtype the file uses.
NPZ_MAX_ITEMSIZE = 16


def _not_npz(name: str) -> RunRefused:
    return RunRefused(
        "invalid_npz",
        f'inputs file "{name}" is not an .npz file; expected one written by numpy.savez or '
        "numpy.savez_compressed",
    )


def _check_npz_size(upload: IO[bytes], name: str, limits: execute.Limits) -> None:
    """Refuse an upload over ``limits.max_bytes``, packed or as its members say unpacked, and
    one that is not a zip archive; nothing is decompressed."""
    limit = format_bytes(limits.max_bytes)
    upload.seek(0, os.SEEK_END)
    size = upload.tell()
    upload.seek(0)
    if size > limits.max_bytes:
        raise RunRefused(
            "inputs_too_large",
            f'inputs file "{name}" has {format_bytes(size)}; the limit is {limit} (GEON_MAX_BYTES)',
            status=413,
        )
    try:
        with zipfile.ZipFile(upload) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except Exception:  # any failure to read an untrusted archive means "not an .npz"
        raise _not_npz(name) from None
    if unpacked > limits.max_bytes:
        raise RunRefused(
            "inputs_too_large",
            f'inputs file "{name}" holds {format_bytes(unpacked)} of arrays; the limit is {limit} '
            "(GEON_MAX_BYTES)",
            status=413,
        )


@dataclass(frozen=True)
class NpyHeader:
    """What an ``.npy`` member's header says: enough to check it before reading its data."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    fortran_order: bool
    # Bytes before the data (magic, version, header).
    offset: int

    @property
    def size(self) -> int:
        """The member's whole size, as the header says."""
        return self.offset + self.dtype.itemsize * math.prod(self.shape)

    def placeholder(self) -> np.ndarray[Any, Any]:
        """An array of this shape and dtype that allocates one element (for the checks)."""
        return np.broadcast_to(np.zeros((), self.dtype), self.shape)


def _npy_header(
    archive: zipfile.ZipFile, member: str | zipfile.ZipInfo, max_header_size: int = 10_000
) -> NpyHeader:
    """The header of one ``.npy`` member of an archive, read without its data (numpy's own
    header readers; ``max_header_size`` bounds what they parse)."""
    with archive.open(member) as f:
        version = np.lib.format.read_magic(f)
        read = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read(f, max_header_size=max_header_size)
        return NpyHeader(tuple(shape), dtype, fortran, f.tell())


def _read_npy_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> NpyHeader:
    """The header of one member, refusing objects and a size that disagrees with the zip's."""
    key = info.filename[: -len(".npy")]
    try:
        header = _npy_header(archive, info, NPZ_MEMBER_OVERHEAD_BYTES)
    except Exception as error:  # a malformed member, whatever numpy or zipfile say about it
        raise RunRefused(
            "invalid_npz",
            f'inputs file "{name}": "{key}" cannot be read ({type(error).__name__}: {error}); '
            "expected an array written by numpy.save",
        ) from None
    if header.dtype.hasobject:
        raise RunRefused(
            "invalid_npz",
            f'inputs file "{name}": array "{key}" holds Python objects, which are not loaded '
            "(allow_pickle=False); expected numeric or boolean arrays",
        )
    if header.size != info.file_size:
        raise RunRefused(
            "invalid_npz",
            f'inputs file "{name}": array "{key}" has a header for shape {header.shape} and '
            f"dtype {header.dtype} ({header.size} bytes), but the archive says it holds "
            f"{info.file_size} bytes; expected an array written by numpy.save",
        )
    return header


def _read_npz(upload: IO[bytes], name: str, plan: execute.Plan, seed: int | None) -> None:
    """Check an uploaded ``.npz`` against ``plan``'s inputs. Before any data is read: the upload
    is capped near what the inputs need, and each member's header (names, shapes, dtypes, and
    the size the archive gives it) is checked against the inputs; then each array is read
    (without pickles) to prove that it decodes."""
    needed = sum(math.prod(plan.tensors[i].shape) for i in plan.inputs) * NPZ_MAX_ITEMSIZE
    cap = needed + NPZ_OVERHEAD_BYTES + NPZ_MEMBER_OVERHEAD_BYTES * len(plan.inputs)
    upload.seek(0, os.SEEK_END)
    size = upload.tell()
    upload.seek(0)
    if size > cap:
        raise RunRefused(
            "inputs_too_large",
            f'inputs file "{name}" has {format_bytes(size)}; the graph\'s inputs need at most '
            f"{format_bytes(cap)} (their elements at {NPZ_MAX_ITEMSIZE} bytes each)",
            status=413,
        )
    try:
        archive = zipfile.ZipFile(upload)
    except Exception:
        raise _not_npz(name) from None
    with archive:
        headers: dict[str, tuple[zipfile.ZipInfo, NpyHeader]] = {}
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                raise RunRefused(
                    "invalid_npz",
                    f'inputs file "{name}": "{info.filename}" is not an array; expected only '
                    ".npy members, as numpy.savez writes",
                )
            if info.filename[:-4] in headers:
                raise RunRefused(
                    "invalid_npz",
                    f'inputs file "{name}" holds "{info.filename}" twice; expected each array '
                    "once, as numpy.savez writes",
                )
            headers[info.filename[:-4]] = (info, _read_npy_header(archive, info, name))
        _check_inputs(plan, {k: h.placeholder() for k, (_, h) in headers.items()}, name, seed)
        for key, (info, _header) in headers.items():
            try:
                with archive.open(info) as f:
                    np.lib.format.read_array(f, allow_pickle=False)
            except Exception as error:  # data that ends early or does not decompress
                raise RunRefused(
                    "invalid_npz",
                    f'inputs file "{name}": "{key}" cannot be read ({type(error).__name__}: '
                    f"{error}); expected an array written by numpy.save",
                ) from None


def _describe(info: execute.TensorInfo) -> str:
    return f"shape {info.shape}, dtype {info.dtype}"


def _check_inputs(
    plan: execute.Plan,
    arrays: Mapping[str, np.ndarray[Any, Any]],
    name: str,
    seed: int | None,
) -> None:
    """Keys, shapes and dtypes of uploaded arrays against the document's inputs."""
    keys = execute.tensor_keys(plan.tensors)
    expected = {keys[i]: i for i in plan.inputs}
    by_id = {plan.tensors[i].id: i for i in plan.inputs}
    listed = ", ".join(f'"{k}" ({_describe(plan.tensors[i])})' for k, i in expected.items())
    fed: dict[int, str] = {}
    for key in arrays:
        index = expected.get(key, by_id.get(key))
        if index is None:
            raise RunRefused(
                "invalid_inputs",
                f'inputs file "{name}" has an array "{key}", which is not an input of the graph; '
                f"expected one of {listed or 'none (the graph has no inputs)'}",
                status=422,
            )
        if index in fed:
            raise RunRefused(
                "invalid_inputs",
                f'inputs file "{name}" has arrays "{fed[index]}" and "{key}" for the same '
                f'input "{keys[index]}"; expected one',
                status=422,
            )
        fed[index] = key
    try:
        execute.resolve_inputs(dataclasses.replace(plan, inputs=tuple(fed)), arrays, None)
    except GeonError as error:
        raise RunRefused("invalid_inputs", f'inputs file "{name}": {error}', status=422) from None
    missing = [i for i in plan.inputs if i not in fed]
    if missing and seed is None:
        info = plan.tensors[missing[0]]
        raise RunRefused(
            "invalid_inputs",
            f'inputs file "{name}" has no array for input "{keys[info.index]}" '
            f"({_describe(info)}); add it, or give a seed to generate the inputs the file lacks",
            status=422,
        )


# --- runs: queueing and executing -------------------------------------------------------------


def do_queue_run(request: RunRequest, user: User) -> Run:
    """Store a queued run (and its inputs file) and, once committed, publish ``queued`` and hand
    it to the worker."""
    from geon.runs.tasks import execute_run

    requester = user if isinstance(user, Account) else None
    run = Run.objects.create(
        graph_version=request.version,
        requested_by=requester,
        backend=request.backend,
        sharded=request.sharded,
        seed=request.seed,
        plan=request.plan,
    )
    if request.inputs is not None:
        request.inputs.seek(0)
        _save_file(run.inputs, f"runs/{run.pk}/inputs.npz", File(request.inputs))
        run.save(update_fields=["inputs"])
    transaction.on_commit(lambda: publish(run))
    transaction.on_commit(lambda: execute_run.delay(run.pk))
    return run


def execute_document(
    document: dict[str, Any],
    *,
    backend: str,
    progress: Callable[[execute.Progress], None],
    sharded: bool = False,
    seed: int | None = RUN_SEED,
    inputs: Mapping[str, Any] | None = None,
) -> execute.RunResult:
    """The one call into the executor: a logical or sharded run within the environment's
    limits, with ``inputs`` and the rest generated from ``seed``."""
    return execute.run(
        Document.from_json(document),
        inputs,
        seed=seed,
        sharded=sharded,
        backend=backend,
        on_progress=progress,
        limits=execute.Limits.from_env(),
    )


def _stored_inputs(run: Run) -> dict[str, np.ndarray[Any, Any]] | None:
    if not run.inputs:
        return None
    with run.inputs.open("rb") as f, np.load(f, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def _save_file(field: Any, name: str, content: bytes | File[Any]) -> None:
    """Write ``content`` as ``name`` in the field's storage, replacing a file left there (by an
    earlier attempt, or a transaction that was rolled back) so that the name stays ``name``."""
    if field.storage.exists(name):
        field.storage.delete(name)
    field.save(name, content if isinstance(content, File) else ContentFile(content), save=False)


def worker_identity() -> tuple[str, int]:
    """The host name and process id recorded on the runs this process executes."""
    return socket.gethostname(), os.getpid()


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def _stale_before(now: datetime) -> datetime:
    """A running run whose heartbeat is older than this was stranded by its worker."""
    return now - timedelta(seconds=3 * settings.GEON_RUN_HEARTBEAT_SECONDS)


def _worker_gone(run: Run, now: datetime) -> bool:
    """Whether the worker recorded on a running run has stopped: its process is gone from this
    host, or its heartbeat is stale."""
    host, _pid = worker_identity()
    if run.worker_host == host and run.worker_pid and not _process_alive(run.worker_pid):
        return True
    return run.heartbeat is None or run.heartbeat < _stale_before(now)


def stranded_reason(attempts: int) -> str:
    """What a run that no worker finished says, after ``attempts`` hand-overs."""
    retries = attempts - 1
    return (
        f"the worker stopped while running this; retried {retries} "
        f"time{'' if retries == 1 else 's'}"
    )


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
            if not _worker_gone(run, now):
                return None  # a live worker has it (a duplicate message)
            if run.attempts >= settings.GEON_RUN_MAX_ATTEMPTS:
                _fail_stranded(run, now)
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
        if _claimed(run).update(**fields, updated=run.heartbeat):
            publish(run)

    stop = threading.Event()
    beating = threading.Thread(target=_heartbeat, args=(run.pk, stop), daemon=True)
    beating.start()
    began = time.perf_counter()
    seed = RUN_SEED if run.seed is None and not run.inputs else run.seed
    try:
        # Test-only (tests/faults): hold the run in "running" so that a test can kill its
        # worker mid-run. Unset everywhere else.
        time.sleep(float(os.environ.get("GEON_TEST_RUN_DELAY_SECONDS", "0")))
        result = execute_document(
            run.graph_version.document,
            backend=run.backend,
            progress=progress,
            sharded=run.sharded,
            seed=seed,
            inputs=_stored_inputs(run),
        )
        summary = result.summary()
        run.timings = {**run.timings, **summary.pop("timings")}
        run.result = summary
        buffer = io.BytesIO()
        np.savez(buffer, **result.by_key())  # type: ignore[arg-type]
        _save_file(run.results, f"runs/{run.pk}/results.npz", buffer.getvalue())
        run.status = Run.Status.DONE
        run.progress = 1.0
    except GeonError as error:
        run.status = Run.Status.FAILED
        run.error = str(error)
    except Exception:
        log.exception("run %s failed unexpectedly", run_id)
        run.status = Run.Status.FAILED
        run.error = UNEXPECTED_RUN_FAILURE
    finally:
        stop.set()
        beating.join()
    run.timings = {**run.timings, "execute": round(time.perf_counter() - began, 6)}
    run.finished = timezone.now()
    with transaction.atomic():
        # Only while this attempt still holds the run: a sweep that took this worker for gone
        # (a heartbeat late under load) may have handed the run to another attempt meanwhile,
        # whose outcome is the one that counts.
        if not _claimed(run).select_for_update().exists():
            log.warning("run %s: attempt %s was handed over meanwhile; its outcome is dropped",
                        run.pk, run.attempts)  # fmt: skip
            return
        run.save()
    publish(run)


def _claimed(run: Run) -> QuerySet[Run]:
    """The run's row while the attempt ``run`` holds it: running, on this worker process, at
    this attempt (a hand-over changes the status and the attempt)."""
    return Run.objects.filter(
        pk=run.pk,
        status=Run.Status.RUNNING,
        worker_host=run.worker_host,
        worker_pid=run.worker_pid,
        attempts=run.attempts,
    )


# --- runs and renders: stranded by a worker that is gone ---------------------------------------


def _fail_stranded(run: Run, now: datetime) -> None:
    run.status = Run.Status.FAILED
    run.error = stranded_reason(run.attempts)
    run.finished = now
    run.save()
    transaction.on_commit(lambda: publish(run))


def _hand_over_run(run: Run, now: datetime) -> None:
    """Queue a stranded run again (a new attempt), or fail it once it had all its attempts."""
    from geon.runs.tasks import execute_run

    if run.attempts >= settings.GEON_RUN_MAX_ATTEMPTS:
        if run.status == Run.Status.RUNNING:
            _fail_stranded(run, now)
        else:
            run.status = Run.Status.FAILED
            run.error = (
                f"no worker started this run; it was handed to a worker {run.attempts} times, "
                f"{settings.GEON_RUN_REQUEUE_SECONDS} s apart (is a worker running? /healthz)"
            )
            run.finished = now
            run.save()
            transaction.on_commit(lambda: publish(run))
        return
    log.warning("run %s was stranded (%s); handing it over again", run.pk, run.status)
    run.attempts += 1
    run.status = Run.Status.QUEUED
    run.progress = 0.0
    run.queued = now
    run.save()
    pk = run.pk
    transaction.on_commit(lambda: publish(run))
    transaction.on_commit(lambda: execute_run.delay(pk))


def _render_stuck(found: Render, now: datetime) -> bool:
    waiting = found.status in (Render.Status.QUEUED, Render.Status.RUNNING)
    return waiting and (now - found.queued).total_seconds() > RENDER_RETRY_SECONDS


def _hand_over_render(found: Render, now: datetime) -> None:
    """Queue a render again (a new attempt), or fail it once it had all its attempts."""
    from geon.runs.tasks import render_diagram

    if found.attempts >= settings.GEON_RUN_MAX_ATTEMPTS:
        found.status = Render.Status.FAILED
        found.error = (
            f"no worker finished drawing this; it was handed to a worker {found.attempts} times"
        )
        found.finished = now
        found.save()
        return
    found.attempts += 1
    found.status = Render.Status.QUEUED
    found.file = ""
    found.finished = None
    found.queued = now
    found.save()
    pk = found.pk
    transaction.on_commit(lambda: render_diagram.delay(pk))


def sweep(now: datetime | None = None) -> dict[str, int]:
    """Reconcile what workers that are gone left behind: running runs whose worker stopped, runs
    queued over ``GEON_RUN_REQUEUE_SECONDS`` while no run started (their message was lost), and
    renders waiting over :data:`RENDER_RETRY_SECONDS`. Each is handed to a worker again, or
    failed with the reason after ``GEON_RUN_MAX_ATTEMPTS``. Returns how many of each."""
    now = now or timezone.now()
    requeue_before = now - timedelta(seconds=settings.GEON_RUN_REQUEUE_SECONDS)
    counts = {"running": 0, "queued": 0, "renders": 0}
    with transaction.atomic():
        for run in Run.objects.select_for_update().filter(status=Run.Status.RUNNING):
            if _worker_gone(run, now):
                _hand_over_run(run, now)
                counts["running"] += 1
        moving = Run.objects.filter(started__gte=requeue_before).exists()
        if not moving:
            lost = Run.objects.select_for_update().filter(
                status=Run.Status.QUEUED, queued__lt=requeue_before
            )
            for run in lost:
                _hand_over_run(run, now)
                counts["queued"] += 1
        waiting = Render.objects.select_for_update().filter(
            status__in=(Render.Status.QUEUED, Render.Status.RUNNING)
        )
        for found in waiting:
            if _render_stuck(found, now):
                _hand_over_render(found, now)
                counts["renders"] += 1
    if any(counts.values()):
        log.warning("sweep: handed over or failed %s", counts)
    return counts


def start_sweeper() -> threading.Thread:
    """Run :func:`sweep` now and every ``GEON_RUN_HEARTBEAT_SECONDS`` in a daemon thread (the
    worker's main process starts it once ready)."""

    def loop() -> None:
        while True:
            try:
                sweep()
            except Exception:  # the database may be away for a moment; try again next time
                log.exception("sweep failed")
            finally:
                db_connection.close()
            time.sleep(settings.GEON_RUN_HEARTBEAT_SECONDS)

    thread = threading.Thread(target=loop, name="geon-sweeper", daemon=True)
    thread.start()
    return thread


# --- runs: reading ----------------------------------------------------------------------------


def check_can_view_run(user: User, run_id: int) -> Run:
    """The run, if ``user`` may see its graph; raises :class:`RunNotFound` otherwise."""
    run = None
    if 1 <= run_id <= MAX_ID:
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


#: The most values one answer of :func:`result_view` carries (a 256 x 256 slice).
RESULT_VIEW_LIMIT = 65_536


def result_view(run: Run, key: str, at: str | None = None) -> dict[str, Any]:
    """One output of a done run as JSON, for the editor's heat map: its shape, dtype, axes (the
    tensor's TensorAxes), min and max, and the values of a 1-D or 2-D view: the whole tensor for
    rank 1 or 2, else the slice that ``at`` (``"i,j"``: one index per leading dim, all but the
    last two) picks. A view over :data:`RESULT_VIEW_LIMIT` values is refused (413) from the
    file's header, before anything is loaded. ``maxAbsDiff`` is the sharded run's difference
    from the logical run for this output (``null`` for a logical run)."""
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
        header = _npy_header(archive, f"{key}.npy")
        shape, dtype = header.shape, header.dtype
        lead = shape[:-2] if len(shape) > 2 else ()
        index: tuple[int, ...] = ()
        if lead:
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
        elif at:
            raise RunRefused(
                "invalid_slice",
                f'result "{key}" has rank {len(shape)}; a slice "{at}" is only for rank 3 and more',
                status=400,
            )
        view_shape = shape[len(lead) :]
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
    diffs = run.result.get("max_abs_diff") if run.sharded else None
    axes: list[str] | None = None
    for node in run.graph_version.document.get("nodes", []):
        if node.get("type") == TENSOR and key in (node.get("label"), node.get("id")):
            tag = (node.get("tags") or {}).get(TENSOR_AXES)
            if isinstance(tag, dict) and isinstance(tag.get("axes"), list):
                axes = [str(a) for a in tag["axes"]]
            break
    finite = values[np.isfinite(values)]
    return {
        "run": run.pk,
        "key": key,
        "shape": list(shape),
        "dtype": str(dtype),
        "axes": axes,
        "at": list(index),
        "viewShape": list(view_shape),
        "limit": RESULT_VIEW_LIMIT,
        "min": float(finite.min()) if finite.size else None,
        "max": float(finite.max()) if finite.size else None,
        "values": [None if not np.isfinite(v) else float(v) for v in values.ravel()],
        "maxAbsDiff": diffs.get(key) if isinstance(diffs, dict) else None,
    }


def results_url(run: Run) -> str:
    return f"/api/v1/runs/{run.pk}/results.npz"


def run_json(run: Run) -> dict[str, Any]:
    """A run as JSON, as in the ``run`` websocket events and the HTTP answers.

    ``max_abs_diff`` (named as in the CLI's output) is the sharded run's max abs difference from
    the logical run per output key, ``null`` until a sharded run is done and for logical runs.
    """
    version = run.graph_version

    def iso(value: Any) -> str | None:
        return value.isoformat() if value else None

    done = run.status == Run.Status.DONE
    return {
        "id": run.pk,
        "graphId": str(version.graph_id),
        "version": version.number,
        "backend": run.backend,
        "sharded": run.sharded,
        "plan": run.plan_id,
        "seed": run.seed,
        "uploadedInputs": bool(run.inputs),
        "status": run.status,
        "progress": run.progress,
        "step": run.step,
        "created": iso(run.created),
        "started": iso(run.started),
        "finished": iso(run.finished),
        "timings": run.timings,
        "result": run.result,
        "max_abs_diff": run.result.get("max_abs_diff") if done else None,
        "results": results_url(run) if done and run.results else None,
        "error": run.error,
        "workerPid": run.worker_pid,
        "attempts": run.attempts,
    }


def run_event(run: Run) -> dict[str, Any]:
    """The ``run`` websocket message for the run's current status."""
    return {"type": "run", "event": EVENT_OF_STATUS[Run.Status(run.status)], "run": run_json(run)}


def publish(run: Run) -> None:
    """Send the run's current state to its graph's group on the channel layer."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "run.event", "run": run_json(run)}
    async_to_sync(layer.group_send)(graph_group(run.graph_version.graph_id), message)


def runs_changed_since(
    graph_id: uuid.UUID | str, since: datetime
) -> list[tuple[datetime, dict[str, Any]]]:
    """The graph's runs updated at or after ``since``, oldest change first: (updated, JSON)."""
    runs = (
        Run.objects.filter(graph_version__graph_id=graph_id, updated__gte=since)
        .select_related("graph_version")
        .order_by("updated", "id")
    )
    return [(run.updated, run_json(run)) for run in runs]


# --- files -----------------------------------------------------------------------------------


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


# --- renders ----------------------------------------------------------------------------------


def document_hash(document: dict[str, Any]) -> str:
    """SHA-256 of the document's canonical JSON: what a cached diagram is keyed by."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_can_render(
    user: User, graph_id: uuid.UUID | str, format: str, version: Any = None
) -> tuple[GraphVersion, str]:
    """The version to draw and the format, if ``user`` may see the graph and the format is one
    :mod:`geon.render` writes (else :class:`RunRefused` ``unknown_format``, 404)."""
    graph = check_can_view(user, graph_id)
    try:
        fmt = render.check_format(format)
    except render.RenderFormatError as error:
        raise RunRefused("unknown_format", str(error), status=404) from None
    return check_version(graph, version), fmt


def do_request_render(version: GraphVersion, format: str) -> Render:
    """The diagram of ``version`` as ``format``: the cached one for the same document, or a new
    one queued for the worker once committed. A finished render whose file has gone missing,
    and one waiting longer than :data:`RENDER_RETRY_SECONDS`, are queued again (the latter up
    to ``GEON_RUN_MAX_ATTEMPTS`` times, then failed)."""
    from geon.runs.tasks import render_diagram

    with transaction.atomic():
        found, created = Render.objects.select_for_update().get_or_create(
            content_hash=document_hash(version.document),
            format=format,
            defaults={"graph_version": version},
        )
        now = timezone.now()
        lost = found.status == Render.Status.DONE and not (
            found.file.name and found.file.storage.exists(found.file.name)
        )
        if lost:  # the file went missing: draw it again, a first attempt
            found.attempts = 0
        if lost or _render_stuck(found, now):
            _hand_over_render(found, now)
        elif created:
            transaction.on_commit(lambda: render_diagram.delay(found.pk))
    return found


def do_render(render_id: int) -> None:
    """Draw a queued diagram (in the worker), with the document's issues highlighted.
    Idempotent: a finished render is left as it is."""
    with transaction.atomic():
        found = (
            Render.objects.select_for_update()
            .select_related("graph_version")
            .filter(pk=render_id)
            .first()
        )
        if found is None or found.status in (Render.Status.DONE, Render.Status.FAILED):
            return
        found.status = Render.Status.RUNNING
        found.save(update_fields=["status"])
    try:
        graph = Document.from_json(found.graph_version.document)
        data = render.render(graph, render.check_format(found.format), graph.check())
        _save_file(found.file, f"renders/{found.content_hash}.{found.format}", data)
        found.status = Render.Status.DONE
    except GeonError as error:
        found.status = Render.Status.FAILED
        found.error = str(error)
    except Exception:
        log.exception("render %s failed unexpectedly", render_id)
        found.status = Render.Status.FAILED
        found.error = UNEXPECTED_RENDER_FAILURE
    found.finished = timezone.now()
    found.save()


def render_json(found: Render, version: GraphVersion) -> dict[str, Any]:
    """A render's state as JSON (for the 202 answer while it is drawn)."""
    return {
        "graphId": str(version.graph_id),
        "version": version.number,
        "format": found.format,
        "hash": found.content_hash,
        "status": found.status,
        "error": found.error,
    }
