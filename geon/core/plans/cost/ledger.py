"""The memory ledger of a plan (DESIGN.md §9, §11, issue 16 item 5, issue 32), **the one memory
model** (issue 37): per device, the peak of the bytes it holds along the run order (not the sum of
everything it ever holds), split by what the bytes are: :data:`KINDS`, ``parameters``,
``gradients``, ``optimizer``, ``activations``, ``temporaries`` and ``communication``. Each kind
is defined once, in docs/cost-model.md ("Memory ledger"); :func:`tensor_kinds` decides a tensor's
kind by that definition, :func:`memory_ledger` how long each allocation lives: a graph input for
the whole run (the distinct cells a device reads, or for an input a plan placed,
:func:`geon.core.plans.inputs.held_regions`, the region it holds), a written tensor from the step
writing it to the last step reading it on any device (a graph output to the end), a received
region (``communication``) from the first to the last step reading it there, a padded read's
zero-filled buffer (:func:`geon.core.plans.cost.cells.padded_bytes`) during its step.
Operations are forward, backward or optimizer by their ``Group`` scope (``backward/...``,
``optimizer/...``: what :func:`geon.core.autodiff.training_step` writes).

A step is one operation of the run order; an allocation is live from its first step to its
last, both included. The split reported is the one at the peak step (the earliest, on ties).
Against the profile's capacity: a device over it is flagged, and the plan's imbalance is the
busiest device's peak over the mean peak, in percent above it (``(max - mean) / mean · 100``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from geon.core.constants import CONSTANT
from geon.core.nodes import GROUP, Node, selected_tensor_ids
from geon.core.plans.contract import CONTRACTED_SPLIT
from geon.core.plans.cost.cells import Resident, cells_only_read, padded_bytes, resident
from geon.core.plans.cost.placed import PlacedDocument
from geon.core.plans.table import UNPLACED, Device, group_keys
from geon.core.variables import is_variable

__all__ = [
    "KINDS",
    "DeviceMemory",
    "imbalance_percent",
    "memory_ledger",
    "saved_activations",
    "tensor_kinds",
]

KINDS = ("parameters", "gradients", "optimizer", "activations", "temporaries", "communication")
_PARAMETERS, _GRADIENTS, _OPTIMIZER, _ACTIVATIONS, _TEMPORARIES, _COMMUNICATION = range(len(KINDS))


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """One device's peak bytes and their split at the peak step."""

    peak: int
    split: tuple[tuple[str, int], ...]

    def to_json(self) -> dict[str, Any]:
        return dict(self.split)


def memory_ledger(doc: PlacedDocument) -> dict[Device, DeviceMemory]:
    """Per device of the plan (idle ones too), its peak and split (see the module docstring)."""
    table = doc.table
    rows = table.rows
    steps = len(doc.order)
    end = steps - 1
    n_tensors = len(table.tensor_ids)
    step_of_op = np.full(len(table.op_ids), -1, dtype=np.int64)
    step_of_op[doc.order] = np.arange(steps)
    step = step_of_op[table.op[rows.shard]]
    ordered = step >= 0
    device = table.device[rows.shard]
    reading = ordered & ~rows.write
    last_read = np.full(n_tensors, -1, dtype=np.int64)
    np.maximum.at(last_read, rows.tensor[reading], step[reading])
    written_by_any = np.zeros(n_tensors, dtype=bool)
    written_by_any[rows.tensor[ordered & rows.write]] = True
    held = np.zeros(n_tensors, dtype=bool)
    h_tensor = np.array([t for t, _, _ in doc.held], dtype=np.intp)
    h_device = np.array([d for _, d, _ in doc.held], dtype=np.intp)
    held[h_tensor] = True
    width = rows.lo.shape[1]
    h_lo = np.zeros((len(doc.held), width), dtype=np.int64)
    h_hi = np.ones((len(doc.held), width), dtype=np.int64)
    for n, (_, _, (start, stop)) in enumerate(doc.held):
        h_lo[n, : len(start)], h_hi[n, : len(stop)] = start, stop
    h_cells = np.prod(h_hi - h_lo, axis=1, dtype=np.int64)

    def side(mask: np.ndarray, extra: bool) -> Resident:
        parts = [
            (device[mask], rows.tensor[mask], step[mask], rows.lo[mask], rows.hi[mask],
             rows.cells[mask])
        ]  # fmt: skip
        if extra:  # placed graph inputs: held from the start
            zero = np.zeros(len(h_tensor), dtype=np.int64)
            parts.append((h_device, h_tensor, zero, h_lo, h_hi, h_cells))
        d, t, n, lo, hi, cells = (np.concatenate(c) for c in zip(*parts, strict=True))
        return resident(d, t, n, lo, hi, cells, n_tensors, table.ranks)

    placed = ordered & (device >= 0)
    writes = side(placed & rows.write, True)
    reads = side(placed & ~rows.write, False)
    eb = table.element_bytes
    # what each device writes: inputs it holds, temporaries until their last reader, outputs
    w_bytes = writes.cells * eb[writes.tensor]
    w_held = held[writes.tensor]
    w_read = last_read[writes.tensor] >= 0
    kinds = tensor_kinds(doc)
    kind = kinds[writes.tensor]
    w_first = np.where(w_held, 0, writes.first)
    w_last = np.where(w_held | ~w_read, end, np.maximum(last_read[writes.tensor], writes.first))
    written = (kind, w_first, w_last, w_bytes, writes.device)
    # what each device reads and does not write itself: graph inputs, or received
    only_read = cells_only_read(reads, writes, n_tensors, table.ranks)
    r_bytes = only_read * eb[reads.tensor]
    graph_input = ~written_by_any[reads.tensor] & ~held[reads.tensor]
    keep = graph_input | (r_bytes != 0)
    received = (
        np.where(graph_input, kinds[reads.tensor], _COMMUNICATION)[keep],
        np.where(graph_input, 0, reads.first)[keep],
        np.where(graph_input, end, reads.last)[keep],
        r_bytes[keep],
        reads.device[keep],
    )
    # zero-filled buffers of padded reads, held while their shard runs
    padded = padded_bytes(doc.graph, table)
    shard_step = step_of_op[table.op]
    p = np.flatnonzero((padded > 0) & (shard_step >= 0) & table.placed)
    scratch = (
        np.full(len(p), _TEMPORARIES, dtype=np.int64),
        shard_step[p],
        shard_step[p],
        padded[p],
        table.device[p],
    )
    kind, first, last, nbytes, owner = (
        np.concatenate(parts) for parts in zip(written, received, scratch, strict=True)
    )
    order = np.argsort(owner, kind="stable")
    kind, first, last, nbytes, owner = (c[order] for c in (kind, first, last, nbytes, owner))
    devices = doc.devices()
    known = set(devices)
    everyone = [*devices, *(d for d in group_keys(owner)[0].tolist() if d not in known)]
    bounds = np.searchsorted(owner, everyone), np.searchsorted(owner, everyone, side="right")
    out = {}
    for d, a, b in zip(everyone, *bounds, strict=True):
        part = slice(a, b)
        out[table.devices[d]] = _peak(kind[part], first[part], last[part], nbytes[part], steps)
    return out


def group_scope(node: Node, ops: Mapping[str, Node] | None = None) -> str | None:
    """An operation's ``Group`` scope as its tag writes it (None: none); a plan's partial
    products and their sum (a contracted split, :mod:`geon.core.plans.contract`) take the scope
    of the operation they replace (a partial's sum read from ``ops``, one hop)."""
    tags = node.tags or {}
    split = tags.get(CONTRACTED_SPLIT)
    if isinstance(split, dict):
        if isinstance(split.get("original"), dict):
            tags = split["original"].get("tags") or {}
        elif ops is not None and isinstance(split.get("sum"), str) and split["sum"] in ops:
            return group_scope(ops[split["sum"]])
    group = tags.get(GROUP)
    scope = group.get("scope") if isinstance(group, dict) else None
    return scope if isinstance(scope, str) else None


def _role(node: Node, ops: Mapping[str, Node] | None = None) -> str:
    """``backward``, ``optimizer`` or ``forward``: an operation's part of a training step, by
    its ``Group`` scope (:func:`group_scope`)."""
    scope = group_scope(node, ops)
    if scope is not None:
        for role in ("backward", "optimizer"):
            if scope == role or scope.startswith(role + "/"):
                return role
    return "forward"


def tensor_kinds(doc: PlacedDocument) -> np.ndarray:
    """The kind (an index of :data:`KINDS`) of every tensor of the table (see the module
    docstring)."""
    table = doc.table
    written: dict[str, set[str]] = {}
    read: dict[str, set[str]] = {}
    for node in table.ops.values():
        role = _role(node, table.ops)
        for tid in selected_tensor_ids(node.body, "outputs"):
            written.setdefault(tid, set()).add(role)
        for tid in selected_tensor_ids(node.body, "inputs"):
            read.setdefault(tid, set()).add(role)
    nodes = [doc.graph.get(tid) for tid in table.tensor_ids]
    variables = {
        n.label
        for n in nodes
        if n is not None and n.label and n.id not in written and is_variable(n.tags)
    }
    out = np.full(len(table.tensor_ids), _TEMPORARIES, dtype=np.int64)
    for i, (tid, found) in enumerate(zip(table.tensor_ids, nodes, strict=True)):
        tags = found.tags if found is not None else None
        label = (found.label if found is not None else None) or ""
        w, r = written.get(tid, set()), read.get(tid, set())
        if not w:  # a graph input
            if is_variable(tags) or (tags and tags.get(CONSTANT) is not None):
                out[i] = _PARAMETERS
            elif r == {"optimizer"}:
                out[i] = _OPTIMIZER
            else:
                out[i] = _ACTIVATIONS
        elif "optimizer" in w:
            if label.endswith(".next") and label[: -len(".next")] in variables:
                out[i] = _PARAMETERS
            elif not r:
                out[i] = _OPTIMIZER
        elif "optimizer" in r or label.endswith(".grad"):
            out[i] = _GRADIENTS
        elif "backward" not in w and ("backward" in r or not r):
            out[i] = _ACTIVATIONS
    return out


def saved_activations(doc: PlacedDocument, element_bytes: int | None = None) -> dict[Device, int]:
    """Per device, the bytes of the activations the backward pass reads (the saved ones: kind
    ``activations``, read by an operation scoped ``backward/...``): the cells of them it writes,
    or for a graph input (the batch) the cells it reads; at the tensors' own element sizes, or
    at ``element_bytes`` each (2: the 16-bit count of Korthikanti et al. 2022, table 2). A
    document without a plan runs on one unplaced device, :data:`UNPLACED`."""
    table = doc.table
    rows = table.rows
    kinds = tensor_kinds(doc)
    backward_reads: set[str] = set()
    written: set[str] = set()
    for node in table.ops.values():
        written.update(selected_tensor_ids(node.body, "outputs"))
        if _role(node, table.ops) == "backward":
            backward_reads.update(selected_tensor_ids(node.body, "inputs"))
    saved = np.zeros(len(table.tensor_ids), dtype=bool)
    for i, tid in enumerate(table.tensor_ids):
        saved[i] = kinds[i] == _ACTIVATIONS and tid in backward_reads
    device = table.device[rows.shard]
    graph_input = np.array([tid not in written for tid in table.tensor_ids], dtype=bool)
    counted = saved[rows.tensor] & (rows.write | graph_input[rows.tensor])
    size = (
        table.element_bytes[rows.tensor]
        if element_bytes is None
        else np.full(len(rows.tensor), element_bytes, dtype=np.int64)
    )
    out: dict[Device, int] = {}
    seen: set[tuple[int, int]] = set()
    for n in np.flatnonzero(counted).tolist():
        d, t = int(device[n]), int(rows.tensor[n])
        if not rows.write[n]:  # a graph input: the cells one device reads, counted once
            if (d, t) in seen:
                continue
            seen.add((d, t))
        key = table.devices[d] if d >= 0 else UNPLACED
        out[key] = out.get(key, 0) + int(rows.cells[n]) * int(size[n])
    return out


def _peak(
    kinds: np.ndarray, starts: np.ndarray, stops: np.ndarray, sizes: np.ndarray, steps: int
) -> DeviceMemory:
    """The peak step of live allocations (each of a kind, an index of :data:`KINDS`, live from
    its first step to its last and of some bytes): per kind, the bytes live at each step are the
    running sum of each allocation's start and end deltas (NumPy ``int64``, exact far beyond any
    device's bytes)."""
    if not steps:
        return DeviceMemory(0, tuple((kind, 0) for kind in KINDS))
    deltas = np.zeros((len(KINDS), steps + 1), dtype=np.int64)
    np.add.at(deltas, (kinds, starts), sizes)
    np.add.at(deltas, (kinds, stops + 1), -sizes)
    live = np.cumsum(deltas[:, :steps], axis=1)
    at = int(np.argmax(live.sum(axis=0)))  # the earliest peak on ties
    return DeviceMemory(
        int(live[:, at].sum()), tuple((kind, int(live[n, at])) for n, kind in enumerate(KINDS))
    )


def imbalance_percent(peaks: list[int]) -> float:
    """How far the largest peak is above the mean, in percent (0 for no or idle devices).

    >>> imbalance_percent([100, 50, 50, 0])
    100.0
    """
    if not peaks or sum(peaks) == 0:
        return 0.0
    mean = sum(peaks) / len(peaks)
    return (max(peaks) - mean) / mean * 100
