"""Signing in, throttled (:mod:`geon.accounts.throttle`): the login page and the admin's.

A throttled try answers 429 with ``Retry-After`` and says when to try again; it is refused
before the password is looked at, so the right password does not get through either.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.http import HttpResponse

from geon.accounts.throttle import SignInThrottle, refusal_message

THROTTLED = "throttled"


class ThrottledSignIn(AuthenticationForm):
    """Django's sign-in form, refusing throttled tries and counting failed ones."""

    retry_after = 0

    def clean(self) -> dict[str, Any]:
        throttle = SignInThrottle.of(self.request, self.data.get("username") or "")
        self.retry_after = throttle.retry_after()
        if self.retry_after:
            raise forms.ValidationError(refusal_message(self.retry_after), code=THROTTLED)
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            throttle.failed()
            raise
        throttle.succeeded()
        return cleaned


class ThrottledAdminSignIn(ThrottledSignIn, AdminAuthenticationForm):
    """The admin's sign-in form (staff only), throttled the same way."""


class SignInView(LoginView):
    """The login page: a throttled try answers 429 with ``Retry-After``."""

    form_class = ThrottledSignIn
    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        response = super().form_invalid(form)
        if isinstance(form, ThrottledSignIn) and form.retry_after:
            response.status_code = 429
            response["Retry-After"] = str(form.retry_after)
        return response
