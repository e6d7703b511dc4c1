"""REST endpoints for API tokens under ``/api/v1/tokens`` (mounted in :mod:`geon.urls`).

- ``GET /tokens``: the caller's tokens (name, prefix, created, last used, expiry; never a key);
- ``POST /tokens {name, expires_in_days?}``: a new token, its key shown in this answer only.
  Only a signed-in browser session may make one: a token that could mint tokens would outlive
  its own revocation;
- ``DELETE /tokens/<id>``: revoke one of the caller's tokens (a token may revoke itself).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from ninja import Router, Schema, Status
from ninja.errors import HttpError
from pydantic import Field

from geon.accounts.models import ApiToken
from geon.envelope import answers

router = Router(tags=["tokens"])


class TokenRefused(HttpError):
    """A token request that is refused, with the envelope's ``code``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(status, message)
        self.code = code


class TokenIn(Schema):
    name: str = Field(min_length=1, max_length=100)
    expires_in_days: int | None = Field(default=None, ge=1, le=settings.GEON_API_TOKEN_MAX_DAYS)


class TokenSummary(Schema):
    id: int
    name: str
    prefix: str
    created: datetime
    last_used: datetime | None
    expires: datetime


class TokenOut(TokenSummary):
    token: str


class TokenList(Schema):
    tokens: list[TokenSummary]


def caller(request: HttpRequest) -> User:
    """The signed-in user making the request (every endpoint here needs one)."""
    user = request.user
    assert isinstance(user, User), "the API's auth lets only signed-in users through"
    return user


def summary(token: ApiToken) -> dict[str, Any]:
    return {
        "id": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "created": token.created,
        "last_used": token.last_used,
        "expires": token.expires,
    }


@router.get("/tokens", response=answers({200: TokenList}))
def list_tokens(request: HttpRequest) -> dict[str, Any]:
    """The caller's API tokens, oldest first; the keys themselves are never shown again."""
    return {"tokens": [summary(t) for t in ApiToken.objects.filter(user=caller(request))]}


@router.post("/tokens", response=answers({201: TokenOut}))
def create_token(request: HttpRequest, payload: TokenIn) -> Status[dict[str, Any]]:
    """A new API token for scripts: send it as ``Authorization: Bearer <token>``. The key is
    shown in this answer only. It expires after ``expires_in_days`` (default
    ``GEON_API_TOKEN_DAYS``, at most ``GEON_API_TOKEN_MAX_DAYS``). Only a signed-in browser
    session may create tokens."""
    if isinstance(getattr(request, "auth", None), ApiToken):
        raise TokenRefused(
            403,
            "session_required",
            "an API token cannot create tokens; sign in to geon in a browser and create it "
            "there (or on the server: manage.py create_token USERNAME)",
        )
    held = ApiToken.objects.filter(user=caller(request)).count()
    if held >= settings.GEON_API_TOKENS_PER_USER:
        raise TokenRefused(
            409,
            "too_many_tokens",
            f"you hold {held} API tokens, the most allowed; revoke one first "
            "(DELETE /api/v1/tokens/<id>, ids from GET /api/v1/tokens)",
        )
    token, key = ApiToken.issue(caller(request), payload.name, payload.expires_in_days)
    return Status(201, {**summary(token), "token": key})


@router.delete("/tokens/{token_id}", response=answers({204: None}))
def revoke_token(request: HttpRequest, token_id: int) -> HttpResponse:
    """Revoke one of the caller's tokens: it stops working at once."""
    deleted, _ = ApiToken.objects.filter(user=caller(request), pk=token_id).delete()
    if not deleted:
        raise TokenRefused(
            404,
            "not_found",
            f"you have no API token {token_id}; GET /api/v1/tokens lists the ids of yours",
        )
    return HttpResponse(status=204)
