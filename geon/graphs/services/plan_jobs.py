"""A plan's cost and plan against plan, bounded (issue 30 finding 7; docs/cost-model.md
"Bounded answers"): at the documented maxima (65,536 devices, ~20,000 Applications) they took
16 s and 39 s in the web process and answered 16 MB.

- **Work estimate**, before anything is built
  (:func:`~geon.graphs.services.plan_trials.plan_work`): the shards the cost model
  will read, the read/write pairs its moving rule compares (quadratic in an operation's
  pieces) and the mesh's devices (a ledger row each). A request whose estimate is past
  ``GEON_PLAN_COST_WEB_MAX_WORK`` is not costed in the web process: it is handed to a worker
  (:mod:`geon.graphs.tasks`) and answered 202 with a ``location`` to poll (as a render is).
- **Cache** per (document version, plan as last saved, profile) — the diff's key names both
  plans — in the ``plan_costs`` cache (:data:`CACHE`): Redis when ``REDIS_URL`` is set, else
  files under ``GEON_DATA_DIR``, so the worker's answer is read by every web process; no
  database row is written. An entry is the answer, a refusal, or a pending job.
- **Summary** (:func:`summarise_cost`, :func:`summarise_diff`): device rows past
  ``GEON_PLAN_COST_DEVICE_ROWS`` are grouped (equal figures: one row with ``count`` and up to
  ``GEON_PLAN_COST_GROUP_MEMBERS`` member ``devices``), at most that many rows listed; the
  per-edge and per-operation lists (collectives, placements) hold at most
  ``GEON_PLAN_COST_LIST_ROWS``; what is left out is counted in ``omitted``. A plan under the
  bounds is answered as before.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import caches

from geon.core.errors import DocumentError, GeonError
from geon.graphs.edits import EditRefused
from geon.graphs.models import Graph, ShardPlan

CACHE = "plan_costs"
"""The Django cache alias that holds answers and pending jobs (see the module docstring)."""

PLAN_COST_TASK = "geon.graphs.plan_cost"
"""The Celery task that costs a plan, or a pair of plans, in the worker."""


# -- the cache ----------------------------------------------------------------------------------


def _plan_key(plan: ShardPlan) -> str:
    return f"{plan.pk}.{plan.updated.timestamp():.6f}"


def cost_key(graph: Graph, version: int, plan: ShardPlan, profile: str) -> str:
    """The cache key of a plan's cost on a version of the graph under a profile."""
    return f"geon:plan-cost:{graph.pk}:{version}:{_plan_key(plan)}:{profile}"


def document_cost_key(graph: Graph, version: int, profile: str) -> str:
    """The cache key of the cost of a version of the graph as it is placed, under a profile."""
    return f"geon:document-cost:{graph.pk}:{version}:{profile}"


def document_diff_key(
    graph: Graph, version: int, plan: ShardPlan, current: str, profile: str
) -> str:
    """The cache key of the current document (``current``: ``before`` or ``after``) against a
    plan on a version of the graph under a profile."""
    return f"geon:document-diff:{graph.pk}:{version}:{_plan_key(plan)}:{current}:{profile}"


def diff_key(graph: Graph, version: int, base: ShardPlan, target: ShardPlan, profile: str) -> str:
    """The cache key of plan against plan on a version of the graph under a profile."""
    return f"geon:plan-diff:{graph.pk}:{version}:{_plan_key(base)}:{_plan_key(target)}:{profile}"


@dataclass(frozen=True)
class Pending:
    """A cost handed to the worker and not answered yet: 202, poll again."""

    since: float
    work: int

    def to_json(self, what: str, location: str) -> dict[str, Any]:
        """The 202 answer: ``what`` is pending at ``location`` (poll it), and why."""
        return {
            "status": "queued",
            "message": f"{what} is past what the web process computes at once (work "
            f"{self.work:,}, more than GEON_PLAN_COST_WEB_MAX_WORK "
            f"{settings.GEON_PLAN_COST_WEB_MAX_WORK:,}); a worker computes it: poll the "
            "location until it answers 200",
            "location": location,
            "work": self.work,
        }


def cached(key: str) -> dict[str, Any] | None:
    """The entry stored under ``key``: ``{"answer": ...}``, ``{"refused": code, "message",
    "status"}`` or ``{"pending": since, "work": n}``; None when there is none."""
    found = caches[CACHE].get(key)
    return found if isinstance(found, dict) else None


def store(key: str, entry: dict[str, Any]) -> None:
    caches[CACHE].set(key, entry, settings.GEON_PLAN_COST_CACHE_SECONDS)


def answer_or_refusal(entry: dict[str, Any]) -> dict[str, Any]:
    """A cached answer; a cached refusal raised again, answered as it was first (the API
    answers an :class:`EditRefused` of these codes 422 with the code)."""
    if "refused" in entry:
        raise EditRefused(entry["refused"], entry["message"])
    answer: dict[str, Any] = entry["answer"]
    return answer


def bounded(
    key: str,
    work: int,
    compute: Callable[[], dict[str, Any]],
    queue: Callable[[], None],
) -> dict[str, Any] | Pending:
    """The answer cached under ``key``; else, for ``work`` within
    ``GEON_PLAN_COST_WEB_MAX_WORK``, ``compute()`` now (and cache it); else the job pending,
    queued (``queue()``) unless one was queued less than ``GEON_PLAN_COST_JOB_RETRY_SECONDS``
    ago. A refusal is cached and raised again."""
    entry = cached(key)
    now = time.time()
    if entry is not None and "pending" not in entry:
        return answer_or_refusal(entry)
    if work <= settings.GEON_PLAN_COST_WEB_MAX_WORK:
        return computed(key, compute)
    if entry is not None and now - entry["pending"] < settings.GEON_PLAN_COST_JOB_RETRY_SECONDS:
        return Pending(entry["pending"], work)
    store(key, {"pending": now, "work": work})
    queue()
    return Pending(now, work)


def computed(key: str, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``compute()``, cached under ``key`` (its refusal too, then raised)."""
    try:
        answer = compute()
    except GeonError as error:
        store(key, refusal(error))
        raise
    store(key, {"answer": answer})
    return answer


def refusal(error: GeonError) -> dict[str, Any]:
    """A refusal as cached: its code as the API answers it (``invalid_edit`` for a plan that
    does not fit the document, ``invalid_document``, ``invalid_request``) and its message."""
    if isinstance(error, EditRefused):
        code = error.reason
    else:
        code = "invalid_document" if isinstance(error, DocumentError) else "invalid_request"
    return {"refused": code, "message": str(error)}


# -- the summary --------------------------------------------------------------------------------


def _figures(row: dict[str, Any], names: Iterable[str]) -> str:
    """A row's figures, less the fields that name its device, as one comparable string."""
    return json.dumps({k: v for k, v in row.items() if k not in names}, sort_keys=True)


def group_rows(
    rows: list[dict[str, Any]],
    member: Callable[[dict[str, Any]], Any],
    figures: Callable[[dict[str, Any]], str],
    order: Callable[[dict[str, Any]], Any],
) -> tuple[list[dict[str, Any]], int]:
    """Rows of equal ``figures`` as one row each (the first's, with ``count`` and up to
    ``GEON_PLAN_COST_GROUP_MEMBERS`` ``devices``, each ``member(row)``), ordered by ``order``
    of the row, at most ``GEON_PLAN_COST_DEVICE_ROWS`` of them; and how many rows the groups
    left out stand for."""
    most = settings.GEON_PLAN_COST_GROUP_MEMBERS
    groups: dict[str, dict[str, Any]] = {}
    for row in rows:
        key = figures(row)
        group = groups.get(key)
        if group is None:
            groups[key] = {**row, "count": 1, "devices": [member(row)]}
            continue
        group["count"] += 1
        if len(group["devices"]) < most:
            group["devices"].append(member(row))
    listed = sorted(groups.values(), key=order)
    kept = listed[: settings.GEON_PLAN_COST_DEVICE_ROWS]
    return kept, sum(g["count"] for g in listed[len(kept) :])


def _first(rows: list[Any], most: int, order: Callable[[Any], Any]) -> tuple[list[Any], int]:
    """At most ``most`` rows, the first by ``order``; and how many were left out."""
    if len(rows) <= most:
        return rows, 0
    return sorted(rows, key=order)[:most], len(rows) - most


def summarise_cost(answer: dict[str, Any]) -> dict[str, Any]:
    """A plan's cost (:func:`geon.graphs.services.plans.plan_cost`) within the bounds (see the
    module docstring): unchanged when it is within them already."""
    rows, lists = settings.GEON_PLAN_COST_DEVICE_ROWS, settings.GEON_PLAN_COST_LIST_ROWS
    out = dict(answer)
    omitted: dict[str, int] = {}
    if len(answer["devices"]) > rows:
        out["devices"], omitted["devices"] = group_rows(
            answer["devices"],
            lambda r: r["coords"],
            lambda r: _figures(r, ("coords",)),
            lambda r: (-r["total"], r["coords"]),
        )
    if len(answer["ledger"]) > rows:
        out["ledger"], omitted["ledger"] = group_rows(
            answer["ledger"],
            lambda r: r["coords"],
            lambda r: _figures(r, ("coords",)),
            lambda r: (-r["peakBytes"], -(r["computeSeconds"] + r["commSeconds"]), r["coords"]),
        )
    out["transfers"], omitted["transfers"] = _first(
        answer["transfers"], rows, lambda m: (-m["bytes"], m["source"], m["target"])
    )
    out["collectives"], omitted["collectives"] = _first(
        answer["collectives"], lists, lambda c: -c["seconds"]
    )
    if "placements" in answer:  # split operations first: the ones a comparison reads
        out["placements"], omitted["placements"] = _first(
            answer["placements"], lists, lambda p: -p["parts"]
        )
    return _with_omitted(out, omitted)


def summarise_diff(answer: dict[str, Any]) -> dict[str, Any]:
    """Plan against plan (:func:`geon.graphs.services.plan_diff.diff_plans`) within the bounds
    (see the module docstring): unchanged when it is within them already. A placement side
    lists at most ``GEON_PLAN_COST_GROUP_MEMBERS`` devices, and counts the others in
    ``devicesOmitted``."""
    rows, lists = settings.GEON_PLAN_COST_DEVICE_ROWS, settings.GEON_PLAN_COST_LIST_ROWS
    out = dict(answer)
    omitted: dict[str, int] = {}
    if len(answer["devices"]) > rows:
        out["devices"], omitted["devices"] = group_rows(
            answer["devices"], lambda r: r["device"], _device_change_figures, _change_order
        )
    placements, omitted["placements"] = _first(answer["placements"], lists, lambda p: 0)
    out["placements"] = [_bounded_placement(p) for p in placements]
    collectives = answer["collectives"]
    kept: dict[str, list[dict[str, Any]]] = {}
    for name, order in (
        ("added", lambda c: -c["seconds"]),
        ("removed", lambda c: -c["seconds"]),
        ("changed", lambda c: -abs(c["secondsDelta"])),
    ):
        kept[name], omitted[f"collectives.{name}"] = _first(collectives[name], lists, order)
    out["collectives"] = kept
    return _with_omitted(out, omitted)


def _device_change_figures(row: dict[str, Any]) -> str:
    sides = {
        side: None if row[side] is None else {k: v for k, v in row[side].items() if k != "coords"}
        for side in ("before", "after")
    }
    return json.dumps([sides, row["peakBytesDelta"], row["secondsDelta"]], sort_keys=True)


def _change_order(row: dict[str, Any]) -> tuple[float, float]:
    return (-abs(row["secondsDelta"]), -abs(row["peakBytesDelta"]))


def _bounded_placement(change: dict[str, Any]) -> dict[str, Any]:
    most = settings.GEON_PLAN_COST_GROUP_MEMBERS
    out = dict(change)
    for side in ("before", "after"):
        found = change[side]
        if found is not None and len(found["devices"]) > most:
            out[side] = {
                **found,
                "devices": found["devices"][:most],
                "devicesOmitted": len(found["devices"]) - most,
            }
    return out


def _with_omitted(out: dict[str, Any], omitted: dict[str, int]) -> dict[str, Any]:
    """``out`` with ``omitted`` (what each list left out) when anything was grouped or left
    out; a list that was grouped says so even when every group is listed."""
    grouped = [name for name in ("devices", "ledger") if name in omitted]
    left = {name: n for name, n in omitted.items() if n or name in grouped}
    if left:
        out["omitted"] = left
    return out
