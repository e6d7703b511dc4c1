"""Shard plans in the core (issue 16 item 2): the axis mapping, where inputs live, the plan's
shape, and every refusal (which leaves the document as it was)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from geon import core as gc
from geon.core.graph import APPLICATION, OPERATION, PLACEMENT, Graph
from geon.core.plans import (
    INPUT_PLACEMENT,
    PlanError,
    apply_plan,
    default_mesh_id,
    held_regions,
    input_placements,
    plan_ops,
    plan_splits,
    read_plan,
)
from geon.core.plans.shards import shard


def mlp() -> Graph:
    """The issue's 2-layer MLP: x[N, D] -> dot W1[D-1, F] -> relu -> dot W2[F-1, D]."""
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
    x = gc.placeholder(axes=[N, D], name="x")
    w1 = gc.placeholder(axes=[D - 1, F], name="W1")
    w2 = gc.placeholder(axes=[F - 1, D], name="W2")
    h = gc.relu(gc.dot(x, w1, name="hidden"), name="relu")
    return gc.graph([gc.dot(h, w2, name="y")])


def operations(graph: Graph) -> tuple[str, str, str]:
    dot1, relu, dot2 = (op.id for op in graph.of_type(OPERATION))
    return dot1, relu, dot2


def coords(graph: Graph, op_id: str) -> list[list[int]]:
    return [app.tags[PLACEMENT]["coords"] for app in graph.index.applications_of(op_id)]


def plan(**fields: Any) -> dict[str, Any]:
    return {"name": "p", "mesh": {"name": "m", "axes": {"dp": 2, "tp": 3}}, **fields}


def test_mapping_the_batch_axis_splits_every_operation_over_it() -> None:
    graph = mlp()
    placed = apply_plan(graph, plan(axisMapping={"N": "dp"}))
    # every operation has N among its index axes: two shards each, on dp = 0 and dp = 1
    for op_id in operations(graph):
        assert coords(placed, op_id) == [[0, 0], [1, 0]]
    assert plan_splits(graph, read_plan(plan(axisMapping={"N": "dp"}))).not_split == ()
    assert placed.check() == []
    assert graph.of_type(APPLICATION) == []  # the document given is not changed


def test_mapping_the_hidden_axis_splits_the_contracting_dot_into_partial_products() -> None:
    graph = mlp()
    dot1, relu, dot2 = operations(graph)
    placed = apply_plan(graph, plan(axisMapping={"F": "tp"}))
    # the first dot and relu have F among their index axes: three shards over tp
    assert coords(placed, dot1) == coords(placed, relu) == [[0, 0], [0, 1], [0, 2]]
    # the second dot contracts F: its partial products run one part of F per tp device, and a
    # sum under the dot's id (and output) adds them up, run whole (replicated on every device:
    # the partials are all-reduced)
    assert placed.node(dot2).body["kernel"] == "op:sum"
    [partial] = [o for o in placed.of_type(OPERATION) if o.body["kernel"] == "op:dot_partial"]
    assert coords(placed, partial.id) == [[0, 0], [0, 1], [0, 2]]
    assert coords(placed, dot2) == []
    assert plan_splits(graph, read_plan(plan(axisMapping={"F": "tp"}))).not_split == ()
    assert placed.check() == []


def test_a_normalisation_over_a_mapped_axis_runs_whole_and_says_so() -> None:
    N, F = gc.Axis("N", 4), gc.Axis("F", 6)
    norm = gc.softmax(gc.placeholder(axes=[N, F], name="h"), reduction_axes=[F], name="p")
    graph = gc.graph([norm])
    [op] = graph.of_type(OPERATION)
    chosen = read_plan(plan(axisMapping={"N": "dp", "F": "tp"}))
    assert [w.to_json() for w in plan_splits(graph, chosen).not_split] == [
        {
            "operation": op.id,
            "axes": ["F"],
            "reason": 'it contracts or reduces "F" (mesh axis "tp"): reads it, but its index '
            'axes are ("N"); only a dot or a reduction (sum, prod, max, min, mean) can be split '
            "over an axis it contracts or reduces, so it runs whole",
        }
    ]
    assert apply_plan(graph, chosen).index.applications_of(op.id) == []


def test_an_operation_matching_two_mappings_is_split_over_both() -> None:
    graph = mlp()
    dot1, relu, dot2 = operations(graph)
    placed = apply_plan(graph, plan(axisMapping={"N": "dp", "F": "tp"}))
    grid = [[dp, tp] for dp in range(2) for tp in range(3)]
    assert sorted(coords(placed, dot1)) == sorted(coords(placed, relu)) == grid
    # the second dot's sum (it contracts F) is split over N only
    assert sorted(coords(placed, dot2)) == [[0, 0], [1, 0]]
    assert placed.check() == []


def test_a_spec_entry_overrides_the_mapping() -> None:
    graph = mlp()
    dot1, relu, dot2 = operations(graph)
    chosen = plan(axisMapping={"F": "tp"}, spec={dot2: {"over": {"N": "dp"}}})
    placed = apply_plan(graph, chosen)
    assert coords(placed, dot2) == [[0, 0], [1, 0]]
    assert plan_splits(graph, read_plan(chosen)).not_split == ()
    # spec entries come first in the ops, then the mapped operations in document order
    ops = plan_ops(graph, read_plan(chosen), "mesh")
    assert [op.get("operation") for op in ops if op["op"] == "shard"] == [dot2, dot1, relu]


def test_operations_a_plan_does_not_split_lose_their_applications() -> None:
    graph = mlp()
    relu = operations(graph)[1]
    shard(graph, relu, dim="N", parts=2)
    # relu has no D: a plan over D leaves it whole
    placed = apply_plan(graph, plan(axisMapping={"D": "tp"}))
    assert placed.index.applications_of(relu) == []


def test_writing_a_plan_again_reuses_its_mesh() -> None:
    graph = mlp()
    once = apply_plan(graph, plan(axisMapping={"N": "dp"}))
    twice = apply_plan(once, plan(axisMapping={"N": "dp"}, mesh={"name": "m", "axes": {"dp": 2}}))
    meshes = [n for n in twice.nodes if n.type.endswith("/Mesh")]
    assert [(n.id, n.body["axes"]) for n in meshes] == [
        (default_mesh_id(read_plan(plan())), {"dp": 2})
    ]


def test_where_inputs_live_is_written_and_read_back() -> None:
    graph = mlp()
    x, w1, w2 = (t.id for t in graph.nodes if t.label in ("x", "W1", "W2"))
    chosen = plan(
        axisMapping={"N": "dp"},
        inputs={"x": {"over": {"N": "dp"}}, w1: {"device": [1, 2]}, "W2": "replicated"},
    )
    placed = apply_plan(graph, chosen, mesh_id="mesh-1")
    assert {k: v.to_json() for k, v in input_placements(placed).items()} == {
        x: {"mesh": "mesh-1", "placement": {"over": {"N": "dp"}}},
        w1: {"mesh": "mesh-1", "placement": {"device": [1, 2]}},
        w2: {"mesh": "mesh-1", "placement": "replicated"},
    }
    assert placed.node(x).tags[INPUT_PLACEMENT] == {
        "mesh": "mesh-1",
        "placement": {"over": {"N": "dp"}},
    }
    # a plan that names no inputs puts every input back to the default: replicated
    again = apply_plan(placed, plan(axisMapping={"N": "dp"}), mesh_id="mesh-1")
    assert {k: v.to_json() for k, v in input_placements(again).items()} == {
        t: {"mesh": None, "placement": "replicated"} for t in (x, w1, w2)
    }
    assert all(INPUT_PLACEMENT not in again.node(t).tags for t in (x, w1, w2))
    # and a placement that changes kind is replaced whole, not merged into the old one
    moved = apply_plan(placed, plan(inputs={"x": {"device": [0, 0]}}), mesh_id="mesh-1")
    assert moved.node(x).tags[INPUT_PLACEMENT] == {
        "mesh": "mesh-1",
        "placement": {"device": [0, 0]},
    }


def test_each_device_holds_the_region_of_an_input_its_placement_says() -> None:
    graph = mlp()
    x, w1, w2 = (t.id for t in graph.nodes if t.label in ("x", "W1", "W2"))
    chosen = plan(inputs={"x": {"over": {"N": "dp"}}, "W1": {"device": [1, 2]}, "W2": "replicated"})
    held = held_regions(apply_plan(graph, chosen, mesh_id="mesh-1"))
    shown = {t: (mesh, [(c, str(r)) for c, r in regions]) for t, (mesh, regions) in held.items()}
    devices = [(dp, tp) for dp in range(2) for tp in range(3)]
    assert shown == {
        # x[N=4, D=3] over N on dp: rows 0:2 on dp 0, 2:4 on dp 1, whatever tp
        x: ("mesh-1", [(c, "[0:2, 0:3]" if c[0] == 0 else "[2:4, 0:3]") for c in devices]),
        w1: ("mesh-1", [((1, 2), "[0:3, 0:6]")]),
        w2: ("mesh-1", [(c, "[0:6, 0:3]") for c in devices]),
    }
    # inputs no plan placed are left to the reader: replicated on whichever mesh reads them
    assert held_regions(graph) == {}


def test_a_plan_round_trips_through_its_json() -> None:
    data = plan(
        axisMapping={"N": "dp"},
        inputs={"x": {"over": {"N": "dp"}}, "W1": {"device": [0, 1]}, "W2": "replicated"},
        spec={"op": {"dim": "N", "parts": 2}, "op2": {"grid": {"N": 2}}, "op3": {"sizes": [1, 3]}},
    )
    assert read_plan(data).to_json() == data
    assert read_plan({"name": " p ", "mesh": {"axes": {"x": 1}}}).to_json() == {
        "name": "p",
        "mesh": {"name": "", "axes": {"x": 1}},
        "axisMapping": {},
        "inputs": {},
        "spec": {},
    }


MALFORMED = [
    (
        "not an object",
        [],
        'plan "[]" is not valid; expected {"name", "mesh", "axisMapping"?, "inputs"?, "spec"?}',
    ),
    (
        "unknown field",
        plan(axes={}),
        'plan has field "axes"; expected only "name", "mesh", "axisMapping", "inputs", "spec" '
        'and "pipeline"',
    ),
    (
        "empty name",
        plan(name=" "),
        'plan name " " is not valid; expected a non-empty string of at most 100 characters',
    ),
    (
        "mesh too large",
        plan(mesh={"axes": {"x": 2**40}}),
        'mesh "" has more than 65536 devices '
        '(axis "x" of size 1099511627776); expected at most 65536 in all',
    ),
    (
        "mapping to an unknown mesh axis",
        plan(axisMapping={"N": "pp"}),
        'axis mapping "N" -> "pp" '
        'names mesh axis "pp", which mesh "m" does not have; expected one of ("dp", "tp")',
    ),
    (
        "mapping a bad axis name",
        plan(axisMapping={"1N": "dp"}),
        'axis mapping "1N" -> "dp" names '
        'axis "1N"; expected an axis name like "N" or "batch_1" (letters, digits, _; not starting '
        "with a digit)",
    ),
    (
        "mapping not an object",
        plan(axisMapping=["N"]),
        'axisMapping "["N"]" is not valid; expected {axisName: meshAxis} such as {"N": "dp"}',
    ),
    (
        "input of an unknown shape",
        plan(inputs={"x": "sharded"}),
        'input "x" is "sharded"; '
        'expected "replicated", {"over": {axisName: meshAxis}} or {"device": [coordinates]}',
    ),
    (
        "input on a device outside the mesh",
        plan(inputs={"x": {"device": [2, 0]}}),
        'input "x" '
        'has device "[2, 0]"; expected 2 coordinates inside mesh "m" (dp=2 x tp=3), such as [0, 0]',
    ),
    (
        "input over one mesh axis twice",
        plan(inputs={"x": {"over": {"N": "dp", "D": "dp"}}}),
        'input "x" puts axes "N" and "D" both over mesh axis "dp"; expected at most one axis per '
        "mesh axis",
    ),
    (
        "spec with a bad parts",
        plan(spec={"op": {"dim": 0, "parts": "2"}}),
        'spec of operation "op" has parts "2"; expected an integer',
    ),
]


@pytest.mark.parametrize(("label", "data", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_plan_is_refused_naming_the_field(label: str, data: Any, message: str) -> None:
    graph = mlp()
    before = graph.to_json()
    with pytest.raises(PlanError) as refused:
        apply_plan(graph, data)
    assert str(refused.value) == message
    assert graph.to_json() == before


def misfits() -> list[tuple[str, dict[str, Any], str]]:
    return [
        (
            "mapped axis nowhere",
            plan(axisMapping={"Q": "dp"}),
            'axis mapping "Q" -> "dp": no '
            'tensor or operation of the document has axis "Q"; expected one of ("D", "F", "N")',
        ),
        (
            "two mapped axes on one mesh axis",
            plan(axisMapping={"N": "tp", "F": "tp"}),
            'operation "{dot1}": the axis mapping splits its index axes "N" and "F" both over mesh '
            'axis "tp"; drop the mapping of one of them, or give the operation a spec entry',
        ),
        (
            "more devices than points",
            {**plan(axisMapping={"N": "dp"}), "mesh": {"axes": {"dp": 8}}},
            'edit op 1 (shard): operation "{dot1}", split by the axis mapping ("N" -> '
            '"dp"): splitting [0:6, 0:4] gives 4 empty shards (such as [0:6, 4:4]); expected fewer '
            "parts than index points in the split dims; drop that mapping or give the operation a "
            "spec entry",
        ),
        (
            "unknown operation in the spec",
            plan(spec={"nope": {"dim": 0, "parts": 2}}),
            'edit op 1 (shard): operation "nope" does not exist; expected the id of one of the 3 '
            "operations in the graph",
        ),
        (
            "unknown input",
            plan(inputs={"z": "replicated"}),
            'input "z" is no tensor of the '
            'document; expected the label or id of a graph input: one of ("x", "W1", "W2")',
        ),
        (
            "input that an operation writes",
            plan(inputs={"{hidden}": "replicated"}),
            'input "{hidden}" is written by operation "{dot1}"; expected a graph input '
            "(a Tensor no operation writes)",
        ),
        (
            "input over an axis it lacks",
            plan(inputs={"W1": {"over": {"N": "dp"}}}),
            'input "W1" '
            'is placed over axis "N", which it does not have; expected one of ("D", "F")',
        ),
        (
            "input axis shorter than its mesh axis",
            {**plan(inputs={"x": {"over": {"D": "dp"}}}), "mesh": {"axes": {"dp": 4}}},
            'input "x" axis "D" has 3 points, fewer than the 4 '
            'devices of mesh axis "dp"; expected a mesh axis of at most that many devices',
        ),
    ]


@pytest.mark.parametrize("case", range(len(misfits())), ids=[m[0] for m in misfits()])
def test_a_plan_that_does_not_fit_the_document_is_refused(case: int) -> None:
    graph = mlp()
    dot1 = operations(graph)[0]
    hidden = next(t.id for t in graph.nodes if t.label == "hidden")
    _, data, message = misfits()[case]
    data = json.loads(json.dumps(data).replace("{hidden}", hidden))
    before = graph.to_json()
    with pytest.raises(PlanError) as refused:
        apply_plan(graph, data)
    assert str(refused.value) == message.replace("{dot1}", dot1).replace("{hidden}", hidden)
    assert graph.to_json() == before
