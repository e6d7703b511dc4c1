"""Issues: what the checker reports, one record per problem found.

>>> i = Issue(constraint="AxisDeclarations", type="AxisError", summary="Axis length is invalid",
...           message='axis "H" has length 0; expected an integer >= 1 or null', node_ids=("n1",))
>>> i.to_json()["nodeIds"]
['n1']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from geon.core.graph import GraphIndex, Node

Severity = Literal["error", "warning", "info"]


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
