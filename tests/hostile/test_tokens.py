"""Hostile input against tokens and signing in (issue 13 finding 10): a token cannot mint tokens;
tokens are listed without their keys, revoked, and expire; sign-in is throttled per account and
per address, even for the right password, without telling which accounts exist.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from django.utils import timezone

from geon.accounts.models import ApiToken

pytestmark = pytest.mark.django_db

API = "/api/v1"
THROTTLED = "Too many failed sign-in attempts. Try again in 15 minutes."


@pytest.fixture(autouse=True)
def own_cache() -> Iterator[None]:
    """A cache of this test's own, so sign-in counts never leak between tests (or runs, with
    Redis)."""
    backend = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    with override_settings(CACHES={"default": {**backend, "LOCATION": uuid.uuid4().hex}}):
        yield


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def make(client: Client, body: dict[str, Any], **headers: Any) -> Any:
    return client.post(
        f"{API}/tokens", json.dumps(body), content_type="application/json", **headers
    )


def tokens_of(user: Any) -> list[tuple[str, str]]:
    return list(ApiToken.objects.filter(user=user).values_list("name", "digest"))


# --- tokens ----------------------------------------------------------------------------------


def test_a_session_makes_a_token_that_expires_by_default(user: Any) -> None:
    response = make(signed_in(user), {"name": "ci"})
    body = response.json()
    token = ApiToken.objects.get(user=user)
    assert response.status_code == 201
    assert set(body) == {"id", "name", "prefix", "created", "last_used", "expires", "token"}
    assert (body["id"], body["name"], body["prefix"], body["last_used"]) == (
        token.pk,
        "ci",
        body["token"][5:13],
        None,
    )
    assert token.expires - token.created == pytest.approx(timedelta(days=90), abs=timedelta(1))


def test_a_token_asks_for_its_own_lifetime(user: Any) -> None:
    response = make(signed_in(user), {"name": "week", "expires_in_days": 7})
    token = ApiToken.objects.get(user=user)
    assert response.status_code == 201
    assert token.expires - token.created == pytest.approx(timedelta(days=7), abs=timedelta(1))


@pytest.mark.parametrize(
    ("label", "days", "message"),
    [
        (
            "zero",
            0,
            "body.payload.expires_in_days: Input should be greater than or equal to 1",
        ),
        (
            "over the maximum",
            366,
            "body.payload.expires_in_days: Input should be less than or equal to 365",
        ),
        (
            "not a number",
            "soon",
            "body.payload.expires_in_days: Input should be a valid integer, "
            "unable to parse string as an integer",
        ),
    ],
)
def test_a_lifetime_out_of_bounds_is_refused(
    label: str, days: Any, message: str, user: Any
) -> None:
    response = make(signed_in(user), {"name": "x", "expires_in_days": days})
    assert (response.status_code, response.json()) == (
        422,
        {"error": {"code": "invalid_request", "message": message}},
    )
    assert tokens_of(user) == []


def test_a_token_cannot_make_tokens(user: Any) -> None:
    # given a script holding one of ann's tokens
    _, key = ApiToken.issue(user, "script")
    before = tokens_of(user)
    # when it asks for another token
    response = make(Client(), {"name": "escalate"}, HTTP_AUTHORIZATION=f"Bearer {key}")
    # then it is refused and told why; no token was made
    assert (response.status_code, response.json()) == (
        403,
        {
            "error": {
                "code": "session_required",
                "message": "an API token cannot create tokens; sign in to geon in a browser and "
                "create it there (or on the server: manage.py create_token USERNAME)",
            }
        },
    )
    assert tokens_of(user) == before


def test_the_list_shows_the_callers_tokens_without_their_keys(user: Any, other_user: Any) -> None:
    mine, key = ApiToken.issue(user, "laptop")
    ApiToken.issue(other_user, "bobs")
    ApiToken.objects.filter(pk=mine.pk).update(last_used=timezone.now())
    # the list answers a session and a token alike
    for client, headers in (
        (signed_in(user), {}),
        (Client(), {"HTTP_AUTHORIZATION": f"Bearer {key}"}),
    ):
        response = client.get(f"{API}/tokens", **headers)
        listed = response.json()["tokens"]
        assert response.status_code == 200
        assert [(t["id"], t["name"], t["prefix"]) for t in listed] == [
            (mine.pk, "laptop", mine.prefix)
        ]
        assert set(listed[0]) == {"id", "name", "prefix", "created", "last_used", "expires"}
        assert key not in response.content.decode()
        assert mine.digest not in response.content.decode()


def test_a_revoked_token_stops_working_at_once(user: Any, graph: Any) -> None:
    token, key = ApiToken.issue(user, "old")
    script = Client()
    assert script.get(f"{API}/graphs", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200
    response = signed_in(user).delete(f"{API}/tokens/{token.pk}")
    assert (response.status_code, response.content) == (204, b"")
    after = script.get(f"{API}/graphs", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert (after.status_code, after.json()["error"]["code"]) == (401, "not_authenticated")
    assert tokens_of(user) == []


def test_a_token_may_revoke_itself(user: Any) -> None:
    token, key = ApiToken.issue(user, "leaked")
    response = Client().delete(f"{API}/tokens/{token.pk}", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 204
    assert tokens_of(user) == []


@pytest.mark.parametrize("whose", ["another user's", "unknown"])
def test_revoking_a_token_that_is_not_yours_is_not_found(
    whose: str, user: Any, other_user: Any
) -> None:
    bobs, _ = ApiToken.issue(other_user, "bobs")
    target = bobs.pk if whose == "another user's" else bobs.pk + 1000
    before = list(ApiToken.objects.values_list("pk", flat=True))
    response = signed_in(user).delete(f"{API}/tokens/{target}")
    assert (response.status_code, response.json()) == (
        404,
        {
            "error": {
                "code": "not_found",
                "message": f"you have no API token {target}; GET /api/v1/tokens lists the ids "
                "of yours",
            }
        },
    )
    assert list(ApiToken.objects.values_list("pk", flat=True)) == before


def test_an_expired_token_is_refused_and_says_so(user: Any, graph: Any) -> None:
    token, key = ApiToken.issue(user, "ci")
    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now() - timedelta(seconds=1))
    token.refresh_from_db()
    response = Client().get(f"{API}/graphs/{graph.pk}", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert (response.status_code, response.json()) == (
        401,
        {
            "error": {
                "code": "token_expired",
                "message": f'the API token "ci" ({token.prefix}…) expired on '
                f"{token.expires:%Y-%m-%d %H:%M} UTC; create a new one (POST /api/v1/tokens "
                "from a signed-in session, or manage.py create_token)",
            }
        },
    )
    token.refresh_from_db()
    assert token.last_used is None


@override_settings(GEON_API_TOKENS_PER_USER=2)
def test_a_user_holds_a_bounded_number_of_tokens(user: Any) -> None:
    client = signed_in(user)
    assert [make(client, {"name": f"t{i}"}).status_code for i in range(2)] == [201, 201]
    before = tokens_of(user)
    response = make(client, {"name": "t2"})
    assert (response.status_code, response.json()) == (
        409,
        {
            "error": {
                "code": "too_many_tokens",
                "message": "you hold 2 API tokens, the most allowed; revoke one first "
                "(DELETE /api/v1/tokens/<id>, ids from GET /api/v1/tokens)",
            }
        },
    )
    assert tokens_of(user) == before


def test_create_token_chooses_the_lifetime(user: Any) -> None:
    out = StringIO()
    call_command("create_token", "ann", "--name", "ci", "--days", "3", stdout=out)
    token = ApiToken.objects.get(user=user)
    assert token.expires - token.created == pytest.approx(timedelta(days=3), abs=timedelta(1))
    response = Client().get(f"{API}/tokens", HTTP_AUTHORIZATION=f"Bearer {out.getvalue().strip()}")
    assert response.status_code == 200


def test_create_token_refuses_a_lifetime_below_a_day(user: Any) -> None:
    with pytest.raises(CommandError) as refused:
        call_command("create_token", "ann", "--days", "0")
    assert str(refused.value) == "--days 0 is not a number of days; expected 1 or more"
    assert tokens_of(user) == []


# --- signing in ------------------------------------------------------------------------------


def sign_in(client: Client, username: str, password: str, address: str = "192.0.2.1") -> Any:
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def is_signed_in(client: Client) -> bool:
    return client.get("/").status_code == 200


def test_thirty_wrong_passwords_then_the_right_one_is_refused(user: Any, password: str) -> None:
    client = Client()
    answers = [sign_in(client, "ann", f"guess{i}").status_code for i in range(30)]
    # the first 10 are checked and fail; the rest are refused without a look at the password
    assert answers == [200] * 10 + [429] * 20
    right = sign_in(client, "ann", password)
    assert right.status_code == 429
    assert 1 <= int(right["Retry-After"]) <= 900
    assert THROTTLED in right.content.decode()
    assert not is_signed_in(client)


def test_the_throttle_does_not_tell_which_accounts_exist(user: Any) -> None:
    seen = {}
    for name in ("ann", "nobody"):
        client = Client()
        for i in range(10):
            sign_in(client, name, f"guess{i}", address=f"192.0.2.{len(seen) + 10}")
        refused = sign_in(client, name, "guess", address=f"192.0.2.{len(seen) + 10}")
        page = re.sub(r'value="[^"]+"', 'value="..."', refused.content.decode())
        seen[name] = (refused.status_code, page)
    assert seen["ann"] == seen["nobody"]
    assert seen["ann"][0] == 429


def test_the_account_throttle_ignores_case_and_holds_across_addresses(
    user: Any, password: str
) -> None:
    client = Client()
    for i in range(10):
        sign_in(client, "ANN" if i % 2 else "ann", f"guess{i}", address=f"198.51.100.{i}")
    right = sign_in(client, "ann", password, address="203.0.113.9")
    assert right.status_code == 429
    assert not is_signed_in(client)


@override_settings(GEON_SIGNIN_FAILURES_PER_ADDRESS=5)
def test_one_address_trying_many_accounts_is_throttled(
    user: Any, other_user: Any, password: str
) -> None:
    client = Client()
    answers = [sign_in(client, f"user{i}", "guess").status_code for i in range(5)]
    # bob's right password from the same address is refused; from another address it works
    refused = sign_in(client, "bob", password)
    elsewhere = sign_in(Client(), "bob", password, address="192.0.2.200")
    assert (answers, refused.status_code, elsewhere.status_code) == ([200] * 5, 429, 302)


def test_a_successful_sign_in_forgets_the_accounts_failures(user: Any, password: str) -> None:
    client = Client()
    for i in range(9):
        sign_in(client, "ann", f"guess{i}")
    assert sign_in(client, "ann", password).status_code == 302
    client.logout()
    answers = [sign_in(client, "ann", f"again{i}").status_code for i in range(9)]
    assert answers == [200] * 9
    assert sign_in(client, "ann", password).status_code == 302


def test_the_admin_sign_in_is_throttled_too(django_user_model: Any, password: str) -> None:
    django_user_model.objects.create_superuser("root", password=password)
    client = Client()
    for i in range(10):
        client.post(
            "/admin/login/", {"username": "root", "password": f"guess{i}"}, REMOTE_ADDR="192.0.2.7"
        )
    right = client.post(
        "/admin/login/", {"username": "root", "password": password}, REMOTE_ADDR="192.0.2.7"
    )
    assert right.status_code == 200
    assert THROTTLED in right.content.decode()
    assert client.get("/admin/").status_code == 302
