"""The cost model of a shard plan (DESIGN.md §4 "Shard plans"): the bytes each device reads and
writes, the bytes that move between devices, and the memory each device holds.

>>> transfers(Graph()), device_memory(Graph())
([], {})

A device is ``(mesh id, coords)``, where placed Applications (those with a ``Placement`` tag,
written by :func:`geon.core.sharding.shard`) run.

- :func:`device_bytes`: per device, the bytes its Applications read (``inputs``) and write
  (``outputs``).
- :func:`regions_that_move`: **the rule of which regions move** (one implementation, also what
  :mod:`geon.core.costmodel.collectives` classifies): a consumer shard's region read of a tensor
  moves when no shard on its own device wrote all of it; then each region written by a shard of
  another operation on another device, intersected with the region read, moves from the
  producer's device to the consumer's. Writers are found by bisection along dim 0 when they
  split a tensor by rows.
- :func:`transfers`: that rule over the placed Applications: per edge, the bytes that must move.
  Tensors no Application writes (graph inputs, or the results of operations that run whole) have
  no producing device here and move nothing (the cost model counts the inputs a plan placed).
  Two consumers on one device that read the same region each count it (a runtime may share it).
  :func:`transfer_bytes` sums them per (source, target) pair.
- :func:`device_memory`: per device, bytes resident while its shards run: ``outputs`` — the
  distinct cells its Applications write; ``inputs`` — the distinct cells they read that the
  device does not write itself (received or placed there); ``temporaries`` — the zero-filled
  buffers of padded reads (an input whose projection reaches past its tensor is read into a
  buffer of the projection's full shape, as the executor does).

Tensors of unknown dtype count 0 bytes per element, and nodes that are malformed (see the
checker's issues) are left out.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Generic, NamedTuple, Protocol, TypeVar

from geon.core.checks import is_well_formed
from geon.core.dtypes import DTYPE_BYTES
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION, IPF_INDEX, IPF_SIGNATURE, PLACEMENT, TENSOR, Graph, Node
from geon.core.zspace import IPF, ZRange, parse_range, union_size

__all__ = [
    "Box",
    "Device",
    "DeviceMemory",
    "PlacedShard",
    "Transfer",
    "Written",
    "box_size",
    "contains",
    "device_bytes",
    "device_memory",
    "index_range_of",
    "intersect",
    "regions_that_move",
    "transfer_bytes",
    "transfers",
    "writers_of",
]


def index_range_of(node: Node) -> ZRange | None:
    """The ``IPFIndex`` of a node as a range (None when it has none or it is malformed)."""
    return parse_range(node.tags.get(IPF_INDEX)) if node.tags else None


def device_bytes(graph: Graph) -> dict[tuple[str, tuple[int, ...]], dict[str, int]]:
    """Bytes read (``inputs``) and written (``outputs``) per device by placed Applications.

    Keys are ``(mesh id, coords)``; tensors of unknown dtype count 0 bytes per element.
    """
    out: dict[tuple[str, tuple[int, ...]], dict[str, int]] = {}
    index = graph.index
    for app in graph.of_type(APPLICATION):
        tag = app.tags.get(PLACEMENT) if app.tags else None
        if not isinstance(tag, dict) or not is_well_formed(index, app):
            continue
        key = (tag["mesh"], tuple(int(c) for c in tag["coords"]))
        acc = out.setdefault(key, {"inputs": 0, "outputs": 0})
        for side in ("inputs", "outputs"):
            for items in (app.body.get(side) or {}).values():
                for item in items:
                    r = parse_range(item["range"])
                    if r is not None:
                        acc[side] += r.size * _element_bytes(graph, item["tensorId"])
    return out


Device = tuple[str, tuple[int, ...]]
"""A device of a plan: ``(mesh id, coords)``."""

Box = tuple[tuple[int, ...], tuple[int, ...]]
"""A region as ``(start, end)`` tuples (inclusive start, exclusive end): plain tuples, because a
plan of thousands of Applications is costed on every request."""


def box_size(box: Box) -> int:
    """The cells of a box.

    >>> box_size(((0, 2), (4, 5)))
    12
    """
    n = 1
    for a, b in zip(box[0], box[1], strict=True):
        n *= b - a
    return n


def intersect(a: Box, b: Box) -> Box | None:
    """The common box of two boxes of one rank, or None when they share no cell.

    >>> intersect(((0,), (4,)), ((2,), (6,))), intersect(((0,), (2,)), ((2,), (6,)))
    (((2,), (4,)), None)
    """
    start = tuple(map(max, a[0], b[0]))
    end = tuple(map(min, a[1], b[1]))
    if any(s >= e for s, e in zip(start, end, strict=True)):
        return None
    return start, end


def contains(outer: Box, inner: Box) -> bool:
    """Whether ``outer`` holds every cell of ``inner`` (of one rank).

    >>> contains(((0,), (4,)), ((1,), (3,))), contains(((0,), (4,)), ((3,), (5,)))
    (True, False)
    """
    return all(map(int.__le__, outer[0], inner[0])) and all(map(int.__le__, inner[1], outer[1]))


class PlacedShard(Protocol):
    """What the rule of moving regions reads of a shard: its operation, its device (None when
    its operation runs whole) and the boxes it reads and writes, as ``(tensor id, box)``."""

    @property
    def op_id(self) -> str: ...
    @property
    def device(self) -> Device | None: ...
    @property
    def reads(self) -> tuple[tuple[str, Box], ...]: ...
    @property
    def writes(self) -> tuple[tuple[str, Box], ...]: ...


S = TypeVar("S", bound=PlacedShard)


@dataclass(slots=True)
class Written(Generic[S]):
    """The shards writing one tensor, with their boxes per device; ``starts`` holds the boxes'
    starts along dim 0 when, sorted by them (as ``shards`` then is), they are disjoint along it
    (a split by rows), so a read finds its writers by bisection."""

    shards: list[tuple[S, Box]]
    by_device: dict[Device | None, list[Box]]
    starts: list[int] | None = None

    def overlapping(self, wanted: Box) -> list[tuple[S, Box]]:
        """The shards whose box may share cells with ``wanted`` (a superset, in order)."""
        if self.starts is None or not wanted[0]:
            return self.shards
        first = max(bisect_right(self.starts, wanted[0][0]) - 1, 0)
        last = bisect_left(self.starts, wanted[1][0])
        return self.shards[first:last]


def writers_of(shards: Iterable[S]) -> dict[str, Written[S]]:
    """The shards writing each tensor, in the order given (sorted by rows when they split the
    tensor by rows)."""
    out: dict[str, Written[S]] = {}
    for sh in shards:
        for tid, box in sh.writes:
            w = out.get(tid) or out.setdefault(tid, Written([], {}))
            w.shards.append((sh, box))
            w.by_device.setdefault(sh.device, []).append(box)
    for w in out.values():
        ordered = sorted(w.shards, key=lambda item: item[1][0][:1])
        rows = [box for _, box in ordered]
        if rows[0][0] and all(a[1][0] <= b[0][0] for a, b in pairwise(rows)):
            w.shards, w.starts = ordered, [box[0][0] for box in rows]
    return out


def regions_that_move(
    consumers: Sequence[S], writers: dict[str, Written[S]]
) -> Iterator[tuple[str, S, S, Box]]:
    """``(tensor id, producer, consumer, region)`` for every region that moves between devices
    (the rule of the module docstring), in order of the consumers and their reads."""
    for consumer in consumers:
        for tid, wanted in consumer.reads:
            found = writers.get(tid)
            if found is None:
                continue
            if any(contains(b, wanted) for b in found.by_device.get(consumer.device, ())):
                continue  # written on this device: nothing moves
            for producer, written in found.overlapping(wanted):
                if producer.device == consumer.device or producer.op_id == consumer.op_id:
                    continue
                if len(written[0]) == len(wanted[0]):
                    common = intersect(written, wanted)
                    if common is not None:
                        yield tid, producer, consumer, common


@dataclass(frozen=True, slots=True)
class Transfer:
    """Bytes of one region of a tensor that a consumer shard reads and a shard on another
    device produced: they must move from ``source`` to ``target``."""

    tensor_id: str
    region: ZRange
    bytes: int
    producer_id: str
    consumer_id: str
    source: Device
    target: Device


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """Bytes resident on one device: inputs it reads but does not write, outputs it writes, and
    temporaries (zero-filled buffers of padded reads)."""

    inputs: int
    outputs: int
    temporaries: int

    @property
    def total(self) -> int:
        return self.inputs + self.outputs + self.temporaries


class _Shard(NamedTuple):
    app: Node
    op_id: str
    device: Device
    reads: tuple[tuple[str, Box], ...]
    writes: tuple[tuple[str, Box], ...]


def _placed_shards(graph: Graph) -> list[_Shard]:
    """The well-formed, placed Applications with their selections, in document order."""
    index = graph.index
    out = []
    for app in graph.of_type(APPLICATION):
        tag = app.tags.get(PLACEMENT) if app.tags else None
        if not isinstance(tag, dict) or not is_well_formed(index, app):
            continue
        device = (str(tag["mesh"]), tuple(int(c) for c in tag["coords"]))
        sides: dict[str, list[tuple[str, Box]]] = {"inputs": [], "outputs": []}
        for side, found in sides.items():
            for items in (app.body.get(side) or {}).values():
                for item in items:
                    r = parse_range(item["range"])
                    if r is not None:
                        found.append((item["tensorId"], (r.start, r.end)))
        op_id = str(app.body.get("operationId"))
        out.append(_Shard(app, op_id, device, tuple(sides["inputs"]), tuple(sides["outputs"])))
    return out


def _element_bytes(graph: Graph, tensor_id: str) -> int:
    tensor = graph.get(tensor_id)
    dtype = tensor.body.get("dtype") if tensor is not None and tensor.type == TENSOR else None
    return DTYPE_BYTES.get(str(dtype), 0)


def transfers(graph: Graph) -> list[Transfer]:
    """Every region a placed consumer shard reads that placed shards on other devices wrote and
    its own device did not (:func:`regions_that_move`), in document order of the consumers.

    >>> transfers(Graph())
    []
    """
    shards = _placed_shards(graph)
    return [
        Transfer(
            tid,
            ZRange(*region),
            box_size(region) * _element_bytes(graph, tid),
            producer.app.id,
            consumer.app.id,
            producer.device,
            consumer.device,
        )
        for tid, producer, consumer, region in regions_that_move(shards, writers_of(shards))
    ]


def transfer_bytes(graph: Graph) -> dict[tuple[Device, Device], int]:
    """The bytes that move from each device to each other device: ``(source, target) ->
    bytes``, summed over :func:`transfers`."""
    out: dict[tuple[Device, Device], int] = {}
    for t in transfers(graph):
        out[(t.source, t.target)] = out.get((t.source, t.target), 0) + t.bytes
    return out


def device_memory(graph: Graph) -> dict[Device, DeviceMemory]:
    """Per device, the bytes of inputs, outputs and temporaries (see the module docstring)."""
    reads: dict[Device, dict[str, list[ZRange]]] = {}
    writes: dict[Device, dict[str, list[ZRange]]] = {}
    temporaries: dict[Device, int] = {}
    for sh in _placed_shards(graph):
        for tid, (start, end) in sh.reads:
            reads.setdefault(sh.device, {}).setdefault(tid, []).append(ZRange(start, end))
        for tid, (start, end) in sh.writes:
            writes.setdefault(sh.device, {}).setdefault(tid, []).append(ZRange(start, end))
        temporaries[sh.device] = temporaries.get(sh.device, 0) + _padded_buffers(graph, sh.app)
    out = {}
    for device in sorted({*reads, *writes, *temporaries}):
        written = writes.get(device, {})
        outputs = sum(
            union_size(rs) * _element_bytes(graph, tid) for tid, rs in written.items() if rs
        )
        inputs = 0
        for tid, rs in reads.get(device, {}).items():
            own = written.get(tid, [])
            # cells read and not written here: the union of reads and writes minus the writes
            only_read = union_size([*rs, *own]) - union_size(own) if own else union_size(rs)
            inputs += only_read * _element_bytes(graph, tid)
        out[device] = DeviceMemory(inputs, outputs, temporaries.get(device, 0))
    return out


def _padded_buffers(graph: Graph, app: Node) -> int:
    """Bytes of the zero-filled buffers an application's padded reads need: for each input
    whose projection (of the application's IPFIndex through its operation's IPFSignature)
    reaches past its tensor, the projection's full size."""
    op_id = app.body.get("operationId")
    op = graph.get(op_id) if isinstance(op_id, str) else None
    shard_range = index_range_of(app)
    sig = op.tags.get(IPF_SIGNATURE) if op is not None and op.tags else None
    if op is None or shard_range is None or not isinstance(sig, dict):
        return 0
    total = 0
    for key, items in (app.body.get("inputs") or {}).items():
        ipfs = (sig.get("inputs") or {}).get(key)
        if not isinstance(ipfs, list) or len(ipfs) != len(items):
            continue
        for item, raw in zip(items, ipfs, strict=True):
            tensor = graph.get(item["tensorId"])
            trange = parse_range(tensor.body.get("range")) if tensor is not None else None
            try:
                projected = IPF.from_json(raw).apply_range(shard_range)
            except GeonError:  # a malformed IPF is the checker's issue, not a cost
                continue
            if trange is None or trange.rank != projected.rank or trange.contains(projected):
                continue
            total += projected.size * _element_bytes(graph, item["tensorId"])
    return total
