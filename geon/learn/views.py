"""The lessons' pages: the list of lessons and puzzles (for anyone); a lesson opened as the
person's own copy in the editor at its first step (``?lesson=<key>&step=1``), a puzzle as their
own graph (``?puzzle=<key>``): the editor's Lesson and Puzzle panels read them."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from geon.learn import puzzles, services
from geon.teaching.lessons import LESSONS


def lessons_page(request: HttpRequest) -> HttpResponse:
    shown = [puzzles.puzzle_json(key) for key in puzzles.puzzles()]
    return render(
        request, "learn/lessons.html", {"lessons": list(LESSONS.values()), "puzzles": shown}
    )


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
        graph, _ = services.do_open_lesson(request.user, key)  # type: ignore[arg-type]
    except services.LessonNotFound as error:
        raise Http404(str(error)) from None
    step = request.GET.get("step", "1")
    return redirect(f"/graphs/{graph.pk}/?lesson={key}&step={step if step.isdigit() else 1}")
