"""The checker's fast path (geon.core.checks.fastpath) changes no issue: every example and
generated document gives the same issues with certificates and with every application going
the long way (``_certificate`` replaced by a function that certifies nothing)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from geon.core.checks import check, fastpath
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION, OPERATION, Graph
from geon.core.plans.shards import shard
from geon.core.ranges import index_range
from geon.examples.gallery import EXAMPLES

Doc = dict[str, Any]
LOOM_UNIT = Path(__file__).parent / "loom_unit"


def _examples() -> Iterator[tuple[str, Doc]]:
    text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
    yield "loom_sharded_add", json.loads(text)
    for path in sorted(LOOM_UNIT.glob("*.json")):
        yield f"loom_unit/{path.stem}", json.loads(path.read_text("utf-8"))
    for slug, example in EXAMPLES.items():
        yield f"gallery/{slug}", example.build().to_json()


def _sharded(name: str, doc: Doc) -> Iterator[tuple[str, Doc]]:
    """``doc`` with each operation split in 2 and 3 parts along each index dim, one at a time."""
    graph = Graph.from_json(copy.deepcopy(doc))
    for op in graph.index.of_type(OPERATION):
        irange = index_range(graph.index, op)
        for dim in range(irange.rank if irange is not None else 0):
            for parts in (2, 3):
                cut = Graph.from_json(copy.deepcopy(doc))
                try:
                    shard(cut, op.id, dim=dim, parts=parts)
                except GeonError:
                    continue  # a split this operation refuses (a dim too short)
                yield f"{name}/{op.id[:8]}/dim{dim}/parts{parts}", cut.to_json()


def _nudged(doc: Doc) -> Doc:
    """``doc`` with the first application's output end and input start moved by one cell, so
    that it leaves a gap, overlaps nothing and selects what its projection does not."""
    out = copy.deepcopy(doc)
    for node in out["nodes"]:
        if node["type"] == APPLICATION:
            for side, coord, delta in (("outputs", "end", -1), ("inputs", "start", 1)):
                for items in (node["body"].get(side) or {}).values():
                    for item in items[:1]:
                        values = item["range"][coord]
                        if values:
                            values[0] += delta
            break
    return out


def _documents() -> list[tuple[str, Doc]]:
    found: list[tuple[str, Doc]] = []
    for name, doc in _examples():
        found.append((name, doc))
        for sharded_name, sharded in _sharded(name, doc):
            found.append((sharded_name, sharded))
            found.append((sharded_name + "/nudged", _nudged(sharded)))
    return found


DOCUMENTS = _documents()


@pytest.mark.parametrize(("name", "doc"), DOCUMENTS, ids=[n for n, _ in DOCUMENTS])
def test_the_fast_path_gives_the_issues_of_the_long_way(
    name: str, doc: Doc, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a document checked with the fast path
    fast = check(Graph.from_json(copy.deepcopy(doc)))
    # when checked again with every application going the long way
    monkeypatch.setattr(fastpath, "_certificate", lambda index, app: None)
    slow = check(Graph.from_json(copy.deepcopy(doc)))
    # then the issues are identical
    assert fast == slow


def test_the_documents_exercise_the_fast_path() -> None:
    # given the generated sharded documents, when checked, then most of their applications are
    # certified (the comparison above is not between two long ways)
    certified = total = 0
    for name, doc in DOCUMENTS:
        if "/parts" not in name or name.endswith("/nudged"):
            continue
        graph = Graph.from_json(copy.deepcopy(doc))
        check(graph)
        for app in graph.index.of_type(APPLICATION):
            total += 1
            certified += fastpath.is_certified(graph.index, app)
    assert total > 0
    assert certified / total > 0.5
