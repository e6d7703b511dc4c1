"""The gallery (:mod:`geon.graphs.gallery`'s examples) loaded as graphs of a user: each
example once per owner, as version 1 of a graph that remembers which example it is, with the
shard plans shipped with the example saved beside it (ShardPlan rows)."""

from __future__ import annotations

from django.contrib.auth.models import User as Account
from django.db import transaction

from geon.graphs.gallery import Example, examples
from geon.graphs.models import Graph
from geon.graphs.services.documents import parse_document
from geon.graphs.services.graphs import do_create_graph
from geon.graphs.services.plans import do_save_plan

__all__ = ["do_load_copy", "do_load_example", "do_load_gallery"]


def do_load_copy(
    owner: Account, example: Example, origin: str = "gallery example"
) -> tuple[Graph, bool]:
    """``owner``'s own copy of ``example`` (a gallery example, or a lesson's graph: ``origin``
    says which in the first version's message), made once per owner and key: (graph, created)."""
    graph = Graph.objects.filter(owner=owner, example=example.key).first()
    if graph is not None:
        return graph, False
    parse_document(example.document)
    graph = do_create_graph(
        owner=owner,
        title=example.title,
        document=example.document,
        description=example.description,
        message=f'opened from the {origin} "{example.title}"',
        example=example.key,
    )
    for plan in example.plans:
        do_save_plan(
            owner,
            graph,
            plan["name"],
            plan["mesh"],
            plan.get("spec", {}),
            None,
            axis_mapping=plan.get("axisMapping"),
            inputs=plan.get("inputs"),
        )
    return graph, True


@transaction.atomic
def do_load_gallery(owner: Account) -> list[tuple[Graph, bool]]:
    """Give ``owner`` a graph per gallery example they do not have yet: (graph, created) pairs.

    Idempotent: an example already loaded for this owner is left as it is (with its edits).
    """
    return [do_load_copy(owner, example) for example in examples()]


@transaction.atomic
def do_load_example(owner: Account, key: str) -> tuple[Graph, bool]:
    """``owner``'s own copy of the gallery example ``key`` (title, description and plans kept),
    made on first use: (graph, created). :class:`KeyError` names the valid keys when there is no
    such example."""
    by_key = {example.key: example for example in examples()}
    if key not in by_key:
        valid = ", ".join(f'"{k}"' for k in by_key)
        raise KeyError(f'gallery example "{key}" does not exist; expected one of ({valid})')
    return do_load_copy(owner, by_key[key])
