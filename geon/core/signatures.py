"""Reading an operation's ``IPFSignature`` tag as IPFs (DESIGN.md §3): what the checker, sharding
and the cost model read of a signature, held here under the graph model so that none of them
reads it through another (issue 37: the checker is not a helper library).

>>> item = {"affineMap": {"projection": [[1, 0]], "offset": [0]}, "shape": [1]}
>>> ipf_from_json(item) is ipf_from_json(dict(item))
True

Equal IPFs (most operations repeat a few) are built once, in every graph:
:func:`geon.core.zspace.ipf_of` keeps them (``ipf_of.cache_clear()`` forgets them, as the
checker's ``clear_caches`` does).
"""

from __future__ import annotations

from typing import Any

from geon.core.graph import IPF_SIGNATURE, GraphIndex, Node
from geon.core.zspace import IPF, ipf_of

__all__ = ["Signature", "ipf_from_json", "signature_of"]

Signature = dict[str, dict[str, tuple[IPF | str, ...]]]
"""An operation's signature by side and IO key; a str in place of an IPF says why that entry is
malformed (the checker reports it, never raises)."""


def _signature_of_node(node: Node) -> Signature | None:
    """The op's IPFSignature as IPFs (a str in place of an IPF says why it is malformed)."""
    tag = node.tags.get(IPF_SIGNATURE) if node.tags else None
    if tag is None:
        return None
    out: dict[str, dict[str, tuple[IPF | str, ...]]] = {}
    for side in ("inputs", "outputs"):
        keys: dict[str, tuple[IPF | str, ...]] = {}
        for key, items in (tag.get(side) or {}).items():
            ipfs: list[IPF | str] = []
            for item in items:
                try:
                    ipfs.append(ipf_from_json(item))
                except Exception as exc:  # a malformed IPF is reported, never raised
                    ipfs.append(str(exc))
            keys[key] = tuple(ipfs)
        out[side] = keys
    return out


def ipf_from_json(item: Any) -> IPF:
    """An IPF from its JSON (:meth:`IPF.from_json`); equal IPFs (most operations repeat a few)
    are built once, in every graph."""
    try:
        amap = item["affineMap"]
        key = (tuple(map(tuple, amap["projection"])), tuple(amap["offset"]), tuple(item["shape"]))
        hash(key)
    except (KeyError, TypeError):
        return IPF.from_json(item)
    return ipf_of(key)


def signature_of(index: GraphIndex, node: Node) -> Signature | None:
    """The operation's ``IPFSignature`` as IPFs, read once per node version (None: no tag)."""
    return index.memo(node, "signature", _signature_of_node)
