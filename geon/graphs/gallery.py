"""The example gallery a new user sees first: the loom example, then the named-axes examples
of :mod:`geon.examples.gallery` (built with the authoring API).

>>> [e.key for e in examples()][0]
'loom_sharded_add'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from geon.examples.gallery import EXAMPLES

#: Titles of the JSON documents shipped in ``geon/examples``, in gallery order.
JSON_EXAMPLES = {
    "loom_sharded_add": "Loom: sharded add (z = t0 + t1 in two shards)",
}


@dataclass(frozen=True, slots=True)
class Example:
    """One gallery entry: a stable key, a title, what to look at, and a LoomGraph document."""

    key: str
    title: str
    description: str
    document: dict[str, Any]


def examples() -> list[Example]:
    """Every gallery example: the loom documents first, then the named-axes examples."""
    folder = resources.files("geon") / "examples"
    loom = [
        Example(key, title, "", json.loads((folder / f"{key}.json").read_text(encoding="utf-8")))
        for key, title in JSON_EXAMPLES.items()
    ]
    named = [
        Example(key, example.title, example.description, example.build().to_json())
        for key, example in EXAMPLES.items()
    ]
    return loom + named
