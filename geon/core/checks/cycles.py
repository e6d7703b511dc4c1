"""NoTensorOperationCycles (DESIGN.md §5): no operation reads, through any chain of tensors and
operations, a tensor it writes. A whole-graph rule: Tarjan's strongly connected components over
the dataflow, in linear time; one issue per cycle, in document order.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

from geon.core.checks.messages import (
    MAX_LISTED,
    context,
    issue,
)
from geon.core.graph import (
    OPERATION,
    GraphIndex,
    Node,
    selected_tensor_ids,
)
from geon.core.issues import Issue

__all__ = ["cycle_components", "cycle_issues", "cycles", "dataflow"]


def dataflow(op: Node) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tensor ids an operation reads and writes."""
    return selected_tensor_ids(op.body, "inputs"), selected_tensor_ids(op.body, "outputs")


def cycle_components(index: GraphIndex) -> list[list[str]]:
    """The sets of operation and tensor ids that depend on each other in a cycle."""
    succ: dict[str, list[str]] = {}
    for op in index.of_type(OPERATION):
        ins, outs = index.memo(op, "dataflow", dataflow)
        for t in ins:
            succ.setdefault(t, []).append(op.id)
        if outs:
            succ.setdefault(op.id, []).extend(outs)
    if _acyclic(succ):
        return []  # the common case, told in one pass: nothing to find
    # Tarjan's strongly connected components, iteratively.
    counter = 0
    low: dict[str, int] = {}
    num: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in list(succ):
        if root in num:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                num[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            children = succ.get(v, ())
            descended = False
            while i < len(children):
                w = children[i]
                i += 1
                if w not in num:
                    work.append((v, i))
                    work.append((w, 0))
                    descended = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], num[w])
            if descended:
                continue
            if low[v] == num[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return found


def _acyclic(succ: dict[str, list[str]]) -> bool:
    """Whether the dataflow ``succ`` has no cycle: Kahn's peeling of the nodes nothing (left)
    depends on reaches every node (cheaper than Tarjan's bookkeeping, which only a document
    with a cycle then pays)."""
    indegree = dict(Counter(itertools.chain.from_iterable(succ.values())))
    ready = [v for v in succ if v not in indegree]
    left = len(indegree)  # the nodes with a predecessor, each peeled once
    while ready:
        for w in succ.get(ready.pop(), ()):
            n = indegree[w] - 1
            indegree[w] = n
            if n == 0:
                left -= 1
                ready.append(w)
    return left == 0


def cycle_issues(index: GraphIndex, found: list[list[str]]) -> list[Issue]:
    """One issue per cycle component (members that no longer exist are left out)."""
    issues = []
    for comp in found:
        members = index.in_document_order(comp)
        if not members:
            continue
        ops = [m for m in members if _type_of(index, m) == OPERATION]
        op_set = set(ops)
        tensors = sorted(m for m in comp if m not in op_set)
        shown = ", ".join(f'"{m}"' for m in members[:8])
        if len(members) > 8:
            shown += f" ... ({len(members)} in all)"
        # a cycle through thousands of nodes is still one small issue: the first are named
        params: dict[str, Any] = {
            "operationIds": ops[:MAX_LISTED],
            "tensorIds": tensors[:MAX_LISTED],
        }
        if len(members) > MAX_LISTED:
            params["count"] = len(members)
        issues.append(
            issue(
                "NoTensorOperationCycles",
                "ReferenceCycleError",
                "Operations and tensors form a cycle",
                f"operations and tensors {shown} depend on each other in a cycle; expected "
                "every tensor to be computed before the operations that read it",
                tuple(members[:MAX_LISTED]),
                tuple(context("Operation", m, "", None) for m in ops[:8]),
                params,
            )
        )
    issues.sort(key=lambda i: index.position(i.node_ids[0]))
    return issues


def _type_of(index: GraphIndex, node_id: str) -> str | None:
    """The type of the node ``node_id`` (None: it no longer exists)."""
    node = index.get(node_id)
    return node.type if node is not None else None


def cycles(index: GraphIndex) -> list[Issue]:
    """One issue per cycle of operations and tensors, in document order."""
    return cycle_issues(index, cycle_components(index))
