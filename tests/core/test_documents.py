"""What every layer reads of a document without the checker (issue 37): loading it
(geon.core.documents.load_document) and whether a node can be read (conforms), held to the
checker's own SchemaConformance verdict (geon.core.checks.is_well_formed) as the oracle."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest

from geon.core.checks import check_document, is_well_formed
from geon.core.documents import conforms, load_document
from geon.core.graph import Graph
from geon.examples import gallery

EXAMPLES = sorted(
    p.name for p in resources.files("geon.examples").iterdir() if p.name.endswith(".json")
) + sorted(gallery.EXAMPLES)


def _example(name: str) -> dict[str, Any]:
    if name in gallery.EXAMPLES:
        return gallery.build(name).to_json()
    data: dict[str, Any] = json.loads(resources.files("geon.examples").joinpath(name).read_text())
    return data


def _malformed(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One document per way of breaking the first node of each type: a body field of the wrong
    type, a range that is not a range, a tag that does not match its schema."""
    out = []
    seen: set[str] = set()
    for pos, node in enumerate(doc["nodes"]):
        if node.get("type") in seen:
            continue
        seen.add(node["type"])
        body = node.get("body") or {}
        for key in body:
            bad = copy.deepcopy(doc)
            bad["nodes"][pos]["body"][key] = {"not": "expected"}
            out.append(bad)
        if "range" in body:
            bad = copy.deepcopy(doc)
            bad["nodes"][pos]["body"]["range"] = {"start": [3], "end": [1]}
            out.append(bad)
        for url in node.get("tags") or {}:
            bad = copy.deepcopy(doc)
            bad["nodes"][pos]["tags"][url] = [1, "x"]
            out.append(bad)
        for side in ("inputs", "outputs"):
            for key, items in (body.get(side) or {}).items():
                if items:
                    bad = copy.deepcopy(doc)
                    bad["nodes"][pos]["body"][side][key][0]["range"] = {"start": [2], "end": [0]}
                    out.append(bad)
    return out


@pytest.mark.parametrize("name", EXAMPLES)
def test_conforms_is_the_checkers_verdict_on_every_example_and_its_breakages(name: str) -> None:
    # given an example and documents that each break one part of one node
    docs = [_example(name), *_malformed(_example(name))]
    for doc in docs:
        # when both judge every node
        graph, _ = load_document(doc)
        assert graph is not None
        # then the model's reading verdict is the checker's SchemaConformance verdict
        for node in graph.nodes:
            assert conforms(graph.index, node) == is_well_formed(graph.index, node), node.id
    assert any(
        not conforms(g.index, n)
        for g in (load_document(d)[0] for d in docs)
        if g is not None
        for n in g.nodes
    )


def test_load_document_reports_what_it_leaves_out_as_the_checker_does() -> None:
    # given a document with a node that cannot be read and one that appears twice
    doc = _example(EXAMPLES[0])
    doc["nodes"] = [{"id": 1}, *doc["nodes"], doc["nodes"][0]]
    # when it is loaded
    graph, issues = load_document(json.dumps(doc))
    # then the readable nodes are kept once each and both problems are issues the checker reports
    assert graph is not None and len(graph.nodes) == len(doc["nodes"]) - 2
    assert [i.summary for i in issues] == ["Node is malformed", "Node id appears twice"]
    checked = check_document(json.dumps(doc))
    assert all(i in checked for i in issues)
    assert Graph.from_json(_example(EXAMPLES[0])).id == graph.id
