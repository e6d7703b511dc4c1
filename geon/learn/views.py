"""The lessons' pages: the list of lessons and puzzles (for anyone); a lesson opened as the
person's own copy in the editor at its first step (``?lesson=<key>&step=1``), a puzzle as their
own graph (``?puzzle=<key>``): the editor's Lesson and Puzzle panels read them.

A lesson key that opens nothing counts against the client's address; too many answer 429
(:func:`geon.learn.services.lesson_for`).

Without an account, ``/learn/try/<key>/`` and ``/learn/try/puzzles/<key>/`` open the same
editor on the lesson's or puzzle's starting graph with no graph stored: the browser keeps the
work, the server only checks it (geon/learn/content/README.md, Trying without an account)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import F
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from geon.core.errors import GeonError
from geon.learn import classes, puzzles, services
from geon.learn.content.lessons import LESSONS
from geon.learn.models import Classroom, WrittenLesson


def lessons_page(request: HttpRequest) -> HttpResponse:
    shown = [puzzles.puzzle_json(key) for key in puzzles.puzzles()]
    # the lessons one published and still serves (withdrawn ones are not listed)
    written = WrittenLesson.objects.filter(
        author_id=request.user.pk or 0, graph__owner_id=F("author_id")
    ).select_related("graph")
    context = {"lessons": list(LESSONS.values()), "puzzles": shown, "written": written}
    return render(request, "learn/lessons.html", context)


def _try_page(request: HttpRequest, kind: str, key: str, title: str, start: Any) -> HttpResponse:
    """The editor on a starting graph kept in the browser (``kind`` "lesson" or "puzzle")."""
    context = {"kind": kind, "key": key, "title": title, "start": start}
    return render(request, "learn/try.html", context)


def _keys_throttled(request: HttpRequest, throttled: services.KeysThrottled) -> HttpResponse:
    """429: this address asked for too many lesson links that open nothing."""
    context = {"title": "Too many wrong lesson links", "message": str(throttled)}
    response = render(request, "learn/refused.html", context, status=429)
    response["Retry-After"] = str(throttled.retry_after)
    return response


def try_lesson(request: HttpRequest, key: str) -> HttpResponse:
    try:
        lesson = services.lesson_for(request, key)
    except services.KeysThrottled as throttled:
        return _keys_throttled(request, throttled)
    except services.LessonNotFound as error:
        raise Http404(str(error)) from None
    return _try_page(request, "lesson", key, lesson.title, lesson.build().to_json())


def try_puzzle(request: HttpRequest, key: str) -> HttpResponse:
    try:
        puzzle = puzzles.puzzle_of(key)
    except puzzles.PuzzleNotFound as error:
        raise Http404(str(error)) from None
    return _try_page(request, "puzzle", key, puzzle["title"], puzzles.starting_graph(puzzle))


@login_required
def open_puzzle(request: HttpRequest, key: str) -> HttpResponse:
    try:
        graph, _ = puzzles.do_open_puzzle(request.user, key)  # type: ignore[arg-type]
    except puzzles.PuzzleNotFound as error:
        raise Http404(str(error)) from None
    return redirect(f"/graphs/{graph.pk}/?puzzle={key}")


@login_required
def open_lesson(request: HttpRequest, key: str) -> HttpResponse:
    try:
        services.lesson_for(request, key)
        graph, _ = services.do_open_lesson(request.user, key)  # type: ignore[arg-type]
    except services.KeysThrottled as throttled:
        return _keys_throttled(request, throttled)
    except services.LessonNotFound as error:
        raise Http404(str(error)) from None
    step = request.GET.get("step", "1")
    return redirect(f"/graphs/{graph.pk}/?lesson={key}&step={step if step.isdigit() else 1}")


@login_required
def classes_page(request: HttpRequest) -> HttpResponse:
    """The classes one teaches (with a form for a new one) and those one is in."""
    error = None
    if request.method == "POST":
        try:
            made = classes.do_create_class(request.user, request.POST.get("name"))  # type: ignore[arg-type]
        except GeonError as refused:
            error = str(refused)
        else:
            return redirect("class", class_id=made.pk)
    context = {
        "taught": Classroom.objects.filter(teacher_id=request.user.pk),
        "joined": Classroom.objects.filter(students=request.user.pk),
        "error": error,
    }
    return render(request, "learn/classes.html", context)


def _class_items(request: HttpRequest) -> list[tuple[str, str]]:
    """What a teacher may assign: the shipped lessons, their own published ones, the puzzles."""
    return (
        [(f"lesson:{k}", f"Lesson: {v.title}") for k, v in LESSONS.items()]
        + [
            (f"lesson:{w.key}", f"Your lesson: {w.title}")
            for w in WrittenLesson.objects.filter(
                author_id=request.user.pk, graph__owner_id=F("author_id")
            )
        ]
        + [(f"puzzle:{k}", f"Puzzle: {p['title']}") for k, p in puzzles.puzzles().items()]
    )


def _teacher_post(request: HttpRequest, classroom: Classroom) -> None:
    """The teacher's forms: assign (with a due date), remove, move up or down."""
    teacher: Any = request.user
    action = request.POST.get("action", "assign")
    if action == "assign":
        kind, _, key = str(request.POST.get("item")).partition(":")
        if kind == "lesson":  # a wrong key counts here too: the form is no key oracle
            services.lesson_for(request, key)
        classes.do_assign(teacher, classroom.pk, request.POST.get("item"), request.POST.get("due"))
        return
    order = list(classroom.assignments.values_list("pk", flat=True))
    try:
        chosen = int(request.POST.get("assignment", ""))
    except ValueError:
        chosen = 0
    if chosen not in order:
        raise GeonError("that work is no longer assigned to this class; reload the page")
    if action == "remove":
        classes.do_unassign(teacher, classroom.pk, chosen)
    elif action in ("up", "down"):
        at = order.index(chosen)
        to = max(0, at - 1) if action == "up" else min(len(order) - 1, at + 1)
        order[at], order[to] = order[to], order[at]
        classes.do_reorder(teacher, classroom.pk, order)


@login_required
def class_page(request: HttpRequest, class_id: int) -> HttpResponse:
    """A class: for its teacher the join link, the assign form (with due dates), the order of
    the work and the progress, each cell linking to the student's work; for a student their
    work with its state, due date (late marked) and the teacher's comment."""
    try:
        classroom, teaches = classes.class_of(request.user, class_id)  # type: ignore[arg-type]
    except classes.ClassNotFound as missing:
        raise Http404(str(missing)) from None
    error = None
    if request.method == "POST" and teaches:
        try:
            _teacher_post(request, classroom)
        except GeonError as refused:
            error = str(refused)
        else:
            return redirect("class", class_id=class_id)
    assignments = [
        {"id": a.pk, "title": classes.item_title(a), "link": classes.item_link(a), "due": a.due}
        for a in classroom.assignments.all()
    ]
    person: Any = request.user
    mine = [] if teaches else classes.items_of(classroom, [person], shown=0)[person.pk]
    context = {
        "classroom": classroom,
        "teaches": teaches,
        "assignments": assignments,
        "rows": classes.progress(classroom) if teaches else [],
        "mine": [
            {
                "item": i,
                "title": classes.item_title(i.assignment),
                "link": classes.item_link(i.assignment),
            }
            for i in mine
        ],
        "join": request.build_absolute_uri(f"/learn/join/{classroom.key}/"),
        "items": _class_items(request) if teaches else [],
        "error": error,
    }
    return render(request, "learn/class.html", context)


@login_required
def student_work(
    request: HttpRequest, class_id: int, student: str, assignment_id: int
) -> HttpResponse:
    """The teacher's drill-down: one student's graph (drawn, read-only), their attempts with
    each counterexample, and the comment the student sees (a form)."""
    teacher: Any = request.user
    error = None
    try:
        if request.method == "POST":
            try:
                classes.do_comment(
                    teacher, class_id, student, assignment_id, request.POST.get("comment", "")
                )
            except classes.ClassNotFound:
                raise
            except GeonError as refused:
                error = str(refused)
            else:
                return redirect(
                    "class-work", class_id=class_id, student=student, assignment_id=assignment_id
                )
        item = classes.drill_down(teacher, class_id, student, assignment_id)
    except (classes.ClassNotFound, classes.TeacherOnly) as missing:
        raise Http404(str(missing)) from None
    context = {
        "classroom": item.assignment.classroom,
        "student": student,
        "item": item,
        "title": classes.item_title(item.assignment),
        "attempts": [
            {**a, "grids": classes.counterexample_grids(a.get("counterexample") or {})}
            for a in reversed(item.attempts)
        ],
        "error": error,
    }
    return render(request, "learn/work.html", context)


@login_required
def student_graph(
    request: HttpRequest, class_id: int, student: str, assignment_id: int
) -> HttpResponse:
    """The student's graph drawn as SVG for the teacher (``?version=N``: as an attempt had it);
    an image, so nothing in it runs and nothing can be edited."""
    try:
        item = classes.drill_down(request.user, class_id, student, assignment_id)  # type: ignore[arg-type]
        svg = classes.graph_svg(item, request.GET.get("version"))
    except (classes.ClassNotFound, classes.TeacherOnly) as missing:
        raise Http404(str(missing)) from None
    response = HttpResponse(svg, content_type="image/svg+xml")
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


@login_required
def my_progress_page(request: HttpRequest) -> HttpResponse:
    """A student's own progress: per class they are in, each item's state, due date (late
    marked) and the teacher's comment."""
    person: Any = request.user
    shown = []
    for classroom in Classroom.objects.filter(students=person.pk).select_related("teacher"):
        items = classes.items_of(classroom, [person], shown=0)[person.pk]
        shown.append(
            {
                "classroom": classroom,
                "items": [
                    {
                        "item": i,
                        "title": classes.item_title(i.assignment),
                        "link": classes.item_link(i.assignment),
                    }
                    for i in items
                ],
            }
        )
    return render(request, "learn/progress.html", {"classes": shown})


@login_required
def join_class(request: HttpRequest, key: str) -> HttpResponse:
    """Join the class of this link, then see its work."""
    try:
        classroom = classes.do_join(request.user, key)  # type: ignore[arg-type]
    except classes.ClassNotFound as error:
        raise Http404(str(error)) from None
    return redirect("class", class_id=classroom.pk)
