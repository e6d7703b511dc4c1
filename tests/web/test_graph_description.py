"""A graph's title and description over ``/api/v1/`` (issue 21, "Explanations cut off"): PATCH
changes them (editors) and refuses bad values by name, changing nothing; duplicate, export and
import keep both; the exported file is named after the title; the list and the editor page show
the whole description."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon.graphs import services
from geon.graphs.models import Graph, GraphVersion, Membership
from geon.graphs.services.copies import ABOUT_TAG

pytestmark = pytest.mark.django_db

API = "/api/v1"
DESCRIPTION = "Adds two **int32** tensors.\n\n- sharded in two\n- checked exactly"


def state(graph: Any) -> tuple[Any, ...]:
    """What a refused request must leave as it was."""
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    assert fresh.current_version is not None
    return (
        fresh.title,
        fresh.description,
        fresh.current_version.number,
        GraphVersion.objects.filter(graph=fresh).count(),
        Graph.objects.count(),
    )


@pytest.fixture
def described(graph: Any) -> Any:
    """ann's "Loom add" with a Markdown description."""
    graph.description = DESCRIPTION
    graph.save()
    return graph


def signed_in(client: Client, who: Any) -> Client:
    client.force_login(who)
    return client


def patch(client: Client, graph: Any, body: dict[str, Any]) -> Any:
    return client.patch(
        f"{API}/graphs/{graph.pk}", json.dumps(body), content_type="application/json"
    )


# --- PATCH ------------------------------------------------------------------------------------


def test_an_editor_changes_the_title_and_description_without_a_new_version(
    client: Client, described: Any, other_user: Any
) -> None:
    Membership.objects.create(graph=described, user=other_user, role="editor")
    answer = patch(
        signed_in(client, other_user),
        described,
        {"baseVersion": 1, "title": "  Loom sum ", "description": "Now *sums*."},
    )
    assert answer.status_code == 200
    body = answer.json()
    assert (body["title"], body["description"], body["version"]) == ("Loom sum", "Now *sums*.", 1)
    assert state(described) == ("Loom sum", "Now *sums*.", 1, 1, 1)


TOO_LONG = "x" * 20_001
TITLE_RULE = "expected a non-empty string of at most 200 characters"
DESCRIPTION_RULE = "expected a string of at most 20000 characters"


@pytest.mark.parametrize(
    ("label", "body", "message"),
    [
        (
            "a description too long",
            {"description": TOO_LONG},
            f'description "{"x" * 40}…" is not valid; {DESCRIPTION_RULE}',
        ),
        (
            "a description that is a number",
            {"description": 7},
            f'description "7" is not valid; {DESCRIPTION_RULE}',
        ),
        (
            "a description that is a list",
            {"description": ["a"]},
            f"description \"['a']\" is not valid; {DESCRIPTION_RULE}",
        ),
        ("a blank title", {"title": "  "}, f'title "  " is not valid; {TITLE_RULE}'),
        (
            "a title too long",
            {"title": "t" * 201},
            f'title "{"t" * 201}" is not valid; {TITLE_RULE}',
        ),
        ("a title that is a number", {"title": 3}, f'title "3" is not valid; {TITLE_RULE}'),
        (
            "a good title with a bad description",
            {"title": "Fine", "description": False},
            f'description "False" is not valid; {DESCRIPTION_RULE}',
        ),
    ],
)
def test_a_bad_title_or_description_is_refused_by_name_and_nothing_changes(
    label: str, body: dict[str, Any], message: str, client: Client, described: Any, user: Any
) -> None:
    before = state(described)
    answer = patch(signed_in(client, user), described, {"baseVersion": 1, **body})
    assert (answer.status_code, answer.json()) == (
        422,
        {"error": {"code": "invalid_document", "message": message}},
    ), label
    assert state(described) == before


def test_a_viewer_cannot_change_the_description(
    client: Client, described: Any, other_user: Any
) -> None:
    Membership.objects.create(graph=described, user=other_user, role="viewer")
    before = state(described)
    answer = patch(signed_in(client, other_user), described, {"baseVersion": 1, "description": ""})
    assert (answer.status_code, answer.json()["error"]["message"]) == (
        403,
        f'your role on graph "{described.title}" is "viewer"; this needs "editor" or "owner"',
    )
    assert state(described) == before


# --- duplicate --------------------------------------------------------------------------------


def test_duplicating_keeps_the_document_and_the_description(
    client: Client, described: Any, other_user: Any, loom_document: dict[str, Any]
) -> None:
    Membership.objects.create(graph=described, user=other_user, role="viewer")
    answer = signed_in(client, other_user).post(f"{API}/graphs/{described.pk}/duplicate")
    assert answer.status_code == 201
    body = answer.json()
    assert (body["title"], body["description"], body["owner"], body["version"]) == (
        "Loom add (copy)",
        DESCRIPTION,
        "bob",
        1,
    )
    copy_of = Graph.objects.get(pk=body["id"])
    assert copy_of.current_version is not None
    assert json.dumps(copy_of.current_version.document) == json.dumps(loom_document)
    assert copy_of.current_version.message == 'duplicated from "Loom add"'


def test_a_duplicate_of_a_long_title_stays_within_200_characters(
    client: Client, graph: Any, user: Any
) -> None:
    graph.title = "t" * 200
    graph.save()
    answer = signed_in(client, user).post(f"{API}/graphs/{graph.pk}/duplicate")
    assert answer.json()["title"] == "t" * 193 + " (copy)"


def test_a_stranger_cannot_duplicate(client: Client, described: Any, other_user: Any) -> None:
    before = state(described)
    answer = signed_in(client, other_user).post(f"{API}/graphs/{described.pk}/duplicate")
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "not_found")
    assert state(described) == before


# --- export and import ------------------------------------------------------------------------


def test_export_carries_the_title_and_description_and_import_restores_them(
    client: Client, described: Any, user: Any, loom_document: dict[str, Any]
) -> None:
    described.title = "Loom: add, sharded!"
    described.save()
    client = signed_in(client, user)
    exported = client.get(f"{API}/graphs/{described.pk}/export")
    assert exported["Content-Disposition"] == 'attachment; filename="loom-add-sharded.json"'
    about = {"title": "Loom: add, sharded!", "description": DESCRIPTION}
    # the document's own keys first, in their order, then the About tag
    assert json.dumps(exported.json()) == json.dumps({**loom_document, "tags": {ABOUT_TAG: about}})
    # imported without a title, the graph takes both from the tag, which is not stored
    imported = client.post(
        f"{API}/graphs/import", exported.content, content_type="application/json"
    )
    assert imported.status_code == 201
    copy_of = Graph.objects.get(pk=imported.json()["id"])
    assert (copy_of.title, copy_of.description) == ("Loom: add, sharded!", DESCRIPTION)
    assert copy_of.current_version is not None
    assert json.dumps(copy_of.current_version.document) == json.dumps(loom_document)
    # a title given in the query wins over the document's
    renamed = client.post(
        f"{API}/graphs/import?title=Mine", exported.content, content_type="application/json"
    )
    assert (renamed.json()["title"], renamed.json()["description"]) == ("Mine", DESCRIPTION)


def test_the_about_tag_joins_the_documents_own_top_level_tags(
    client: Client, user: Any, loom_document: dict[str, Any]
) -> None:
    document = {**loom_document, "tags": {"urn:other:tag": {"kept": True}}}
    graph = services.do_create_graph(owner=user, title="x", document=document)
    exported = signed_in(client, user).get(f"{API}/graphs/{graph.pk}/export").json()
    about = {"title": "x", "description": ""}
    assert exported["tags"] == {"urn:other:tag": {"kept": True}, ABOUT_TAG: about}
    imported = client.post(
        f"{API}/graphs/import", json.dumps(exported), content_type="application/json"
    )
    stored = Graph.objects.get(pk=imported.json()["id"]).current_version
    assert stored is not None
    assert stored.document == document


def test_a_title_of_no_ascii_letters_exports_as_graph_json(
    client: Client, graph: Any, user: Any
) -> None:
    graph.title = "図"
    graph.save()
    exported = signed_in(client, user).get(f"{API}/graphs/{graph.pk}/export")
    assert exported["Content-Disposition"] == 'attachment; filename="graph.json"'


@pytest.mark.parametrize(
    ("label", "query", "about", "message"),
    [
        (
            "no title anywhere",
            "",
            None,
            f'the document has no "{ABOUT_TAG}" tag with a title; expected a title (?title=...) '
            "or that tag",
        ),
        (
            "a tag that is not an object",
            "",
            "MLP",
            f'tag "{ABOUT_TAG}" value \'MLP\' is not valid; expected an object with "title" '
            'and "description" (strings)',
        ),
        (
            "a tag with an unknown field",
            "",
            {"title": "MLP", "author": "me"},
            f"tag \"{ABOUT_TAG}\" value {{'title': 'MLP', 'author': 'me'}} is not valid; expected "
            'an object with "title" and "description" (strings)',
        ),
        (
            "a description that is not a string",
            "?title=ok",
            {"description": 5},
            f'description "5" is not valid; {DESCRIPTION_RULE}',
        ),
        ("a blank title in the tag", "", {"title": " "}, f'title " " is not valid; {TITLE_RULE}'),
    ],
)
def test_a_bad_import_is_refused_by_name_and_stores_nothing(
    label: str,
    query: str,
    about: Any,
    message: str,
    client: Client,
    user: Any,
    loom_document: dict[str, Any],
) -> None:
    document = loom_document if about is None else {**loom_document, "tags": {ABOUT_TAG: about}}
    before = Graph.objects.count()
    answer = signed_in(client, user).post(
        f"{API}/graphs/import{query}", json.dumps(document), content_type="application/json"
    )
    assert (answer.status_code, answer.json()) == (
        422,
        {"error": {"code": "invalid_document", "message": message}},
    ), label
    assert Graph.objects.count() == before


# --- pages ------------------------------------------------------------------------------------


def test_the_list_shows_the_first_paragraph_and_the_whole_description(
    client: Client, described: Any, user: Any
) -> None:
    page = signed_in(client, user).get("/").content.decode()
    assert (
        '<div class="graph-about-summary" data-markdown="inline">Adds two **int32** tensors.</div>'
        in page
    )
    assert (
        '<div class="graph-about-full" data-markdown="block">Adds two **int32** tensors.\n\n'
        "- sharded in two\n- checked exactly</div>"
    ) in page


def test_the_editor_page_carries_the_description_and_who_may_edit(
    client: Client, described: Any, user: Any, other_user: Any
) -> None:
    page = signed_in(client, user).get(f"/graphs/{described.pk}/").content.decode()
    script = (
        f'<script id="geon-description" type="application/json">{json.dumps(DESCRIPTION)}</script>'
    )
    assert script in page
    assert 'data-can-edit="1"' in page
    Membership.objects.create(graph=described, user=other_user, role="viewer")
    viewer = signed_in(Client(), other_user).get(f"/graphs/{described.pk}/").content.decode()
    assert script in viewer
    assert "data-can-edit" not in viewer
