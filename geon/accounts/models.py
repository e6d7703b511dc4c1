"""Teams, roles and API tokens. Per-graph memberships live in :mod:`geon.graphs.models`.

A user's role on a graph is the highest of: ``owner`` for the graph's owner, their own
membership of the graph, and their membership of the graph's team.

>>> Role.rank("editor") > Role.rank("reviewer")
True
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class Role(models.TextChoices):
    """What a member may do, in increasing order: read, comment, write, manage members."""

    VIEWER = "viewer"
    REVIEWER = "reviewer"
    EDITOR = "editor"
    OWNER = "owner"

    @staticmethod
    def rank(role: str) -> int:
        """0 for viewer up to 3 for owner."""
        return list(Role.values).index(role)


class Team(models.Model):
    """A group of users; a member's team role applies to every graph of the team."""

    name = models.CharField(max_length=100, unique=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class TeamMembership(models.Model):
    """A user's role in a team."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="team_memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        ordering = ["team", "user"]
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="team_membership_once")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


def token_digest(key: str) -> str:
    """The stored form of an API token: its SHA-256, so a database leak reveals no token."""
    return hashlib.sha256(key.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token for scripts (``Authorization: Bearer <key>``); only its digest is kept.

    Every token expires (``GEON_API_TOKEN_DAYS`` after it is made unless its maker asks for
    between 1 and ``GEON_API_TOKEN_MAX_DAYS`` days); revoking one deletes its row.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=8, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    expires = models.DateTimeField()

    class Meta:
        ordering = ["user", "created"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def expired(self) -> bool:
        """Whether the token is past its expiry."""
        return self.expires <= timezone.now()

    @classmethod
    def issue(cls, user: object, name: str, days: int | None = None) -> tuple[ApiToken, str]:
        """Create a token valid for ``days`` (the default: ``GEON_API_TOKEN_DAYS``); returns the
        row and the key, which is shown once and never stored."""
        key = "geon_" + secrets.token_urlsafe(32)
        lifetime = timedelta(days=settings.GEON_API_TOKEN_DAYS if days is None else days)
        token = cls.objects.create(
            user=user,
            name=name,
            digest=token_digest(key),
            prefix=key[5:13],
            expires=timezone.now() + lifetime,
        )
        return token, key
