"""Incremental checking (DESIGN.md §5: "the editor re-checks incrementally"):
:class:`IncrementalChecker` keeps the issues of a graph current across edits by re-checking only
the nodes an edit can affect; its result always equals a full :func:`~geon.core.checks.check`.

The dependency rule: after an edit changes node ``n`` (added, removed or updated, from ``old`` to
``new``), the checker re-checks

- ``n`` itself;
- the nodes ``old`` or ``new`` references, and the nodes that reference ``n``;
- when ``n`` is an Axis (old or new): every Axis node declaring the old or the new name, every
  Tensor whose ``TensorAxes`` names it and every Operation using those tensors, and every
  Operation whose ``IndexAxes`` names it together with that operation's Applications (an
  operation's index range may come from its index axes' lengths).

This holds because a constraint reads only its node, the nodes one reference away and Axis
declarations by name (the protocol in :mod:`geon.core.checks`). Cycles are recomputed (in
linear time) only when an edit changes which tensors an operation reads or writes, or adds or
removes an operation. The output is bounded as a full check's is, so the two stay equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from geon.core.checks.cycles import cycle_components, cycle_issues, dataflow
from geon.core.checks.registry import Dispatch, all_constraints, run_node, strict
from geon.core.checks.structure import envelope_issues
from geon.core.graph import AXIS, OPERATION, Change, Graph, Node, node_references
from geon.core.issues import Issue, bound_check_issues

__all__ = ["IncrementalChecker"]


class IncrementalChecker:
    """Keeps the issues of a graph current across edits, re-checking only what an edit affects.

    >>> from geon.core.graph import NOTE
    >>> g = Graph(id="00000000-0000-0000-0000-000000000000")
    >>> ic = IncrementalChecker(g)
    >>> [i.summary for i in ic.apply([{"op": "add_node", "node": {"id": "n", "type": NOTE,
    ...     "body": {"message": "hi"}}}])]
    ['Node id is not a UUID']
    >>> ic.apply([{"op": "remove_node", "id": "n"}])
    []
    """

    def __init__(self, graph: Graph, *, strict_broadcasting: bool = False) -> None:
        self.graph = graph
        self.strict_broadcasting = strict_broadcasting
        """Report ``AccidentalBroadcast`` as an error (the graph's "strict broadcasting")."""
        self._dispatch = Dispatch(all_constraints())
        self._by_node: dict[str, list[Issue]] = {}
        self._dataflow: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._cache: list[Issue] | None = None
        self.rechecked: int = 0
        """How many nodes the last update re-checked (for tests and benchmarks)."""
        self._full()

    def _full(self) -> None:
        index = self.graph.index
        self._by_node = {}
        for node in self.graph.nodes:
            found = run_node(self._dispatch, index, node)
            if found:
                self._by_node[node.id] = found
        self._dataflow = {op.id: dataflow(op) for op in index.of_type(OPERATION)}
        self._envelope = envelope_issues(self.graph)
        self._components = cycle_components(index)
        self._cycles = cycle_issues(index, self._components)
        self._cache = None
        self.rechecked = len(index)

    @property
    def issues(self) -> list[Issue]:
        """Every issue, in the order :func:`check` gives them."""
        if self._cache is None:
            index = self.graph.index
            out = list(self._envelope)
            for nid in index.in_document_order(self._by_node):
                out.extend(self._by_node[nid])
            out.extend(self._cycles)
            self._cache = strict(bound_check_issues(out), self.strict_broadcasting)
        return list(self._cache)

    def apply(self, ops: Sequence[Mapping[str, Any]]) -> list[Issue]:
        """Apply edit ops to the graph (atomically, see :meth:`Graph.apply`), re-check what they
        affect and return every issue. A refused edit raises and changes nothing."""
        changes = self.graph.apply(ops)
        self.update(changes)
        return self.issues

    def update(self, changes: Iterable[Change]) -> None:
        """Re-check after changes that were applied to the graph by other means."""
        index = self.graph.index
        affected: set[str] = set()
        axis_readers: set[str] = set()
        dataflow_changed = False
        for ch in changes:
            affected.add(ch.id)
            for node in (ch.old, ch.new):
                if node is None:
                    continue
                affected.update(node_references(node))
                if node.type == AXIS:
                    axis_readers.update(self._axis_dependents(node))
            affected.update(index.referrers(ch.id))
            old_flow = self._dataflow.pop(ch.id, None)
            new_flow = None
            if ch.new is not None and ch.new.type == OPERATION:
                new_flow = dataflow(ch.new)
                self._dataflow[ch.id] = new_flow
            if old_flow != new_flow:
                dataflow_changed = True
        affected |= axis_readers
        for nid in affected:
            node = index.get(nid)
            if node is None:
                self._by_node.pop(nid, None)
                continue
            found = run_node(self._dispatch, index, node)
            if found:
                self._by_node[nid] = found
            else:
                self._by_node.pop(nid, None)
        if dataflow_changed:
            self._components = cycle_components(index)
        if dataflow_changed or self._components:
            self._cycles = cycle_issues(index, self._components)
        self._cache = None
        self.rechecked = len(affected)

    def _axis_dependents(self, axis: Node) -> set[str]:
        name = axis.body.get("name")
        return self.graph.index.axis_readers(name) if isinstance(name, str) else set()
