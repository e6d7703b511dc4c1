"""``AccidentalBroadcast`` (severity ``warning``): an elementwise operation that broadcasts where
the author most likely meant to line two axes up (issue 19).

Elementwise operations match operands' axes by identity (DESIGN.md §2), so adding a ``(C1, N)``
tensor to a ``(C2, N)`` tensor gives ``(C1, N, C2)``: an outer sum over ``C1`` and ``C2``, not
the elementwise sum the author usually wanted. The constraint warns, on the operation, when

1. an operand (of rank >= 1) shares no axis with the operands before it (every cell of one is
   combined with every cell of the other: an outer sum or product), or
2. the result holds two distinct axes of equal length that likely mean the same thing: one
   comes only from an earlier operand, the other only from this one, and their names have the
   same stem once trailing digits, primes and underscores are dropped (``C1``/``C2``,
   ``H``/``H2``).

The message names the axes and says the fix: relabel with ``cast_axes`` before the operation,
or declare one axis. An operation that names its result axes (``params.axes``) has said the
broadcast is meant and is not warned about. ``params`` carries what the editor's one-click fix
needs: ``operationId``, ``operand`` (the IO key), ``position`` (within the key), ``tensorId``,
``fromAxis`` and ``toAxis`` (null when no axis of equal length exists to relabel to).

>>> import numpy as np
>>> from geon import core as gc
>>> C1, C2, N = gc.Axis("C1", 2), gc.Axis("C2", 2), gc.Axis("N", 3)
>>> a = gc.constant(np.ones((2, 3)), axes=[C1, N], name="a")
>>> b = gc.constant(np.ones((2, 3)), axes=[C2, N], name="b")
>>> [(i.constraint, i.severity, i.params["fromAxis"], i.params["toAxis"])
...  for i in gc.graph([a + b]).check()]
[('AccidentalBroadcast', 'warning', 'C2', 'C1')]
>>> gc.graph([a + gc.cast_axes(b, [C1, N])]).check()
[]

The check reads the operation, its tensors and Axis declarations (through
:func:`geon.core.checks.axes.infer_operation`), so the incremental checker re-checks it with
the operation as every other per-operation constraint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from geon.core.checks.axes import infer_operation
from geon.core.checks.messages import issue, path
from geon.core.errors import quote
from geon.core.graph import OPERATION, GraphIndex, Node
from geon.core.issues import Constraint, Context, Issue
from geon.core.ops import CATALOGUE

__all__ = ["CONSTRAINT", "NAME", "name_stem"]

NAME = "AccidentalBroadcast"

_ELEMENTWISE_FAMILIES = frozenset({"nary", "binary"})
_SUFFIX = re.compile(r"[0-9_']+$")


def name_stem(name: str) -> str:
    """An axis name without trailing digits, primes and underscores, lower-cased: axes whose
    stems are equal likely mean the same thing.

    >>> name_stem("C1"), name_stem("C_2"), name_stem("H"), name_stem("x1")
    ('c', 'c', 'h', 'x')
    """
    stem = _SUFFIX.sub("", name).lower()
    return stem or name.lower()


def _label(index: GraphIndex, node_id: str) -> str:
    node = index.get(node_id)
    label = node.label if node is not None else None
    return label if isinstance(label, str) and label else node_id


def _length(ref: Any) -> int | None:
    length = getattr(ref, "length", None)
    return length if isinstance(length, int) else None


def _accidental_broadcast(index: GraphIndex, node: Node) -> Iterator[Issue]:
    kname = node.body.get("kernel")
    if not isinstance(kname, str) or kname not in CATALOGUE:
        return
    if CATALOGUE[kname].family not in _ELEMENTWISE_FAMILIES:
        return
    params = node.body.get("params")
    if isinstance(params, dict) and params.get("axes") is not None:
        return  # the author named the result axes: the broadcast is meant
    inf, _ = infer_operation(index, node)
    if inf is None:
        return  # not named, or wrong: OperationAxesInference reports it
    tensor_ids = _tensor_ids(node)
    seen: list[Any] = []  # the refs of the operands before this one
    for key, group in inf.inputs:
        for position, axes in enumerate(group):
            refs = list(axes)
            if seen and refs:
                found = _judge(index, node, kname, key, position, seen, refs, tensor_ids)
                if found is not None:
                    yield found
            seen.extend(r for r in refs if r not in seen)


def _tensor_ids(node: Node, side: str = "inputs") -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    found = node.body.get(side)
    if isinstance(found, dict):
        for key, sels in found.items():
            if isinstance(sels, list):
                for k, sel in enumerate(sels):
                    tid = sel.get("tensorId") if isinstance(sel, dict) else None
                    if isinstance(tid, str):
                        out[(key, k)] = tid
    return out


def _op_name(index: GraphIndex, node: Node, kname: str) -> str:
    """How a person knows the operation: its label, else the label of the tensor it writes."""
    if node.label and node.label != kname:
        return quote(node.label)
    result = _tensor_ids(node, "outputs").get(("result", 0))
    if result is not None:
        return f"{kname} writing {quote(_label(index, result))}"
    return kname


def _judge(
    index: GraphIndex,
    node: Node,
    kname: str,
    key: str,
    position: int,
    before: list[Any],
    refs: list[Any],
    tensor_ids: dict[tuple[str, int], str],
) -> Issue | None:
    """The warning for operand ``key[position]`` against the operands before it, or None."""
    shared = [r for r in refs if r in before]
    only_here = [r for r in refs if r not in before]
    only_before = [r for r in before if r not in refs]
    same_length = [
        (mine, theirs)
        for mine in only_here
        for theirs in only_before
        if _length(mine) is not None and _length(mine) == _length(theirs)
    ]
    alike = [(m, t) for m, t in same_length if name_stem(str(m)) == name_stem(str(t))]
    op_name = _op_name(index, node, kname)
    tensor_id = tensor_ids.get((key, position), "")
    operand = quote(_label(index, tensor_id)) if tensor_id else f"{key}[{position}]"
    if not shared and not alike:
        pair = same_length[0] if same_length else None
        mine_names = ", ".join(str(r) for r in refs)
        theirs_names = ", ".join(str(r) for r in before)
        if pair is not None:
            fix = (
                f"if {pair[0]} and {pair[1]} are the same axis, cast {pair[0]} to {pair[1]} with "
                f"cast_axes before the {kname}, or declare them one axis"
            )
        else:
            fix = "relabel one operand's axes with cast_axes if they are meant to line up"
        message = (
            f"{op_name} combines operand {operand} with axes ({mine_names}) "
            f"and operands with axes ({theirs_names}), which share no axis: every cell of one "
            f"meets every cell of the other (an outer {kname.removeprefix('op:')}); {fix}; "
            "name the result axes (params.axes) if the outer result is meant"
        )
        summary = "Operands share no axis"
        kind = "DisjointOperands"
    elif alike:
        pair = alike[0]
        message = (
            f"{op_name} gives both {pair[1]} and {pair[0]} (length "
            f"{_length(pair[0])}) in its result: {pair[1]} comes from the operands before "
            f"{operand} and {pair[0]} from {operand}, so they are broadcast against each other "
            f"instead of lined up; cast {pair[0]} to {pair[1]} with cast_axes before the "
            f"{kname}, or declare them one axis"
        )
        summary = "Two axes that likely mean the same are broadcast"
        kind = "LikelySameAxis"
    else:
        return None
    return issue(
        NAME,
        kind,
        summary,
        message,
        (node.id,),
        (Context("Operation", path(node.id, ".body.inputs"), {"kernel": kname}),),
        {
            "operationId": node.id,
            "operand": key,
            "position": position,
            "tensorId": tensor_id or None,
            "fromAxis": str(pair[0]) if pair is not None else None,
            "toAxis": str(pair[1]) if pair is not None else None,
            "fix": "cast_axes" if pair is not None else None,
        },
        severity="warning",
    )


CONSTRAINT = Constraint(NAME, frozenset({OPERATION}), _accidental_broadcast)
"""The constraint, registered after the axis constraints in
:mod:`geon.core.checks.registry`."""
