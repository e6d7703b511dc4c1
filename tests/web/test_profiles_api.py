"""GET /profiles: the shipped hardware profiles an editor offers as a plan cost's ``?profile=``
(issue 16 item 7)."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_shipped_profiles_are_listed_with_the_default(client: Client) -> None:
    # when the profiles are asked for
    answer = client.get("/api/v1/profiles")
    # then every shipped profile is named, with its device's memory capacity, and h100 is default
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    names = [p["name"] for p in body["profiles"]]
    assert {"h100-sxm-8", "tpu-v5e-16", "cpu-host"} <= set(names)
    assert body["default"] == "h100-sxm-8"
    h100 = next(p for p in body["profiles"] if p["name"] == "h100-sxm-8")
    assert h100["device"]["memory"] == 8e10
