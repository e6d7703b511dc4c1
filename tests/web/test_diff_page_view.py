"""The diff page's view (issue 18, "Diffs"): viewers and up get the page for two versions, a
version the graph does not have is 404 (naming it), strangers get 404 as for the editor, and
anonymous visitors are sent to sign in."""

from __future__ import annotations

from typing import Any

import pytest
from django.shortcuts import resolve_url
from django.test import Client

from geon.graphs.services import do_apply_edit, live_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_versions(graph: Any, user: Any) -> Any:
    """ann's graph with version 2: its first node renamed "renamed"."""
    node = live_document(graph).document.nodes[0]
    do_apply_edit(user, graph.pk, 1, [{"op": "update_node", "id": node.id, "label": "renamed"}])
    return graph


@pytest.mark.parametrize("who", ["owner", "viewer", "editor"])
def test_viewers_and_up_get_the_page(
    client: Client, people: dict[str, Any], two_versions: Any, who: str
) -> None:
    client.force_login(people[who])
    answer = client.get(f"/graphs/{two_versions.pk}/diff/1/2/")
    assert answer.status_code == 200
    page = answer.content.decode()
    assert 'data-base="1" data-target="2"' in page
    assert "editor/diff.js" in page
    assert "Loom add" in page


def test_strangers_get_404(client: Client, people: dict[str, Any], two_versions: Any) -> None:
    client.force_login(people["stranger"])
    assert client.get(f"/graphs/{two_versions.pk}/diff/1/2/").status_code == 404


def test_a_missing_version_is_404(
    client: Client, people: dict[str, Any], two_versions: Any
) -> None:
    client.force_login(people["owner"])
    answer = client.get(f"/graphs/{two_versions.pk}/diff/1/9/")
    assert answer.status_code == 404


def test_anonymous_visitors_are_sent_to_sign_in(client: Client, two_versions: Any) -> None:
    answer = client.get(f"/graphs/{two_versions.pk}/diff/1/2/")
    assert answer.status_code == 302
    assert answer["Location"] == f"{resolve_url('login')}?next=/graphs/{two_versions.pk}/diff/1/2/"
