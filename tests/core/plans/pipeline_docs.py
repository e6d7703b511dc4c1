"""Layered documents for the pipeline tests: a chain of ``dot`` + ``relu`` layers whose
operations carry the ``Group`` scope ``layers.<i>`` (as an imported model's do), and its training
step (its backward scoped ``backward/layers.<i>``)."""

from __future__ import annotations

from typing import Any

from geon import core as gc
from geon.core.graph import OPERATION, Graph

GROUP = "urn:geon:2026-11:tag_types.jsd#/tags/Group"


def _scoped(graph: Graph) -> Graph:
    """Each operation scoped by the layer of what it writes (``h2``, ``a2`` -> ``layers.2``)."""
    data: dict[str, Any] = graph.to_json()
    labels = {node["id"]: node.get("label") or "" for node in data["nodes"]}
    for node in data["nodes"]:
        if node["type"] == OPERATION:
            label = labels[next(iter(node["body"]["outputs"].values()))[0]["tensorId"]]
            if label[:1] in "ha" and label[1:].isdigit():
                node.setdefault("tags", {})[GROUP] = {"scope": f"layers.{label[1:]}"}
    return Graph.from_json(data)


def chain(layers: int = 4, n: int = 64, d: int = 32, *, train: bool = False) -> Graph:
    """``x[N, D]`` through ``layers`` of ``relu(dot(h, w_i))``, each layer's operations scoped
    ``layers.<i>``; ``train``: the weights are variables and the document is the SGD training
    step of the sum of squares of the output."""
    N, D = gc.Axis("N", n, batch=True), gc.Axis("D", d)
    h = gc.placeholder(axes=[N, D], name="x", dtype="float32")
    for i in range(layers):
        if train:
            w = gc.variable([D + 1, D], name=f"w{i}", dtype="float32")
        else:
            w = gc.placeholder(axes=[D + 1, D], name=f"w{i}", dtype="float32")
        h = gc.relu(gc.dot(h, w, name=f"h{i}"), name=f"a{i}")
    if not train:
        return _scoped(gc.graph([h]))
    forward = _scoped(gc.graph([gc.sum(gc.square(h), name="loss")]))
    return gc.training_step(forward, lr=0.01)
