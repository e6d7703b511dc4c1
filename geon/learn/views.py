"""The lessons' pages: the list (for anyone), and a lesson opened as the person's own copy in
the editor, at its first step (``?lesson=<key>&step=1``; the editor's Lesson panel reads it)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from geon.learn import services
from geon.teaching.lessons import LESSONS


def lessons_page(request: HttpRequest) -> HttpResponse:
    return render(request, "learn/lessons.html", {"lessons": list(LESSONS.values())})


@login_required
def open_lesson(request: HttpRequest, key: str) -> HttpResponse:
    try:
        graph, _ = services.do_open_lesson(request.user, key)  # type: ignore[arg-type]
    except services.LessonNotFound as error:
        raise Http404(str(error)) from None
    step = request.GET.get("step", "1")
    return redirect(f"/graphs/{graph.pk}/?lesson={key}&step={step if step.isdigit() else 1}")
