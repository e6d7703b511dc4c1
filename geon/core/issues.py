"""Issues: what the checker reports, one record per problem found.

>>> i = Issue(constraint="AxisDeclarations", type="AxisError", summary="Axis length is invalid",
...           message='axis "H" has length 0; expected an integer >= 1 or null', node_ids=("n1",))
>>> i.to_json()["nodeIds"]
['n1']

A check's output is bounded, whatever the document: at most :data:`MAX_ISSUES_PER_CONSTRAINT`
issues per constraint and node, then one summary issue that stands for the rest
(:func:`bound_node_issues`), and at most :data:`MAX_ISSUES_PER_CHECK` issues per check, then one
summary per constraint (:func:`bound_check_issues`). A summary has the constraint of the issues
it stands for, their most serious severity, the type ``IssuesNotListed`` and
``params["notListed"]`` = how many it stands for (``params["atLeast"]`` when that is a lower
bound: a constraint that stopped counting, as coverage does after
``MAX_OVERLAPS_COUNTED`` overlaps).

>>> many = [Issue("C", "T", "Thing is wrong", f"thing {k} is wrong", node_ids=("n",))
...         for k in range(MAX_ISSUES_PER_CONSTRAINT + 5)]
>>> bounded = bound_node_issues("C", "n", many)
>>> len(bounded), bounded[-1].message
(21, 'node "n": ... and 5 more C issues ("Thing is wrong"); fix the ones above first')
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from geon.core.index import GraphIndex
    from geon.core.nodes import Node

Severity = Literal["error", "warning", "info"]

MAX_ISSUES_PER_CONSTRAINT = 20
"""At most this many issues of one constraint are listed per node; one summary issue stands
for the rest (a single extra issue is listed as it is: a summary would be no shorter)."""

MAX_ISSUES_PER_CHECK = 1000
"""At most this many issues are listed per check (document order); the rest are summarised
by one issue per constraint. With the per-node bound, a check's answer stays a few hundred KB
whatever the document holds."""

NOT_LISTED = "IssuesNotListed"
"""The ``type`` of a summary issue: it stands for ``params["notListed"]`` issues not listed."""

_SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True, slots=True)
class Context:
    """A place in the document that explains an issue: a name, a JSON path and the data there."""

    name: str
    jsonpath: str
    data: Any = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "jsonpath": self.jsonpath, "data": self.data}


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem found by one constraint; serialises to the JSON shape of DESIGN.md §5."""

    constraint: str
    type: str
    summary: str
    message: str
    severity: Severity = "error"
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)
    node_ids: tuple[str, ...] = ()
    contexts: tuple[Context, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "constraint": self.constraint,
            "type": self.type,
            "severity": self.severity,
            "summary": self.summary,
            "message": self.message,
            "params": dict(self.params),
            "nodeIds": list(self.node_ids),
            "contexts": [c.to_json() for c in self.contexts],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Issue:
        return cls(
            constraint=data["constraint"],
            type=data["type"],
            severity=data.get("severity", "error"),
            summary=data["summary"],
            message=data["message"],
            params=dict(data.get("params", {})),
            node_ids=tuple(data.get("nodeIds", ())),
            contexts=tuple(
                Context(c["name"], c["jsonpath"], c.get("data")) for c in data.get("contexts", ())
            ),
        )


@dataclass(frozen=True, slots=True)
class Constraint:
    """A named rule checked node by node.

    ``check(index, node)`` yields the issues of one node whose type is in ``node_types``. It may
    read only that node, the nodes it references directly, and the graph's Axis declarations
    (through ``index``), so that the incremental checker knows what an edit can affect.
    """

    name: str
    node_types: frozenset[str]
    check: Callable[[GraphIndex, Node], Iterable[Issue]]


def small(value: Any) -> Any:
    """``value`` for an issue's context, or a short stand-in when it is large."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)[:200]
    return value if len(text) <= 400 else text[:200] + "..."


def stands_for(issue: Issue) -> tuple[int, bool]:
    """How many issues ``issue`` stands for (1, or a summary's count) and whether that count is
    only a lower bound."""
    if issue.type != NOT_LISTED:
        return 1, False
    return int(issue.params.get("notListed", 1)), bool(issue.params.get("atLeast", False))


class _Tally:
    """What a summary needs to know about the issues it stands for, counted as they stream by
    (so that the issues need not be kept)."""

    def __init__(self) -> None:
        self.count = 0
        self.at_least = False
        self.severity: Severity = "info"
        self.summaries: list[str] = []
        self.first_node: str | None = None

    def add(self, issue: Issue) -> None:
        count, at_least = stands_for(issue)
        self.count += count
        self.at_least = self.at_least or at_least
        if _SEVERITY_RANK[issue.severity] > _SEVERITY_RANK[self.severity]:
            self.severity = issue.severity
        shown = issue.params.get("summaries", [issue.summary])
        for text in shown if issue.type == NOT_LISTED else [issue.summary]:
            if text not in self.summaries and len(self.summaries) < 3:
                self.summaries.append(text)
        if self.first_node is None and issue.node_ids:
            self.first_node = issue.node_ids[0]

    def summary(self, constraint: str, where: str, node_ids: tuple[str, ...]) -> Issue:
        """One issue standing for everything added."""
        kinds = ", ".join(f'"{s}"' for s in self.summaries)
        more = f"at least {self.count}" if self.at_least else str(self.count)
        extra = {"firstNodeId": self.first_node} if not node_ids and self.first_node else {}
        return not_listed(
            constraint,
            f"{where}... and {more} more {constraint} issues ({kinds}); fix the ones above first",
            self.count,
            at_least=self.at_least,
            severity=self.severity,
            summaries=self.summaries,
            node_ids=node_ids,
            params=extra,
        )


def not_listed(
    constraint: str,
    message: str,
    count: int,
    *,
    at_least: bool = False,
    severity: Severity = "error",
    summaries: Sequence[str] = (),
    node_ids: tuple[str, ...] = (),
    params: dict[str, Any] | None = None,
) -> Issue:
    """A summary issue standing for ``count`` issues of ``constraint`` that are not listed
    (``at_least``: maybe more); ``summaries`` are theirs, for a client to show."""
    found: dict[str, Any] = {"notListed": count, "summaries": list(summaries)}
    if at_least:
        found["atLeast"] = True
    found.update(params or {})
    return Issue(
        constraint,
        NOT_LISTED,
        "More issues not listed",
        message,
        severity=severity,
        params=found,
        node_ids=node_ids,
    )


def bound_node_issues(
    constraint: str,
    node_id: str,
    found: Iterable[Issue],
    limit: int = MAX_ISSUES_PER_CONSTRAINT,
) -> Sequence[Issue]:
    """The first ``limit`` issues of ``found`` (one constraint's issues on one node), then one
    summary of the rest, counted without being kept. ``found`` may be a lazy iterator."""
    if isinstance(found, (tuple, list)) and len(found) <= limit + 1:
        return found
    it = iter(found)
    listed = list(itertools.islice(it, limit))
    rest = list(itertools.islice(it, 2))
    if len(rest) < 2:
        return listed + rest
    tally = _Tally()
    for issue in itertools.chain(rest, it):
        tally.add(issue)
    return [*listed, tally.summary(constraint, f'node "{node_id}": ', (node_id,))]


def bound_check_issues(issues: list[Issue], limit: int = MAX_ISSUES_PER_CHECK) -> list[Issue]:
    """The first ``limit`` of a check's ``issues``, then per constraint (in order of first
    appearance) one summary of the rest, or the one issue left of it."""
    if len(issues) <= limit + 1:
        return issues
    groups: dict[str, list[Issue]] = {}
    for issue in issues[limit:]:
        groups.setdefault(issue.constraint, []).append(issue)
    out = issues[:limit]
    for constraint, rest in groups.items():
        if len(rest) == 1:
            out.append(rest[0])
            continue
        tally = _Tally()
        for issue in rest:
            tally.add(issue)
        out.append(tally.summary(constraint, "document: ", ()))
    return out
