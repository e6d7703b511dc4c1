"""Plan search (DESIGN.md §12, issue 33): the plans worth reviewing on a mesh, ranked by the cost
model.

**Candidates.** A logical axis is worth mapping to a mesh axis of ``n`` devices when it is an
index axis of some operation (a dual level ``D+1`` read as ``D``) and its length is a multiple
of ``n`` (at least ``n``). The search costs, in this order:

1. every single mapping ``{axis: meshAxis}`` on the largest mesh axis (but a pipeline's
   ``pp``), which ranks the axes for every mesh axis;
2. combinations: per mesh axis, nothing, one of its ``BEAM`` best single axes, or one of the
   ``BEAM`` best pairs of axes no operation has both of (Megatron maps heads and the MLP width
   to one axis; a pair that shares an operation would split it twice), across the mesh axes (no
   logical axis twice), the best options first.

Each mapping is costed with the graph inputs replicated; then the ``SHARDED_INPUTS`` best again
with the inputs the mapping names an axis of sharded the same way (``inputs``: ``{"over":
...}``: each device stores its part of the weights). On a mesh with a ``pp`` axis every
candidate is a pipeline (``1f1b``, ``stages: "balanced"``, ``4·p`` microbatches). A mapping the
document refuses (an operation split twice
over one mesh axis) is skipped.

**Ranking.** Each is costed (:func:`~geon.core.plans.cost.report.cost_report`); it ``fits`` when
no device's peak is over the profile's memory. The candidates are sorted fitting first, then by
step time (``time.upper``, the no-overlap end: a plan is not credited with overlap it may not
get), then by fewer mapped axes; ``best`` is the first when it fits, else ``None``: what does
not fit is never best. ``why`` names the dominant term: ``memory`` when it does not fit, else
the larger of the busiest device's compute and the costliest collective (``all-reduce of
"y"``), summed over its edges.

**Bounds.** The search stops when ``budget`` seconds have passed (the candidates costed so far
are ranked; ``complete`` is then false) or after :data:`MAX_CANDIDATES`; ``progress(done,
seconds)`` is called after each candidate.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from typing import Any

from geon.core.errors import GeonError
from geon.core.graph import INDEX_AXES, OPERATION, Graph
from geon.core.plans.cost.profiles import Profile
from geon.core.plans.cost.report import cost_report
from geon.core.plans.inputs import graph_inputs
from geon.core.plans.model import read_plan
from geon.core.plans.write import apply_plan

__all__ = ["BEAM", "MAX_CANDIDATES", "SHARDED_INPUTS", "relevant_axes", "search_plans"]

MAX_CANDIDATES = 2000
BEAM = 2
SHARDED_INPUTS = 5
_AXIS = "urn:geon:2026-11:node_types.jsd#/nodes/Axis"
_AXES = "urn:geon:2026-11:tag_types.jsd#/tags/TensorAxes"


def _base(axis: str) -> str:
    """An axis name without its dual level (``D+1`` -> ``D``).

    >>> _base("D+1"), _base("F-1"), _base("d4")
    ('D', 'F', 'd4')
    """
    for sign in "+-":
        head, _, tail = axis.rpartition(sign)
        if head and tail.isdigit():
            return head
    return axis


def relevant_axes(graph: Graph, size: int) -> list[str]:
    """The logical axes worth mapping to a mesh axis of ``size`` devices (see the module
    docstring), in document order."""
    lengths = {n.body.get("name"): n.body.get("length") for n in graph.of_type(_AXIS)}
    found: list[str] = []
    for op in graph.of_type(OPERATION):
        tag = (op.tags or {}).get(INDEX_AXES)
        axes = tag.get("axes") if isinstance(tag, dict) else None
        for axis in axes if isinstance(axes, list) else []:
            name = _base(axis) if isinstance(axis, str) else ""
            length = lengths.get(name)
            if (
                name not in found
                and isinstance(length, int)
                and length >= size
                and length % size == 0
            ):
                found.append(name)
    return found


def _input_axes(graph: Graph) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for n in graph_inputs(graph):
        tag = (n.tags or {}).get(_AXES)
        axes = tag.get("axes") if isinstance(tag, dict) else None
        if n.label and isinstance(axes, list):
            out[n.label] = [_base(a) for a in axes if isinstance(a, str)]
    return out


def _variants(
    inputs: dict[str, list[str]],
    mapping: dict[str, str],
    mesh: dict[str, int],
    pp: str | None,
    *,
    sharded_inputs: bool,
) -> list[dict[str, Any]]:
    """A mapping's candidate plan: its inputs replicated, or sharded as the mapping says (none
    when it names no axis of theirs); see the module docstring."""
    name = ", ".join(f"{a}→{m}" for a, m in mapping.items())
    base: dict[str, Any] = {
        "name": name[:100],
        "mesh": {"axes": dict(mesh)},
        "axisMapping": mapping,
    }
    out: list[dict[str, Any]] = [] if sharded_inputs else [base]
    sharded = {
        label: {"over": {a: mapping[a] for a in dict.fromkeys(found) if a in mapping}}
        for label, found in inputs.items()
        if any(a in mapping for a in found)
    }
    if sharded and sharded_inputs:
        out.append({**base, "name": (name + " (inputs sharded)")[:100], "inputs": sharded})
    if pp is None:
        return out
    pipeline = {"axis": pp, "microbatches": 4 * mesh[pp], "schedule": "1f1b", "stages": "balanced"}
    return [{**p, "name": (p["name"] + " + pp 1f1b")[:100], "pipeline": pipeline} for p in out]


def _why(report: dict[str, Any], graph: Graph) -> str:
    if report["memory"]["overBudget"]:
        peak = max((d["peakBytes"] for d in report["devices"]), default=0)
        return f"memory: a device holds {peak:,} bytes, over {report['memory']['capacity']:,.0f}"
    compute = max((d["computeSeconds"] for d in report["devices"]), default=0.0)
    per: dict[tuple[str, str], float] = {}
    for c in report["collectives"]:
        key = (c["kind"], c["tensor"])
        per[key] = per.get(key, 0.0) + c["seconds"]
    if per:
        (kind, tensor), seconds = max(per.items(), key=lambda kv: kv[1])
        if seconds > compute:
            node = graph.get(tensor)
            label = node.label if node is not None and node.label else "a tensor"
            return f'{kind} of "{label}"'
    return "compute"


class _Search:
    """The state of one search: candidates costed, their rank keys, the clock."""

    def __init__(self, graph: Graph, mesh: dict[str, int], profile: Profile, budget: float):
        self.graph, self.mesh, self.profile = graph, mesh, profile
        self.deadline = time.perf_counter() + budget
        self.start = time.perf_counter()
        self.inputs = _input_axes(graph)
        self.pp = "pp" if mesh.get("pp", 1) > 1 else None
        self.rows: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.seen: set[tuple[tuple[str, str], ...]] = set()
        self.mappings: list[dict[str, str]] = []
        self.tried = 0
        self.complete = True

    def out_of_time(self) -> bool:
        if self.tried >= MAX_CANDIDATES or time.perf_counter() > self.deadline:
            self.complete = False
            return True
        return False

    def cost(
        self, mapping: dict[str, str], *, sharded_inputs: bool = False
    ) -> list[tuple[Any, ...]]:
        """Cost a mapping's variant; its rank key (none when refused, seen or out of time)."""
        key = (*sorted(mapping.items()), ("", str(sharded_inputs)))
        if key in self.seen:
            return []
        self.seen.add(key)
        keys = []
        variants = _variants(
            self.inputs, mapping, self.mesh, self.pp, sharded_inputs=sharded_inputs
        )
        for data in variants:
            if self.out_of_time():
                break
            self.tried += 1
            try:
                plan = read_plan(data)
                report = cost_report(apply_plan(self.graph, plan), self.profile, plan=plan)
            except GeonError:
                continue
            fits = not report["memory"]["overBudget"]
            seconds = report["time"]["upper"]
            entry: dict[str, Any] = {
                "name": plan.name,
                "axisMapping": dict(plan.axis_mapping),
                "seconds": seconds,
                "fits": fits,
                "why": _why(report, self.graph),
                "peakBytes": max((d["peakBytes"] for d in report["devices"]), default=0),
                "plan": plan.to_json(),
            }
            if plan.pipeline is not None:
                entry["bubble"] = report["pipeline"]["bubble"]
                entry["pipeline"] = report["pipeline"]
            rank = (not fits, seconds, len(mapping), len(self.rows))
            self.rows.append((rank, entry))
            self.mappings.append(mapping)
            keys.append(rank)
        return keys


def _together(graph: Graph) -> set[frozenset[str]]:
    """The pairs of logical axes some operation has both of among its index axes (mapped to
    one mesh axis, that operation would be split twice over it)."""
    out: set[frozenset[str]] = set()
    for op in graph.of_type(OPERATION):
        tag = (op.tags or {}).get(INDEX_AXES)
        axes = tag.get("axes") if isinstance(tag, dict) else None
        names = (
            sorted({_base(a) for a in axes if isinstance(a, str)}) if isinstance(axes, list) else []
        )
        out.update(frozenset(p) for p in itertools.combinations(names, 2))
    return out


def _pairs_first(options: list[list[dict[str, str]]]) -> Iterator[tuple[dict[str, str], ...]]:
    """The product of each mesh axis's options, fewest option indices (best singles) first."""
    combos = list(itertools.product(*(range(len(o)) for o in options)))
    combos.sort(key=lambda c: (sum(c), c))
    for combo in combos:
        yield tuple(options[m][i] for m, i in enumerate(combo))


def search_plans(
    graph: Graph,
    mesh_axes: dict[str, int],
    profile: Profile,
    *,
    budget: float = 10.0,
    progress: Callable[[int, float], None] | None = None,
) -> dict[str, Any]:
    """``{"best", "candidates", "searched", "complete"}`` (see the module docstring)."""
    search = _Search(graph, mesh_axes, profile, budget)
    mesh = [a for a in mesh_axes if a != search.pp and mesh_axes[a] > 1]
    # the singles are costed on the largest mesh axis; its ranking orders the others' too
    lead = max(mesh, key=lambda m: mesh_axes[m], default=None)
    scored: list[tuple[tuple[Any, ...], str]] = []
    for axis in relevant_axes(graph, mesh_axes[lead]) if lead is not None else []:
        keys = search.cost({axis: str(lead)})
        if keys:
            scored.append((min(keys), axis))
        if progress is not None:
            progress(search.tried, time.perf_counter() - search.start)
        if search.out_of_time():
            break
    order = [axis for _, axis in sorted(scored)]
    ranking: dict[str, list[str]] = {}
    for m in mesh:
        fits_m = relevant_axes(graph, mesh_axes[m])
        ranking[m] = [a for a in order if a in fits_m] + (
            [a for a in fits_m if a not in order] if m != lead else []
        )
    together = _together(graph)
    options: list[list[dict[str, str]]] = []
    for m in mesh:
        ranked = ranking[m]
        pairs = [
            {a: m, b: m}
            for (i, a), (j, b) in sorted(
                itertools.combinations(enumerate(ranked), 2), key=lambda p: p[0][0] + p[1][0]
            )
            if frozenset((a, b)) not in together
        ][:BEAM]
        options.append([{}, *pairs, *({a: m} for a in ranked[:BEAM])])
    for combo in _pairs_first(options):
        if search.out_of_time():
            break
        mapping: dict[str, str] = {}
        for part in combo:
            mapping.update(part)
        if not mapping or sum(map(len, combo)) != len(mapping):  # an axis on two mesh axes
            continue
        search.cost(mapping)
        if progress is not None:
            progress(search.tried, time.perf_counter() - search.start)
    best_rows = sorted(range(len(search.rows)), key=lambda n: search.rows[n][0])
    for n in best_rows[:SHARDED_INPUTS]:
        if search.out_of_time():
            break
        search.cost(search.mappings[n], sharded_inputs=True)
        if progress is not None:
            progress(search.tried, time.perf_counter() - search.start)
    search.rows.sort(key=lambda r: r[0])
    candidates = [e for _, e in search.rows]
    best = candidates[0] if candidates and candidates[0]["fits"] else None
    return {
        "best": best,
        "candidates": candidates,
        "searched": len(candidates),
        "complete": search.complete,
    }
