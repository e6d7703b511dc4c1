"""Copies of a graph that keep its title and description: a duplicate (a new graph of the
caller's), and an exported LoomGraph file that carries both in a top-level ``About`` tag, read
back on import.

The tag sits under the document's top-level ``tags`` (as node tags do; unknown top-level fields
are kept by every Loom reader, DESIGN.md §3), appended after the document's own keys:

>>> exported = with_about({"id": "g", "nodes": []}, "MLP", "Two *dense* layers.")
>>> list(exported), exported["tags"][ABOUT_TAG]
(['id', 'nodes', 'tags'], {'title': 'MLP', 'description': 'Two *dense* layers.'})
>>> split_about(with_about({"id": "g", "nodes": []}, "MLP", ""))
({'id': 'g', 'nodes': []}, 'MLP', '')

Import takes the tag off, so that the stored document is the one that was exported; the graph's
own fields hold the title and the description from then on.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction

from geon.core.errors import DocumentError
from geon.graphs.models import Graph
from geon.graphs.services.access import User, check_can_view
from geon.graphs.services.documents import live_document
from geon.graphs.services.graphs import TITLE_MAX, check_description, check_title, do_create_graph

__all__ = ["ABOUT_TAG", "do_duplicate_graph", "split_about", "with_about"]

#: The top-level tag of an exported document that holds the graph's title and description.
ABOUT_TAG = "urn:geon:2026-11:tag_types.jsd#/tags/About"
#: What a duplicate's title ends with.
COPY_SUFFIX = " (copy)"


def with_about(document: dict[str, Any], title: str, description: str) -> dict[str, Any]:
    """``document`` with ``tags[ABOUT_TAG] = {"title", "description"}`` added at the top level
    (merged into the document's own top-level ``tags`` when it has an object there; a
    ``tags`` that is not an object is left as it is, without the tag)."""
    tags = document.get("tags", {})
    if not isinstance(tags, dict):
        return document
    about = {"title": title, "description": description}
    return {**document, "tags": {**tags, ABOUT_TAG: about}}


def split_about(document: dict[str, Any]) -> tuple[dict[str, Any], str | None, str]:
    """``(document without the About tag, its title or None, its description or "")``; the
    top-level ``tags`` goes too when the tag was all it held. A tag that is not an object with
    a string ``title`` and ``description`` is refused (:class:`DocumentError`, naming it)."""
    tags = document.get("tags")
    if not isinstance(tags, dict) or ABOUT_TAG not in tags:
        return document, None, ""
    about = tags[ABOUT_TAG]
    if not isinstance(about, dict) or not set(about) <= {"title", "description"}:
        raise DocumentError(
            f'tag "{ABOUT_TAG}" value {about!r} is not valid; expected an object with '
            '"title" and "description" (strings)'
        )
    title = check_title(about["title"]) if "title" in about else None
    description = check_description(about.get("description", ""))
    rest = {k: v for k, v in tags.items() if k != ABOUT_TAG}
    out = {k: v for k, v in document.items() if k != "tags"}
    if rest:
        out = {k: (rest if k == "tags" else v) for k, v in document.items()}
    return out, title, description


def copy_title(title: str) -> str:
    """``title`` with " (copy)", cut so that the result is at most :data:`TITLE_MAX` long."""
    return title[: TITLE_MAX - len(COPY_SUFFIX)].rstrip() + COPY_SUFFIX


@transaction.atomic
def do_duplicate_graph(user: User, graph_id: uuid.UUID | str) -> Graph:
    """A new graph of ``user``'s (anyone who may view the original) with its current document,
    its description and its title followed by " (copy)"."""
    original = check_can_view(user, graph_id)
    document = live_document(original).document.to_json()
    return do_create_graph(
        owner=user,  # type: ignore[arg-type]
        title=copy_title(original.title),
        document=document,
        description=original.description,
        message=f'duplicated from "{original.title}"',
    )
