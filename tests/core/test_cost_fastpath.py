"""The cost model's fast paths equal straightforward reference implementations kept here, on
random small placed documents (hypothesis, bounded examples):

- :func:`geon.core.plans.table.read_table` (the shards as columns, read in bulk) against reading
  the JSON selection by selection;
- :func:`geon.core.plans.table.regions_that_move` (every read paired with the writes of its
  tensor as NumPy rows) and :func:`geon.core.plans.cost.cells.transfers` against the rule spelled
  out on sets of cells: a
  consumer's region read moves unless one write on its own device holds all of it, and then
  every cell another operation's shard wrote on another device moves from there;
- :func:`geon.core.plans.cost.cells.device_bytes` (unions of boxes) against unions of sets of
  cells;
- the memory ledger's peak (a NumPy running sum) against summing the live allocations at each
  step, and the whole ledger (regions grouped per device and tensor as NumPy rows) against its
  rule on sets of cells.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise, product
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from geon.core.graph import APPLICATION, MESH, OPERATION, PLACEMENT, TENSOR, Graph
from geon.core.plans.cost.cells import device_bytes, transfers
from geon.core.plans.cost.ledger import KINDS, _peak, memory_ledger
from geon.core.plans.cost.placed import read_placed
from geon.core.plans.table import Writes, read_table, regions_that_move

MESH_ID = "00000000-0000-4000-8000-00000000f000"
SHAPE = (8, 3)
DEVICES = 3

Cells = frozenset[tuple[int, ...]]


def _cells(start: list[int] | tuple[int, ...], end: list[int] | tuple[int, ...]) -> Cells:
    return frozenset(product(*(range(a, b) for a, b in zip(start, end, strict=True))))


def _id(kind: int, n: int) -> str:
    return f"00000000-0000-4000-8000-{kind:04d}{n:08d}"


@st.composite
def _box(draw: st.DrawFn) -> dict[str, list[int]]:
    start, end = [], []
    for extent in SHAPE:
        a = draw(st.integers(0, extent))
        start.append(a)
        end.append(draw(st.integers(a, extent)))
    return {"start": start, "end": end}


@st.composite
def placed_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A chain-free random placed document: each operation writes its own tensor and reads
    earlier ones; its Applications write rows split at random cuts (the bisection path) or
    random boxes (overlapping writers), and read random boxes, on random devices."""
    n_ops = draw(st.integers(1, 4))
    whole = {"start": [0, 0], "end": list(SHAPE)}
    nodes: list[dict[str, Any]] = [
        {"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"d": DEVICES}}}
    ]
    tensors = [_id(1, 0)]
    nodes.append({"id": tensors[0], "type": TENSOR, "body": {"dtype": "float32", "range": whole}})
    for k in range(n_ops):
        out = _id(1, k + 1)
        dtype = draw(st.sampled_from(["float32", "float16", "int64"]))
        nodes.append({"id": out, "type": TENSOR, "body": {"dtype": dtype, "range": whole}})
        ins = draw(st.lists(st.sampled_from(tensors), min_size=1, max_size=2))
        op_id = _id(2, k)
        sel = lambda t, r: {"tensorId": t, "range": r}  # noqa: E731
        nodes.append(
            {
                "id": op_id,
                "type": OPERATION,
                "body": {
                    "kernel": "op:add",
                    "inputs": {"tensors": [sel(t, whole) for t in ins]},
                    "outputs": {"result": [sel(out, whole)]},
                },
            }
        )
        n_apps = draw(st.integers(1, 4))
        if draw(st.booleans()):  # split by rows
            cuts = sorted(
                draw(st.lists(st.integers(0, SHAPE[0]), min_size=n_apps - 1, max_size=n_apps - 1))
            )
            edges = [0, *cuts, SHAPE[0]]
            writes = [{"start": [a, 0], "end": [b, SHAPE[1]]} for a, b in pairwise(edges)]
        else:
            writes = [draw(_box()) for _ in range(n_apps)]
        for n, written in enumerate(writes):
            nodes.append(
                {
                    "id": _id(3, 10 * k + n),
                    "type": APPLICATION,
                    "body": {
                        "operationId": op_id,
                        "inputs": {"tensors": [sel(t, draw(_box())) for t in ins]},
                        "outputs": {"result": [sel(out, written)]},
                    },
                    "tags": {
                        PLACEMENT: {"mesh": MESH_ID, "coords": [draw(st.integers(0, DEVICES - 1))]}
                    },
                }
            )
        tensors.append(out)
    return {"id": _id(0, 0), "nodes": nodes}


def _reference_shards(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each Application's id, operation, device and selections, read from the JSON one by one."""
    out = []
    for node in doc["nodes"]:
        if node["type"] != APPLICATION:
            continue
        tag = node["tags"][PLACEMENT]
        sides = [
            tuple(
                (item["tensorId"], (tuple(item["range"]["start"]), tuple(item["range"]["end"])))
                for items in node["body"][side].values()
                for item in items
            )
            for side in ("inputs", "outputs")
        ]
        device = (tag["mesh"], tuple(tag["coords"]))
        out.append((node["id"], node["body"]["operationId"], device, *sides))
    return out


def _reference_moves(shards: list[tuple[Any, ...]]) -> Counter[tuple[str, str, str, Cells]]:
    """The rule of moving regions on sets of cells, every producer tried for every read."""
    found: Counter[tuple[str, str, str, Cells]] = Counter()
    for cid, cop, cdev, reads, _ in shards:
        for tid, (start, end) in reads:
            wanted = _cells(start, end)
            writes = [
                (pid, pop, pdev, _cells(*box))
                for pid, pop, pdev, _, outs in shards
                for t, box in outs
                if t == tid
            ]
            if any(pdev == cdev and wanted <= cells for _, _, pdev, cells in writes):
                continue
            for pid, pop, pdev, cells in writes:
                common = cells & wanted
                if pdev != cdev and pop != cop and common:
                    found[(tid, pid, cid, common)] += 1
    return found


def _reference_peak(allocations: list[tuple[str, int, int, int]], steps: int) -> tuple[Any, ...]:
    """The earliest step with the most live bytes, summed allocation by allocation."""
    best: tuple[int, tuple[tuple[str, int], ...]] = (0, tuple((k, 0) for k in KINDS))
    for step in range(steps):
        live = {k: 0 for k in KINDS}
        for kind, first, last, nbytes in allocations:
            if first <= step <= last:
                live[kind] += nbytes
        total = sum(live.values())
        if step == 0 or total > best[0]:
            best = (total, tuple(live.items()))
    return best


@settings(max_examples=60, deadline=None)
@given(placed_documents())
def test_the_table_equals_reading_selection_by_selection(doc: dict[str, Any]) -> None:
    table = read_table(Graph.from_json(doc))
    found = []
    for n in np.flatnonzero(table.placed).tolist():
        rows = range(table.offsets[n], table.offsets[n + 1])
        sides = [
            tuple(
                (table.tensor_ids[table.rows.tensor[r]], table.box(r))
                for r in rows
                if table.rows.write[r] == write
            )
            for write in (False, True)
        ]
        device = table.devices[table.device[n]]
        found.append((table.ids[n], table.op_ids[table.op[n]], device, *sides))
        for r in rows:
            assert table.rows.cells[r] == len(_cells(*table.box(r)))
    assert found == _reference_shards(doc)


@settings(max_examples=100, deadline=None)
@given(placed_documents())
def test_regions_that_move_equal_the_rule_on_cells(doc: dict[str, Any]) -> None:
    graph = Graph.from_json(doc)
    table = read_table(graph)
    writes = Writes.of(table)
    moves = regions_that_move(table, writes)
    fast = Counter(
        (
            table.tensor_ids[t],
            table.ids[writes.rows.shard[w]],
            table.ids[c],
            _cells(lo[: table.ranks[t]], hi[: table.ranks[t]]),
        )
        for t, w, c, lo, hi in zip(
            moves.tensor,
            moves.write,
            moves.consumer,
            moves.lo.tolist(),
            moves.hi.tolist(),
            strict=True,
        )
    )
    assert fast == _reference_moves(_reference_shards(doc))
    bytes_of = {
        n["id"]: {"float32": 4, "float16": 2, "int64": 8}[n["body"]["dtype"]]
        for n in doc["nodes"]
        if n["type"] == TENSOR
    }
    moved = Counter(
        (t.tensor_id, t.producer_id, t.consumer_id, _cells(t.region.start, t.region.end))
        for t in transfers(graph)
    )
    assert moved == fast
    assert all(t.bytes == t.region.size * bytes_of[t.tensor_id] for t in transfers(graph))


@settings(max_examples=60, deadline=None)
@given(placed_documents())
def test_device_bytes_equal_unions_of_cells(doc: dict[str, Any]) -> None:
    nbytes = {
        n["id"]: {"float32": 4, "float16": 2, "int64": 8}[n["body"]["dtype"]]
        for n in doc["nodes"]
        if n["type"] == TENSOR
    }
    read: dict[Any, dict[str, set[Any]]] = {}
    written: dict[Any, dict[str, set[Any]]] = {}
    for _, _, device, reads, writes in _reference_shards(doc):
        for found, side in ((read, reads), (written, writes)):
            for tid, box in side:
                found.setdefault(device, {}).setdefault(tid, set()).update(_cells(*box))
    expected = {}
    for device in {*read, *written}:
        own = written.get(device, {})
        outputs = sum(len(cells) * nbytes[t] for t, cells in own.items())
        inputs = sum(
            len(cells - own.get(t, set())) * nbytes[t] for t, cells in read.get(device, {}).items()
        )
        expected[device] = {"inputs": inputs, "outputs": outputs}
    assert device_bytes(Graph.from_json(doc)) == expected


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 6).flatmap(
        lambda steps: st.tuples(
            st.just(steps),
            st.lists(
                st.tuples(
                    st.sampled_from(KINDS),
                    st.integers(0, max(steps - 1, 0)),
                    st.integers(0, max(steps - 1, 0)),
                    st.integers(0, 10**12),
                ).map(lambda a: (a[0], min(a[1], a[2]), max(a[1], a[2]), a[3])),
                max_size=12,
            ),
        )
    )
)
def test_ledger_peak_equals_summing_each_step(case: tuple[int, list[Any]]) -> None:
    steps, allocations = case
    kinds = np.array([KINDS.index(a[0]) for a in allocations], dtype=np.intp)
    starts, stops, sizes = (
        np.array([a[n] for a in allocations], dtype=np.int64) for n in (1, 2, 3)
    )
    found = _peak(kinds, starts, stops, sizes, steps)
    assert (found.peak, found.split) == _reference_peak(allocations, steps)


def test_a_box_seen_before_is_still_refused_with_float_or_bool_coordinates() -> None:
    # given two Applications selecting rows [0, 4) of the output, the second writing its
    # coordinates as 0.0 and True (equal to 0 and 1 as dict keys, not ints in a document)
    whole = {"start": [0, 0], "end": list(SHAPE)}
    out, op_id = _id(1, 1), _id(2, 0)
    good = {"start": [0, 1], "end": [4, 3]}
    nodes: list[dict[str, Any]] = [
        {"id": MESH_ID, "type": MESH, "body": {"name": "m", "axes": {"d": DEVICES}}},
        {"id": out, "type": TENSOR, "body": {"dtype": "float32", "range": whole}},
        {"id": op_id, "type": OPERATION, "body": {"kernel": "op:add", "inputs": {}}},
    ]
    for n, box in enumerate([good, {"start": [0.0, True], "end": [4, 3]}, good]):
        nodes.append(
            {
                "id": _id(3, n),
                "type": APPLICATION,
                "body": {
                    "operationId": op_id,
                    "inputs": {},
                    "outputs": {"result": [{"tensorId": out, "range": box}]},
                },
                "tags": {PLACEMENT: {"mesh": MESH_ID, "coords": [0]}},
            }
        )
    # when its shards are read, then the float and bool box is left out, the others kept
    table = read_table(Graph.from_json({"id": _id(0, 0), "nodes": nodes}))
    writes = [
        [table.box(r) for r in range(table.offsets[n], table.offsets[n + 1])] for n in range(3)
    ]
    assert writes == [[((0, 1), (4, 3))], [], [((0, 1), (4, 3))]]


def _reference_ledger(doc: dict[str, Any], order: list[str]) -> dict[Any, tuple[Any, ...]]:
    """The memory ledger's rule (:mod:`geon.core.plans.cost.ledger`) on sets of cells: per
    device and tensor, the cells written and read and their steps, then each device's peak."""
    nbytes = {
        n["id"]: {"float32": 4, "float16": 2, "int64": 8}[n["body"]["dtype"]]
        for n in doc["nodes"]
        if n["type"] == TENSOR
    }
    step = {op: n for n, op in enumerate(order)}
    end = len(order) - 1
    wrote: dict[Any, dict[str, tuple[set[Any], list[int]]]] = {}
    read: dict[Any, dict[str, tuple[set[Any], list[int]]]] = {}
    last_read: dict[str, int] = {}
    for _, op, device, reads, writes in _reference_shards(doc):
        n = step[op]
        for found, side in ((read, reads), (wrote, writes)):
            for tid, box in side:
                cells, steps = found.setdefault(device, {}).setdefault(tid, (set(), []))
                cells.update(_cells(*box))
                steps.append(n)
        for tid, _ in reads:
            last_read[tid] = max(last_read.get(tid, -1), n)
    written_anywhere = {t for per in wrote.values() for t in per}
    out = {}
    for device in {*wrote, *read}:
        allocations = []
        own = wrote.get(device, {})
        for tid, (cells, steps) in own.items():
            first, size = min(steps), len(cells) * nbytes[tid]
            if tid in last_read:
                allocations.append(("temporaries", first, max(last_read[tid], first), size))
            else:  # a forward output (no Group scopes here: every operation is forward)
                allocations.append(("activations", first, end, size))
        for tid, (cells, steps) in read.get(device, {}).items():
            only = len(cells - own.get(tid, (set(), []))[0]) * nbytes[tid]
            if tid not in written_anywhere:  # a data input (no Variable tags or constants here)
                allocations.append(("activations", 0, end, only))
            elif only:
                allocations.append(("communication", min(steps), max(steps), only))
        out[device] = _reference_peak(allocations, len(order))
    return out


@settings(max_examples=80, deadline=None)
@given(placed_documents())
def test_memory_ledger_equals_the_rule_on_cells(doc: dict[str, Any]) -> None:
    placed = read_placed(Graph.from_json(doc))
    order = [placed.table.op_ids[op] for op in placed.order]
    found = {d: (m.peak, m.split) for d, m in memory_ledger(placed).items() if m.peak}
    expected = {d: p for d, p in _reference_ledger(doc, order).items() if p[0]}
    assert found == expected


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 3),
    st.integers(0, 3),
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.booleans(),
)
def test_padded_bytes_equal_each_shards_projection_past_its_tensor(
    before: int, after: int, cuts: list[int], outside: bool
) -> None:
    # given x[T=4, C=2] padded into T2, then relu'd, each cut over a line of devices (and, with
    # ``outside``, one Application of the pad moved past its operation's IPFIndex, as a
    # malformed document may have it)
    from geon import core as gc
    from geon.core.graph import IPF_INDEX, IPF_SIGNATURE
    from geon.core.plans.cost.cells import padded_bytes
    from geon.core.plans.shards import shard
    from geon.core.signatures import ipf_from_json
    from geon.core.zspace import ZRange

    T, C = gc.Axis("T", 4), gc.Axis("C", 2)
    T2 = gc.Axis("T2", 4 + before + after)
    x = gc.placeholder(axes=[T, C], name="x")
    p = gc.pad(x, {T: (before, after)}, axes={T: T2}, name="p")
    y = gc.relu(p, name="y")
    g = gc.graph([y])
    mesh = "00000000-0000-4000-8000-0000000000e3"
    g.add_node({"id": mesh, "type": MESH, "body": {"name": "line", "axes": {"d": 4}}})
    assert p.op_id is not None and y.op_id is not None
    sizes = [c for c in cuts if c <= T2.length][: T2.length] or [T2.length]
    sizes = [*sizes[:-1], T2.length - sum(sizes[:-1])] if sum(sizes) <= T2.length else [T2.length]
    shard(g, p.op_id, dim="T2", sizes=[s for s in sizes if s > 0], mesh=mesh)
    shard(g, y.op_id, dim="C", parts=2, mesh=mesh)
    if outside:
        app = g.index.applications_of(p.op_id)[0]
        start, end = app.tags[IPF_INDEX]["start"], app.tags[IPF_INDEX]["end"]
        app.tags[IPF_INDEX] = {"start": [start[0] - 1, *start[1:]], "end": end}
    # when the padded buffers are counted in bulk
    table = read_table(g)
    found = padded_bytes(g, table)
    # then each placed shard's equals its inputs' projections (of its IPFIndex through its
    # operation's IPFSignature) that reach past their tensors, at their full size
    expected = np.zeros(len(table.ids), dtype=np.int64)
    for n in np.flatnonzero(table.placed).tolist():
        node = g.node(table.ids[n])
        op = g.node(node.body.get("operationId", node.id))
        box = table.index_box(n)
        assert box is not None
        for key, items in node.body["inputs"].items():
            for item, raw in zip(items, op.tags[IPF_SIGNATURE]["inputs"][key], strict=True):
                tensor = g.node(item["tensorId"])
                projected = ipf_from_json(raw).apply_range(ZRange(*box))
                if not ZRange.from_json(tensor.body["range"]).contains(projected):
                    expected[n] += projected.size * 8
    assert found.tolist() == expected.tolist()
    assert bool(found.sum()) == (before + after > 0 or outside)  # padded reads were there
