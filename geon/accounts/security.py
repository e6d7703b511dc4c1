"""The Content-Security-Policy of every answer, from the ``SECURE_CSP`` setting.

The setting has the shape of Django 6's ``SECURE_CSP`` (directive -> list of sources), so
Django's own ``ContentSecurityPolicyMiddleware`` can replace this one after an upgrade. An answer
that already carries a policy keeps it (no view sets one today: even the API docs page serves
Swagger UI from this site under this policy).

>>> policy_header({"default-src": ["'self'"], "object-src": ["'none'"]})
"default-src 'self'; object-src 'none'"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.deprecation import MiddlewareMixin

HEADER = "Content-Security-Policy"


def policy_header(policy: Mapping[str, Sequence[str]]) -> str:
    """The header value of a policy: directives in the given order, separated by ``; ``."""
    return "; ".join(" ".join([directive, *sources]) for directive, sources in policy.items())


class ContentSecurityPolicyMiddleware(MiddlewareMixin):
    """Adds ``SECURE_CSP`` as the ``Content-Security-Policy`` header of every answer."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if HEADER not in response:
            response[HEADER] = policy_header(settings.SECURE_CSP)
        return response
