"""The example gallery a new user sees first: the loom example, then the named-axes examples.

>>> [e.key for e in examples()][0]
'loom_sharded_add'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

#: Titles of the JSON documents shipped in ``geon/examples``, in gallery order.
JSON_EXAMPLES = {
    "loom_sharded_add": "Loom: sharded add (z = t0 + t1 in two shards)",
}


@dataclass(frozen=True, slots=True)
class Example:
    """One gallery entry: a stable key, a title and a LoomGraph document."""

    key: str
    title: str
    document: dict[str, Any]


def examples() -> list[Example]:
    """Every gallery example, the loom example first."""
    folder = resources.files("geon") / "examples"
    found = [
        Example(key, title, json.loads((folder / f"{key}.json").read_text(encoding="utf-8")))
        for key, title in JSON_EXAMPLES.items()
    ]
    return found
