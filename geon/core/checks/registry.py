"""The registry of constraints and the full check (DESIGN.md §5): every per-node constraint in
reporting order, dispatch by node type, and :func:`check`, which runs **every** constraint on
every node and returns every issue — document-level first, then per node in document order (and
for one node in the order of :func:`all_constraints`), then cycles.

>>> from importlib import resources
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> check_document(text)
[]
>>> [c.name for c in all_constraints()][:3]
['SchemaConformance', 'TensorDTypesAreValid', 'TensorOperationAgreement']

The output is bounded whatever the document (see :mod:`geon.core.issues`): at most
``MAX_ISSUES_PER_CONSTRAINT`` issues per constraint and node, then one summary issue, and at
most ``MAX_ISSUES_PER_CHECK`` per check. A constraint that raises is reported as an
``InternalError`` issue; it never hides the others.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Sequence
from typing import Any

from geon.core.checks import axes, broadcasting, fastpath, runnable
from geon.core.checks.applications import application_signature, operation_application
from geon.core.checks.coverage import coverage_exact
from geon.core.checks.cycles import cycles
from geon.core.checks.fastpath import operation_signature, schema_conformance
from geon.core.checks.placement import plan_placement
from geon.core.checks.structure import envelope_issues
from geon.core.checks.tensors import tensor_dtypes, tensor_operation_agreement
from geon.core.documents import load_document
from geon.core.errors import quote
from geon.core.graph import APPLICATION, OPERATION, TENSOR, Graph, GraphIndex, Node
from geon.core.issues import (
    MAX_ISSUES_PER_CONSTRAINT,
    Constraint,
    Issue,
    bound_check_issues,
    bound_node_issues,
)

__all__ = [
    "LOOM_CONSTRAINTS",
    "PLACEMENT_CONSTRAINTS",
    "Dispatch",
    "all_constraints",
    "check",
    "check_document",
    "check_node",
    "clear_caches",
    "run_node",
    "strict",
]

_ALL: frozenset[str] = frozenset()

LOOM_CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint("SchemaConformance", _ALL, schema_conformance),
    Constraint("TensorDTypesAreValid", frozenset({TENSOR}), tensor_dtypes),
    Constraint(
        "TensorOperationAgreement", frozenset({OPERATION, TENSOR}), tensor_operation_agreement
    ),
    Constraint("OperationIPFSignatureAgreement", frozenset({OPERATION}), operation_signature),
    Constraint(
        "OperationApplicationAgreement",
        frozenset({OPERATION, APPLICATION}),
        operation_application,
    ),
    Constraint("ApplicationIPFSignatureAgreement", frozenset({APPLICATION}), application_signature),
    Constraint("ApplicationOutputRangeCoverageIsExact", frozenset({OPERATION}), coverage_exact),
)
"""The per-node constraints of loom's rules (plus SchemaConformance); cycles are whole-graph."""

PLACEMENT_CONSTRAINTS: tuple[Constraint, ...] = (Constraint("PlanPlacement", _ALL, plan_placement),)


def all_constraints() -> tuple[Constraint, ...]:
    """Every per-node constraint, in reporting order (read at call time, so constraints
    registered in :data:`geon.core.checks.axes.CONSTRAINTS` are always included)."""
    return (
        *LOOM_CONSTRAINTS,
        *axes.CONSTRAINTS,
        *runnable.CONSTRAINTS,
        broadcasting.CONSTRAINT,
        *PLACEMENT_CONSTRAINTS,
    )


class Dispatch:
    """Per node type, the constraints that apply (built once per check)."""

    def __init__(self, constraints: Sequence[Constraint]) -> None:
        self.constraints = tuple(constraints)
        self._by_type: dict[str, tuple[Constraint, ...]] = {}

    def for_type(self, node_type: str) -> tuple[Constraint, ...]:
        found = self._by_type.get(node_type)
        if found is None:
            found = tuple(
                c for c in self.constraints if not c.node_types or node_type in c.node_types
            )
            self._by_type[node_type] = found
        return found


def run_node(dispatch: Dispatch, index: GraphIndex, node: Node) -> list[Issue]:
    """The issues of one node under the constraints ``dispatch`` holds, bounded per constraint."""
    out: list[Issue] = []
    for c in dispatch.for_type(node.type):
        try:
            out.extend(c.check(index, node))  # O(node size) issues each (coverage: bounded)
        except Exception as exc:  # a bug in one constraint must not hide the other issues
            out.append(
                Issue(
                    c.name,
                    "InternalError",
                    "Constraint failed to run",
                    f"constraint {quote(c.name)} failed on node {quote(node.id)}: "
                    f"{type(exc).__name__}: {exc}",
                    node_ids=(node.id,),
                )
            )
    if len(out) > MAX_ISSUES_PER_CONSTRAINT + 1:  # rare: bound each constraint's share
        grouped = itertools.groupby(out, key=operator.attrgetter("constraint"))
        out = [i for name, group in grouped for i in bound_node_issues(name, node.id, group)]
    return out


def clear_caches() -> None:
    """Forget what the checker remembers across graphs (equal IPFs, strings that matched a
    schema pattern, the index columns an IPF follows), so that the next check starts cold —
    as the benchmark's full check does."""
    fastpath.clear_caches()
    runnable.clear_columns()


def check_node(index: GraphIndex, node: Node) -> list[Issue]:
    """The issues of one node under every per-node constraint."""
    return run_node(Dispatch(all_constraints()), index, node)


def check(graph: Graph, *, strict_broadcasting: bool = False) -> list[Issue]:
    """Every issue of ``graph``: document-level, then per node in document order, then cycles —
    bounded per constraint and node and per check (see :mod:`geon.core.issues`).

    ``strict_broadcasting`` turns ``AccidentalBroadcast`` warnings into errors."""
    return strict(bound_check_issues(_check_all(graph)), strict_broadcasting)


def strict(issues: list[Issue], strict_broadcasting: bool) -> list[Issue]:
    """``issues`` with ``AccidentalBroadcast`` warnings made errors when ``strict_broadcasting``.

    >>> w = Issue(broadcasting.NAME, "DisjointOperands", "s", "m", severity="warning")
    >>> [i.severity for i in strict([w], True)], [i.severity for i in strict([w], False)]
    (['error'], ['warning'])
    """
    if not strict_broadcasting:
        return issues
    return [
        dataclasses.replace(i, severity="error") if i.constraint == broadcasting.NAME else i
        for i in issues
    ]


def _check_all(graph: Graph) -> list[Issue]:
    """:func:`check` before the bound per check."""
    dispatch = Dispatch(all_constraints())
    index = graph.index
    issues = envelope_issues(graph)
    for node in graph.nodes:
        issues.extend(run_node(dispatch, index, node))
    issues.extend(cycles(index))
    return issues


def check_document(data: Any, *, strict_broadcasting: bool = False) -> list[Issue]:
    """Check a document that may be malformed in any way (JSON text, bytes or parsed data):
    each problem is an issue, never a traceback.

    >>> [i.summary for i in check_document("{")]
    ['Document is not valid JSON']
    >>> [i.summary for i in check_document('{"id": "x", "nodes": []}')]
    ['Document id is not a UUID']
    """
    graph, issues = load_document(data)
    if graph is None:
        return issues
    found = _check_all(graph)
    if not graph.id and found and found[0].summary == "Document id is not a UUID":
        found = found[1:]  # already reported as malformed
    return strict(bound_check_issues(issues + found), strict_broadcasting)
