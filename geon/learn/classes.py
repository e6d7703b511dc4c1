"""Classes (issue 19, item 5; issue 36): a teacher makes a class with a join link and assigns
lessons and puzzles, each with an optional due date, in an order the teacher keeps; students
join by the link and work on their own copies. The teacher's progress shows, per student and
item, its state (``new``, ``opened``, ``tried``, ``solved``), how many checks they ran, when it
was solved, whether it is late, the student's graph and their latest attempts (a puzzle's with
the counterexample), and the teacher's comment, which the student sees.

Due dates are shown, never enforced: work after the due date is marked late, not refused.
Only the teacher reads the class's progress; a student of the class is refused (403) and
anyone else does not see the class at all (404)."""

from __future__ import annotations

import csv
import io
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

from django.contrib.auth.models import User as Account
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from geon.core.errors import GeonError, quote
from geon.graphs.models import Graph
from geon.graphs.services import AccessDenied, GraphNotFound
from geon.learn import puzzles, services
from geon.learn.models import Assignment, Attempt, Classroom, Comment, LessonCheck

#: The most classes a teacher keeps, and students one class holds.
CLASSES_MAX = 50
STUDENTS_MAX = 500
#: The most assignments of one class, and the longest comment.
ASSIGNMENTS_MAX = 100
COMMENT_MAX = 2000
#: The latest attempts (or lesson checks) each progress item lists; ``checks`` counts them all.
ATTEMPTS_SHOWN = 10
#: A due date is accepted between these years (a typo such as 20260 is named, not stored).
DUE_YEARS = (2000, 2200)


class ClassNotFound(GraphNotFound):
    """No such class, or not one of yours (404)."""


class TeacherOnly(AccessDenied):
    """A student of the class asked for what only its teacher may do (403)."""


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
        raise GeonError(f"class name {quote(name)} is not valid; expected 1 to 100 characters")
    return name.strip()


def check_due(due: Any) -> datetime | None:
    """A due date from ISO 8601 text: a date and time (UTC when no offset is given) or a date
    alone (the end of that day, UTC); None or "" for none."""
    if due is None or due == "":
        return None
    example = 'expected ISO 8601 such as "2026-12-01" or "2026-12-01T17:00:00+01:00"'
    if not isinstance(due, str) or len(due) > 40:
        raise GeonError(f"due date {quote(due)} is not a date; {example}")
    try:
        if len(due) == 10:
            when = datetime.combine(date.fromisoformat(due), time(23, 59, 59), UTC)
        else:
            when = datetime.fromisoformat(due)
    except ValueError:
        raise GeonError(f"due date {quote(due)} is not a date; {example}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if not DUE_YEARS[0] <= when.year <= DUE_YEARS[1]:
        raise GeonError(
            f"due date {quote(due)} is in the year {when.year}; expected a year from "
            f"{DUE_YEARS[0]} to {DUE_YEARS[1]}"
        )
    return when


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


def taught_class(person: Account, class_id: int, action: str) -> Classroom:
    """The class, when ``person`` teaches it: a student is refused (403) saying who does."""
    classroom, teaches = class_of(person, class_id)
    if not teaches:
        raise TeacherOnly(
            f'only the teacher of class "{classroom.name}" ({classroom.teacher.get_username()}) '
            f"{action}"
        )
    return classroom


def parse_item(item: Any) -> tuple[str, str]:
    """``"lesson:<key>"`` or ``"puzzle:<key>"`` as (kind, key)."""
    kind, _, key = str(item).partition(":")
    if kind not in (Assignment.Kind.LESSON, Assignment.Kind.PUZZLE) or not key:
        raise GeonError(
            f"item {quote(item)} is not valid; expected a lesson or a puzzle by its key"
        )
    return kind, key


@transaction.atomic
def do_assign(teacher: Account, class_id: int, item: Any, due: Any = None) -> Assignment:
    """Assign ``"lesson:<key>"`` or ``"puzzle:<key>"`` to a class the person teaches, last in
    its order, with an optional due date (:func:`check_due`). Assigning an item again is
    refused naming it."""
    classroom = taught_class(teacher, class_id, "assigns work")
    kind, key = parse_item(item)
    when = check_due(due)
    if kind == Assignment.Kind.LESSON:
        services.lesson_of(key)
    else:
        puzzles.puzzle_of(key)
    existing = classroom.assignments.select_for_update()
    if existing.filter(kind=kind, key=key).exists():
        raise GeonError(f'{item_title_of(kind, key)} is assigned to "{classroom.name}" already')
    if existing.count() >= ASSIGNMENTS_MAX:
        raise GeonError(f"a class holds at most {ASSIGNMENTS_MAX} assignments")
    last = existing.aggregate(last=Max("position"))["last"]
    return Assignment.objects.create(
        classroom=classroom, kind=kind, key=key, due=when, position=(last or 0) + 1
    )


def _assignment(teacher: Account, class_id: int, assignment_id: int, action: str) -> Assignment:
    classroom = taught_class(teacher, class_id, action)
    found = classroom.assignments.filter(pk=assignment_id).first()
    if found is None:
        raise ClassNotFound(f'class "{classroom.name}" has no assignment "{assignment_id}"')
    return found


@transaction.atomic
def do_set_due(teacher: Account, class_id: int, assignment_id: int, due: Any) -> Assignment:
    """Change (or clear, with None) an assignment's due date."""
    found = _assignment(teacher, class_id, assignment_id, "sets due dates")
    found.due = check_due(due)
    found.save(update_fields=["due"])
    return found


@transaction.atomic
def do_unassign(teacher: Account, class_id: int, assignment_id: int) -> None:
    """Take an assignment off the class (its students keep their copies and attempts; its
    comments go with it)."""
    _assignment(teacher, class_id, assignment_id, "removes work").delete()


@transaction.atomic
def do_reorder(teacher: Account, class_id: int, order: Any) -> list[Assignment]:
    """Put the class's assignments in ``order``: every assignment's id, each once."""
    classroom = taught_class(teacher, class_id, "reorders work")
    current = {a.pk: a for a in classroom.assignments.select_for_update()}
    if (
        not isinstance(order, list)
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in order)
        or sorted(order) != sorted(current)
    ):
        raise GeonError(
            f"the order {quote(order)} is not valid; expected each of the class's assignments "
            f"{sorted(current)} once"
        )
    for position, assignment_id in enumerate(order, start=1):
        current[assignment_id].position = position
    Assignment.objects.bulk_update(current.values(), ["position"])
    return sorted(current.values(), key=lambda a: a.position)


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


def item_title_of(kind: str, key: str) -> str:
    if kind == Assignment.Kind.LESSON:
        try:
            return f"Lesson: {services.lesson_of(key).title}"
        except services.LessonNotFound:  # withdrawn by its author, or its author's access gone
            return "Lesson: withdrawn by its author"
    return f"Puzzle: {puzzles.puzzle_of(key)['title']}"


def item_title(assignment: Assignment) -> str:
    return item_title_of(assignment.kind, assignment.key)


def item_link(assignment: Assignment) -> str:
    kind = "" if assignment.kind == Assignment.Kind.LESSON else "puzzles/"
    return f"/learn/{kind}{assignment.key}/"


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def assignment_json(a: Assignment) -> dict[str, Any]:
    return {
        "id": a.pk,
        "kind": a.kind,
        "key": a.key,
        "title": item_title(a),
        "link": item_link(a),
        "due": _iso(a.due),
        "position": a.position,
    }


def class_json(classroom: Classroom, join_url: str | None) -> dict[str, Any]:
    """A class as its teacher (``joinUrl``) or a student (``joinUrl`` null) reads it."""
    return {
        "id": classroom.pk,
        "title": classroom.name,
        "teacher": classroom.teacher.get_username(),
        "joinUrl": join_url,
        "assignments": [assignment_json(a) for a in classroom.assignments.all()],
    }


@dataclass
class Item:
    """One student's work on one assignment."""

    assignment: Assignment
    state: str
    checks: int
    solved_at: datetime | None
    graph: Graph | None
    attempts: list[dict[str, Any]]
    comment: str

    @property
    def late(self) -> bool:
        """Past the due date and not solved by it (solved late, or not solved yet)."""
        due = self.assignment.due
        if due is None:
            return False
        if self.solved_at is not None:
            return self.solved_at > due
        return timezone.now() > due

    def to_json(self) -> dict[str, Any]:
        return {
            "assignment": self.assignment.pk,
            "state": self.state,
            "checks": self.checks,
            "solvedAt": _iso(self.solved_at),
            "late": self.late,
            "graph": None if self.graph is None else str(self.graph.pk),
            "attempts": self.attempts,
            "comment": self.comment,
        }


def grid(caption: str, shown: Any) -> dict[str, Any] | None:
    """A counterexample's tensor (``{"axes", "values"}``) as a table a person reads: the
    last axis along the columns, the one before along the rows, labelled with their names
    and indices (a tensor of more axes is one table per leading index, up to 8)."""
    if not isinstance(shown, dict) or not isinstance(shown.get("axes"), list):
        return None
    axes, values = [str(a) for a in shown["axes"]], shown.get("values")
    if values is None:
        return {"caption": caption, "axes": axes, "tables": [], "omitted": True}
    if not axes:
        return {
            "caption": caption,
            "axes": [],
            "tables": [{"title": "", "cols": [""], "rows": [("", [values])]}],
        }
    tables = []
    slices: list[tuple[str, Any]] = [("", values)]
    for name in axes[:-2]:
        slices = [
            (f"{title}{name}={i} ", part)
            for title, whole in slices
            for i, part in enumerate(whole if isinstance(whole, list) else [])
        ][:8]
    for title, part in slices:
        if len(axes) == 1:
            rows = [("", list(part))]
        else:
            rows = [(f"{axes[-2]}={i}", list(r)) for i, r in enumerate(part)]
        width = max((len(r) for _, r in rows), default=0)
        tables.append(
            {
                "title": title.strip(),
                "cols": [f"{axes[-1]}={j}" for j in range(width)],
                "rows": rows,
            }
        )
    return {"caption": caption, "axes": axes, "tables": tables, "omitted": False}


def counterexample_grids(example: dict[str, Any]) -> list[dict[str, Any]]:
    """The grids of a counterexample: each input by label, then what the solution produced
    and what was expected."""
    shown = [grid(f"input {label}", t) for label, t in (example.get("inputs") or {}).items()]
    shown += [grid("your result", example.get("got")), grid("expected", example.get("expected"))]
    return [g for g in shown if g is not None]


def attempt_view(attempt: Attempt) -> dict[str, Any]:
    """A puzzle attempt as the progress shows it (the counterexample when not solved)."""
    out: dict[str, Any] = {
        "id": attempt.pk,
        "created": attempt.created.isoformat(),
        "version": attempt.version,
        "status": attempt.status,
        "solved": attempt.solved,
    }
    if attempt.result.get("counterexample"):
        out["counterexample"] = attempt.result["counterexample"]
    if attempt.error:
        out["error"] = attempt.error
    return out


def items_of(
    classroom: Classroom, students: Sequence[Account], shown: int = ATTEMPTS_SHOWN
) -> dict[int, list[Item]]:
    """Per student (by id), their item for each of the class's assignments, in its order."""
    assignments = list(classroom.assignments.all())
    ids = [s.pk for s in students]
    puzzle_keys = [a.key for a in assignments if a.kind == Assignment.Kind.PUZZLE]
    lesson_keys = [a.key for a in assignments if a.kind == Assignment.Kind.LESSON]
    examples = [puzzles.PREFIX + k for k in puzzle_keys] + [
        services.PREFIX + k for k in lesson_keys
    ]
    graphs = {
        (g.owner_id, g.example): g
        for g in Graph.objects.filter(owner_id__in=ids, example__in=examples).only(
            "id", "owner_id", "example"
        )
    }
    attempts: dict[tuple[int, str], list[Attempt]] = {}
    for attempt in Attempt.objects.filter(user_id__in=ids, puzzle__in=puzzle_keys).order_by(
        "created", "id"
    ):
        assert attempt.user_id is not None
        attempts.setdefault((attempt.user_id, attempt.puzzle), []).append(attempt)
    checks: dict[tuple[int, str], list[LessonCheck]] = {}
    for check in LessonCheck.objects.filter(user_id__in=ids, lesson__in=lesson_keys).order_by(
        "created", "id"
    ):
        checks.setdefault((check.user_id, check.lesson), []).append(check)
    comments = {
        (c.student_id, c.assignment_id): c.text
        for c in Comment.objects.filter(assignment__classroom=classroom, student_id__in=ids)
    }
    tasks: dict[str, set[int]] = {}
    for key in lesson_keys:
        try:
            steps = services.lesson_of(key).steps
        except services.LessonNotFound:  # withdrawn: nothing left to pass
            steps = ()
        tasks[key] = {i + 1 for i, s in enumerate(steps) if s.task}
    out: dict[int, list[Item]] = {}
    for student in students:
        items = []
        for a in assignments:
            solved_at: datetime | None = None
            if a.kind == Assignment.Kind.PUZZLE:
                tries = attempts.get((student.pk, a.key), [])
                solved_at = next((t.finished or t.created for t in tries if t.solved), None)
                graph = graphs.get((student.pk, puzzles.PREFIX + a.key))
                shown_attempts = [attempt_view(t) for t in tries[-shown:]] if shown else []
                count = len(tries)
            else:
                done = checks.get((student.pk, a.key), [])
                passed: set[int] = set()
                for check in done:
                    if check.passed:
                        passed.add(check.step)
                        if tasks[a.key] and tasks[a.key] <= passed and solved_at is None:
                            solved_at = check.created
                graph = graphs.get((student.pk, services.PREFIX + a.key))
                shown_attempts = [
                    {"step": c.step, "passed": c.passed, "created": c.created.isoformat()}
                    for c in (done[-shown:] if shown else [])
                ]
                count = len(done)
            state = (
                "solved"
                if solved_at is not None
                else "tried"
                if count
                else "opened"
                if graph is not None
                else "new"
            )
            comment = comments.get((student.pk, a.pk), "")
            items.append(Item(a, state, count, solved_at, graph, shown_attempts, comment))
        out[student.pk] = items
    return out


def progress_json(teacher: Account, class_id: int) -> dict[str, Any]:
    """The teacher's progress of the class: its assignments, and per student their items."""
    classroom = taught_class(teacher, class_id, "reads the class's progress")
    students = list(classroom.students.order_by("username"))
    items = items_of(classroom, students)
    return {
        "assignments": [assignment_json(a) for a in classroom.assignments.all()],
        "students": [
            {"student": s.get_username(), "items": [i.to_json() for i in items[s.pk]]}
            for s in students
        ],
    }


def progress_csv(teacher: Account, class_id: int) -> str:
    """The progress as CSV: a header row (``student``, then each assignment's title) and one
    row per student, each cell the item's state, with " (late)" when it is late."""
    classroom = taught_class(teacher, class_id, "reads the class's progress")
    assignments = list(classroom.assignments.all())
    students = list(classroom.students.order_by("username"))
    items = items_of(classroom, students, shown=0)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["student", *(_cell(item_title(a)) for a in assignments)])
    for s in students:
        cells = [i.state + (" (late)" if i.late else "") for i in items[s.pk]]
        writer.writerow([_cell(s.get_username()), *cells])
    return out.getvalue()


def _cell(text: str) -> str:
    """A cell a spreadsheet shows as text: one starting with = + - @ (a formula) is quoted."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def student_of(classroom: Classroom, username: str) -> Account:
    found = classroom.students.filter(username=username).first()
    if found is None:
        raise ClassNotFound(f'class "{classroom.name}" has no student {quote(username)}')
    return found


def drill_down(teacher: Account, class_id: int, username: str, assignment_id: int) -> Item:
    """One student's item in full (up to 100 attempts), for the teacher."""
    classroom = taught_class(teacher, class_id, "reads its students' work")
    student = student_of(classroom, username)
    item = next(
        (
            i
            for i in items_of(classroom, [student], shown=100)[student.pk]
            if i.assignment.pk == assignment_id
        ),
        None,
    )
    if item is None:
        raise ClassNotFound(f'class "{classroom.name}" has no assignment "{assignment_id}"')
    return item


@transaction.atomic
def do_comment(
    teacher: Account, class_id: int, username: str, assignment_id: int, text: Any
) -> Comment | None:
    """Write (or with empty text, remove) the teacher's comment on a student's item."""
    found = _assignment(teacher, class_id, assignment_id, "comments on work")
    student = student_of(found.classroom, username)
    if not isinstance(text, str) or len(text) > COMMENT_MAX:
        shown = len(text) if isinstance(text, str) else type(text).__name__
        raise GeonError(f"a comment is text of at most {COMMENT_MAX} characters, not {shown}")
    if not text.strip():
        Comment.objects.filter(assignment=found, student=student).delete()
        return None
    comment, _ = Comment.objects.update_or_create(
        assignment=found, student=student, defaults={"text": text.strip()}
    )
    return comment


#: The most nodes of a student's graph the drill-down draws.
DRAWN_NODES_MAX = 300


def graph_svg(item: Item, version: Any = None) -> bytes:
    """The student's graph of ``item`` drawn as SVG, at its current version or ``version``
    (one of its versions, as an attempt names it), errors highlighted: what the teacher sees,
    read-only. A graph past :data:`DRAWN_NODES_MAX` nodes, or not opened, is a note instead."""
    from geon.core.checks import check
    from geon.core.documents import load_document
    from geon.graphs.services import version_of
    from geon.render import RenderError, render

    if item.graph is None:
        return _note_svg("The student has not opened this yet.")
    graph = item.graph
    number = graph.current_version.number if graph.current_version else 1
    if version not in (None, ""):
        if not str(version).isdigit() or not 1 <= int(str(version)) <= number:
            return _note_svg(
                f"There is no version {str(version)[:20]}; versions are 1 to {number}."
            )
        number = int(str(version))
    loaded, _ = load_document(version_of(graph, number).document)
    if loaded is None:
        return _note_svg("This version cannot be drawn.")
    try:
        return render(loaded, "svg", check(loaded), max_nodes=DRAWN_NODES_MAX)
    except (RenderError, GeonError) as refused:
        return _note_svg(str(refused))


def _note_svg(text: str) -> bytes:
    from xml.sax.saxutils import escape

    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="480" height="40">'
        f'<text x="8" y="24" font-family="sans-serif" font-size="14">{escape(text)}</text></svg>'
    ).encode()


def my_progress(student: Account, class_id: int) -> dict[str, Any]:
    """A student's own items in a class: state, due date, late, the teacher's comment."""
    classroom, _ = class_of(student, class_id)
    items = items_of(classroom, [student], shown=0).get(student.pk, [])
    return {
        "class": class_json(classroom, None),
        "items": [
            {
                **assignment_json(i.assignment),
                **{k: v for k, v in i.to_json().items() if k not in ("attempts",)},
            }
            for i in items
        ],
    }


def after(student: Account, kind: str, key: str) -> dict[str, Any]:
    """Where a student goes after an item (issue 36): the class (the latest joined) that
    assigns it, and the item after it in that class's order — ``{"class": {"id", "title",
    "url"} | null, "next": {"title", "link"} | null}``."""
    found = (
        Assignment.objects.filter(classroom__students=student.pk, kind=kind, key=key)
        .select_related("classroom")
        .order_by("-classroom__created", "-classroom_id")
        .first()
    )
    if found is None:
        return {"class": None, "next": None}
    classroom = found.classroom
    order = list(classroom.assignments.all())
    at = next(i for i, a in enumerate(order) if a.pk == found.pk)
    following = order[at + 1] if at + 1 < len(order) else None
    return {
        "class": {
            "id": classroom.pk,
            "title": classroom.name,
            "url": f"/learn/classes/{classroom.pk}/",
        },
        "next": None
        if following is None
        else {"title": item_title(following), "link": item_link(following)},
    }


def progress(classroom: Classroom) -> list[dict[str, Any]]:
    """The dashboard rows: per student, their items (for the teacher's page)."""
    students = list(classroom.students.order_by("username"))
    items = items_of(classroom, students, shown=0)
    return [{"student": s.get_username(), "items": items[s.pk]} for s in students]
