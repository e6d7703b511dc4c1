"""REST endpoints of classes under ``/api/v1/`` (issue 36): what an LMS or a script uses, and
the class pages' own source. Every endpoint needs a signed-in person (session or token).

- ``GET /classes``: ``{"taught": [...], "joined": [...]}``, each ``{"id", "title", "teacher"}``;
- ``POST /classes`` ``{"title"}`` -> 201 ``{"id", "title", "joinUrl"}``;
- ``GET /classes/<id>``: the class with its assignments (``joinUrl`` for the teacher only);
- ``POST /classes/<id>/assignments`` ``{"lesson": key}`` or ``{"puzzle": key}``, optional
  ``"due"`` (ISO 8601) -> 201 the assignment ``{"id", "kind", "key", "title", "link", "due",
  "position"}``; ``PATCH .../assignments/<a>`` ``{"due"}`` (null clears it); ``DELETE
  .../assignments/<a>`` -> 204; ``PUT /classes/<id>/order`` ``{"assignments": [ids]}`` (each
  of the class's assignments once) -> ``{"assignments": [...]}`` in the new order;
- ``POST /classes/join/<key>``: join by the link's key -> the class as its students read it;
- ``GET /classes/<id>/progress`` -> ``{"assignments", "students": [{"student", "items":
  [{"assignment", "state", "checks", "solvedAt", "late", "graph", "attempts", "comment"}]}]}``
  and ``GET /classes/<id>/progress.csv`` (``text/csv``): the teacher's only;
- ``GET /classes/<id>/students/<name>/items/<a>``: one item with up to 100 attempts, and
  ``PUT`` of it ``{"comment"}`` (empty removes it): the teacher's only;
- ``GET /classes/<id>/mine``: the student's own items (state, due, late, the comment);
- ``GET /classes/after/<lesson|puzzle>/<key>``: after finishing an item, the class of yours
  that assigns it and the item after it there: ``{"class": {"id", "title", "url"} | null,
  "next": {"title", "link"} | null}``.

A class's teacher is answered; a student of the class is refused with 403 where only the
teacher may act, naming the teacher; anyone else gets 404 (the class is not shown to exist).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router, Schema, Status

from geon.core.errors import GeonError
from geon.envelope import ERROR_STATUSES, answers, error_response
from geon.graphs.api import PATH_NUMBER
from geon.learn import classes, services
from geon.learn.models import Classroom

router = Router(tags=["classes"])


class ClassIn(Schema):
    title: Any = None


class AssignIn(Schema):
    lesson: Any = None
    puzzle: Any = None
    due: Any = None


class DueIn(Schema):
    due: Any = None


class OrderIn(Schema):
    assignments: Any = None


class CommentIn(Schema):
    comment: Any = None


def _join_url(request: HttpRequest, classroom: Classroom) -> str:
    return request.build_absolute_uri(f"/learn/join/{classroom.key}/")


def _brief(classroom: Classroom) -> dict[str, Any]:
    return {
        "id": classroom.pk,
        "title": classroom.name,
        "teacher": classroom.teacher.get_username(),
    }


@router.get("/classes", response=answers({200: dict[str, Any]}))
def list_classes(request: HttpRequest) -> dict[str, Any]:
    """The classes you teach and the classes you are in."""
    person = request.user
    return {
        "taught": [_brief(c) for c in Classroom.objects.filter(teacher_id=person.pk)],
        "joined": [_brief(c) for c in Classroom.objects.filter(students=person.pk)],
    }


@router.post("/classes", response=answers({201: dict[str, Any]}))
def create_class(request: HttpRequest, payload: ClassIn) -> Status[dict[str, Any]]:
    """A new class you teach, with its join link."""
    made = classes.do_create_class(request.user, payload.title)  # type: ignore[arg-type]
    return Status(201, {"id": made.pk, "title": made.name, "joinUrl": _join_url(request, made)})


@router.get("/classes/{class_id}", response=answers({200: dict[str, Any]}))
def get_class(request: HttpRequest, class_id: int = PATH_NUMBER) -> dict[str, Any]:
    """A class you teach or are in, with its assignments in order."""
    classroom, teaches = classes.class_of(request.user, class_id)  # type: ignore[arg-type]
    return classes.class_json(classroom, _join_url(request, classroom) if teaches else None)


@router.post(
    "/classes/{class_id}/assignments",
    response=answers({201: dict[str, Any]}, (*ERROR_STATUSES, 429)),
)
def assign(request: HttpRequest, payload: AssignIn, class_id: int = PATH_NUMBER) -> Any:
    """Assign a lesson or a puzzle by its key, with an optional due date."""
    given = [k for k in ("lesson", "puzzle") if getattr(payload, k) is not None]
    if len(given) != 1:
        raise GeonError('send either "lesson" or "puzzle" with the key of what to assign')
    kind = given[0]
    key = getattr(payload, kind)
    if not isinstance(key, str):
        raise GeonError(f"the {kind} key must be text, not {type(key).__name__}")
    classes.taught_class(request.user, class_id, "assigns work")  # type: ignore[arg-type]
    if kind == "lesson":  # a wrong key counts, as on the lesson pages: no key oracle
        try:
            services.lesson_for(request, key)
        except services.KeysThrottled as throttled:
            response = error_response(429, "too_many_requests", str(throttled))
            response["Retry-After"] = str(throttled.retry_after)
            return response
    made = classes.do_assign(request.user, class_id, f"{kind}:{key}", payload.due)  # type: ignore[arg-type]
    return Status(201, classes.assignment_json(made))


@router.patch(
    "/classes/{class_id}/assignments/{assignment_id}", response=answers({200: dict[str, Any]})
)
def set_due(
    request: HttpRequest,
    payload: DueIn,
    class_id: int = PATH_NUMBER,
    assignment_id: int = PATH_NUMBER,
) -> dict[str, Any]:
    """Change an assignment's due date (null clears it)."""
    found = classes.do_set_due(request.user, class_id, assignment_id, payload.due)  # type: ignore[arg-type]
    return classes.assignment_json(found)


@router.delete("/classes/{class_id}/assignments/{assignment_id}", response=answers({204: None}))
def unassign(
    request: HttpRequest, class_id: int = PATH_NUMBER, assignment_id: int = PATH_NUMBER
) -> Status[None]:
    """Take an assignment off the class (students keep their copies)."""
    classes.do_unassign(request.user, class_id, assignment_id)  # type: ignore[arg-type]
    return Status(204, None)


@router.put("/classes/{class_id}/order", response=answers({200: dict[str, Any]}))
def reorder(request: HttpRequest, payload: OrderIn, class_id: int = PATH_NUMBER) -> dict[str, Any]:
    """Put the class's assignments in this order (each of them once)."""
    done = classes.do_reorder(request.user, class_id, payload.assignments)  # type: ignore[arg-type]
    return {"assignments": [classes.assignment_json(a) for a in done]}


@router.post("/classes/join/{key}", response=answers({200: dict[str, Any]}))
def join(request: HttpRequest, key: str) -> dict[str, Any]:
    """Join the class of a join link's key (joining again changes nothing)."""
    classroom = classes.do_join(request.user, key)  # type: ignore[arg-type]
    teaches = classroom.teacher_id == request.user.pk
    return classes.class_json(classroom, _join_url(request, classroom) if teaches else None)


@router.get("/classes/{class_id}/progress", response=answers({200: dict[str, Any]}))
def progress(request: HttpRequest, class_id: int = PATH_NUMBER) -> dict[str, Any]:
    """Per student, their work on each assignment (the teacher only)."""
    return classes.progress_json(request.user, class_id)  # type: ignore[arg-type]


@router.get("/classes/{class_id}/progress.csv", response=answers({200: str}))
def progress_csv(request: HttpRequest, class_id: int = PATH_NUMBER) -> HttpResponse:
    """The progress as a spreadsheet: one row per student, one column per assignment."""
    text = classes.progress_csv(request.user, class_id)  # type: ignore[arg-type]
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="class-{class_id}-progress.csv"'
    return response


@router.get(
    "/classes/{class_id}/students/{student}/items/{assignment_id}",
    response=answers({200: dict[str, Any]}),
)
def get_item(
    request: HttpRequest,
    student: str,
    class_id: int = PATH_NUMBER,
    assignment_id: int = PATH_NUMBER,
) -> dict[str, Any]:
    """One student's work on one assignment, with up to 100 attempts (the teacher only)."""
    item = classes.drill_down(request.user, class_id, student, assignment_id)  # type: ignore[arg-type]
    return {"student": student, **item.to_json()}


@router.put(
    "/classes/{class_id}/students/{student}/items/{assignment_id}",
    response=answers({200: dict[str, Any]}),
)
def comment(
    request: HttpRequest,
    payload: CommentIn,
    student: str,
    class_id: int = PATH_NUMBER,
    assignment_id: int = PATH_NUMBER,
) -> dict[str, Any]:
    """The teacher's comment on the student's item, which the student sees ("" removes it)."""
    made = classes.do_comment(request.user, class_id, student, assignment_id, payload.comment)  # type: ignore[arg-type]
    return {"student": student, "assignment": assignment_id, "comment": made.text if made else ""}


@router.get("/classes/after/{kind}/{key}", response=answers({200: dict[str, Any]}))
def after(request: HttpRequest, kind: str, key: str) -> dict[str, Any]:
    """The class that assigns this lesson or puzzle to you, and what comes next in it."""
    if kind not in ("lesson", "puzzle"):
        raise GeonError(f'kind "{kind[:20]}" is not valid; expected "lesson" or "puzzle"')
    return classes.after(request.user, kind, key)  # type: ignore[arg-type]


@router.get("/classes/{class_id}/mine", response=answers({200: dict[str, Any]}))
def mine(request: HttpRequest, class_id: int = PATH_NUMBER) -> dict[str, Any]:
    """Your own work in a class you are in: each item's state, due date and comment."""
    return classes.my_progress(request.user, class_id)  # type: ignore[arg-type]
