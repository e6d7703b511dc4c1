"""Signing in, throttled (:mod:`geon.accounts.throttle`): the login page and the admin's; and
the account page (name, email and password links, API tokens).

A throttled try answers 429 with ``Retry-After`` and says when to try again; it is refused
before the password is looked at, so the right password does not get through either.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from geon.accounts.adapter import pending_invitation_url
from geon.accounts.models import ApiToken
from geon.accounts.throttle import SignInThrottle, refusal_message

THROTTLED = "throttled"


class ThrottledSignIn(AuthenticationForm):
    """Django's sign-in form, refusing throttled tries and counting failed ones."""

    retry_after = 0
    unconfirmed = False

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

    def confirm_login_allowed(self, user: Any) -> None:
        """Inactive accounts are refused (Django's rule), and, while email verification is
        mandatory, an account made by signing up until its address is confirmed (accounts an
        administrator made have no address to confirm)."""
        super().confirm_login_allowed(user)
        if settings.ACCOUNT_EMAIL_VERIFICATION == "mandatory" and awaits_confirmation(user):
            self.unconfirmed = True  # the page says this one (the password was right)
            raise forms.ValidationError(
                "confirm your email address first: follow the link in the mail geon sent to "
                "it when you signed up, then sign in",
                code="unconfirmed",
            )


def awaits_confirmation(user: Any) -> bool:
    """Whether ``user`` signed up with an address that is not confirmed yet."""
    from allauth.account.models import EmailAddress

    return set(EmailAddress.objects.filter(user=user).values_list("verified", flat=True)) == {False}


class ThrottledAdminSignIn(ThrottledSignIn, AdminAuthenticationForm):
    """The admin's sign-in form (staff only), throttled the same way."""


class SignInView(LoginView):
    """The login page: a throttled try answers 429 with ``Retry-After``."""

    form_class = ThrottledSignIn
    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def get_success_url(self) -> str:
        """A followed invitation first (it lands on its graph), else ``next`` or the list."""
        return pending_invitation_url(self.request) or super().get_success_url()

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        """The form, and whether to offer sign-up (``GEON_SIGNUP=open``)."""
        return {**super().get_context_data(**kwargs), "signup_open": settings.GEON_SIGNUP == "open"}

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        response = super().form_invalid(form)
        if isinstance(form, ThrottledSignIn) and form.retry_after:
            response.status_code = 429
            response["Retry-After"] = str(form.retry_after)
        return response


class NameForm(forms.Form):
    """The name others see beside the username (presence, members)."""

    first_name = forms.CharField(max_length=150, required=False, label="First name")
    last_name = forms.CharField(max_length=150, required=False, label="Last name")


class TokenForm(forms.Form):
    """A new API token: its name and days until it expires."""

    name = forms.CharField(max_length=100, label="Token name")
    days = forms.IntegerField(min_value=1, required=False, label="Days valid")

    def clean_days(self) -> int | None:
        """At most ``GEON_API_TOKEN_MAX_DAYS``."""
        days = self.cleaned_data.get("days")
        limit = settings.GEON_API_TOKEN_MAX_DAYS
        if days is not None and days > limit:
            raise forms.ValidationError(f"{days} days is too long; at most {limit} days")
        return days


@login_required
def account_page(request: HttpRequest) -> HttpResponse:
    """The account page: name, links to email and password, API tokens (list, create, revoke).

    POST ``action`` = ``name`` | ``create_token`` | ``revoke_token`` (with ``token``)."""
    user = request.user
    assert isinstance(user, User)
    name_form = NameForm(initial={"first_name": user.first_name, "last_name": user.last_name})
    token_form = TokenForm()
    new_key = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "name":
            name_form = NameForm(request.POST)
            if name_form.is_valid():
                user.first_name = name_form.cleaned_data["first_name"]
                user.last_name = name_form.cleaned_data["last_name"]
                user.save(update_fields=["first_name", "last_name"])
                messages.success(request, "Your name was saved.")
                return redirect("account")
        elif action == "create_token":
            token_form = TokenForm(request.POST)
            held = ApiToken.objects.filter(user=user).count()
            if held >= settings.GEON_API_TOKENS_PER_USER:
                token_form.add_error(None, f"you hold {held} tokens, the most allowed")
            elif token_form.is_valid():
                _, new_key = ApiToken.issue(
                    user, token_form.cleaned_data["name"], token_form.cleaned_data["days"]
                )
                token_form = TokenForm()
        elif action == "revoke_token":
            ApiToken.objects.filter(user=user, pk=request.POST.get("token") or 0).delete()
            messages.success(request, "The token was revoked.")
            return redirect("account")
    context = {
        "name_form": name_form,
        "token_form": token_form,
        "tokens": ApiToken.objects.filter(user=user),
        "new_key": new_key,
    }
    return render(request, "accounts/account.html", context)
