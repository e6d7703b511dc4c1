"""The shipped lessons (issue 19, item 3): each builds, checks clean except where a step asks the
student to fix it, and every task is failed by the lesson's own graph and passed by its solution
(built here with the authoring API, the way a student would change the graph)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from geon import core as gc
from geon.core.checks import check
from geon.core.graph import AXIS, TENSOR_AXES, Graph
from geon.core.plans import read_plan
from geon.learn.content.lessons import LESSONS, check_task


def relabel(graph: Graph, label: str, axes: list[str]) -> Graph:
    """The tensor's axes changed as the editor's Selection panel does: its range follows."""
    doc = graph.to_json()
    lengths = {n["body"]["name"]: n["body"]["length"] for n in doc["nodes"] if n["type"] == AXIS}
    for node in doc["nodes"]:
        if node.get("label") == label:
            node["tags"][TENSOR_AXES] = {"axes": axes}
            ends = [lengths[a.split("-")[0].split("+")[0]] for a in axes]
            node["body"]["range"] = {"start": [0] * len(axes), "end": ends}
    return Graph.from_json(doc)


def solve_identity() -> Graph:
    H, W = gc.Axis("H", 2), gc.Axis("W", 3)
    x = gc.placeholder(axes=[H, W], name="x")
    y = gc.placeholder(axes=[H, W], name="y")
    return gc.graph([gc.add(x, y, name="x+y"), gc.add(y, x, name="y+x")])


def solve_reductions(graph: Graph) -> Graph:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.placeholder(axes=[H, W, N], name="x")
    return gc.graph([gc.sum(x, reduction_axes=[W], name="sum over W"), gc.sum(x, out_axes=[W])])


def solve_pitfall(graph: Graph) -> Graph:
    C1, C2, N = gc.Axis("C1", 3), gc.Axis("C2", 3), gc.Axis("N", 2)
    a = gc.placeholder(axes=[C1, N], name="a")
    b = gc.placeholder(axes=[C2, N], name="b")
    return gc.graph([gc.add(a, gc.cast_axes(b, [C1, N], name="b as C1"), name="a+b")])


SOLUTIONS: dict[str, Callable[[Graph], Graph]] = {
    "axes-and-identity": lambda g: solve_identity(),
    "dot-and-duals": lambda g: relabel(g, "x", ["H", "W-1"]),
    "reductions": solve_reductions,
    "cast-axes-pitfall": solve_pitfall,
}


def test_eight_lessons_ship_in_teaching_order() -> None:
    assert len(LESSONS) >= 8
    assert list(LESSONS)[:3] == ["axes-and-identity", "broadcasting", "dot-and-duals"]


@pytest.mark.parametrize("key", list(LESSONS))
def test_a_lesson_builds_and_only_its_fix_me_graph_has_errors(key: str) -> None:
    lesson = LESSONS[key]
    errors = [i for i in check(lesson.build()) if i.severity == "error"]
    assert (len(errors) > 0) == (key == "dot-and-duals"), errors
    assert all(step.title and step.text for step in lesson.steps)


@pytest.mark.parametrize(
    "key", [k for k, lesson in LESSONS.items() if any(s.task for s in lesson.steps)]
)
def test_every_task_is_failed_by_the_lesson_and_passed_by_its_solution(key: str) -> None:
    lesson = LESSONS[key]
    solved = SOLUTIONS[key](lesson.build())
    for step in lesson.steps:
        if step.task is None:
            continue
        before = check_task(step.task, lesson.build())
        assert not before.passed and before.message
        after = check_task(step.task, solved)
        assert after.passed, after.message


def test_a_failed_task_says_what_differs_by_name() -> None:
    lesson = LESSONS["cast-axes-pitfall"]
    result = check_task(lesson.steps[-1].task, lesson.build())
    assert result.message == '"a+b" has the axes (C1, N, C2); the task asks for (C1, N)'


def test_the_matmul_lessons_plans_are_valid_plans() -> None:
    lesson = LESSONS["four-ways-to-shard-a-matmul"]
    assert [read_plan(p).name for p in lesson.plans] == [p["name"] for p in lesson.plans]
