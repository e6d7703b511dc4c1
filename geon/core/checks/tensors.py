"""TensorDTypesAreValid and TensorOperationAgreement (DESIGN.md §5): a tensor's dtype is one
of geon's, and an operation's selections reference Tensors that exist, with the tensor's rank and
inside its range; a tensor is written by at most one operation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from geon.core.checks.fastpath import (
    cached,
    checked_structure,
    is_well_formed,
)
from geon.core.checks.messages import (
    MAX_LISTED,
    context,
    issue,
    missing,
    wrong_type,
)
from geon.core.checks.structure import parsed
from geon.core.dtypes import DTYPES
from geon.core.errors import quote
from geon.core.graph import (
    TENSOR,
    GraphIndex,
    Node,
)
from geon.core.issues import Issue

__all__ = ["tensor_dtypes", "tensor_operation_agreement"]


def tensor_dtypes(index: GraphIndex, node: Node) -> Iterable[Issue]:
    """TensorDTypesAreValid: a string dtype is one of ``DTYPES`` (any other is a schema error)."""
    dtype = node.body.get("dtype")
    if not isinstance(dtype, str) or dtype in DTYPES:
        return ()
    return (
        issue(
            "TensorDTypesAreValid",
            "NodeValidationError",
            "Tensor dtype is not valid",
            f"tensor {quote(node.id)} has dtype {quote(dtype)}; expected one of ("
            + ", ".join(f'"{d}"' for d in DTYPES)
            + ")",
            (node.id,),
            (context("Tensor dtype", node.id, ".body.dtype", dtype),),
            {"dtype": dtype},
        ),
    )


def tensor_operation_agreement(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    """TensorOperationAgreement's issues of an operation or a tensor, cached on what they read."""
    get = index.get
    if node.type == TENSOR:
        writers = index.writers_of(node.id)
        if len(writers) < 2:
            return ()  # a tensor's only issue here is a second writer
        deps = tuple(get(r) for r in writers)
    else:
        deps = tuple(get(r) for r in index.references(node.id))
    return cached(index, node, "TOA", deps, _tensor_operation_agreement_uncached)


def _tensor_operation_agreement_uncached(index: GraphIndex, node: Node) -> Iterator[Issue]:
    """An operation's selections name existing Tensors, with their rank and inside their
    range; a tensor has at most one writer."""
    name = "TensorOperationAgreement"
    if node.type == TENSOR:
        yield from _producers(index, node)
        return
    if not is_well_formed(index, node):
        return
    for side in parsed(index, node).sides.values():
        for sels in side.values():
            for sel in sels:
                tensor = index.get(sel.tensor_id)
                if tensor is None:
                    yield missing(name, node, sel.tensor_id, sel.path, "a Tensor")
                    continue
                if tensor.type != TENSOR:
                    yield wrong_type(name, node, tensor, sel.path, "a Tensor")
                    continue
                trange = checked_structure(index, tensor).range  # None: malformed, reported
                if trange is None:
                    continue
                if len(trange.start) != len(sel.range.start):
                    yield issue(
                        name,
                        "NodeValidationError",
                        "Selection rank does not match the tensor",
                        f"operation {quote(node.id)} selects {quote(str(sel.range))} of rank "
                        f"{sel.range.rank} in tensor {quote(tensor.id)} of rank {trange.rank}; "
                        f"expected a range of rank {trange.rank}",
                        (node.id, tensor.id),
                        (context("Selection", node.id, sel.path + ".range", sel.range.to_json()),),
                        {
                            "tensorId": tensor.id,
                            "range": sel.range.to_json(),
                            "tensorRange": trange.to_json(),
                        },
                    )
                elif not trange.contains(sel.range):
                    yield issue(
                        name,
                        "NodeValidationError",
                        "Selection is out of the tensor's bounds",
                        f"operation {quote(node.id)} selects {quote(str(sel.range))} of tensor "
                        f"{quote(tensor.id)}, which spans {quote(str(trange))}; expected a range "
                        "inside it",
                        (node.id, tensor.id),
                        (context("Selection", node.id, sel.path + ".range", sel.range.to_json()),),
                        {
                            "tensorId": tensor.id,
                            "range": sel.range.to_json(),
                            "tensorRange": trange.to_json(),
                        },
                    )


def _producers(index: GraphIndex, tensor: Node) -> Iterator[Issue]:
    """A tensor is written by at most one operation."""
    writers = []
    for rid in index.writers_of(tensor.id):
        op = index.get(rid)
        if op is not None and is_well_formed(index, op):
            writers.append(op.id)
    if len(writers) > 1:
        listed = writers[:MAX_LISTED]  # the issue stays small however many there are
        params: dict[str, Any] = {"operationIds": listed}
        many, more = "", ""
        if len(writers) > len(listed):
            params["count"] = len(writers)
            many, more = f"{len(writers)} ", f" and {len(writers) - len(listed)} more"
        yield issue(
            "TensorOperationAgreement",
            "NodeValidationError",
            "Tensor is written by more than one operation",
            f"tensor {quote(tensor.id)} is written by {many}operations "
            + ", ".join(f'"{w}"' for w in listed)
            + f"{more}; expected at most one producer",
            (tensor.id, *listed),
            (context("Tensor", tensor.id, "", tensor.label),),
            params,
        )
