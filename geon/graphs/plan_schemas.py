"""The JSON shapes of a shard plan's cost (``GET /graphs/<id>/plans/<id>/cost``, issue 16) and of
plan against plan (``GET /graphs/<id>/plans/<a>/diff/<b>``, issue 18: docs/reviews.md "Plan
diff"), for the OpenAPI schema and the response check of :mod:`geon.graphs.api`.

Past the bounds of :mod:`geon.graphs.services.plan_jobs` a device row stands for a group of
devices with equal figures (``count``, and ``devices``: the first members), a placement side
counts the devices it does not list (``devicesOmitted``) and the answer counts what each list
left out (``omitted``); the endpoints leave these fields out when they are not set. A cost past
the web process's budget answers :class:`CostPending` (202) until a worker has answered."""

from __future__ import annotations

from typing import Any

from ninja import Schema


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
    count: int | None = None
    devices: list[list[int]] | None = None


class TimeInterval(Schema):
    lower: float
    upper: float


class MemorySummary(Schema):
    capacity: float
    imbalancePercent: float
    overBudget: bool


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


class PlanDiffOut(Schema):
    base: PlanRef
    target: PlanRef
    profile: str
    version: int
    placements: list[PlacementChange]
    collectives: CollectivesDiff
    devices: list[DeviceChange]
    time: TimeChange
    omitted: dict[str, int] | None = None
