"""Runs and renders of a graph version on a worker. Writes go through :mod:`geon.runs.services`.

Files (uploaded inputs, results, rendered diagrams) live under ``GEON_DATA_DIR/files``, never in
the database.
"""

from __future__ import annotations

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.db import models
from django.utils import timezone

from geon.graphs.models import GraphVersion, ShardPlan


def data_files() -> FileSystemStorage:
    """Where runs and renders keep their files: ``GEON_DATA_DIR/files``."""
    return FileSystemStorage(location=settings.DATA_DIR / "files")


class Run(models.Model):
    """One execution of a graph version: queued, then running with progress, then done/failed."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    class Backend(models.TextChoices):
        NUMPY = "numpy"
        CUPY = "cupy"

    class Engine(models.TextChoices):
        NUMPY = "numpy"
        JAX = "jax"

    graph_version = models.ForeignKey(GraphVersion, on_delete=models.CASCADE, related_name="runs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    backend = models.CharField(max_length=16, choices=Backend.choices, default=Backend.NUMPY)
    # Application by Application, checked against a logical run (max abs diff per output).
    sharded = models.BooleanField(default=False)
    # Where it runs: NumPy's executor, or JAX (the placed plan as one XLA program, checked
    # against the logical NumPy run; docs/engines.md).
    engine = models.CharField(max_length=16, choices=Engine.choices, default=Engine.NUMPY)
    # Every tensor's values are kept and returned, not only the outputs' ("keep intermediates").
    intermediates = models.BooleanField(default=False)
    # The shard plan whose generated Applications the run exercises (sharded runs only).
    plan = models.ForeignKey(
        ShardPlan, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    # Inputs not in the uploaded file come from numpy.random.default_rng(seed); with an upload
    # and no seed every input must be in the file.
    seed = models.BigIntegerField(null=True, blank=True)
    # The uploaded .npz (keys: tensor labels or ids), checked against the document when queued.
    inputs = models.FileField(storage=data_files, max_length=255, blank=True)
    # The outputs as .npz (keys: labels, ids where missing or not unique), once done.
    results = models.FileField(storage=data_files, max_length=255, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    # The last finished step: geon.execute.Progress.to_json() (operation, application, seconds).
    step = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True, db_index=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # Seconds per phase, e.g. {"queued": 0.21, "execute": 0.003}, and the executor's timings:
    # "operations" (op id -> s), "applications" and "sharded_operations" for sharded runs.
    timings = models.JSONField(default=dict, blank=True)
    # What the executor reported: per output tensor a summary, never the arrays themselves.
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    # The process id and host name of the worker that executed the run (or executes it now).
    worker_pid = models.PositiveIntegerField(null=True, blank=True)
    worker_host = models.CharField(max_length=255, blank=True, default="")
    # Refreshed every GEON_RUN_HEARTBEAT_SECONDS while a worker executes the run: a running run
    # whose heartbeat is stale (or whose worker process is gone) was stranded by its worker.
    heartbeat = models.DateTimeField(null=True, blank=True)
    # When the run was last handed to a worker, and how many times it was (at most
    # RUN_MAX_ATTEMPTS; see geon.runs.services.sweep).
    queued = models.DateTimeField(default=timezone.now)
    attempts = models.PositiveSmallIntegerField(default=1)
    # The Celery queue the run was sent to ("" before queues were recorded: the default one). A
    # hand-over sends it there again, and only workers of that queue sweep it, so a deployment
    # with separate queues (GPU and CPU workers) never hands a run to the wrong kind of worker.
    queue = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def finished_running(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)


class Render(models.Model):
    """A diagram of a graph version in one format, cached by the hash of the version's document
    (two versions with the same document share it)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    class Format(models.TextChoices):
        SVG = "svg"
        PNG = "png"
        DOT = "dot"

    # The version that first asked for this diagram.
    graph_version = models.ForeignKey(
        GraphVersion, on_delete=models.CASCADE, related_name="renders"
    )
    format = models.CharField(max_length=8, choices=Format.choices)
    # SHA-256 of the document's canonical JSON (sorted keys, no blanks).
    content_hash = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    file = models.FileField(storage=data_files, max_length=255, blank=True)
    error = models.TextField(blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)
    # When it was last handed to a worker (a render waiting too long is handed over again), and
    # how many times it was (at most RUN_MAX_ATTEMPTS).
    queued = models.DateTimeField(default=timezone.now)
    attempts = models.PositiveSmallIntegerField(default=1)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["content_hash", "format"], name="render_once_per_document_and_format"
            )
        ]

    def __str__(self) -> str:
        return f"render {self.content_hash[:12]}.{self.format} ({self.status})"


class ModelImport(models.Model):
    """An uploaded ONNX model converted to a graph by a worker (issue #20): queued, running
    through its steps, then done (the graph and its weights ``.npz``) or failed (``error``).
    One asked to ``review`` its axes' names (issue 35) stops at ``review`` with the ``axes``
    proposed until the person posts the ``names``, then is queued again to make the graph; one
    left in review over ``GEON_IMPORT_REVIEW_HOURS`` is ``expired`` (its upload deleted, the
    reason in ``error``: :func:`geon.runs.services.sweep.sweep_reviews`)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        REVIEW = "review"
        DONE = "done"
        FAILED = "failed"
        EXPIRED = "expired"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="model_imports"
    )
    # The uploaded file's name as the browser sent it (the new graph's title comes from it).
    name = models.CharField(max_length=255)
    # The upload, until the worker has read it; the initializers' values once done.
    upload = models.FileField(storage=data_files, max_length=255, blank=True)
    # Lengths the request bound to the model's dim_params, e.g. {"batch": 8}.
    dims = models.JSONField(default=dict, blank=True)
    weights = models.FileField(storage=data_files, max_length=255, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # The step the worker is at (or was at when it failed), in words.
    step = models.CharField(max_length=64, blank=True, default="")
    error = models.TextField(blank=True, default="")
    # Whether the person reviews the axes' names before the graph is made (issue 35).
    review = models.BooleanField(default=False)
    # The axes as the worker read them: geon.interop.onnx_roles.AxisProposal.to_json() each.
    axes = models.JSONField(default=list, blank=True)
    # The names the person accepted ({name as imported: name}); None until they post them.
    names = models.JSONField(null=True, blank=True, default=None)
    graph = models.ForeignKey(
        "graphs.Graph", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    # When it stopped in review (the sweep's GEON_IMPORT_REVIEW_HOURS count from here, not from
    # ``created``: a model queued behind others reaches review later); None if it never did.
    review_since = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"import {self.pk} of {self.name} ({self.status})"
