"""REST endpoints of reviews under ``/api/v1/`` (docs/reviews.md has the contract):

- ``GET/POST /graphs/<id>/reviews``; ``GET/PATCH /graphs/<id>/reviews/<rid>``;
- ``POST /graphs/<id>/reviews/<rid>/threads``, ``PATCH .../threads/<tid>`` (resolve),
  ``POST .../threads/<tid>/comments``, ``POST .../threads/<tid>/apply`` (its suggestion);
- ``POST /graphs/<id>/reviews/apply``: several threads' suggestions as one edit;
- ``POST /graphs/<id>/reviews/<rid>/verdicts`` (a guardrail refusal is 409 ``guardrail``);
- ``POST /graphs/<id>/reviews/<rid>/read``; ``GET/PATCH /graphs/<id>/review-settings``;
- ``GET /reviews?for=me``: the open reviews that ask the caller;
- ``POST /graphs/<id>/reviews/<rid>/requests``: ask reviewers (again);
- ``GET /notifications``, ``POST /notifications/read``, ``GET/PATCH /notifications/settings``:
  the caller's inbox and whether it is mailed.

Views only translate HTTP; the rules are in :mod:`geon.reviews.services`.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router, Schema, Status
from pydantic import Field

from geon.core.errors import GeonError, quote
from geon.envelope import answers, error_response
from geon.graphs.api import PATH_NUMBER, RAW_BODY, Positive
from geon.graphs.services import check_can_view
from geon.reviews.services import guardrails, notifications, reading, writing
from geon.reviews.services.guardrails import GuardrailRefused
from geon.reviews.services.reading import Context

router = Router(tags=["reviews"])


class ReviewIn(Schema):
    # checked by the services, whose refusals name the bad value
    title: Any = Field(json_schema_extra={"type": "string", "maxLength": 200})
    description: Any = Field(default="", json_schema_extra={"type": "string"})
    plan: int | None = Field(default=None, ge=1)
    reviewers: Any = Field(default_factory=list, json_schema_extra={"type": "array"})


class ReviewPatch(Schema):
    state: Any = Field(default=None, json_schema_extra={"enum": ["open", "closed"]})
    title: Any = None
    description: Any = None


class ThreadIn(Schema):
    anchor: Any = Field(json_schema_extra={"type": "object"})
    body: Any = Field(json_schema_extra={"type": "string"})
    suggestion: Any = Field(default=None, json_schema_extra={"type": "object"})


class CommentIn(Schema):
    body: Any = Field(json_schema_extra={"type": "string"})


class ThreadPatch(Schema):
    resolved: Any = Field(json_schema_extra={"type": "boolean"})


class ApplyIn(Schema):
    baseVersion: Positive
    editId: str | None = Field(default=None, min_length=1, max_length=100)


class ApplyManyIn(ApplyIn):
    threads: list[int] = Field(max_length=100)


class VerdictIn(Schema):
    verdict: Any = Field(json_schema_extra={"enum": ["approve", "request_changes", "comment"]})
    body: Any = Field(default="", json_schema_extra={"type": "string"})


class RequestsIn(Schema):
    reviewers: Any = Field(json_schema_extra={"type": "array", "items": {"type": "string"}})


class ReadIn(Schema):
    # checked by the service, which names a bad value
    ids: Any = Field(
        default=None, json_schema_extra={"type": "array", "items": {"type": "integer"}}
    )
    all: Any = Field(default=None, json_schema_extra={"type": "boolean"})


def _site(request: HttpRequest) -> None:
    """Links in the mail this request causes start with the site's address as it reached us."""
    notifications.site_base.set(request.build_absolute_uri("/"))


class SettingsPatch(Schema):
    # checked by the service, which names a bad value
    requireResolvedThreads: Any = Field(default=None, json_schema_extra={"type": "boolean"})
    blockOnErrors: Any = Field(default=None, json_schema_extra={"type": "boolean"})
    blockOverCapacity: Any = Field(default=None, json_schema_extra={"type": "boolean"})
    profile: Any = Field(default=None, json_schema_extra={"type": "string"})


def _review(request: HttpRequest, graph_id: str, review_id: int) -> dict[str, Any]:
    return reading.get_review(request.user, graph_id, review_id)


def _thread(request: HttpRequest, graph_id: str, review_id: int, thread_id: int) -> Any:
    graph = check_can_view(request.user, graph_id)
    review = reading.review_of(graph, review_id)
    thread = writing.thread_of(review, thread_id)
    return reading.thread_json(thread, Context(graph, request.user), review)


@router.get("/graphs/{graph_id}/reviews", response=answers({200: dict[str, Any]}))
def list_reviews(request: HttpRequest, graph_id: str) -> dict[str, Any]:
    """The graph's reviews, newest first, without their threads."""
    return {"reviews": reading.list_reviews(request.user, graph_id)}


@router.post("/graphs/{graph_id}/reviews", response=answers({201: dict[str, Any]}))
def open_review(request: HttpRequest, graph_id: str, payload: ReviewIn) -> Status[dict[str, Any]]:
    """Ask reviewers (members with role reviewer or more) to review a plan, or the graph."""
    _site(request)
    review = writing.do_open_review(
        request.user, graph_id, payload.title, payload.reviewers, payload.plan, payload.description
    )
    return Status(201, _review(request, graph_id, review.pk))


@router.post("/graphs/{graph_id}/reviews/apply", response=answers({200: dict[str, Any]}))
def apply_suggestions(request: HttpRequest, graph_id: str, payload: ApplyManyIn) -> dict[str, Any]:
    """Apply several threads' suggestions (of any review of the graph) as one edit."""
    threads, applied = writing.do_apply_suggestions(
        request.user, graph_id, None, payload.threads, payload.baseVersion, payload.editId
    )
    return {"threads": [t.pk for t in threads], "version": applied.version, "ops": applied.ops}


@router.get("/graphs/{graph_id}/reviews/{review_id}", response=answers({200: dict[str, Any]}))
def get_review(request: HttpRequest, graph_id: str, review_id: int = PATH_NUMBER) -> dict[str, Any]:
    """A review with its threads and verdicts, read against the current version."""
    return _review(request, graph_id, review_id)


@router.patch("/graphs/{graph_id}/reviews/{review_id}", response=answers({200: dict[str, Any]}))
def change_review(
    request: HttpRequest, graph_id: str, payload: ReviewPatch, review_id: int = PATH_NUMBER
) -> dict[str, Any]:
    """Close or reopen a review, or change its title or description."""
    writing.do_change_review(
        request.user, graph_id, review_id, payload.model_dump(exclude_unset=True)
    )
    return _review(request, graph_id, review_id)


@router.post(
    "/graphs/{graph_id}/reviews/{review_id}/threads", response=answers({201: dict[str, Any]})
)
def add_thread(
    request: HttpRequest, graph_id: str, payload: ThreadIn, review_id: int = PATH_NUMBER
) -> Status[Any]:
    """A thread pinned to a node, an axis, an edge or a region, maybe with a suggestion."""
    _site(request)
    thread = writing.do_add_thread(
        request.user, graph_id, review_id, payload.anchor, payload.body, payload.suggestion
    )
    answer = _thread(request, graph_id, review_id, thread.pk)
    answer["notices"] = thread.notices
    return Status(201, answer)


@router.post(
    "/graphs/{graph_id}/reviews/{review_id}/threads/{thread_id}/comments",
    response=answers({201: dict[str, Any]}),
)
def add_comment(
    request: HttpRequest,
    graph_id: str,
    payload: CommentIn,
    review_id: int = PATH_NUMBER,
    thread_id: int = PATH_NUMBER,
) -> Status[Any]:
    """A reply in a thread; answers the thread."""
    _site(request)
    comment = writing.do_add_comment(request.user, graph_id, review_id, thread_id, payload.body)
    answer = _thread(request, graph_id, review_id, thread_id)
    answer["notices"] = comment.notices
    return Status(201, answer)


@router.patch(
    "/graphs/{graph_id}/reviews/{review_id}/threads/{thread_id}",
    response=answers({200: dict[str, Any]}),
)
def resolve_thread(
    request: HttpRequest,
    graph_id: str,
    payload: ThreadPatch,
    review_id: int = PATH_NUMBER,
    thread_id: int = PATH_NUMBER,
) -> Any:
    """Resolve (true) or reopen (false) a thread."""
    writing.do_resolve_thread(request.user, graph_id, review_id, thread_id, payload.resolved)
    return _thread(request, graph_id, review_id, thread_id)


@router.post(
    "/graphs/{graph_id}/reviews/{review_id}/threads/{thread_id}/apply",
    response=answers({200: dict[str, Any]}),
)
def apply_suggestion(
    request: HttpRequest,
    graph_id: str,
    payload: ApplyIn,
    review_id: int = PATH_NUMBER,
    thread_id: int = PATH_NUMBER,
) -> dict[str, Any]:
    """Apply a thread's suggestion as one edit based on ``baseVersion``."""
    _, applied = writing.do_apply_suggestions(
        request.user, graph_id, review_id, [thread_id], payload.baseVersion, payload.editId
    )
    return {
        "thread": _thread(request, graph_id, review_id, thread_id),
        "version": applied.version,
        "ops": applied.ops,
    }


@router.post(
    "/graphs/{graph_id}/reviews/{review_id}/verdicts", response=answers({201: dict[str, Any]})
)
def give_verdict(
    request: HttpRequest, graph_id: str, payload: VerdictIn, review_id: int = PATH_NUMBER
) -> Status[Any] | HttpResponse:
    """Approve, request changes or comment; an approval a guardrail refuses is 409."""
    _site(request)
    try:
        writing.do_give_verdict(request.user, graph_id, review_id, payload.verdict, payload.body)
    except GuardrailRefused as refused:
        return error_response(409, "guardrail", str(refused), guardrails=refused.guardrails)
    return Status(201, _review(request, graph_id, review_id))


@router.post("/graphs/{graph_id}/reviews/{review_id}/read", response=answers({200: dict[str, Any]}))
def mark_read(request: HttpRequest, graph_id: str, review_id: int = PATH_NUMBER) -> dict[str, Any]:
    """Everything of the review so far is read by the caller."""
    writing.do_mark_read(request.user, graph_id, review_id)
    return _review(request, graph_id, review_id)


@router.get("/graphs/{graph_id}/review-settings", response=answers({200: dict[str, Any]}))
def get_settings(request: HttpRequest, graph_id: str) -> dict[str, Any]:
    """The graph's guardrails on approvals."""
    return guardrails.get_settings(request.user, graph_id)


@router.patch("/graphs/{graph_id}/review-settings", response=answers({200: dict[str, Any]}))
def change_settings(request: HttpRequest, graph_id: str, payload: SettingsPatch) -> dict[str, Any]:
    """Change the graph's guardrails (role owner)."""
    changes = payload.model_dump(exclude_unset=True)
    return guardrails.do_change_settings(request.user, graph_id, changes)


@router.get("/reviews", response=answers({200: dict[str, Any]}))
def reviews_for_me(request: HttpRequest) -> dict[str, Any]:
    """The open reviews that ask the caller, newest activity first (``?for=me``, the one
    listing there is)."""
    return {"reviews": reading.reviews_for(request.user)}


@router.post(
    "/graphs/{graph_id}/reviews/{review_id}/requests", response=answers({200: dict[str, Any]})
)
def request_again(
    request: HttpRequest, graph_id: str, payload: RequestsIn, review_id: int = PATH_NUMBER
) -> dict[str, Any]:
    """Ask reviewers to review again (editors; one not asked yet joins the review's reviewers):
    each is notified; answers the review."""
    _site(request)
    writing.do_request_again(request.user, graph_id, review_id, payload.reviewers)
    return _review(request, graph_id, review_id)


@router.get("/notifications", response=answers({200: dict[str, Any]}))
def list_notifications(request: HttpRequest) -> dict[str, Any]:
    """The caller's notifications, newest first (at most 100), and how many are unread."""
    return notifications.list_for(writing.account(request.user))


@router.post("/notifications/read", response=answers({200: dict[str, Any]}))
def read_notifications(request: HttpRequest, payload: ReadIn) -> dict[str, Any]:
    """Mark notifications read: ``{"ids": [...]}`` or ``{"all": true}``; answers the inbox."""
    return notifications.do_mark_read(writing.account(request.user), payload.ids, payload.all)


@router.get("/notifications/settings", response=answers({200: dict[str, Any]}))
def notification_settings(request: HttpRequest) -> dict[str, Any]:
    """Whether the caller's notifications are mailed, and the verified addresses they go to."""
    return notifications.get_settings(writing.account(request.user))


@router.patch("/notifications/settings", response=answers({200: dict[str, Any]}))
def change_notification_settings(request: HttpRequest, changes: Any = RAW_BODY) -> dict[str, Any]:
    """Mute (``{"mail": false}``) or unmute the caller's notification mail (``mail`` is the one
    setting; any other is named in the refusal)."""
    if not isinstance(changes, dict):
        raise GeonError(f'settings {quote(changes)} are not valid; expected {{"mail": false}}')
    return notifications.do_change_settings(writing.account(request.user), changes)
