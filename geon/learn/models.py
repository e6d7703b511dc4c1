"""Puzzle attempts (issue 19, item 4): each Check of a student's graph, run by a worker, with
its answer — what the class dashboard counts."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from geon.graphs.models import Graph


class Attempt(models.Model):
    """One check of a puzzle's solution: the graph at a version, queued, then done (with the
    checker's answer) or failed (the worker could not check it: ``error`` says why).

    A visitor without an account checks the document their browser holds: the attempt has no
    user or graph but the ``document``, and is read back by its unguessable ``key``. Such a
    check is counted against its visitor: ``visitor`` and ``address`` are SHA-256 digests of
    their session key and of their address (neither is kept in the clear)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        DONE = "done"
        FAILED = "failed"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", null=True
    )
    puzzle = models.CharField(max_length=100)
    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="attempts", null=True)
    version = models.PositiveIntegerField(default=0)
    document = models.JSONField(null=True, blank=True)
    key = models.CharField(max_length=64, blank=True, default="", db_index=True)
    visitor = models.CharField(max_length=64, blank=True, default="", db_index=True)
    address = models.CharField(max_length=64, blank=True, default="", db_index=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    solved = models.BooleanField(default=False)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]


class LessonCheck(models.Model):
    """One check of a lesson step's task on a student's graph, and whether it passed."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    lesson = models.CharField(max_length=100)
    step = models.PositiveIntegerField()
    passed = models.BooleanField()
    created = models.DateTimeField(auto_now_add=True)


class Classroom(models.Model):
    """A teacher's class: students join by its link (``key``) and work on the lessons and
    puzzles assigned to it, each on their own copy."""

    name = models.CharField(max_length=100)
    teacher = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="classes_taught"
    )
    key = models.CharField(max_length=64, unique=True)
    students = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="classes")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]


class Assignment(models.Model):
    """A lesson or puzzle a class is asked to do."""

    class Kind(models.TextChoices):
        LESSON = "lesson"
        PUZZLE = "puzzle"

    classroom = models.ForeignKey(Classroom, on_delete=models.CASCADE, related_name="assignments")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    key = models.CharField(max_length=100)
    #: When the work is due (issue 36): shown to students; work after it is marked late, never
    #: refused. Null: no due date.
    due = models.DateTimeField(null=True, blank=True)
    #: The teacher's order of the class's work (reordered as a whole: ``classes.do_reorder``).
    position = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "created", "id"]
        constraints = [
            models.UniqueConstraint(fields=["classroom", "kind", "key"], name="assigned_once")
        ]


class Comment(models.Model):
    """The teacher's comment on one student's work on one assignment (issue 36): the student
    sees it beside the item on their progress page. One per student and assignment."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="comments")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    text = models.TextField()
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "student"], name="one_comment_per_item")
        ]


class WrittenLesson(models.Model):
    """A lesson a graph's owner published on it (issue 19, item 3): its steps, read like a
    shipped lesson's, on the graph as it was at ``version`` when published (a snapshot: later
    edits of the graph are not published until the owner publishes again).

    Served only while ``author`` still owns the graph and their account is active; its ``key``
    carries 128 random bits (issue 30)."""

    key = models.CharField(max_length=64, unique=True)
    graph = models.OneToOneField(Graph, on_delete=models.CASCADE, related_name="lesson")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True, default="")
    steps = models.JSONField(default=list)
    version = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated", "-id"]
