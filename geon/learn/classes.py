"""Classes (issue 19, item 5): a teacher makes a class with a join link and assigns lessons and
puzzles; students join by the link and work on their own copies; the teacher's dashboard shows,
per student and item, whether they opened it, how many checks they ran and whether they solved
it (every task of a lesson passed once; a puzzle solved once)."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.models import User as Account
from django.db import transaction

from geon.core.errors import GeonError, quote
from geon.graphs.models import Graph
from geon.learn import puzzles, services
from geon.learn.models import Assignment, Attempt, Classroom, LessonCheck

#: The most classes a teacher keeps, and students one class holds.
CLASSES_MAX = 50
STUDENTS_MAX = 500


class ClassNotFound(GeonError):
    """No such class, or not one of yours (404)."""


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
        raise GeonError(f"class name {quote(name)} is not valid; expected 1 to 100 characters")
    return name.strip()


@transaction.atomic
def do_create_class(teacher: Account, name: Any) -> Classroom:
    """A new class of ``teacher`` with an unguessable join link."""
    checked = check_name(name)
    if Classroom.objects.filter(teacher=teacher).count() >= CLASSES_MAX:
        raise GeonError(f"you teach {CLASSES_MAX} classes already, the most one may")
    return Classroom.objects.create(name=checked, teacher=teacher, key=secrets.token_urlsafe(24))


def class_of(person: Account, class_id: int) -> tuple[Classroom, bool]:
    """The class and whether ``person`` teaches it (students see it too; others: 404)."""
    found = Classroom.objects.filter(pk=class_id).first()
    if found is None or not (
        found.teacher_id == person.pk or found.students.filter(pk=person.pk).exists()
    ):
        raise ClassNotFound(f'class "{class_id}" does not exist or you are not in it')
    return found, found.teacher_id == person.pk


@transaction.atomic
def do_assign(teacher: Account, class_id: int, item: Any) -> Assignment:
    """Assign ``"lesson:<key>"`` or ``"puzzle:<key>"`` to a class the person teaches."""
    classroom, teaches = class_of(teacher, class_id)
    if not teaches:
        raise ClassNotFound(f'only the teacher of class "{classroom.name}" assigns work')
    kind, _, key = str(item).partition(":")
    if kind == "lesson":
        services.lesson_of(key)
    elif kind == "puzzle":
        puzzles.puzzle_of(key)
    else:
        raise GeonError(
            f'item {quote(item)} is not valid; expected "lesson:<key>" or "puzzle:<key>"'
        )
    found, _ = Assignment.objects.get_or_create(classroom=classroom, kind=kind, key=key)
    return found


@transaction.atomic
def do_join(student: Account, key: str) -> Classroom:
    """``student`` joins the class whose link has ``key`` (again: nothing changes)."""
    classroom = Classroom.objects.filter(key=key).first()
    if classroom is None:
        raise ClassNotFound("this join link does not open any class; ask your teacher for it again")
    if classroom.students.count() >= STUDENTS_MAX:
        raise GeonError(f'class "{classroom.name}" is full ({STUDENTS_MAX} students)')
    if classroom.teacher_id != student.pk:
        classroom.students.add(student)
    return classroom


def item_title(assignment: Assignment) -> str:
    if assignment.kind == Assignment.Kind.LESSON:
        try:
            return f"Lesson: {services.lesson_of(assignment.key).title}"
        except services.LessonNotFound:  # withdrawn by its author, or its author's access gone
            return "Lesson: withdrawn by its author"
    return f"Puzzle: {puzzles.puzzle_of(assignment.key)['title']}"


def item_link(assignment: Assignment) -> str:
    kind = "" if assignment.kind == Assignment.Kind.LESSON else "puzzles/"
    return f"/learn/{kind}{assignment.key}/"


def progress(classroom: Classroom) -> list[dict[str, Any]]:
    """The dashboard: per student, per assignment, ``{"opened", "attempts", "solved"}``."""
    assignments = list(classroom.assignments.all())
    students = list(classroom.students.order_by("username"))
    ids = [s.pk for s in students]
    opened = set(Graph.objects.filter(owner_id__in=ids).values_list("owner_id", "example"))
    attempts: dict[tuple[int, str], list[bool]] = {}
    for user_id, key, solved in Attempt.objects.filter(user_id__in=ids).values_list(
        "user_id", "puzzle", "solved"
    ):
        attempts.setdefault((user_id, key), []).append(solved)
    checks: dict[tuple[int, str], list[tuple[int, bool]]] = {}
    for user_id, key, step, passed in LessonCheck.objects.filter(user_id__in=ids).values_list(
        "user_id", "lesson", "step", "passed"
    ):
        checks.setdefault((user_id, key), []).append((step, passed))
    rows = []
    for student in students:
        cells = []
        for a in assignments:
            if a.kind == Assignment.Kind.PUZZLE:
                tries = attempts.get((student.pk, a.key), [])
                solved = any(tries)
                prefix = puzzles.PREFIX
            else:
                done = checks.get((student.pk, a.key), [])
                try:
                    steps = services.lesson_of(a.key).steps
                except services.LessonNotFound:  # withdrawn: nothing left to pass
                    steps = ()
                tasks = {i + 1 for i, s in enumerate(steps) if s.task}
                passed_steps = {step for step, ok in done if ok}
                tries = [ok for _, ok in done]
                solved = bool(tasks) and tasks <= passed_steps
                prefix = services.PREFIX
            cells.append(
                {
                    "opened": (student.pk, prefix + a.key) in opened,
                    "attempts": len(tries),
                    "solved": solved,
                }
            )
        rows.append({"student": student.get_username(), "cells": cells})
    return rows
