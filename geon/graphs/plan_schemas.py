"""The JSON shapes of a shard plan (``/graphs/<id>/plans``: what is sent and answered), of its
cost (``GET /graphs/<id>/plans/<id>/cost``, issue 16; with a pipeline, issue 33) and of plan
against plan (``GET /graphs/<id>/plans/<a>/diff/<b>``, issue 18: docs/reviews.md "Plan diff"),
for the OpenAPI schema and the response check of :mod:`geon.graphs.api`.

A plan's fields are checked by :func:`geon.core.plans.read_plan`, whose refusals name the bad
entry and what is valid; here they are only JSON. ``pipeline`` is ``null`` (stored ``{}``) for
a plan without pipeline stages; sending ``null`` or ``{}`` in a change removes them.

Past the bounds of :mod:`geon.graphs.services.plan_jobs` a device row stands for a group of
devices with equal figures (``count``, and ``devices``: the first members), a placement side
counts the devices it does not list (``devicesOmitted``) and the answer counts what each list
left out (``omitted``); the endpoints leave these fields out when they are not set. A cost past
the web process's budget answers :class:`CostPending` (202) until a worker has answered."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from ninja import Schema
from pydantic import Field

from geon.core.limits import INT64_MAX, INT64_MIN

#: Any integer the database can hold (int64); the plan's check names what else is wrong with it.
Int64 = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]


class MeshIn(Schema):
    name: str = ""
    axes: dict[str, Int64]


class PlanIn(Schema):
    name: str
    mesh: MeshIn
    axisMapping: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    spec: dict[str, dict[str, Any]] = {}
    # {"axis", "microbatches", "schedule", "virtualStages"?, "stages"} (DESIGN.md §12)
    pipeline: dict[str, Any] | None = None


class PlanPatch(Schema):
    name: str | None = None
    mesh: MeshIn | None = None
    axisMapping: dict[str, Any] | None = None
    inputs: dict[str, Any] | None = None
    spec: dict[str, dict[str, Any]] | None = None
    pipeline: dict[str, Any] | None = None  # left out: kept; null or {}: removed


class PlanOut(Schema):
    id: int
    name: str
    mesh: dict[str, Any]
    axisMapping: dict[str, Any]
    inputs: dict[str, Any]
    spec: dict[str, Any]
    pipeline: dict[str, Any] | None = None
    applications: dict[str, Any]
    created: datetime
    updated: datetime


class PlanList(Schema):
    plans: list[PlanOut]


class DeviceCost(Schema):
    mesh: str
    coords: list[int]
    inputs: int
    outputs: int
    temporaries: int
    total: int
    # a group of devices with these figures: how many, and the first ones' coords
    count: int | None = None
    devices: list[list[int]] | None = None


class TransferCost(Schema):
    source: list[int]
    target: list[int]
    bytes: int


class CollectiveCost(Schema):
    kind: str
    tensor: str
    producer: str
    consumer: str
    tensorLabel: str
    producerLabel: str
    consumerLabel: str
    meshAxes: list[str]
    devices: int
    groups: int = 1
    bytes: int
    bytesPerDevice: int = 0
    seconds: float
    # a pipeline's send between stages: its microbatch, [from, to] stages and "pass" (forward,
    # or backward for its gradient; a Python keyword, so named by alias: the endpoints that
    # answer it dump by alias)
    microbatch: int | None = None
    stages: list[int] | None = None
    pass_: str | None = Field(default=None, alias="pass")


class DeviceMemoryKinds(Schema):
    """A device's peak by kind (geon.core.plans.cost.ledger, DESIGN.md §9)."""

    parameters: int
    gradients: int
    optimizer: int
    activations: int
    temporaries: int
    communication: int


class DeviceLedger(Schema):
    mesh: str
    coords: list[int]
    flops: float
    computeSeconds: float
    commSeconds: float
    peakBytes: int
    memory: DeviceMemoryKinds
    overBudget: bool
    stage: int | None = None  # a pipelined plan's device: its coordinate on the pipeline axis
    count: int | None = None
    devices: list[list[int]] | None = None


class TimeInterval(Schema):
    lower: float
    upper: float


class MemorySummary(Schema):
    capacity: float
    imbalancePercent: float
    overBudget: bool


class ScheduleBox(Schema):
    """One action of a pipeline's schedule in time (geon.core.plans.cost.schedules)."""

    device: int
    stage: int
    kind: str
    microbatch: int
    start: float
    end: float


class _PipelineShape(Schema):
    """The fields a pipeline's cost and a plan diff's side share (their docstrings say them)."""

    axis: str
    schedule: str
    stages: int
    devices: int
    virtualStages: int
    microbatches: int
    bubble: float


class PipelineCost(_PipelineShape):
    """A pipelined plan's step (geon.core.plans.cost.pipelined; ``geon cost``'s ``pipeline``):
    ``stages`` is their count, ``bubble`` the idle fraction of the step."""

    bubbleOverBusy: float
    stageSeconds: list[float]
    forwardSeconds: list[float]
    backwardSeconds: list[float]
    sendSeconds: list[float]
    inFlight: list[float]
    grid: list[ScheduleBox]
    seconds: float


class OperationPlacement(Schema):
    """How one operation runs as placed (issue 35): the parts of each index dim it is cut in
    (``split``), the mesh axis each is spread over (``over``; null: whole, or no one mesh axis
    decides the cut), and the pieces it runs in (``parts``; 1: whole)."""

    operation: str
    label: str
    split: dict[str, int]
    over: dict[str, str] | None
    parts: int


class PlanCost(Schema):
    version: int
    devices: list[DeviceCost]
    transfers: list[TransferCost]
    transferBytes: int
    profile: dict[str, Any]
    collectives: list[CollectiveCost]
    ledger: list[DeviceLedger]
    time: TimeInterval
    memory: MemorySummary
    pipeline: PipelineCost | None = None  # a plan with pipeline stages only
    # each operation as placed, in document order (split ones first past the list bound)
    placements: list[OperationPlacement] | None = None
    # rows each list left out ("devices" and "ledger": devices in groups not listed)
    omitted: dict[str, int] | None = None


class CostPending(Schema):
    status: str
    message: str
    location: str
    work: int


class PlanRef(Schema):
    id: int | None  # None: the current document (GET graphs/<id>/cost/diff/<plan>)
    name: str


class PlacementSide(Schema):
    split: dict[str, int]
    meshAxes: dict[str, str]
    mesh: str | None
    devices: list[list[int]]
    devicesOmitted: int | None = None


class PlacementChange(Schema):
    operation: str
    operationLabel: str
    before: PlacementSide | None
    after: PlacementSide | None


class CollectiveChange(Schema):
    before: CollectiveCost
    after: CollectiveCost
    bytesDelta: int
    secondsDelta: float


class CollectivesDiff(Schema):
    added: list[CollectiveCost]
    removed: list[CollectiveCost]
    changed: list[CollectiveChange]


class DeviceSide(Schema):
    mesh: str
    coords: list[int]
    peakBytes: int
    computeSeconds: float
    commSeconds: float
    seconds: float


class DeviceChange(Schema):
    device: str
    before: DeviceSide | None
    after: DeviceSide | None
    peakBytesDelta: int
    secondsDelta: float
    count: int | None = None
    devices: list[str] | None = None


class TimeChange(Schema):
    before: TimeInterval
    after: TimeInterval
    delta: TimeInterval


class PipelineSide(_PipelineShape):
    """One plan's pipeline stages in a plan diff (geon.core.plans.diff): the cost's schedule,
    stage count, microbatches and bubble (the idle fraction of its step)."""

    balanced: bool


class PipelineChange(Schema):
    """``a`` (before) and ``b`` (after), null for a plan without stages; ``changed``: the fields
    that differ; ``bubbleDelta``: ``b``'s bubble less ``a``'s (0 for a side without stages)."""

    a: PipelineSide | None
    b: PipelineSide | None
    changed: list[str]
    bubbleDelta: float


class PlanDiffOut(Schema):
    base: PlanRef
    target: PlanRef
    profile: str
    version: int
    placements: list[PlacementChange]
    collectives: CollectivesDiff
    devices: list[DeviceChange]
    time: TimeChange
    pipeline: PipelineChange | None = None  # either plan with pipeline stages only
    omitted: dict[str, int] | None = None
