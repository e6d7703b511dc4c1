"""An operation's index range as the document gives it (DESIGN.md §3): what the checker,
sharding and the renderer read, held here under the graph model so that none of them reads it
through another (issue 37: the checker is not a helper library).

>>> import json
>>> from importlib import resources
>>> from geon.core.graph import OPERATION, Graph
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> g = Graph.from_json(json.loads(text))
>>> [str(index_range(g.index, op)) for op in g.of_type(OPERATION)]
['[0:10, 0:5]']

The decision (where DESIGN.md is silent): without an ``IPFIndex`` tag the range is
``[0, lengths)`` of the ``IndexAxes``, so operations built from named axes need no IPFIndex.
"""

from __future__ import annotations

from geon.core.graph import INDEX_AXES, IPF_INDEX, GraphIndex, Node, axis_names_of_ref
from geon.core.zspace import ZRange, parse_range

__all__ = ["index_range"]


def _ipf_index_of(node: Node) -> ZRange | None:
    return parse_range(node.tags.get(IPF_INDEX))


def index_range(index: GraphIndex, op: Node) -> ZRange | None:
    """An operation's index range: its ``IPFIndex`` tag, else ``[0, lengths)`` of its
    ``IndexAxes`` when every one is declared with a bound length, else None (also when the tag
    is not a range)."""
    if op.tags and IPF_INDEX in op.tags:
        return index.memo(op, "ipf_index", _ipf_index_of)
    tag = op.tags.get(INDEX_AXES) if op.tags else None
    if not isinstance(tag, dict) or not isinstance(tag.get("axes"), list):
        return None
    lengths = []
    for ref in tag["axes"]:
        names = axis_names_of_ref(ref)
        if not names:
            return None
        n = 1
        for name in names:
            decl = index.axis(name)
            length = decl.body.get("length") if decl is not None else None
            if type(length) is not int or length < 1:
                return None
            n *= length
        lengths.append(n)
    return ZRange._raw((0,) * len(lengths), tuple(lengths))
