"""The gallery (:mod:`geon.graphs.gallery`'s examples) loaded as graphs of a user: each
example once per owner, as version 1 of a graph that remembers which example it is."""

from __future__ import annotations

from django.contrib.auth.models import User as Account
from django.db import transaction

from geon.graphs.gallery import examples
from geon.graphs.models import Graph
from geon.graphs.services.documents import parse_document
from geon.graphs.services.graphs import do_create_graph


@transaction.atomic
def do_load_gallery(owner: Account) -> list[tuple[Graph, bool]]:
    """Give ``owner`` a graph per gallery example they do not have yet: (graph, created) pairs.

    Idempotent: an example already loaded for this owner is left as it is (with its edits).
    """
    loaded = []
    for example in examples():
        graph = Graph.objects.filter(owner=owner, example=example.key).first()
        if graph is not None:
            loaded.append((graph, False))
            continue
        parse_document(example.document)
        graph = do_create_graph(
            owner=owner,
            title=example.title,
            document=example.document,
            message=example.description or "loaded from the gallery",
            example=example.key,
        )
        loaded.append((graph, True))
    return loaded
