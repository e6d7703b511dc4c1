"""The cost model of a shard plan (DESIGN.md §4 "Shard plans"): the bytes each device reads and
writes, the bytes that move between devices, and the memory each device holds.

>>> transfers(Graph()), device_memory(Graph())
([], {})

A device is ``(mesh id, coords)``, where placed Applications (those with a ``Placement`` tag,
written by :func:`geon.core.sharding.shard`) run.

- :func:`device_bytes`: per device, the bytes its Applications read (``inputs``) and write
  (``outputs``).
- :func:`transfers`: per edge, the bytes that must move. For each placed consumer Application
  and each input selection, the region it reads of a tensor is intersected with the output
  selection of every placed Application writing that tensor; a common region on another device
  moves from the producer's device to the consumer's. Tensors no Application writes (graph
  inputs, or the results of operations that run whole) have no producing device and move
  nothing: where inputs start out is not part of a plan. Two consumers on one device that read
  the same region each count it (a runtime may share it).
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

from dataclasses import dataclass
from typing import NamedTuple

from geon.core.checks import is_well_formed
from geon.core.dtypes import DTYPE_BYTES
from geon.core.errors import GeonError
from geon.core.graph import APPLICATION, IPF_INDEX, IPF_SIGNATURE, PLACEMENT, TENSOR, Graph, Node
from geon.core.zspace import IPF, ZRange, parse_range, union_size

__all__ = [
    "Device",
    "DeviceMemory",
    "Transfer",
    "device_bytes",
    "device_memory",
    "index_range_of",
    "transfer_bytes",
    "transfers",
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
    device: Device
    reads: tuple[tuple[str, ZRange], ...]
    writes: tuple[tuple[str, ZRange], ...]


def _placed_shards(graph: Graph) -> list[_Shard]:
    """The well-formed, placed Applications with their selections, in document order."""
    index = graph.index
    out = []
    for app in graph.of_type(APPLICATION):
        tag = app.tags.get(PLACEMENT) if app.tags else None
        if not isinstance(tag, dict) or not is_well_formed(index, app):
            continue
        device = (str(tag["mesh"]), tuple(int(c) for c in tag["coords"]))
        sides: dict[str, list[tuple[str, ZRange]]] = {"inputs": [], "outputs": []}
        for side, found in sides.items():
            for items in (app.body.get(side) or {}).values():
                for item in items:
                    r = parse_range(item["range"])
                    if r is not None:
                        found.append((item["tensorId"], r))
        out.append(_Shard(app, device, tuple(sides["inputs"]), tuple(sides["outputs"])))
    return out


def _element_bytes(graph: Graph, tensor_id: str) -> int:
    tensor = graph.get(tensor_id)
    dtype = tensor.body.get("dtype") if tensor is not None and tensor.type == TENSOR else None
    return DTYPE_BYTES.get(str(dtype), 0)


def transfers(graph: Graph) -> list[Transfer]:
    """Every region a placed consumer shard reads that a placed shard on another device wrote,
    in document order of the consumers (see the module docstring).

    >>> transfers(Graph())
    []
    """
    shards = _placed_shards(graph)
    writers: dict[str, list[tuple[_Shard, ZRange]]] = {}
    for sh in shards:
        for tid, region in sh.writes:
            writers.setdefault(tid, []).append((sh, region))
    out = []
    for consumer in shards:
        for tid, wanted in consumer.reads:
            for producer, written in writers.get(tid, ()):
                if producer.device == consumer.device or written.rank != wanted.rank:
                    continue
                common = wanted.intersection(written)
                if common is None:
                    continue
                out.append(
                    Transfer(
                        tid,
                        common,
                        common.size * _element_bytes(graph, tid),
                        producer.app.id,
                        consumer.app.id,
                        producer.device,
                        consumer.device,
                    )
                )
    return out


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
        for tid, region in sh.reads:
            reads.setdefault(sh.device, {}).setdefault(tid, []).append(region)
        for tid, region in sh.writes:
            writes.setdefault(sh.device, {}).setdefault(tid, []).append(region)
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
