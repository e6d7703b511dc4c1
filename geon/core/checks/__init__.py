"""The checker: a document in, every issue out (DESIGN.md §5), laid out like Django's checks.

>>> from importlib import resources
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> check_document(text)
[]
>>> [i.summary for i in check_document('{"id": "x", "nodes": []}')]
['Document id is not a UUID']

``check(graph)`` runs **every** constraint on every node and returns every issue (it never stops
at the first failing constraint). ``check_document(data)`` takes JSON text or parsed data that
may be malformed in any way and turns each problem into an issue, never a traceback.
``IncrementalChecker`` keeps the issues of a graph current across edits; its result always
equals a full ``check``.

Where each rule lives
---------------------
- :mod:`~geon.core.checks.structure`: ``SchemaConformance`` — the document envelope, node
  envelope, bodies and known tags against :mod:`geon.core.schemas`, well-formed ranges; and the
  parsed selections the other checks read of a node.
- :mod:`~geon.core.checks.tensors`: ``TensorDTypesAreValid``, ``TensorOperationAgreement``.
- :mod:`~geon.core.checks.operation_signature`: ``OperationIPFSignatureAgreement``.
- :mod:`~geon.core.checks.applications`: ``OperationApplicationAgreement``,
  ``ApplicationIPFSignatureAgreement``.
- :mod:`~geon.core.checks.coverage`: ``ApplicationOutputRangeCoverageIsExact``.
- :mod:`~geon.core.checks.cycles`: ``NoTensorOperationCycles`` (whole graph).
- :mod:`~geon.core.checks.axes`: ``AxisDeclarations``, ``TensorAxesAgreement``,
  ``OperationAxesInference``, ``KernelSignatureAgreement``.
- :mod:`~geon.core.checks.runnable`: ``OperationPorts``, ``PositionalKernelAgreement`` (what
  the executor needs of an operation that the others leave unchecked, issue 21).
- :mod:`~geon.core.checks.broadcasting`: ``AccidentalBroadcast`` (a warning; ``check(...,
  strict_broadcasting=True)`` makes it an error).
- :mod:`~geon.core.checks.placement`: ``PlanPlacement``.
- :mod:`~geon.core.checks.registry`: the constraints in reporting order, dispatch, ``check``.
- :mod:`~geon.core.checks.incremental`: ``IncrementalChecker`` and its dependency rule.
- :mod:`~geon.core.checks.fastpath`: certificates and caches, which change no issue.
- :mod:`~geon.core.checks.messages`: how issues are worded and placed.

The constraint protocol
-----------------------
A constraint is a :class:`geon.core.issues.Constraint` ``(name, node_types, check)``.
``check(index, node)`` yields the issues of one node whose type URL is in ``node_types`` (an
empty ``node_types`` means every node type). It receives the graph's
:class:`~geon.core.graph.GraphIndex` and may read

1. the node itself,
2. the nodes it references directly (``index.references(node.id)``: an operation's tensors, an
   application's operation and tensors, a placement's mesh) and the nodes that reference it
   directly (``index.referrers(node.id)``, e.g. ``index.applications_of(op.id)``,
   ``index.operations_using(tensor.id)``),
3. Axis declarations, by name, through the index (``index.axis(name)``,
   ``index.axis_declarations(name)``),

and nothing else (no walk over the whole graph, no two-hop reads). Each issue's ``node_ids``
starts with the checked node. Constraints must not raise on malformed data: a node whose
structure is wrong is reported once by ``SchemaConformance``, and the other constraints skip it
— use :func:`is_well_formed` on the node and on every node it reads.

Decisions (where DESIGN.md is silent)
-------------------------------------
- ``TensorOperationAgreement`` also reports a Tensor written by more than one Operation (on the
  tensor, naming the writers).
- An Operation's index range is its ``IPFIndex`` tag or, without one, ``[0, lengths)`` of its
  ``IndexAxes`` (so operations built from named axes need no IPFIndex).
- Operation-level checks over applications (their span, output coverage) are judged only when
  every application is well-formed and agrees with the operation on the selection concerned;
  otherwise the disagreement is reported once, by ``OperationApplicationAgreement``.
- Padded reads: an *input* selection must equal the projection of the index range clipped to
  its tensor's range (:func:`geon.core.zspace.selection_of`), because pad and a padded conv2d
  reach past the tensor and read zeros there (as the executor does). Outputs must equal the
  projection exactly. An input selection the tensor does not contain is
  ``TensorOperationAgreement``'s issue and is held to the plain projection.
- The output is bounded whatever the document (issue 13): see :mod:`geon.core.issues` and
  :mod:`geon.core.checks.coverage`; the incremental checker bounds the same way.
"""

from geon.core.checks.broadcasting import NAME as ACCIDENTAL_BROADCAST
from geon.core.checks.fastpath import is_well_formed
from geon.core.checks.incremental import IncrementalChecker
from geon.core.checks.registry import (
    LOOM_CONSTRAINTS,
    all_constraints,
    check,
    check_document,
    check_node,
    clear_caches,
)
from geon.core.zspace import (
    COVERAGE_WORK_BASE,
    COVERAGE_WORK_PER_SHARD,
    MAX_OVERLAPS_COUNTED,
    coverage,
)

__all__ = [
    "ACCIDENTAL_BROADCAST",
    "COVERAGE_WORK_BASE",
    "COVERAGE_WORK_PER_SHARD",
    "LOOM_CONSTRAINTS",
    "MAX_OVERLAPS_COUNTED",
    "IncrementalChecker",
    "all_constraints",
    "check",
    "check_document",
    "check_node",
    "clear_caches",
    "coverage",
    "is_well_formed",
]
