"""The example gallery and the demo account that ``make run`` sets up."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from geon.graphs.gallery import examples
from geon.graphs.models import Graph
from geon.graphs.services import document_issues

pytestmark = pytest.mark.django_db


def command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_gallery_opens_with_the_loom_example(loom_document: dict[str, Any]) -> None:
    first = examples()[0]
    assert (first.key, first.title, first.document) == (
        "loom_sharded_add",
        "Loom: sharded add (z = t0 + t1 in two shards)",
        loom_document,
    )


def test_every_gallery_example_checks_without_issues() -> None:
    assert {e.key: document_issues(e.document) for e in examples()} == {
        e.key: [] for e in examples()
    }


def test_loading_the_gallery_twice_adds_each_example_once(user: Any) -> None:
    count = len(examples())
    first = command("load_gallery", "--owner", "ann")
    second = command("load_gallery", "--owner", "ann")
    assert first == f'gallery: {count} example(s) added, 0 already there for "ann"\n'
    assert second == f'gallery: 0 example(s) added, {count} already there for "ann"\n'
    assert sorted(Graph.objects.filter(owner=user).values_list("example", flat=True)) == sorted(
        e.key for e in examples()
    )


def test_loading_the_gallery_for_an_unknown_user_is_refused() -> None:
    with pytest.raises(CommandError) as raised:
        command("load_gallery", "--owner", "nobody")
    assert str(raised.value) == (
        'user "nobody" does not exist; create it first, e.g. with manage.py ensure_demo_user'
    )
    assert Graph.objects.count() == 0


def test_the_demo_account_is_created_then_kept(django_user_model: Any) -> None:
    created = command("ensure_demo_user", "--password", "first-pass-123")
    again = command("ensure_demo_user", "--password", "first-pass-123")
    changed = command("ensure_demo_user", "--password", "second-pass-456")
    assert created == "demo account created - login: demo  password: first-pass-123\n"
    assert again == "demo account ready - login: demo  password: first-pass-123\n"
    assert changed == "demo account password set - login: demo  password: second-pass-456\n"
    assert authenticate(username="demo", password="second-pass-456") is not None
    assert django_user_model.objects.filter(username="demo").count() == 1
