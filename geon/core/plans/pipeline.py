"""Pipeline stages of a plan (DESIGN.md §12, issue 33): the plan's ``"pipeline"`` field, checked.

>>> p = read_pipeline({"axis": "pp", "microbatches": 4, "schedule": "1f1b",
...     "stages": [["layers.0"], ["layers.1"]]}, (("pp", 2), ("dp", 2)))
>>> p.stage_count, p.virtual_stages, p.to_json()["stages"]
(2, 1, [['layers.0'], ['layers.1']])
>>> read_pipeline({"axis": "pp", "microbatches": 0, "schedule": "gpipe", "stages": "balanced"},
...     (("pp", 2),))
Traceback (most recent call last):
geon.core.plans.pipeline.PipelineError: pipeline microbatches is "0"; expected an integer from 1 \
to 1024

The shape: ``{"axis": meshAxis, "microbatches": m, "schedule": "gpipe" | "1f1b" | "interleaved",
"virtualStages"?: v, "stages": [[scope, ...], ...] | "balanced"}``. The mesh axis ``axis`` (``p``
devices along it) carries the stages: virtual stage ``s`` (of ``p·v``, in model order) runs on
coordinate ``s mod p`` of it, so with ``v = 1`` stage ``k`` is on coordinate ``k``. The other mesh
axes carry the plan's data and tensor parallelism inside every stage, so no axis mapping, input
placement or spec entry may name the pipeline's axis. ``stages`` lists, per virtual stage, the
``Group`` scopes whose operations it runs (a scope matches itself and the scopes under it:
``layers.1`` holds ``layers.1/attn``, never ``layers.10``), or ``"balanced"``: the cost model cuts
the document's top-level scopes, in run order, into ``p·v`` contiguous stages of the least
largest time (:mod:`geon.core.plans.cost.pipelined`).

``gpipe`` and ``1f1b`` take ``v = 1``; ``interleaved`` takes ``v >= 2`` and a number of
microbatches that is a multiple of ``p`` (Megatron-LM's condition, Narayanan et al. 2021 §2.2;
PyTorch's ``ScheduleInterleaved1F1B`` then runs ``m / p`` rounds of ``p``). Everything is bounded
before any work: at most 1024 microbatches, 16 virtual stages per device, 256 scopes per stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from geon.core.errors import DocumentError, quote
from geon.core.limits import show_int, show_text

__all__ = [
    "MAX_MICROBATCHES",
    "MAX_VIRTUAL_STAGES",
    "SCHEDULES",
    "Pipeline",
    "PipelineError",
    "read_pipeline",
    "scope_matches",
]

SCHEDULES = ("gpipe", "1f1b", "interleaved")
MAX_MICROBATCHES = 1024
MAX_VIRTUAL_STAGES = 16
MAX_SCOPES_PER_STAGE = 256
_MAX_SCOPE_LENGTH = 200
_KEYS = ("axis", "microbatches", "schedule", "virtualStages", "stages")


class PipelineError(DocumentError):
    """A plan's pipeline is malformed (:func:`geon.core.plans.read_plan` says so as a
    :class:`~geon.core.plans.PlanError`)."""


Schedule = Literal["gpipe", "1f1b", "interleaved"]


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A checked pipeline (see the module docstring); ``stages`` is ``None`` for ``balanced``."""

    axis: str
    devices: int
    """``p``: the size of the mesh axis ``axis``."""
    microbatches: int
    schedule: Schedule
    virtual_stages: int = 1
    stages: tuple[tuple[str, ...], ...] | None = None

    @property
    def stage_count(self) -> int:
        """Virtual stages in all: ``p·v``."""
        return self.devices * self.virtual_stages

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "axis": self.axis,
            "microbatches": self.microbatches,
            "schedule": self.schedule,
            "stages": "balanced" if self.stages is None else [list(s) for s in self.stages],
        }
        if self.virtual_stages != 1:
            out["virtualStages"] = self.virtual_stages
        return out


def scope_matches(scope: str, prefix: str) -> bool:
    """Whether ``scope`` is ``prefix`` or lies under it (path components, ``/``-separated).

    >>> scope_matches("layers.1/attn", "layers.1"), scope_matches("layers.10", "layers.1")
    (True, False)
    """
    scope, prefix = scope.strip("/"), prefix.strip("/")
    return scope == prefix or scope.startswith(prefix + "/")


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = show_int(value) if isinstance(value, int) else show_text(str(value))
        raise PipelineError(
            f'pipeline {where} is "{shown}"; expected an integer from {low} to {high}'
        )
    return value


def read_pipeline(data: Any, mesh_axes: tuple[tuple[str, int], ...]) -> Pipeline:
    """The :class:`Pipeline` of a plan's ``"pipeline"`` JSON on a mesh of ``mesh_axes``;
    :class:`PipelineError` naming the field, the bad value and what would be valid."""
    if not isinstance(data, Mapping):
        raise PipelineError(
            f"pipeline {quote(data)} is not valid; expected "
            '{"axis", "microbatches", "schedule", "virtualStages"?, "stages"}'
        )
    unknown = [k for k in data if k not in _KEYS]
    if unknown:
        raise PipelineError(
            f"pipeline has field {quote(unknown[0])}; expected only "
            + ", ".join(quote(k) for k in _KEYS)
        )
    sizes = dict(mesh_axes)
    axis = data.get("axis")
    if axis not in sizes:
        raise PipelineError(
            f"pipeline axis {quote(axis)} is not an axis of the mesh; expected one of ("
            + ", ".join(quote(a) for a in sizes)
            + ")"
        )
    p = sizes[axis]
    m = _int(data.get("microbatches"), "microbatches", 1, MAX_MICROBATCHES)
    schedule = data.get("schedule")
    if schedule not in SCHEDULES:
        raise PipelineError(
            f"pipeline schedule {quote(schedule)} is unknown; expected one of "
            + ", ".join(quote(s) for s in SCHEDULES)
        )
    default_v = 2 if schedule == "interleaved" else 1
    v = _int(data.get("virtualStages", default_v), "virtualStages", 1, MAX_VIRTUAL_STAGES)
    if schedule != "interleaved" and v != 1:
        raise PipelineError(
            f'pipeline virtualStages is "{v}" under schedule "{schedule}"; expected 1 (only '
            '"interleaved" runs several stages per device)'
        )
    if schedule == "interleaved" and (v < 2 or m % p):
        raise PipelineError(
            f'pipeline schedule "interleaved" with virtualStages "{v}" and microbatches "{m}" '
            f"on {p} devices of {quote(axis)}; expected virtualStages >= 2 and microbatches a "
            f"multiple of {p}"
        )
    stages = _stages(data.get("stages"), p * v)
    return Pipeline(str(axis), p, m, schedule, v, stages)


def _stages(value: Any, count: int) -> tuple[tuple[str, ...], ...] | None:
    if value == "balanced":
        return None
    if not isinstance(value, list) or len(value) != count:
        shown = f"a list of {len(value)}" if isinstance(value, list) else quote(value)
        raise PipelineError(
            f'pipeline stages is {shown}; expected "balanced" or a list of {count} stages '
            "(the devices of the pipeline axis times virtualStages), each a list of scopes"
        )
    out = []
    for k, scopes in enumerate(value):
        if (
            not isinstance(scopes, list)
            or not scopes
            or len(scopes) > MAX_SCOPES_PER_STAGE
            or not all(
                isinstance(s, str) and s.strip("/") and len(s) <= _MAX_SCOPE_LENGTH for s in scopes
            )
        ):
            raise PipelineError(
                f"pipeline stage {k} is {quote(scopes)}; expected a list of 1 to "
                f'{MAX_SCOPES_PER_STAGE} Group scopes like "layers.0" (at most '
                f"{_MAX_SCOPE_LENGTH} characters each)"
            )
        out.append(tuple(s.strip("/") for s in scopes))
    return tuple(out)
