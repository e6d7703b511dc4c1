"""ApplicationOutputRangeCoverageIsExact (DESIGN.md §5): the output selections of an operation's
applications cover the operation's output selection exactly — no gap and no overlap, judged
cell-exactly by :func:`geon.core.zspace.coverage` (a gap and an overlap of the same size are two
issues). Judged only when every application agrees with the operation on the selection;
otherwise ``OperationApplicationAgreement`` reports the disagreement once. The output is
bounded: the overlap sweep stops after ``MAX_OVERLAPS_COUNTED`` pairs, and the issues listed
per selection after ``MAX_ISSUES_PER_CONSTRAINT``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from geon.core.checks.fastpath import (
    cached,
    certified_outputs,
    is_well_formed,
)
from geon.core.checks.messages import (
    MAX_LISTED,
    context,
    issue,
    key_path,
)
from geon.core.checks.structure import Parsed, Sel, parsed
from geon.core.errors import quote
from geon.core.graph import (
    GraphIndex,
    Node,
)
from geon.core.issues import MAX_ISSUES_PER_CONSTRAINT, Issue, not_listed
from geon.core.zspace import ZRange, coverage

__all__ = ["coverage_exact"]


def coverage_exact(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    """ApplicationOutputRangeCoverageIsExact's issues of an operation, cached on its
    applications."""
    deps = tuple(index.applications_of(node.id))
    return cached(index, node, "COV", deps, _coverage_exact_uncached)


def _coverage_exact_uncached(index: GraphIndex, op: Node) -> Iterator[Issue]:
    """Gaps and overlaps of each output selection of ``op`` among its applications'."""
    if not is_well_formed(index, op):
        return
    apps = index.applications_of(op.id)
    if not apps or not all(is_well_formed(index, a) for a in apps):
        return  # none (the operation runs whole), or not judged until they are fixed
    outputs: list[tuple[str, dict[str, tuple[ZRange, ...]] | None, Parsed | None]] = []
    for app_node in apps:
        certified = certified_outputs(index, app_node)
        if certified is not None:
            outputs.append((app_node.id, certified, None))
        else:
            outputs.append((app_node.id, None, parsed(index, app_node)))
    for key, o_sels in parsed(index, op).sides["outputs"].items():
        for pos, o in enumerate(o_sels):
            owners: list[str] = []
            ranges: list[ZRange] = []
            for app_id, certified, p in outputs:
                if certified is not None:  # same keys, tensors and ranks as the operation
                    owners.append(app_id)
                    ranges.append(certified[key][pos])
                    continue
                assert p is not None
                a_sels = p.sides["outputs"].get(key)
                if a_sels is None or len(a_sels) != len(o_sels):
                    break
                a = a_sels[pos]
                if a.tensor_id != o.tensor_id or len(a.range.start) != len(o.range.start):
                    break
                owners.append(app_id)
                ranges.append(a.range)
            else:
                yield from _coverage_issues(op, key, pos, o, owners, ranges)


def _coverage_issues(
    op: Node, key: str, pos: int, o: Sel, owners: list[str], ranges: list[ZRange]
) -> Iterator[Issue]:
    """Gaps and overlaps of one output selection; only called when every application agrees
    with the operation on that selection's key, position, tensor and rank (otherwise
    OperationApplicationAgreement reports the disagreement and coverage is not judged)."""
    name = "ApplicationOutputRangeCoverageIsExact"
    # the gap issue, the overlaps and one summary fit in MAX_ISSUES_PER_CONSTRAINT + 1 issues
    room = MAX_ISSUES_PER_CONSTRAINT
    found = coverage(o.range, ranges, max_listed=room + 1)
    gaps, overlaps = found.gaps, found.overlaps
    if not found.gap_cells and not overlaps:
        return
    if found.gap_cells:
        room -= 1
    unlisted = found.unlisted + max(0, len(overlaps) - room)
    if unlisted > 1 or not found.complete:
        overlaps = overlaps[:room]
    else:
        unlisted = 0
    where = f"outputs {quote(key)}[{pos}]"
    path = f".body.outputs.{key_path(key)}[{pos}].range"
    if found.gap_cells:
        cells = found.gap_cells if found.gaps_exact else f"at least {found.gap_cells}"
        listed = [g.to_json() for g in gaps[:MAX_LISTED]]
        shown = (
            ", ".join(str(g) for g in gaps[:4]) + (" ..." if len(gaps) > 4 else "")
            if gaps
            else "too scattered to list"
        )
        params: dict[str, Any] = {
            "tensorId": o.tensor_id,
            "key": key,
            "position": pos,
            "cells": found.gap_cells,
            "gaps": listed,
        }
        if not found.gaps_exact:
            params["atLeast"] = True
        yield issue(
            name,
            "CoverageError",
            "Application outputs leave a gap",
            f"the applications of operation {quote(op.id)} leave {cells} cells of {where} "
            f"(tensor {quote(o.tensor_id)}) unwritten: {shown}; expected them to cover "
            f"{quote(str(o.range))} exactly",
            (op.id,),
            (context("Output", op.id, path, o.range.to_json()),),
            params,
        )
    for i, j, inter in overlaps:
        yield issue(
            name,
            "CoverageError",
            "Application outputs overlap",
            f"applications {quote(owners[i])} and {quote(owners[j])} of operation "
            f"{quote(op.id)} both write {quote(str(inter))} ({inter.size} cells) of {where} "
            f"(tensor {quote(o.tensor_id)}); expected each cell to be written once",
            (op.id, owners[i], owners[j]),
            (
                context("Output", owners[i], path, ranges[i].to_json()),
                context("Output", owners[j], path, ranges[j].to_json()),
            ),
            {
                "tensorId": o.tensor_id,
                "key": key,
                "position": pos,
                "cells": inter.size,
                "overlap": inter.to_json(),
            },
        )
    if unlisted:
        more = f"at least {unlisted}" if not found.complete else str(unlisted)
        yield not_listed(
            name,
            f"... and {more} more overlaps of {where} (tensor {quote(o.tensor_id)}) of operation "
            f"{quote(op.id)}; fix the ones above first",
            unlisted,
            at_least=not found.complete,
            summaries=("Application outputs overlap",),
            node_ids=(op.id,),
            params={"tensorId": o.tensor_id, "key": key, "position": pos},
        )
