"""Hostile review, issue 30, finding 5: an editor published the owner's private graph to anyone.

Writing a lesson on a graph was open to its editors, the no-login ``/learn/try/<key>/`` served
the live graph (later private edits too) and kept working once the editor was removed, and the
key was the title and 24 random bits. Now publishing is the owner's act, a lesson publishes the
graph's version at that moment, keys carry 128 random bits, a lesson is withdrawn with its
author's ownership, and wrong keys are throttled per address. Each case goes through the real
REST endpoints and pages with Django's test client."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from geon.core.graph import TENSOR_AXES
from geon.graphs.models import Graph
from geon.graphs.services import (
    do_create_graph,
    do_remove_member,
    do_set_member,
    do_transfer_graph,
    do_update_graph,
    live_document,
)
from geon.learn import services
from geon.learn.content.lessons import LESSONS
from geon.learn.models import Assignment, WrittenLesson

pytestmark = pytest.mark.django_db

API = "/api/v1"
STEPS = [
    {
        "title": "Pair them",
        "text": "Give `x` the axes (H, W-1).",
        "task": {"tensor": "x", "axes": ["H", "W-1"], "clean": True},
    }
]


@pytest.fixture(autouse=True)
def no_counted_misses() -> Iterator[None]:
    """Each test starts with no wrong keys counted (the counts live in the cache)."""
    cache.clear()
    yield
    cache.clear()


def dot_with_x_as(axes: list[str]) -> dict[str, Any]:
    document = LESSONS["dot-and-duals"].build().to_json()
    for node in document["nodes"]:
        if node.get("label") == "x":
            node["tags"][TENSOR_AXES]["axes"] = axes
    return dict(document)


@pytest.fixture
def graph(user: Any) -> Graph:
    """ann's graph, x (H, W) · y (W, N)."""
    return do_create_graph(owner=user, title="My dot", document=dot_with_x_as(["H", "W"]))


def put(client: Client, graph: Graph, body: Any) -> Any:
    path = f"{API}/graphs/{graph.pk}/lesson"
    return client.put(path, json.dumps(body), content_type="application/json")


def try_start(client: Client, key: str) -> dict[str, Any]:
    """The starting graph the no-login try page hands the editor."""
    page = client.get(f"/learn/try/{key}/")
    assert page.status_code == 200, page.content
    found = re.search(
        r'<script id="geon-try-start" type="application/json">(.*?)</script>',
        page.content.decode(),
        re.S,
    )
    assert found is not None
    return dict(json.loads(found.group(1)))


def x_axes(document: dict[str, Any]) -> list[str]:
    return next(n for n in document["nodes"] if n.get("label") == "x")["tags"][TENSOR_AXES]["axes"]


def test_an_editor_neither_publishes_rewrites_nor_withdraws_the_owners_lesson(
    client: Client, user: Any, other_user: Any, graph: Graph
) -> None:
    do_set_member(graph, other_user, "editor")
    editor, owner = Client(), Client()
    editor.force_login(other_user)
    owner.force_login(user)
    # when an editor publishes the owner's graph: 403, saying who may; nothing is stored
    refused = put(editor, graph, {"title": "Leaked", "steps": STEPS})
    assert refused.status_code == 403
    assert refused.json()["error"] == {
        "code": "forbidden",
        "message": 'only the owner of graph "My dot" ("ann") may publish a lesson on it; '
        'your role is "editor"',
    }
    assert not WrittenLesson.objects.exists()
    # another client, the owner, is answered and publishes
    published = put(owner, graph, {"title": "Duals", "steps": STEPS})
    assert published.status_code == 200, published.content
    key = published.json()["key"]
    # the editor cannot rewrite it nor withdraw it; it is unchanged
    assert put(editor, graph, {"title": "Leaked", "steps": STEPS}).status_code == 403
    withdrawn = editor.delete(f"{API}/graphs/{graph.pk}/lesson")
    assert withdrawn.status_code == 403
    assert "may withdraw the lesson on it" in withdrawn.json()["error"]["message"]
    lesson = WrittenLesson.objects.get()
    assert (lesson.key, lesson.title) == (key, "Duals")
    # the editor still reads it (its links included), as any member does
    assert editor.get(f"{API}/graphs/{graph.pk}/lesson").json()["lesson"]["key"] == key
    # once removed, they learn nothing of the graph, and the lesson is still the owner's
    do_remove_member(user, graph.pk, "bob")
    assert put(editor, graph, {"title": "Leaked", "steps": STEPS}).status_code == 404
    assert owner.get(f"/learn/try/{key}/").status_code == 200


def test_a_lesson_publishes_the_version_of_that_moment_not_later_private_edits(
    client: Client, user: Any, other_user: Any, graph: Graph
) -> None:
    client.force_login(user)
    published = put(client, graph, {"title": "Duals", "steps": STEPS}).json()
    key = published["key"]
    assert published["version"] == 1
    # when the owner edits the graph after publishing
    do_update_graph(user, graph.pk, base_version=1, document=dot_with_x_as(["H", "W-1"]))
    graph.refresh_from_db()
    assert x_axes(live_document(graph).document.to_json()) == ["H", "W-1"]
    # then visitors and students still get what was published
    visitor = Client()
    assert x_axes(try_start(visitor, key)) == ["H", "W"]
    student = Client()
    student.force_login(other_user)
    assert student.get(f"/learn/{key}/").status_code == 302
    copy = Graph.objects.get(owner=other_user, example=f"lesson:{key}")
    assert x_axes(live_document(copy).document.to_json()) == ["H", "W"]
    # and once the owner publishes again, the graph as it is then; the key stays
    again = put(client, graph, {"title": "Duals", "steps": STEPS}).json()
    assert (again["key"], again["version"]) == (key, 2)
    assert x_axes(try_start(visitor, key)) == ["H", "W-1"]


def test_keys_carry_128_random_bits(client: Client, user: Any) -> None:
    client.force_login(user)
    keys = set()
    for n in range(3):
        made = do_create_graph(owner=user, title=f"g{n}", document=dot_with_x_as(["H", "W"]))
        keys.add(put(client, made, {"title": "Duals, my way", "steps": STEPS}).json()["key"])
    assert len(keys) == 3
    for key in keys:
        slug, random_part = key[: len("duals-my-way")], key[len("duals-my-way-") :]
        assert slug == "duals-my-way" and len(key) <= 64
        assert len(base64.urlsafe_b64decode(random_part + "==")) * 8 >= 128, key


def test_a_lesson_is_withdrawn_with_its_authors_ownership(
    client: Client, user: Any, other_user: Any, graph: Graph, django_user_model: Any
) -> None:
    client.force_login(user)
    key = put(client, graph, {"title": "Duals", "steps": STEPS}).json()["key"]
    visitor = Client()
    assert visitor.get(f"/learn/try/{key}/").status_code == 200
    # when the owner hands the graph over (and becomes an editor of it)
    do_set_member(graph, other_user, "editor")
    do_transfer_graph(user, graph.pk, "bob")
    # then the lesson is no longer served, anywhere, with the usual 404
    gone = visitor.get(f"{API}/lessons/{key}")
    assert gone.status_code == 404
    assert f'lesson "{key}" does not exist' in gone.json()["error"]["message"]
    assert visitor.get(f"/learn/try/{key}/").status_code == 404
    # the old owner's panel says so, and they may not publish it again
    shown = client.get(f"{API}/graphs/{graph.pk}/lesson").json()["lesson"]
    assert shown["withdrawn"] is True
    assert put(client, graph, {"title": "Duals", "steps": STEPS}).status_code == 403
    # another client is answered: the new owner publishes it under a new key; the old stays dead
    new_owner = Client()
    new_owner.force_login(other_user)
    republished = put(new_owner, graph, {"title": "Duals", "steps": STEPS}).json()
    assert republished["key"] != key and republished["withdrawn"] is False
    assert visitor.get(f"/learn/try/{republished['key']}/").status_code == 200
    assert visitor.get(f"/learn/try/{key}/").status_code == 404
    # an author whose account is closed has their lessons withdrawn too
    other_user.is_active = False
    other_user.save()
    assert visitor.get(f"/learn/try/{republished['key']}/").status_code == 404
    assert WrittenLesson.objects.count() == 1


def test_wrong_keys_are_throttled_per_address(
    client: Client, user: Any, graph: Graph, monkeypatch: Any
) -> None:
    monkeypatch.setattr(services, "MISSES_MAX", 3)
    client.force_login(user)
    key = put(client, graph, {"title": "Duals", "steps": STEPS}).json()["key"]
    guesser = Client(REMOTE_ADDR="203.0.113.9")
    wrong = [f"duals-{n}" for n in range(3)]
    for guess in wrong:
        assert guesser.get(f"/learn/try/{guess}/").status_code == 404
    # past the limit, every key but the shipped lessons' is refused, the right one too
    for path in (f"/learn/try/{key}/", "/learn/try/duals-9/"):
        page = guesser.get(path)
        assert page.status_code == 429 and 1 <= int(page["Retry-After"]) <= 600
        assert "3 lesson links that open no lesson" in page.content.decode()
    api = guesser.get(f"{API}/lessons/{key}")
    assert api.status_code == 429
    assert api.json()["error"]["code"] == "too_many_requests"
    assert "try again in 10 minutes" in api.json()["error"]["message"]
    tried = guesser.post(
        f"{API}/lessons/{key}/steps/1/try",
        json.dumps({"document": dot_with_x_as(["H", "W-1"])}),
        content_type="application/json",
    )
    assert tried.status_code == 429
    assert guesser.get("/learn/try/dot-and-duals/").status_code == 200
    # the class form is no way around it: from that address, assigning by key is refused too
    guesser.force_login(user)
    made = guesser.post("/learn/classes/", {"name": "Monday"})
    form = guesser.post(made["Location"], {"item": f"lesson:{key}"})
    assert form.status_code == 200
    assert "3 lesson links that open no lesson" in form.content.decode()
    assert not Assignment.objects.exists()
    # nothing was stored; another address is still answered, right keys and wrong alike
    assert Graph.objects.count() == 1 and WrittenLesson.objects.count() == 1
    teacher = Client(REMOTE_ADDR="198.51.100.8")
    teacher.force_login(user)
    assert teacher.post(made["Location"], {"item": f"lesson:{key}"}).status_code == 302
    assert Assignment.objects.get().key == key
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert other.get(f"/learn/try/{key}/").status_code == 200
    assert other.get(f"{API}/lessons/{key}").json()["title"] == "Duals"
    assert other.get("/learn/try/duals-0/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_lessons_of_24_bit_keys_are_reissued_or_withdrawn_by_the_migration(
    user: Any, other_user: Any
) -> None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from geon.learn.models import LessonCheck

    before = [("learn", "0005_visitor_quotas_and_published_versions")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    # the learn models as they were then (later migrations add columns the table lacks now)
    then = executor.loader.project_state(before).apps
    # lessons as they were: 24-bit keys, one written by the owner, one by an editor
    owned = do_create_graph(owner=user, title="Mine", document=dot_with_x_as(["H", "W"]))
    edited = do_create_graph(owner=user, title="Private", document=dot_with_x_as(["H", "W"]))
    for key, graph, author in (("mine-a1b2c3", owned, user), ("leak-d4e5f6", edited, other_user)):
        then.get_model("learn", "WrittenLesson").objects.create(
            key=key, graph_id=graph.pk, author_id=author.pk, title=key[:4].title(), steps=STEPS
        )
    monday = then.get_model("learn", "Classroom").objects.create(
        name="Monday", teacher_id=user.pk, key="k"
    )
    then.get_model("learn", "Assignment").objects.create(
        classroom=monday, kind="lesson", key="mine-a1b2c3"
    )
    then.get_model("learn", "LessonCheck").objects.create(
        user_id=other_user.pk, lesson="mine-a1b2c3", step=1, passed=True
    )
    copy = do_create_graph(owner=other_user, title="c", document=dot_with_x_as(["H", "W"]))
    Graph.objects.filter(pk=copy.pk).update(example="lesson:mine-a1b2c3")
    # when the migrations run
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    # then the editor's lesson is withdrawn and the owner's re-issued with 128 random bits,
    # publishing the graph's current version; the class, checks and copies follow the new key
    lesson = WrittenLesson.objects.get()
    assert lesson.graph_id == owned.pk and lesson.version == 1
    assert lesson.key.startswith("mine-") and len(lesson.key) == len("mine-") + 22
    assert Assignment.objects.get().key == lesson.key
    assert LessonCheck.objects.get().lesson == lesson.key
    assert Graph.objects.get(pk=copy.pk).example == f"lesson:{lesson.key}"
    # the old keys open nothing; the new one opens the lesson
    visitor = Client()
    assert visitor.get("/learn/try/mine-a1b2c3/").status_code == 404
    assert visitor.get("/learn/try/leak-d4e5f6/").status_code == 404
    assert visitor.get(f"/learn/try/{lesson.key}/").status_code == 200
