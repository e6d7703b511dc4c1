"""Graphs and their versions. Writes go through :mod:`geon.graphs.services`."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from geon.accounts.models import Role, Team
from geon.core.errors import DocumentError
from geon.core.plans import PlanError, read_plan
from geon.core.plans.pipeline import PipelineError, read_pipeline


class Graph(models.Model):
    """A graph document owned by a user; its content lives in its versions."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="graphs"
    )
    # Members of the team get their team role on the graph.
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="graphs"
    )
    title = models.CharField(max_length=200)
    # What the graph is and how to read it, in Markdown (the gallery's explanations, an author's
    # notes); shown in full in the editor's About panel.
    description = models.TextField(blank=True, default="")
    # Accidental broadcasts (constraint AccidentalBroadcast) are errors rather than warnings.
    strict_broadcasting = models.BooleanField(default=False)
    # The gallery example this graph was loaded from ("" for the user's own graphs): makes
    # loading the gallery idempotent.
    example = models.CharField(max_length=100, blank=True, default="")
    current_version = models.ForeignKey(
        "GraphVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title", "created"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "example"],
                condition=~models.Q(example=""),
                name="graph_example_once_per_owner",
            )
        ]

    def __str__(self) -> str:
        return self.title


class DocumentJSONField(models.JSONField):
    """A JSON column that gives a document back as it was written, keys in their order.

    Django's ``JSONField`` is ``jsonb`` on PostgreSQL, which reorders object keys; a LoomGraph
    document must export as it was imported. PostgreSQL's ``json`` type keeps the text (psycopg
    parses it on reading, in order); SQLite stores the text anyway.
    """

    def db_type(self, connection: Any) -> str | None:
        return "json" if connection.vendor == "postgresql" else super().db_type(connection)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        from psycopg.types.json import Json

        return Json(value if prepared else self.get_prep_value(value))

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if not isinstance(value, str):  # parsed by psycopg already (``json``), or NULL
            return value
        return super().from_db_value(value, expression, connection)


class GraphVersion(models.Model):
    """An immutable state of a graph's LoomGraph JSON, numbered 1, 2, ... per graph.

    A version stores the node ``ops`` that made it from the previous version, so that a live edit
    of a large graph writes a few hundred bytes, not megabytes, and now and then the whole
    document (``snapshot``): version 1 and whole-document writes hold only a snapshot; once
    ``GEON_SNAPSHOT_EVERY`` versions have passed since the last one, the next version gets one
    beside its ops, after its transaction commits (a REST edit at once, live edits when the graph
    is quiet). :attr:`document` is the full document either way (replayed from the nearest
    snapshot at or before it), so a snapshot that was never written costs time, not correctness.
    """

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    snapshot = DocumentJSONField(null=True, blank=True)
    ops = DocumentJSONField(null=True, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    message = models.CharField(max_length=500, blank=True, default="")
    # What the edit did, in a few words by name ("split "dot 2" into 2; renamed "W" to "V""), and
    # whether it only moved nodes (folded in the history): geon.core.history.summarize.
    summary = models.CharField(max_length=300, blank=True, default="")
    layout_only = models.BooleanField(default=False)
    # What changed from the previous version: {node id: ["*"] (added or removed) or the fields
    # ("label", "body.<key>", "tags.<url>")}. Rebasing an edit reads it instead of documents.
    touched = models.JSONField(default=dict, blank=True)
    # The id its author's client gave the edit that made this version (None for versions not
    # made by an edit with an id): an edit sent again with the same id is answered with this
    # version instead of being applied twice (:func:`geon.graphs.services.do_apply_edits`).
    edit_id = models.CharField(max_length=100, null=True, blank=True, default=None)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["graph", "number"]
        constraints = [
            models.UniqueConstraint(fields=["graph", "number"], name="graph_version_number_unique"),
            models.UniqueConstraint(
                fields=["graph", "author", "edit_id"],
                condition=models.Q(edit_id__isnull=False),
                name="graph_version_edit_id_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.graph_id} v{self.number}"

    @property
    def document(self) -> dict[str, Any]:
        """The whole document of this version (read once, then kept on the instance)."""
        if self.snapshot is not None:
            return dict(self.snapshot)
        cached = getattr(self, "_document", None)
        if cached is None:
            cached = self._document = self._replay()
        return dict(cached)

    @document.setter
    def document(self, value: dict[str, Any]) -> None:
        self.snapshot = value
        self.ops = None

    def _replay(self) -> dict[str, Any]:
        from geon.core.graph import Graph as Document

        earlier = GraphVersion.objects.filter(graph_id=self.graph_id, number__lte=self.number)
        base = earlier.filter(snapshot__isnull=False).order_by("-number").first()
        if base is None:
            raise DocumentError(f'graph version "{self.number}" has no snapshot before it')
        doc = Document.from_json(base.snapshot)
        steps = earlier.filter(number__gt=base.number).order_by("number")
        for ops in steps.values_list("ops", flat=True):
            doc.apply(ops or [])
        return doc.to_json()

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise DocumentError(
                f'graph version "{self.number}" is immutable; store a new version instead'
            )
        super().save(*args, **kwargs)


class Membership(models.Model):
    """A user's role on one graph (the owner needs none: owning is the ``owner`` role)."""

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="graph_memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["graph", "user"]
        constraints = [
            models.UniqueConstraint(fields=["graph", "user"], name="graph_membership_once")
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.graph} ({self.role})"


class ShardPlan(models.Model):
    """A named sharding plan of a graph: a mesh, an axis mapping, where the graph inputs live
    and, per operation, how to split it (the shape and the rules: :mod:`geon.core.plans`).

    ``mesh`` is ``{"name", "axes": {meshAxis: size}}``; ``axis_mapping`` maps a logical axis to
    a mesh axis (``{"N": "dp"}``), applied to every operation with that index axis;
    ``inputs`` maps a graph input's label or id to ``"replicated"`` (the default),
    ``{"over": {axis: meshAxis}}`` or ``{"device": [coords]}``; ``spec`` maps an operation id to
    ``{"over": {indexAxisOrDim: meshAxis}}`` or explicit ``{"dim", "parts"|"chunk"|"sizes"}`` or
    ``{"grid": {dim: parts}}``, overriding the mapping. ``pipeline`` is the plan's pipeline
    stages (issue 33, :mod:`geon.core.plans.pipeline`: ``{"axis", "microbatches", "schedule",
    "virtualStages"?, "stages"}``), ``{}`` for none. ``applications`` records what the last
    generation wrote: ``{"version": n, "mesh": meshNodeId, "operations": {opId: [applicationId,
    ...]}, "notSplit": [{"operation", "axes", "reason"}, ...]}``.
    """

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="shard_plans")
    name = models.CharField(max_length=100)
    mesh = models.JSONField(default=dict)
    axis_mapping = models.JSONField(default=dict, blank=True)
    inputs = models.JSONField(default=dict, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    pipeline = models.JSONField(default=dict, blank=True)
    applications = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["graph", "name"]
        constraints = [
            models.UniqueConstraint(fields=["graph", "name"], name="shard_plan_name_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.graph})"

    def clean(self) -> None:
        """The stored fields as the core reads a plan (:func:`geon.core.plans.read_plan`, its
        pipeline included), so a plan changed outside the REST (the admin) is checked too; the
        :class:`ValidationError` names the bad value and what is valid. Whether the plan fits
        the document is the service's check (:func:`geon.graphs.services.do_save_plan`)."""
        data = {
            "name": self.name,
            "mesh": self.mesh,
            "axisMapping": self.axis_mapping,
            "inputs": self.inputs,
            "spec": self.spec,
            "pipeline": self.pipeline or None,
        }
        try:
            plan = read_plan({**data, "pipeline": None})
        except PlanError as error:
            raise ValidationError(str(error)) from None
        if data["pipeline"] is None:
            return
        try:
            # the pipeline's own check (PipelineError), then what it must not share with the
            # rest of the plan (its mesh axis): both the pipeline field's
            read_pipeline(data["pipeline"], plan.mesh_axes)
            read_plan(data)
        except (PipelineError, PlanError) as error:
            raise ValidationError({"pipeline": str(error)}) from None


def new_key() -> str:
    """An unguessable key for an invitation or a share link (256 random bits)."""
    import secrets

    return secrets.token_urlsafe(32)


class Invitation(models.Model):
    """An invitation sent to an email address with no account yet: following its link
    (``/invite/<key>/``) lets the person sign up (whatever ``GEON_SIGNUP`` is short of
    ``closed``) and gives them ``role`` on ``graph``, or membership of ``team`` with ``role``.
    Accepting or revoking deletes nothing but sets ``accepted`` / removes the row."""

    key = models.CharField(max_length=64, unique=True, default=new_key, editable=False)
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    graph = models.ForeignKey(
        Graph, on_delete=models.CASCADE, null=True, blank=True, related_name="invitations"
    )
    team = models.ForeignKey(
        Team, on_delete=models.CASCADE, null=True, blank=True, related_name="invitations"
    )
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations_sent"
    )
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField()
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="invitations_accepted",
    )

    class Meta:
        ordering = ["created"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(graph__isnull=False, team__isnull=True)
                | models.Q(graph__isnull=True, team__isnull=False),
                name="invitation_to_graph_or_team",
            )
        ]

    def __str__(self) -> str:
        return f"{self.email} to {self.graph or self.team} ({self.role})"


class ShareLink(models.Model):
    """ "Anyone with the link can view": an unguessable, revocable key that opens the graph
    read-only (``/s/<key>/``) for anyone, signed in or not. Revoking keeps the row
    (``revoked`` set) so that the link shows a clear page rather than a bare 404."""

    key = models.CharField(max_length=64, unique=True, default=new_key, editable=False)
    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="share_links")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="share_links"
    )
    created = models.DateTimeField(auto_now_add=True)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created"]

    def __str__(self) -> str:
        return f"link to {self.graph} ({'revoked' if self.revoked else 'live'})"
