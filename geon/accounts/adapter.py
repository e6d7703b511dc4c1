"""geon's django-allauth adapter: who may sign up (``GEON_SIGNUP``) and where an invited person
lands once signed up.

``open``: anyone; ``invite`` (the default): only someone holding an invitation link (a graph or
team invitation whose key the session remembers, :data:`INVITATION_SESSION_KEY`; the page
``/invite/<key>/`` of :mod:`geon.graphs.sharing_views` puts it there); ``closed``:
nobody (an administrator makes accounts).
"""

from __future__ import annotations

from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse

#: The session key holding the invitation key a visitor followed (see geon.accounts.invitations).
INVITATION_SESSION_KEY = "geon_invitation"


def signup_allowed(mode: str, invited: bool) -> bool:
    """Whether a sign-up may go ahead under ``GEON_SIGNUP`` = ``mode``.

    >>> [signup_allowed(m, False) for m in ("open", "invite", "closed")]
    [True, False, False]
    >>> signup_allowed("invite", True)
    True
    """
    return mode == "open" or (mode == "invite" and invited)


class GeonAccountAdapter(DefaultAccountAdapter):
    """Sign-up follows ``GEON_SIGNUP``; an invited person is sent back to their invitation,
    whose page they accept it on (a POST: following a link never accepts)."""

    def is_open_for_signup(self, request: HttpRequest) -> bool:
        """Open, by invitation (a followed invitation in the session), or closed."""
        invited = bool(getattr(request, "session", {}).get(INVITATION_SESSION_KEY))
        return signup_allowed(settings.GEON_SIGNUP, invited)

    def get_signup_redirect_url(self, request: HttpRequest) -> Any:
        """After sign-up: back to the invitation followed (its page offers to accept it, which
        lands on its graph), else the graph list."""
        return pending_invitation_url(request) or super().get_signup_redirect_url(request)

    def get_login_redirect_url(self, request: HttpRequest) -> Any:
        """After sign-in: a followed invitation, else where the sign-in was going."""
        return pending_invitation_url(request) or super().get_login_redirect_url(request)


def pending_invitation_url(request: HttpRequest) -> str | None:
    """The invitation page of the key the session remembers (None when there is none)."""
    key = getattr(request, "session", {}).get(INVITATION_SESSION_KEY)
    return reverse("invitation", args=[key]) if isinstance(key, str) and key else None
