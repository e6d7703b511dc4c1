"""The refusals of the runs services: each names what is wrong and the HTTP status it answers
with (DESIGN.md §6: every error answer is ``{"error": {"code", "message", "issues"?}}``)."""

from __future__ import annotations

from typing import Any

from geon.core.errors import GeonError


class RunRefused(GeonError):
    """A run or render request is refused: ``code`` says why, ``status`` is the HTTP status
    (400 malformed, 404 unknown version or format, 409 graph with errors or results not ready,
    413 over the limits, 422 inputs that do not fit the document, 429 too many waiting, with
    ``retry_after`` the seconds a client is asked to wait)."""

    def __init__(
        self,
        code: str,
        message: str,
        issues: list[dict[str, Any]] | None = None,
        *,
        status: int = 400,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.issues = issues
        self.status = status
        self.retry_after = retry_after


class RunNotFound(GeonError):
    """The run does not exist, or the user may not see its graph (the two look the same)."""
