"""Reviews, their threads, comments and verdicts, each graph's guardrails and who read what
(docs/reviews.md). A review's state is derived from its verdicts (:func:`.services.review_state`):
only ``closed`` is stored."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from geon.graphs.models import Graph, ShardPlan


class Review(models.Model):
    """A request to named reviewers to review a plan (or the whole graph: ``plan`` None) from
    a version on. ``activity`` counts its changes (the live events' order)."""

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="reviews")
    plan = models.ForeignKey(
        ShardPlan, on_delete=models.SET_NULL, null=True, blank=True, related_name="reviews"
    )
    #: The plan's name when the review was opened (kept when the plan is deleted).
    plan_name = models.CharField(max_length=100, blank=True, default="")
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    reviewers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="reviews_asked")
    version = models.PositiveIntegerField()
    closed = models.BooleanField(default=False)
    activity = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.title} ({self.graph})"


class Thread(models.Model):
    """A discussion pinned to part of the graph (``anchor``), with what that part was when the
    thread was written (``anchor_fields``, for *outdated*) and where it was drawn
    (``last_position``, kept when it is removed). ``suggestion`` is an edit's ops, or None."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="threads")
    anchor = models.JSONField()
    anchor_name = models.CharField(max_length=300, blank=True, default="")
    anchor_fields = models.JSONField(default=dict)
    last_position = models.JSONField(null=True, blank=True)
    suggestion = models.JSONField(null=True, blank=True)
    applied_version = models.PositiveIntegerField(null=True, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    version = models.PositiveIntegerField()
    resolved = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    #: Not stored: what its writer is told of mentions mail cannot reach (set when written).
    notices: list[str]

    class Meta:
        ordering = ["review", "created", "id"]


class Comment(models.Model):
    """A comment of a thread; the first is the thread's body."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    body = models.TextField()
    version = models.PositiveIntegerField()
    created = models.DateTimeField(auto_now_add=True)
    #: Not stored: what its writer is told of mentions mail cannot reach (set when written).
    notices: list[str]

    class Meta:
        ordering = ["thread", "created", "id"]


class Verdict(models.Model):
    """A reviewer's verdict at a version, with the fingerprint of what it covered
    (:func:`geon.core.approval.fingerprint`) and the plan's covered fields then."""

    class Kind(models.TextChoices):
        APPROVE = "approve"
        REQUEST_CHANGES = "request_changes"
        COMMENT = "comment"

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="verdicts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    verdict = models.CharField(max_length=16, choices=Kind.choices)
    body = models.TextField(blank=True, default="")
    version = models.PositiveIntegerField()
    fingerprint = models.CharField(max_length=64)
    plan_fields = models.JSONField(null=True, blank=True)
    #: An approval whose going stale was told (a ``stale`` notification and live event).
    stale_told = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["review", "created", "id"]


class ReviewSettings(models.Model):
    """A graph's guardrails on approvals (absent: every one on, the default profile)."""

    graph = models.OneToOneField(Graph, on_delete=models.CASCADE, related_name="review_settings")
    require_resolved_threads = models.BooleanField(default=True)
    block_on_errors = models.BooleanField(default=True)
    block_over_capacity = models.BooleanField(default=True)
    profile = models.CharField(max_length=100, blank=True, default="")


class ReadMark(models.Model):
    """How much of a review's activity a user has seen."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="reads")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    activity = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["review", "user"], name="review_read_once")]


class Notification(models.Model):
    """Something of a review that concerns one person (docs/reviews.md, Notifications): they
    were asked (again), mentioned, replied to, given a verdict, or their approval went stale.
    ``text`` is the sentence the inbox shows; the permalink is built from the ids."""

    class Kind(models.TextChoices):
        REVIEW_REQUESTED = "review_requested"
        MENTIONED = "mentioned"
        REPLIED = "replied"
        VERDICT = "verdict"
        STALE = "stale"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="+")
    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="notifications")
    thread = models.ForeignKey(
        Thread, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    text = models.CharField(max_length=500)
    read = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["user", "read"], name="notification_unread")]


class NotificationSettings(models.Model):
    """A person's notification settings (absent: mail on)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_settings"
    )
    mail = models.BooleanField(default=True)
