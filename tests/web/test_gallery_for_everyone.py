"""The gallery for any account (issue #17) and the shard plans seeded with the transformer block
(issue #16 item 8): a fresh account's own copy of an example keeps its title and description,
and the block's plans are ShardPlan rows the REST API lists, each of which fits the document."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from geon.examples.transformer import DESCRIPTION, PLANS, TITLE
from geon.graphs.gallery import examples
from geon.graphs.models import Graph, ShardPlan
from geon.graphs.services.gallery import do_load_example, do_load_gallery

pytestmark = pytest.mark.django_db
API = "/api/v1"
KEY = "transformer-block"


def fresh(django_user_model: Any, name: str = "newcomer") -> Any:
    return django_user_model.objects.create_user(name, f"{name}@example.org", "pw-0123456789")


def test_a_fresh_account_opens_an_example_as_its_own_copy(django_user_model: Any) -> None:
    person = fresh(django_user_model)
    assert Graph.objects.filter(owner=person).count() == 0
    graph, created = do_load_example(person, KEY)
    again, created_again = do_load_example(person, KEY)
    assert (created, created_again, again.pk) == (True, False, graph.pk)
    assert (graph.owner, graph.title, graph.example) == (person, TITLE, KEY)
    assert graph.current_version is not None
    assert graph.description == DESCRIPTION.strip()
    assert graph.current_version.message == f'opened from the gallery example "{TITLE}"'
    rows = ShardPlan.objects.filter(graph=graph).order_by("name")
    assert [(p.name, p.mesh["axes"], p.axis_mapping) for p in rows] == sorted(
        (p["name"], p["mesh"]["axes"], p["axisMapping"]) for p in PLANS
    )


def test_two_accounts_get_separate_copies(django_user_model: Any) -> None:
    ann, bob = fresh(django_user_model, "ann2"), fresh(django_user_model, "bob2")
    a, _ = do_load_example(ann, KEY)
    b, _ = do_load_example(bob, KEY)
    assert a.pk != b.pk
    assert ShardPlan.objects.filter(graph__owner=ann).count() == len(PLANS)
    assert ShardPlan.objects.filter(graph__owner=bob).count() == len(PLANS)


def test_an_unknown_example_is_refused_by_name(django_user_model: Any) -> None:
    person = fresh(django_user_model)
    with pytest.raises(KeyError, match='gallery example "nope" does not exist; expected one of'):
        do_load_example(person, "nope")
    assert Graph.objects.filter(owner=person).count() == 0


def test_seeding_the_gallery_twice_keeps_one_set_of_plans(django_user_model: Any) -> None:
    person = fresh(django_user_model)
    do_load_gallery(person)
    do_load_gallery(person)
    assert Graph.objects.filter(owner=person).count() == len(examples())
    # the transformer block's three plans and its training step's three
    assert ShardPlan.objects.filter(graph__owner=person).count() == sum(
        len(e.plans) for e in examples()
    )


def test_the_plans_are_listed_and_costed_over_rest(django_user_model: Any) -> None:
    person = fresh(django_user_model)
    graph, _ = do_load_example(person, KEY)
    client = Client()
    client.force_login(person)
    listed = client.get(f"{API}/graphs/{graph.pk}/plans")
    assert listed.status_code == 200, listed.content
    body = listed.json()
    plans = body["plans"] if isinstance(body, dict) else body
    assert sorted(p["name"] for p in plans) == sorted(p["name"] for p in PLANS)
    for plan in plans:
        cost = client.get(f"{API}/graphs/{graph.pk}/plans/{plan['id']}/cost?profile=h100-sxm-8")
        assert cost.status_code == 200, (plan["name"], cost.content)
        assert cost.json()["time"]["upper"] > 0


def test_a_stranger_cannot_read_anothers_copy(django_user_model: Any) -> None:
    ann, bob = fresh(django_user_model, "ann3"), fresh(django_user_model, "bob3")
    graph, _ = do_load_example(ann, KEY)
    client = Client()
    client.force_login(bob)
    assert client.get(f"{API}/graphs/{graph.pk}/plans").status_code == 404


def test_the_graph_list_offers_every_example_and_open_makes_the_persons_copy(
    django_user_model: Any,
) -> None:
    # given a fresh account, signed in, with no graph
    person = fresh(django_user_model, "first-visit")
    browser = Client()
    browser.force_login(person)
    # then its graph list is not empty: every example is offered, with an Open button
    page = browser.get("/").content.decode()
    for example in examples():
        assert f'data-example="{example.key}"' in page
        assert f'action="/gallery/{example.key}/open/"' in page
    # when it opens the transformer block, it lands in the editor on its own copy, plans and all
    answer = browser.post(f"/gallery/{KEY}/open/")
    graph = Graph.objects.get(owner=person, example=KEY)
    assert (answer.status_code, answer["Location"]) == (302, f"/graphs/{graph.pk}/")
    assert ShardPlan.objects.filter(graph=graph).count() == len(PLANS)
    # and opening it again comes back to the same copy; an unknown example is a 404
    assert browser.post(f"/gallery/{KEY}/open/")["Location"] == f"/graphs/{graph.pk}/"
    assert Graph.objects.filter(owner=person).count() == 1
    assert browser.post("/gallery/nope/open/").status_code == 404
    assert browser.get(f"/gallery/{KEY}/open/").status_code == 405
