"""``geon verify``: geon's predicted collectives beside those XLA compiled (DESIGN.md §10,
issue 31), matched, each difference explained by a named rule of docs/engines.md.

:func:`match` pairs them (no jax needed; :func:`verify` compiles first):

>>> p = [{"kind": "all-reduce", "bytesPerDevice": 64, "meshAxes": ["tp"], "groups": 2,
...       "consumerLabel": "y"}]
>>> c = [CompiledCollective("all-reduce", 64, 4, 2, 1, "all-reduce")]
>>> report = match(p, c)
>>> report["agrees"], report["predicted"][0]["rule"]
(True, 'equal')

The rules, in the order they are tried (docs/engines.md explains each):

- ``equal``: same kind and the same per-device bytes;
- ``layer-norm-statistics``: geon gathers a normalisation's operand whole where XLA all-reduces
  its statistics (a mean, a variance, a max, a sum: the operand with the normalised axis reduced)
  and works on the pieces; each such all-reduce is smaller than the operand geon gathers (the
  gather itself may still be compiled, of the normalised result: then it is ``equal``);
- ``xla-combines``: XLA's combiner merged independent collectives of one kind into one tuple
  (or split one: a halo exchange is one permute per direction in XLA, one per edge in geon): the
  kind's totals of what is left are equal;
- ``reduction-as-all-reduce``: geon predicts a gather of partial results into a reduction (a
  ``send`` or an ``all-gather``) where XLA reduces with one all-reduce of the reduced tensor;
- ``halo-from-replica``: a convolution or pool split over height reads its halo from its own
  replica of a replicated operand in geon (nothing moves), where XLA cuts the operand to each
  device's block first and exchanges the halos with collective-permutes;
- ``permute-per-direction``: XLA exchanges halos with one collective-permute per direction
  (its buffer: one halo, its groups: the source-target pairs), geon with one permute per edge
  (``bytes``: every halo moved): the totals are equal;
- ``unexpressible-placement``: geon places an operation on some devices of the mesh only (an
  operation whose index has no axis mapped to a mesh axis sits at coordinate 0 of it), which no
  ``PartitionSpec`` says: the program leaves it unconstrained, XLA computes it on every device
  from operands they hold, and the move geon predicts out of it (or into it) does not happen;
- anything else is ``unexplained``: ``agrees`` is false and ``geon verify`` exits 1.
"""

from __future__ import annotations

from typing import Any

from geon.interop.jax_engine import CompiledCollective

__all__ = ["RULES", "match", "verify"]

RULES = (
    "equal", "layer-norm-statistics", "xla-combines", "reduction-as-all-reduce",
    "halo-from-replica", "permute-per-direction", "unexpressible-placement",
)  # fmt: skip
WINDOWED = frozenset(("op:conv2d", "op:max_pool2d", "op:avg_pool2d"))
NORMALISATIONS = ("op:layer_norm", "op:softmax")


def match(
    predicted: list[dict[str, Any]],
    compiled: list[CompiledCollective],
    kernels: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Predicted collective records (``geon cost``'s, with ``consumerKernel`` where known)
    matched with compiled ones (see the module docstring); ``kernels``: the document's."""
    pred = [{**p, "match": None, "rule": None} for p in predicted]
    comp = [{**c.to_json(), "match": None, "rule": None} for c in compiled]
    left_p = [p for p in pred if p["rule"] is None and p["kind"] == "permute"]
    left_c = [c for c in comp if c["rule"] is None and c["kind"] == "permute"]
    if (
        len(left_p) != len(left_c)
        and left_p
        and sum(p["bytes"] for p in left_p)
        == sum(c["bytesPerDevice"] * c["groups"] for c in left_c)
    ):
        for x in (*left_p, *left_c):
            x["rule"] = "permute-per-direction"
    for i, p in enumerate(pred):
        for j, c in enumerate(comp):
            if p["rule"] is not None:
                break
            same = c["kind"] == p["kind"] and c["bytesPerDevice"] == p["bytesPerDevice"]
            if c["rule"] is None and c["combined"] == 1 and same:
                p["match"], p["rule"], c["match"], c["rule"] = j, "equal", i, "equal"
                break
    gathered = [
        p for p in pred if p["kind"] == "all-gather" and p.get("consumerKernel") in NORMALISATIONS
    ]
    if gathered:
        largest = max(p["bytesPerDevice"] for p in gathered)
        for c in comp:
            small = c["kind"] == "all-reduce" and c["bytesPerDevice"] < largest
            if c["rule"] is None and c["combined"] == 1 and small:
                c["rule"] = "layer-norm-statistics"
        for p in gathered:
            if p["rule"] is None:
                p["rule"] = "layer-norm-statistics"
    for kind in {c["kind"] for c in comp if c["rule"] is None}:
        left_p = [p for p in pred if p["rule"] is None and p["kind"] == kind]
        left_c = [c for c in comp if c["rule"] is None and c["kind"] == kind]
        if left_p and sum(p["bytesPerDevice"] for p in left_p) == sum(
            c["bytesPerDevice"] for c in left_c
        ):
            for x in (*left_p, *left_c):
                x["rule"] = "xla-combines"
    reductions = [
        p
        for p in pred
        if p["rule"] is None and p["kind"] in ("send", "all-gather") and p.get("consumerReduces")
    ]
    sums = [c for c in comp if c["rule"] is None and c["kind"] == "all-reduce"]
    if reductions and sums:
        for x in (*reductions, *sums):
            x["rule"] = "reduction-as-all-reduce"
    if kernels & WINDOWED and not any(p["kind"] == "permute" for p in pred):
        for c in comp:
            if c["rule"] is None and c["kind"] == "permute":
                c["rule"] = "halo-from-replica"
    for p in pred:
        if p["rule"] is None and p.get("unexpressible"):
            p["rule"] = "unexpressible-placement"
    for x in (*pred, *comp):
        if x["rule"] is None:
            x["rule"] = "unexplained"
    unexplained = sum(x["rule"] == "unexplained" for x in (*pred, *comp))
    return {"agrees": unexplained == 0, "unexplained": unexplained, "predicted": pred,
            "compiled": comp}  # fmt: skip


def predicted_records(graph: Any, profile: Any) -> list[dict[str, Any]]:
    """``geon cost``'s collectives of ``graph`` with labels, the consumer's kernel and whether
    the tensor's placement is one no ``PartitionSpec`` says (``unexpressible``)."""
    from geon.core.ops import REDUCTIONS
    from geon.core.plans.cost import infer_collectives, read_placed
    from geon.interop.jax_lowering import lower_shardings

    unexpressible = set(lower_shardings(graph).unexpressible)
    out = []
    for c in infer_collectives(read_placed(graph), profile):
        record = c.to_json()
        for key, node_id in (("tensor", c.tensor), ("producer", c.producer),
                             ("consumer", c.consumer)):  # fmt: skip
            node = graph.get(node_id)
            record[f"{key}Label"] = (node.label or node.id) if node is not None else node_id
        consumer = graph.get(c.consumer)
        kernel = consumer.body.get("kernel") if consumer is not None else None
        record["consumerKernel"] = kernel
        record["consumerReduces"] = kernel in REDUCTIONS
        record["unexpressible"] = c.tensor in unexpressible
        out.append(record)
    return out


def document_kernels(graph: Any) -> frozenset[str]:
    """The kernels of ``graph``'s operations."""
    from geon.core.graph import OPERATION

    return frozenset(str(op.body.get("kernel")) for op in graph.of_type(OPERATION))


def verify(graph: Any, profile: Any) -> dict[str, Any]:
    """Compile ``graph``'s plan with XLA (:func:`geon.interop.jax_engine.compile_only`) and
    match its collectives with the predicted ones; also the compile seconds."""
    from geon.interop.jax_engine import compile_only

    predicted = predicted_records(graph, profile)
    compiled = compile_only(graph)
    report = match(predicted, compiled.collectives(), document_kernels(graph))
    report["devices"] = compiled.devices
    report["compileSeconds"] = compiled.compile_seconds
    return report
