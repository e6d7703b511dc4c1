"""The example gallery a new user sees first: the loom example, then the named-axes examples
of :mod:`geon.examples.gallery` (built with the authoring API), then the transformer block of
:mod:`geon.examples.transformer` with its shard plans (``Example.plans``, the REST ShardPlan
shape), which the seeding saves as ShardPlan rows, and its training step
(:mod:`geon.examples.training`) with data parallel, Megatron and fully sharded plans.

>>> [e.key for e in examples()][0]
'loom_sharded_add'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from geon.examples import training, transformer
from geon.examples.gallery import EXAMPLES

#: Titles of the JSON documents shipped in ``geon/examples``, in gallery order.
JSON_EXAMPLES = {
    "loom_sharded_add": "Loom: sharded add (z = t0 + t1 in two shards)",
}


@dataclass(frozen=True, slots=True)
class Example:
    """One gallery entry: a stable key, a title, what to look at, a LoomGraph document, and the
    shard plans saved with it."""

    key: str
    title: str
    description: str
    document: dict[str, Any]
    plans: tuple[dict[str, Any], ...] = ()


def listing() -> list[tuple[str, str, str]]:
    """``(key, title, description)`` of every example, in gallery order, without building any
    document (the graph list shows it on every visit).

    >>> [key for key, _, _ in listing()] == [e.key for e in examples()]
    True
    """
    return [
        *((key, title, "") for key, title in JSON_EXAMPLES.items()),
        *((key, e.title, e.description) for key, e in EXAMPLES.items()),
        ("transformer-block", transformer.TITLE, transformer.DESCRIPTION),
        ("training-step", training.TITLE, training.DESCRIPTION),
    ]


def examples() -> list[Example]:
    """Every gallery example: the loom documents, the named-axes examples, the transformer."""
    folder = resources.files("geon") / "examples"
    loom = [
        Example(key, title, "", json.loads((folder / f"{key}.json").read_text(encoding="utf-8")))
        for key, title in JSON_EXAMPLES.items()
    ]
    named = [
        Example(
            key,
            example.title,
            example.description,
            example.build().to_json(),
        )
        for key, example in EXAMPLES.items()
    ]
    block = Example(
        "transformer-block",
        transformer.TITLE,
        transformer.DESCRIPTION,
        transformer.transformer_block().to_json(),
        tuple(transformer.PLANS),
    )
    step, step_plans = training.training_example()
    trained = Example(
        "training-step", training.TITLE, training.DESCRIPTION, step.to_json(), tuple(step_plans)
    )
    return [*loom, *named, block, trained]
