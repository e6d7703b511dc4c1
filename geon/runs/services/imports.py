"""ONNX model imports (issue #20): an uploaded ``.onnx`` becomes a graph of its uploader,
converted by a worker with :func:`geon.interop.onnx_import.import_onnx`.

:func:`check_can_import` bounds the request in the web process before anything is stored (the
file's name and size, the ``dims`` field, how many of the person's imports are waiting);
:func:`do_queue_import` stores the upload and hands it to the worker once committed; the worker's
:func:`do_import` converts the model in a bounded child process
(:func:`geon.interop.onnx_bounded.import_in_child`: an empty working folder,
``GEON_IMPORT_MAX_MEMORY_BYTES``, ``GEON_IMPORT_SECONDS``, a document within the size the REST
API accepts, ``GEON_MAX_REQUEST_BYTES``), stores the graph (through
:func:`geon.graphs.services.do_create_graph`) and the initializers' values as an ``.npz`` keyed
by their ONNX names, recording the step it is at. A refusal of the interop (unsupported
operators with their node names, a dim without a length, a bound...) is the import's ``error``;
nothing else of a failure reaches the user.

The axes' names (issue 35): the worker reads each axis's role off the model
(:mod:`geon.interop.onnx_roles`) and, unless the person asked to ``review`` them, makes the graph
with the proposed names (``heads``, ``ffn``..., every ``dim_param`` kept). An import asked to
review them stops at ``review`` with its ``axes`` (name as imported, length, role, proposed
name, where the model shows it) and keeps the upload; :func:`do_name_axes` takes the names the
person accepts (checked by the rule every axis name follows) and queues it again, and the worker
makes the graph with them. One left in review over ``GEON_IMPORT_REVIEW_HOURS`` is ``expired``
by the sweep (:func:`geon.runs.services.sweep.sweep_reviews`): its upload deleted, its ``error``
saying why; names posted then are refused with that reason.

>>> parse_dims("batch=8, seq=16")
{'batch': 8, 'seq': 16}
>>> import_title("models/My model.onnx")
'My model'
"""

from __future__ import annotations

import logging
import re
from typing import IO, Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import User as Account
from django.core.files.base import File
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from geon.core.errors import GeonError
from geon.execute.limits import format_bytes
from geon.graphs.services import User, do_create_graph
from geon.graphs.services.documents import parse_document
from geon.graphs.services.graphs import TITLE_MAX
from geon.interop.dims import DimsError, split_dims
from geon.interop.dims import parse_dims as dims_of
from geon.interop.onnx_bounded import DEFAULT_DIM, DocumentTooLarge, ImportLimitExceeded
from geon.runs.models import ModelImport
from geon.runs.services.errors import RunNotFound, RunRefused
from geon.runs.services.files import save_file
from geon.runs.services.worker import queue_import

log = logging.getLogger(__name__)

#: The steps of an import, in order, as ``GET /api/v1/imports/<id>`` names them.
READING, NAMING, STORING = "reading the model", "naming axes", "storing the graph"
#: The step of an import waiting for the person to accept its axes' names.
REVIEWING = "waiting for the axes' names"
__all__ = ["DEFAULT_DIM"]  # the length an unbound ``dim_param`` gets (onnx_bounded)
#: The statuses of an import that holds its upload, counted in ``GEON_IMPORTS_PER_USER``.
HOLDING = (ModelImport.Status.QUEUED, ModelImport.Status.RUNNING, ModelImport.Status.REVIEW)
#: Seconds a client is asked to wait when too many of its imports are converting.
RETRY_AFTER_SECONDS = 5
UNEXPECTED_IMPORT_FAILURE = "the import failed unexpectedly; the worker log has the details"
TASK_TIME_LIMIT = (
    "the import ran past the worker's time limit for it (GEON_IMPORT_SECONDS and 30 s more); "
    "import a smaller model"
)
WORKER_STOPPED = (
    "the worker stopped while importing this model (it may be too large to import); "
    "the import is not tried again"
)


def parse_dims(text: Any) -> dict[str, int]:
    """The ``dims`` field, ``"batch=8, seq=16"`` (:func:`geon.interop.dims.parse_dims`):
    lengths for the model's ``dim_param`` names; :class:`RunRefused` ``invalid_dims`` naming the
    bad item."""
    if text is None or text == "":
        return {}
    if not isinstance(text, str):
        raise RunRefused("invalid_dims", f'dims "{text}" is not text; expected e.g. "batch=8"')
    try:
        return dims_of(split_dims(text))
    except DimsError as error:
        raise RunRefused("invalid_dims", str(error)) from None


def parse_review(text: Any) -> bool:
    """The ``review`` field: ``true``/``1`` to stop for the axes' names, ``false``/``0``/absent
    not to; :class:`RunRefused` ``invalid_review`` naming anything else."""
    if text is None or text == "":
        return False
    value = str(text).strip().lower()
    if value not in ("true", "1", "false", "0"):
        raise RunRefused(
            "invalid_review", f'review "{str(text)[:40]}" is not one of "true", "false", "1", "0"'
        )
    return value in ("true", "1")


def import_title(filename: str) -> str:
    """The new graph's title: the file's name without folders and ``.onnx``."""
    base = re.sub(r"\.onnx$", "", filename.replace("\\", "/").rsplit("/", 1)[-1], flags=re.I)
    return base.strip()[:TITLE_MAX].strip() or "Imported model"


def _size_of(upload: IO[bytes]) -> int:
    upload.seek(0, 2)
    size = upload.tell()
    upload.seek(0)
    return size


def check_upload_size(size: int, name: str) -> None:
    """Refuse (413 ``model_too_large``) a model over ``GEON_IMPORT_MAX_BYTES``."""
    limit = settings.GEON_IMPORT_MAX_BYTES
    if size > limit:
        raise RunRefused(
            "model_too_large",
            f'model "{name}" has {format_bytes(size)}; the limit is {format_bytes(limit)} '
            "(GEON_IMPORT_MAX_BYTES)",
            status=413,
        )


def _converting(n: int) -> str:
    """How many of a person's imports are queued or converting, in a refusal's words."""
    return f"{n} of your model imports {'is' if n == 1 else 'are'} still converting"


def too_many_imports(waiting: int, reviews: int, cap: int) -> str:
    """Why a new import is refused (429 ``too_many_imports``) with ``waiting`` of the person's
    imports queued or converting and ``reviews`` in review, ``cap`` at most: what holds the slots,
    and what frees one. Naming the axes of an import in review frees none (it moves from review
    to queued, both held) until it has finished converting; an import left in review frees its
    slot when it expires, ``GEON_IMPORT_REVIEW_HOURS`` after it entered review."""
    bound = f"at most {cap} may wait at once (GEON_IMPORTS_PER_USER)"
    hours = settings.GEON_IMPORT_REVIEW_HOURS
    expire = f"let one in review expire (one left {hours} h expires: GEON_IMPORT_REVIEW_HOURS)"
    names = (
        "1 of your model imports waits for its axes' names"
        if reviews == 1
        else f"{reviews} of your model imports wait for their axes' names"
    )
    if not reviews:
        return f"{_converting(waiting)}; {bound}: wait for one to finish converting"
    if not waiting:
        return (
            f"{names}; {bound}: name the axes of one and wait for it to finish converting (it "
            f"counts until then), or {expire}"
        )
    return (
        f"{_converting(waiting)} and {reviews} {'waits' if reviews == 1 else 'wait'} for "
        f"{'its' if reviews == 1 else 'their'} axes' names; {bound}: wait for one to finish "
        f"converting, or {expire}"
    )


def _held(owner_id: Any) -> tuple[int, int]:
    """How many of the owner's imports hold an upload (:data:`HOLDING`): ``(queued or
    converting, in review)``, in one query."""
    held = dict(
        ModelImport.objects.filter(owner_id=owner_id, status__in=HOLDING)
        .order_by()
        .values_list("status")
        .annotate(n=Count("pk"))
    )
    waiting = held.get(ModelImport.Status.QUEUED, 0) + held.get(ModelImport.Status.RUNNING, 0)
    return waiting, held.get(ModelImport.Status.REVIEW, 0)


def check_can_import(
    user: User, upload: IO[bytes] | None, name: str, dims: Any = None
) -> dict[str, int]:
    """Check an import request before anything is stored: a file named ``*.onnx`` within
    ``GEON_IMPORT_MAX_BYTES``, valid ``dims``, and fewer than ``GEON_IMPORTS_PER_USER`` of the
    person's imports holding an upload: waiting for or on a worker, or in review for their axes'
    names (a review keeps its upload up to ``GEON_IMPORT_REVIEW_HOURS``, so it is counted too;
    429 ``too_many_imports``). The bound dims."""
    if upload is None:
        raise RunRefused(
            "invalid_request", 'file field "model" is missing; expected an ONNX model (.onnx)'
        )
    if not name.lower().endswith(".onnx"):
        raise RunRefused(
            "not_onnx",
            f'"{name[:200]}" is not an .onnx file; expected an ONNX model (a file named *.onnx)',
            status=415,
        )
    check_upload_size(_size_of(upload), name)
    bound = parse_dims(dims)
    waiting, reviews = _held(user.pk)
    cap = settings.GEON_IMPORTS_PER_USER
    if waiting + reviews >= cap:
        raise RunRefused(
            "too_many_imports",
            too_many_imports(waiting, reviews, cap),
            status=429,
            retry_after=RETRY_AFTER_SECONDS,
        )
    return bound


def do_queue_import(
    user: Account, upload: IO[bytes], name: str, dims: dict[str, int], review: bool = False
) -> ModelImport:
    """Store a queued import and its upload; once committed, hand it to the worker."""
    found = ModelImport.objects.create(owner=user, name=name[:255], dims=dims, review=review)
    upload.seek(0)
    save_file(found.upload, f"imports/{found.pk}/model.onnx", File(upload))
    found.save(update_fields=["upload"])
    pk = found.pk
    transaction.on_commit(lambda: queue_import(pk))
    return found


def check_can_view_import(user: User, import_id: int) -> ModelImport:
    """The import, if it is ``user``'s (anyone else's looks like none: :class:`RunNotFound`)."""
    found = ModelImport.objects.filter(pk=import_id, owner_id=user.pk).first()
    if user.pk is None or found is None:
        raise RunNotFound(f'model import "{import_id}" does not exist or is not yours')
    return found


def check_weights(found: ModelImport) -> ModelImport:
    """The import, once done with its weights stored (else 409 ``weights_not_ready``)."""
    if found.status != ModelImport.Status.DONE or not found.weights.name:
        raise RunRefused(
            "weights_not_ready",
            f'model import "{found.name}" is {found.status}; its weights are there once it is done',
            status=409,
        )
    return found


def import_json(found: ModelImport) -> dict[str, Any]:
    """An import as ``GET /api/v1/imports/<id>`` answers it."""
    done = found.status == ModelImport.Status.DONE
    return {
        "id": found.pk,
        "name": found.name,
        "status": found.status,
        "step": found.step,
        "error": found.error,
        "graph": str(found.graph_id) if done and found.graph_id else None,
        "weights": f"/api/v1/imports/{found.pk}/weights" if done and found.weights.name else None,
        "review": found.review,
        "axes": list(found.axes or []),
        "names": found.names,
    }


def do_name_axes(user: User, import_id: int, names: Any) -> ModelImport:
    """Take the names ``user`` accepts for the axes of their import in ``review`` (``{name as
    imported: name}``; an axis not named keeps its proposed name) and queue it again to make the
    graph with them. Refused: an import not in review (409 ``not_in_review``), names that are
    not a mapping of text or break the axis-name rule or name one axis twice (400
    ``invalid_names``, naming the bad value); nothing changes then."""
    from geon.interop.onnx_roles import AxisProposal, NamesError, check_names

    found = check_can_view_import(user, import_id)
    if found.status == ModelImport.Status.EXPIRED:
        raise RunRefused("not_in_review", f'model import "{found.name}" is expired: {found.error}',
                         status=409)  # fmt: skip
    if found.status != ModelImport.Status.REVIEW:
        raise RunRefused(
            "not_in_review",
            f'model import "{found.name}" is {found.status}; names are taken while it is in '
            "review (imported with review=true, before its graph is made)",
            status=409,
        )
    if not isinstance(names, dict):
        raise RunRefused("invalid_names", f"names is {type(names).__name__}; expected an object "
                         '{"d4": "heads", ...} of the axes\' names as imported')  # fmt: skip
    try:
        final = check_names([AxisProposal(**axis) for axis in found.axes], names)
    except NamesError as error:
        raise RunRefused("invalid_names", str(error)) from None
    with transaction.atomic():
        found = ModelImport.objects.select_for_update().get(pk=found.pk)
        if found.status != ModelImport.Status.REVIEW:  # named twice at once: the first wins
            raise RunRefused("not_in_review", f'model import "{found.name}" is {found.status}',
                             status=409)  # fmt: skip
        _check_can_convert(found)
        found.names, found.status, found.step = final, ModelImport.Status.QUEUED, ""
        found.save(update_fields=["names", "status", "step"])
        pk = found.pk
        transaction.on_commit(lambda: queue_import(pk))
    return found


def _check_can_convert(found: ModelImport) -> None:
    """Refuse (429 ``too_many_imports``) to queue ``found`` again while ``GEON_IMPORTS_PER_USER``
    of its owner's other imports are waiting for or on a worker; it stays in review."""
    converting, _ = _held(found.owner_id)  # found is in review: not among the converting
    cap = settings.GEON_IMPORTS_PER_USER
    if converting >= cap:
        raise RunRefused(
            "too_many_imports",
            f"{_converting(converting)}; at most {cap} may wait at "
            f"once (GEON_IMPORTS_PER_USER): wait for one to finish, then send the names for "
            f'"{found.name}" again (it stays in review)',
            status=429,
            retry_after=RETRY_AFTER_SECONDS,
        )


def _step(found: ModelImport, step: str) -> None:
    found.step = step
    found.save(update_fields=["step"])


def _finish(found: ModelImport, status: str, error: str = "") -> None:
    """Record the end of an import and drop the upload (the weights are what is kept)."""
    if found.upload.name:
        found.upload.storage.delete(found.upload.name)
        found.upload = ""
    found.status, found.error, found.finished = status, error, timezone.now()
    found.save()


def do_import(import_id: int) -> None:
    """Convert a queued import (in the worker). Idempotent: a finished import is left alone; one
    found running was under a worker that stopped (a model too large to convert), and fails."""
    with transaction.atomic():
        found = ModelImport.objects.select_for_update().filter(pk=import_id).first()
        done = (ModelImport.Status.DONE, ModelImport.Status.FAILED, ModelImport.Status.REVIEW,
                ModelImport.Status.EXPIRED)  # fmt: skip
        if found is None or found.status in done:
            return
        if found.status == ModelImport.Status.RUNNING:
            _finish(found, ModelImport.Status.FAILED, WORKER_STOPPED)
            return
        found.status, found.step = ModelImport.Status.RUNNING, READING
        found.save(update_fields=["status", "step"])
    try:
        _convert(found, dict(found.dims), found.review and found.names is None)
    except GeonError as error:
        _finish(found, ModelImport.Status.FAILED, str(error))
    except SoftTimeLimitExceeded:  # the task's own limit, past the child's (tasks.py)
        _finish(found, ModelImport.Status.FAILED, TASK_TIME_LIMIT)
    except Exception:
        log.exception("model import %s failed unexpectedly", import_id)
        _finish(found, ModelImport.Status.FAILED, UNEXPECTED_IMPORT_FAILURE)


def _convert(found: ModelImport, dims: dict[str, int], review: bool = False) -> None:
    """Import the upload in a bounded child process (:mod:`geon.interop.onnx_bounded`: an empty
    working folder, ``GEON_IMPORT_MAX_MEMORY_BYTES`` of address space, ``GEON_IMPORT_SECONDS``
    of wall clock), then store the graph and its weights, its axes named as accepted (or as
    proposed); to ``review`` them, read only the axes proposed (the child builds neither the
    document nor the weights: ``review_in_child``), store them and stop there instead."""
    from geon.interop.onnx_bounded import import_in_child, review_in_child

    with found.upload.open("rb") as f:
        data = f.read()
    _step(found, NAMING)
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    seconds, memory = settings.GEON_IMPORT_SECONDS, settings.GEON_IMPORT_MAX_MEMORY_BYTES
    bounds: dict[str, Any] = {"max_bytes": limit, "bound": "GEON_MAX_REQUEST_BYTES",
                              "seconds": seconds, "memory": memory}  # fmt: skip
    try:
        if review:  # the graph is made once the names are accepted (do_name_axes)
            axes = review_in_child(data, found.name, dims, **bounds)
        else:
            document, weights, axes = import_in_child(
                data, found.name, dims, names=found.names or {}, **bounds
            )
    except ImportLimitExceeded as exc:
        if exc.kind == "time":
            raise GeonError(
                f'"{found.name}" took longer than {seconds:g} s to import; an import may take at '
                f"most {seconds:g} s (GEON_IMPORT_SECONDS): import a smaller model"
            ) from None
        raise GeonError(
            f'"{found.name}" needed more than {format_bytes(memory)} of memory to import; an '
            f"import may use at most {format_bytes(memory)} (GEON_IMPORT_MAX_MEMORY_BYTES): "
            "import a smaller model"
        ) from None
    except DocumentTooLarge as exc:
        raise GeonError(
            f"the imported graph is {format_bytes(exc.size)} of JSON; a graph may be at most "
            f"{format_bytes(limit)} (GEON_MAX_REQUEST_BYTES)"
        ) from None
    if review:
        found.axes, found.status, found.step = axes, ModelImport.Status.REVIEW, REVIEWING
        found.review_since = timezone.now()  # the sweep's hours count from here
        found.save(update_fields=["axes", "status", "step", "review_since"])
        return
    parse_document(document)  # the text rule every stored document follows (a DocumentError)
    found.axes = axes
    _step(found, STORING)
    with transaction.atomic():
        graph = do_create_graph(
            owner=found.owner,
            title=import_title(found.name),
            document=document,
            message=f"imported from {found.name}",
        )
        save_file(found.weights, f"imports/{found.pk}/weights.npz", weights)
        found.graph = graph
        _finish(found, ModelImport.Status.DONE)
