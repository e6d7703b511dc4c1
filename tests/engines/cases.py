"""The conformance suite's placed plans (issue 31): the gallery transformer's three plans, the
imported encoder layer under Megatron, a two-layer MLP under data parallelism, Megatron, a 2-D
mesh, a re-split, sharded weights (FSDP's gather) and a reduce-scatter, a reduction split over
its reduced axis, convolutions split over height (halos) and over the batch, and seeded random
axis mappings over small graphs."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from geon import core as gc
from geon.core.graph import OPERATION, Graph
from geon.core.plans import PlanError, apply_plan
from geon.examples.gallery import build as gallery
from geon.examples.transformer import PLANS, transformer_block

N, D, F = 8, 4, 16


def mlp() -> Graph:
    """``x[N, D] -> dot W1[D-1, F] -> relu -> dot W2[F-1, D]`` in float32."""
    n, d, f = gc.Axis("N", N), gc.Axis("D", D), gc.Axis("F", F)
    x = gc.placeholder(axes=[n, d], name="x", dtype="float32")
    w1 = gc.placeholder(axes=[d - 1, f], name="w1", dtype="float32")
    w2 = gc.placeholder(axes=[f - 1, d], name="w2", dtype="float32")
    return gc.graph([gc.dot(gc.relu(gc.dot(x, w1, name="h"), name="a"), w2, name="y")])


def reduction() -> Graph:
    """``s = sum over R of exp(x[N, R])``, then ``s * 2``."""
    n, r = gc.Axis("N", 4), gc.Axis("R", 8)
    x = gc.placeholder(axes=[n, r], name="x")
    s = gc.sum(gc.exp(x, name="e"), reduction_axes=[r], name="s")
    return gc.graph([gc.multiply(s, gc.constant(2.0, axes=[], name="two"), name="y")])


def elementwise() -> Graph:
    """``tanh(a[B, C] + b[B, C]) * a``, then a sum over C: small graphs for random mappings."""
    b_, c = gc.Axis("B", 8), gc.Axis("C", 4)
    a = gc.placeholder(axes=[b_, c], name="a")
    b = gc.placeholder(axes=[b_, c], name="b")
    t = gc.multiply(gc.tanh(gc.add(a, b, name="ab"), name="t"), a, name="ta")
    return gc.graph([gc.sum(t, reduction_axes=[c], name="s")])


def _plan(mesh: dict[str, int], **more: Any) -> dict[str, Any]:
    return {"name": "p", "mesh": {"axes": mesh}, **more}


Case = tuple[str, Callable[[], Graph]]


def _placed(build: Callable[[], Graph], plan: dict[str, Any]) -> Callable[[], Graph]:
    return lambda: apply_plan(build(), plan)


def _random_cases(count: int) -> list[Case]:
    """Seeded random axis mappings (and input placements) over the small graphs, on 1-D and
    2-D meshes of up to 8 devices."""
    rng = random.Random(31)
    meshes = [{"a": 2}, {"a": 4}, {"a": 8}, {"a": 2, "b": 2}, {"a": 2, "b": 4}, {"a": 4, "b": 2}]
    graphs: list[tuple[str, Callable[[], Graph], list[str], dict[str, list[str]]]] = [
        ("mlp", mlp, ["N", "D", "F"], {"x": ["N", "D"], "w1": ["D", "F"], "w2": ["F", "D"]}),
        ("elementwise", elementwise, ["B", "C"], {"a": ["B", "C"], "b": ["B", "C"]}),
    ]
    out: list[Case] = []
    for n in range(10 * count):
        name, build, axes, inputs = graphs[n % len(graphs)]
        mesh = rng.choice(meshes)
        mesh_axes = list(mesh)
        mapping: dict[str, str] = {}
        for axis in rng.sample(axes, rng.randint(1, min(len(axes), len(mesh_axes)))):
            free = [m for m in mesh_axes if m not in mapping.values()]
            if free:
                mapping[axis] = rng.choice(free)
        placed: dict[str, Any] = {}
        for label, its in inputs.items():
            over = {a: m for a, m in mapping.items() if a in its}
            if over and rng.random() < 0.5:
                placed[label] = {"over": over}
        plan = _plan(mesh, axisMapping=mapping, inputs=placed)
        try:  # only plans that fit the graph (a mesh axis must divide a contracted axis)
            apply_plan(build(), plan)
        except PlanError:
            continue
        out.append((f"random-{len(out)}-{name}-{mesh}-{mapping}-{placed}", _placed(build, plan)))
        if len(out) == count:
            break
    return out


def _resplit() -> Graph:
    """The first dot and relu over ``N``, the second dot over ``D``: the hidden tensor is
    gathered whole (one all-gather)."""
    g = mlp()
    y = g.of_type(OPERATION)[2].id  # the second dot (the document order: dot, relu, dot)
    return apply_plan(g, _plan({"d": 4}, axisMapping={"N": "d"}, spec={y: {"over": {"D": "d"}}}))


def _conv(over: str, mesh: int, images: dict[str, str] | None = None) -> Callable[[], Graph]:
    def build() -> Graph:
        g = gallery("conv2d-halos")
        inputs = {"images": {"over": images}} if images else {}
        return apply_plan(g, _plan({"m": mesh}, axisMapping={over: "m"}, inputs=inputs))

    return build


def cases() -> list[Case]:
    """Every case: a name and a function building the placed document."""
    out: list[Case] = [
        (f"transformer-{plan['name']}", _placed(transformer_block, plan)) for plan in PLANS
    ]
    out += [
        (
            "mlp-data-parallel",
            _placed(
                mlp, _plan({"dp": 8}, axisMapping={"N": "dp"}, inputs={"x": {"over": {"N": "dp"}}})
            ),
        ),
        (
            "mlp-megatron",
            _placed(
                mlp,
                _plan(
                    {"tp": 4},
                    axisMapping={"F": "tp"},
                    inputs={"w1": {"over": {"F": "tp"}}, "w2": {"over": {"F": "tp"}}},
                ),
            ),
        ),
        (
            "mlp-2x4-dp-tp",
            _placed(
                mlp,
                _plan(
                    {"dp": 2, "tp": 4},
                    axisMapping={"N": "dp", "F": "tp"},
                    inputs={
                        "x": {"over": {"N": "dp"}},
                        "w1": {"over": {"F": "tp"}},
                        "w2": {"over": {"F": "tp"}},
                    },
                ),
            ),
        ),
        ("mlp-resplit-all-gather", _resplit),
        (
            "mlp-fsdp-weights",
            _placed(
                mlp,
                _plan(
                    {"dp": 4},
                    axisMapping={"N": "dp"},
                    inputs={"x": {"over": {"N": "dp"}}, "w1": {"over": {"F": "dp"}}},
                ),
            ),
        ),
        ("mlp-contracted-d", _placed(mlp, _plan({"tp": 2}, axisMapping={"D": "tp"}))),
        (
            "mlp-2x2-contracted-f",
            _placed(mlp, _plan({"dp": 2, "tp": 2}, axisMapping={"N": "dp", "F": "tp"})),
        ),
        ("reduction-split", _placed(reduction, _plan({"tp": 4}, axisMapping={"R": "tp"}))),
        (
            "reduction-2x4",
            _placed(reduction, _plan({"dp": 2, "tp": 4}, axisMapping={"N": "dp", "R": "tp"})),
        ),
        ("conv-halo-2", _conv("P", 2)),
        ("conv-halo-4", _conv("P", 4)),
        ("conv-batch", _conv("N", 2)),
        ("conv-halo-images-split-2", _conv("P", 2, {"Y": "m"})),
        ("conv-halo-images-split-4", _conv("P", 4, {"Y": "m"})),
    ]
    return out + _random_cases(16)
