"""Fixtures shared by the web tests."""

from __future__ import annotations

from typing import Any

import pytest

from geon.graphs.models import Membership


@pytest.fixture
def people(user: Any, other_user: Any, django_user_model: Any, graph: Any) -> dict[str, Any]:
    """ann owns the graph; bob views it, cat edits it, dan has no role on it."""
    editor = django_user_model.objects.create_user("cat", password="x")
    stranger = django_user_model.objects.create_user("dan", password="x")
    Membership.objects.create(graph=graph, user=other_user, role="viewer")
    Membership.objects.create(graph=graph, user=editor, role="editor")
    return {"owner": user, "editor": editor, "viewer": other_user, "stranger": stranger}
