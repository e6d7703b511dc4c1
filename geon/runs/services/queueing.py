"""Queueing a run (DESIGN.md §6-7): :func:`check_can_run` checks a request from the web process
(access, fields, the version's issues, the executor's limits, uploaded inputs) before anything
is stored; :func:`do_queue_run` stores the run and, once committed, publishes ``queued`` and
hands it to the worker."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import User as Account
from django.core.files.base import File
from django.db import transaction

from geon import execute
from geon.core.errors import GeonError, LimitError
from geon.core.graph import Graph as Document
from geon.core.nodes import APPLICATION
from geon.graphs.models import Graph, GraphVersion, ShardPlan
from geon.graphs.services import User, check_can_edit, document_issues
from geon.runs.models import Run
from geon.runs.services.errors import RunRefused
from geon.runs.services.events import publish
from geon.runs.services.execution import RUN_SEED, every_tensor, jax_devices
from geon.runs.services.fields import check_bool, check_int, check_version
from geon.runs.services.files import save_file
from geon.runs.services.inputs import check_npz, check_npz_size
from geon.runs.services.worker import queue_run


@dataclass(frozen=True)
class RunRequest:
    """A checked run request: what :func:`do_queue_run` stores and queues."""

    version: GraphVersion
    backend: str
    sharded: bool = False
    engine: str = "numpy"
    seed: int | None = RUN_SEED
    plan: ShardPlan | None = None
    intermediates: bool = False
    # The uploaded .npz, already checked against the document (rewound before it is stored).
    inputs: IO[bytes] | None = None


def check_can_run(
    user: User,
    graph_id: uuid.UUID | str,
    backend: Any = "numpy",
    *,
    engine: Any = "numpy",
    version: Any = None,
    sharded: Any = None,
    seed: Any = None,
    plan: Any = None,
    intermediates: Any = None,
    inputs: IO[bytes] | None = None,
    inputs_name: str = "inputs.npz",
    limits: execute.Limits | None = None,
) -> RunRequest:
    """Check a run request from ``user`` before anything is stored or queued.

    The graph must be visible to the user (else :class:`~geon.graphs.services.GraphNotFound`)
    and writable by them (editors and owners; else :class:`~geon.graphs.services.AccessDenied`),
    the backend known, the version exist and have no error issues, the run fit the executor's
    ``limits`` (default :meth:`geon.execute.Limits.from_env`), the ``engine`` available and
    the document lowerable to it (:func:`check_engine`), and the ``inputs`` ``.npz``
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
    if engine not in Run.Engine.values:
        check_engine(engine, {}, backend=str(backend), sharded=False, intermediates=False)
    chosen_plan = _check_plan(graph, plan)
    is_sharded = chosen_plan is not None if sharded is None else check_bool("sharded", sharded)
    if chosen_plan is not None and not is_sharded:
        raise RunRefused(
            "invalid_request",
            f'plan "{chosen_plan.name}" is given with sharded "false"; a run of a plan is sharded '
            "(leave sharded out, or set it true)",
        )
    chosen_seed = None
    if seed is not None and seed != "":
        chosen_seed = check_int("seed", seed, minimum=0, example="0")
    stored = check_version(graph, version)
    _check_no_errors(graph, stored)
    if chosen_plan is None and is_sharded:
        chosen_plan = plan_in_document(graph, stored.document)
    lim = limits if limits is not None else execute.Limits.from_env()
    if inputs is not None:
        check_npz_size(inputs, inputs_name, lim)
    keep_all = intermediates not in (None, "") and check_bool("intermediates", intermediates)
    compiled = _check_fits(stored.document, is_sharded, lim, keep_all)
    check_engine(engine, stored.document, backend=str(backend), sharded=is_sharded,
                 intermediates=keep_all)  # fmt: skip
    if inputs is None:
        chosen_seed = RUN_SEED if chosen_seed is None else chosen_seed
    else:
        check_npz(inputs, inputs_name, compiled, chosen_seed)
        inputs.seek(0)
    return RunRequest(
        version=stored,
        backend=str(backend),
        sharded=is_sharded,
        engine=str(engine),
        seed=chosen_seed,
        plan=chosen_plan,
        intermediates=keep_all,
        inputs=inputs,
    )


def check_engine(
    engine: Any, document: dict[str, Any], *, backend: str, sharded: bool, intermediates: bool
) -> None:
    """Refuse an unknown engine, and a JAX run that cannot be: jax not installed (400
    ``engine_unavailable``, saying how to install it), with ``sharded``, ``cupy`` or
    ``intermediates`` (400 ``invalid_request``), a document the lowering refuses (422
    ``cannot_run``) or a mesh of more devices than the worker has (413 ``limit_exceeded``)."""
    if engine not in Run.Engine.values:
        expected = ", ".join(f'"{e}"' for e in Run.Engine.values)
        raise RunRefused(
            "invalid_engine", f'engine "{engine}" is not known; expected one of {expected}'
        )
    if engine != Run.Engine.JAX:
        return
    from geon.interop.jax_engine import INSTALL, jax_available
    from geon.interop.jax_export import to_jax
    from geon.interop.jax_lowering import lower_shardings

    if not jax_available():
        raise RunRefused(
            "engine_unavailable", f"the jax engine needs jax, which is not installed: {INSTALL}"
        )
    if sharded or backend != Run.Backend.NUMPY or intermediates:
        raise RunRefused(
            "invalid_request",
            'engine "jax" runs the placed plan on JAX beside the logical NumPy run; leave out '
            "sharded, plan, intermediates and backend",
        )
    graph = Document.from_json(document)
    try:
        to_jax(graph)
        need = lower_shardings(graph).devices
    except GeonError as error:
        raise RunRefused("cannot_run", str(error), status=422) from None
    if need > jax_devices():
        raise RunRefused(
            "limit_exceeded",
            f"the plan's mesh needs {need} devices; the worker gives JAX {jax_devices()} "
            "(GEON_JAX_DEVICES)",
            status=413,
        )


def plan_in_document(graph: Graph, document: dict[str, Any]) -> ShardPlan | None:
    """The graph's plan whose generated Applications are exactly the document's (a sharded run
    of the plan the editor shows as current records it even when the request names none)."""
    applications = {n.get("id") for n in document.get("nodes", []) if n.get("type") == APPLICATION}
    if not applications:
        return None
    for plan in ShardPlan.objects.filter(graph=graph).order_by("pk"):
        generated = (plan.applications or {}).get("operations", {})
        listed = {a for ids in generated.values() for a in ids}
        if listed == applications:
            return plan
    return None


def _check_plan(graph: Graph, plan: Any) -> ShardPlan | None:
    """The graph's shard plan with id ``plan`` (``None``: no plan)."""
    if plan is None or plan == "":
        return None
    wanted = check_int("plan", plan, minimum=1, example="1")
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


def _check_no_errors(graph: Graph, stored: GraphVersion) -> None:
    """Refuse (409) a version whose document has error issues (accidental broadcasts among them
    when the graph is strict about broadcasting)."""
    found = document_issues(stored.document, strict_broadcasting=graph.strict_broadcasting)
    errors = [i for i in found if i["severity"] == "error"]
    if errors:
        raise RunRefused(
            "graph_has_errors",
            f'graph "{graph.title}" version {stored.number} has {len(errors)} error issue(s); '
            "fix them before running",
            errors,
            status=409,
        )


def _check_fits(
    document: dict[str, Any], sharded: bool, limits: execute.Limits, keep_all: bool = False
) -> execute.Plan:
    """The logical plan of ``document`` (compiled on NumPy, nothing allocated), once the run is
    known to fit ``limits``: the executor's own checks, made before the run is queued (with
    every tensor kept alive when the run keeps intermediates)."""
    graph = Document.from_json(document)
    outputs = every_tensor(graph) if keep_all else None
    try:
        plan, _ = execute.compile_run(
            graph, sharded=sharded, backend="numpy", limits=limits, outputs=outputs
        )
    except LimitError as error:
        raise RunRefused("limit_exceeded", str(error), status=413) from None
    except GeonError as error:
        raise RunRefused("cannot_run", str(error), status=422) from None
    return plan


def do_queue_run(request: RunRequest, user: User) -> Run:
    """Store a queued run (and its inputs file) and, once committed, publish ``queued`` and hand
    it to the worker."""
    requester = user if isinstance(user, Account) else None
    run = Run.objects.create(
        graph_version=request.version,
        requested_by=requester,
        backend=request.backend,
        engine=request.engine,
        sharded=request.sharded,
        seed=request.seed,
        plan=request.plan,
        intermediates=request.intermediates,
        queue=settings.CELERY_TASK_DEFAULT_QUEUE,
    )
    if request.inputs is not None:
        request.inputs.seek(0)
        save_file(run.inputs, f"runs/{run.pk}/inputs.npz", File(request.inputs))
        run.save(update_fields=["inputs"])
    transaction.on_commit(lambda: publish(run))
    transaction.on_commit(lambda: queue_run(run.pk, run.queue))
    return run
