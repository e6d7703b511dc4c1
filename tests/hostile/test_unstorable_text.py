"""Strings no database can store, in a REST body: a NUL character (PostgreSQL refuses it in
text) or an unpaired UTF-16 surrogate (not UTF-8). Found by the API fuzz on PostgreSQL as a 500
from ``POST /teams``; every endpoint now refuses them with a 400 that says which, and nothing
is stored. Runs in both passes (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from geon.accounts.models import Team
from geon.graphs.models import Graph

pytestmark = pytest.mark.django_db

API = "/api/v1"
NUL = "the request body holds a string with a NUL character (\\u0000)"
LONE = "the request body holds a string with an unpaired surrogate"


def post(client: Client, path: str, raw: str) -> Any:
    return client.post(f"{API}{path}", raw, content_type="application/json")


@pytest.mark.parametrize(
    ("path", "raw", "refusal"),
    [
        ("/teams", '{"name": "a\\u0000b"}', NUL),
        ("/teams", '{"name": "a\\ud800b"}', LONE),
        ("/graphs", '{"title": "ok", "document": {"id": "x", "nodes": [], "\\udc00": 1}}', LONE),
        ("/graphs", '{"title": "t\\u0000", "document": {"id": "x", "nodes": []}}', NUL),
    ],
)
def test_an_unstorable_string_is_refused_and_nothing_is_stored(
    client: Client, user: Any, path: str, raw: str, refusal: str
) -> None:
    client.force_login(user)
    teams, graphs = Team.objects.count(), Graph.objects.count()
    answer = post(client, path, raw)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"].startswith(refusal)
    assert (Team.objects.count(), Graph.objects.count()) == (teams, graphs)


def test_a_surrogate_pair_and_a_literal_backslash_u_are_text(client: Client, user: Any) -> None:
    client.force_login(user)
    # an emoji sent as its escaped pair, and the six characters \u0000 (an escaped backslash)
    answer = post(client, "/teams", '{"name": "team \\ud83d\\ude00 \\\\u0000"}')
    assert answer.status_code == 201, answer.json()
    assert answer.json()["name"] == "team \U0001f600 \\u0000"
