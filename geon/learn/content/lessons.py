"""Lessons (issue 19, item 3): a graph plus ordered steps — Markdown text, the nodes to look at,
and sometimes a task the server checks on the student's own copy of the graph ("make the
result's axes (H, N)").

Eight ship: axes and identity; broadcasting by identity; ``dot`` and duals; the transpose rule;
reductions; the ``cast_axes`` pitfall; convolution windows and halos; the four ways to shard a
matmul. A task is a small dict, all of whose conditions must hold (:func:`check_task`):

- ``{"tensor": label, "axes": [...]}``: that tensor exists with exactly these axes, in order;
- ``{"kernel": "op:cast_axes"}``: some operation uses the kernel;
- ``{"writtenBy": "op:sum", "axes": [...]}``: a tensor with these axes is written by that kernel;
- ``{"clean": true}``: the graph has no error issue.

>>> lesson = LESSONS["dot-and-duals"]
>>> check_task(lesson.steps[-1].task, lesson.build()).passed
False
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geon import core as gc
from geon.core.checks import check
from geon.core.errors import GeonError, quote
from geon.core.graph import OPERATION, TENSOR, TENSOR_AXES, Graph
from geon.examples.gallery import EXAMPLES

__all__ = ["LESSONS", "Lesson", "Step", "TaskResult", "check_task", "read_steps", "read_text"]


@dataclass(frozen=True)
class Step:
    title: str
    text: str
    #: Labels of the nodes the step is about (the editor selects them).
    highlight: tuple[str, ...] = ()
    #: What the student is asked to make true (None: read and go on).
    task: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "text": self.text,
            "highlight": list(self.highlight),
            "task": self.task,
        }


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    summary: str
    build: Callable[[], Graph]
    steps: tuple[Step, ...]
    #: Shard plans saved with the student's copy (the REST ShardPlan shape).
    plans: tuple[dict[str, Any], ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "summary": self.summary,
            "steps": [s.to_json() for s in self.steps],
        }


@dataclass(frozen=True)
class TaskResult:
    passed: bool
    message: str


def _axes(node: Any) -> list[str] | None:
    found = node.tag(TENSOR_AXES)
    return list(found["axes"]) if isinstance(found, dict) and "axes" in found else None


def check_task(task: dict[str, Any] | None, graph: Graph) -> TaskResult:
    """Whether ``graph`` does what ``task`` asks; the message says what is missing by name."""
    if not task:
        return TaskResult(True, "nothing to check on this step")
    tensors = [n for n in graph.nodes if n.type == TENSOR]
    operations = [n for n in graph.nodes if n.type == OPERATION]
    wanted = task.get("axes")
    shown = "(" + ", ".join(wanted) + ")" if isinstance(wanted, list) else ""
    if "tensor" in task:
        found = [t for t in tensors if t.label == task["tensor"]]
        if not found:
            return TaskResult(
                False, f'there is no tensor "{task["tensor"]}" any more; undo to get it back'
            )
        has = _axes(found[0])
        if has != wanted:
            had = "(" + ", ".join(has or []) + ")"
            return TaskResult(
                False, f'"{task["tensor"]}" has the axes {had}; the task asks for {shown}'
            )
    if "writtenBy" in task:
        kernel = task["writtenBy"]
        written = {
            s["tensorId"]
            for op in operations
            if op.body.get("kernel") == kernel
            for sels in (op.body.get("outputs") or {}).values()
            for s in sels
        }
        if not any(t.id in written and _axes(t) == wanted for t in tensors):
            return TaskResult(False, f"no tensor with the axes {shown} is written by {kernel} yet")
    if "kernel" in task and not any(op.body.get("kernel") == task["kernel"] for op in operations):
        return TaskResult(False, f"no operation uses {task['kernel']} yet")
    if task.get("clean"):
        errors = [i for i in check(graph) if i.severity == "error"]
        if errors:
            return TaskResult(
                False, f"the graph still has {len(errors)} error(s): {errors[0].message}"
            )
    return TaskResult(True, "done: that is exactly it")


# --- lessons that teachers write ---------------------------------------------------------------

#: Bounds of a written lesson: steps, a title's and a text's characters, labels highlighted, a
#: label's or kernel's characters, a task's axes.
STEPS_MAX = 50
TITLE_MAX = 200
TEXT_MAX = 10_000
HIGHLIGHT_MAX = 50
NAME_MAX = 128
TASK_AXES_MAX = 16
TASK_KEYS = ("tensor", "axes", "kernel", "writtenBy", "clean")


def read_text(value: Any, what: str, most: int, *, empty: bool = False) -> str:
    """``value`` as a lesson's text: a string of at most ``most`` characters, not blank unless
    ``empty`` (then kept as written; else stripped); refused naming ``what``."""
    if not isinstance(value, str) or len(value) > most or (not empty and not value.strip()):
        need = f"at most {most:,} characters" if empty else f"1 to {most:,} characters"
        raise GeonError(f"{what} {quote(value)} is not valid; expected {need}")
    return value.strip() if not empty else value


def read_task(value: Any, where: str) -> dict[str, Any] | None:
    """A step's task as a teacher wrote it (None or {} : no task); refused by name when not one
    :func:`check_task` reads."""
    if value is None or value == {}:
        return None
    if not isinstance(value, dict) or not set(value) <= set(TASK_KEYS):
        keys = ", ".join(f'"{k}"' for k in TASK_KEYS)
        raise GeonError(f"{where} task {quote(value)} is not valid; expected an object with {keys}")
    task: dict[str, Any] = {}
    for key in ("tensor", "kernel", "writtenBy"):
        if key in value:
            task[key] = read_text(value[key], f'{where} task "{key}"', NAME_MAX)
    if "axes" in value:
        axes = value["axes"]
        if not isinstance(axes, list) or len(axes) > TASK_AXES_MAX:
            raise GeonError(f'{where} task "axes" {quote(axes)} is not valid; expected a list')
        task["axes"] = [read_text(a, f"{where} task axis", NAME_MAX) for a in axes]
    if ("tensor" in task or "writtenBy" in task) != ("axes" in task):
        raise GeonError(
            f'{where} task: "axes" goes with "tensor" (its axes) or "writtenBy" (the axes of '
            "what that kernel writes), and each of them needs it"
        )
    if "clean" in value:
        if not isinstance(value["clean"], bool):
            raise GeonError(f'{where} task "clean" {quote(value["clean"])} is not true or false')
        task["clean"] = value["clean"]
    return task or None


def read_steps(value: Any) -> tuple[Step, ...]:
    """A written lesson's steps (a list of {title, text, highlight, task}), each checked with
    the bounds above; the first bad value is named."""
    if not isinstance(value, list) or not 1 <= len(value) <= STEPS_MAX:
        raise GeonError(f"steps {quote(value)} are not valid; expected a list of 1 to {STEPS_MAX}")
    steps = []
    for n, step in enumerate(value, start=1):
        where = f"step {n}"
        if not isinstance(step, dict):
            raise GeonError(f"{where} {quote(step)} is not an object with a title and a text")
        highlight = step.get("highlight") or []
        if not isinstance(highlight, list) or len(highlight) > HIGHLIGHT_MAX:
            raise GeonError(f"{where} highlight {quote(highlight)} is not a list of labels")
        steps.append(
            Step(
                read_text(step.get("title"), f"{where} title", TITLE_MAX),
                read_text(step.get("text", ""), f"{where} text", TEXT_MAX, empty=True),
                tuple(read_text(label, f"{where} label", NAME_MAX) for label in highlight),
                read_task(step.get("task"), where),
            )
        )
    return tuple(steps)


# --- the lessons ------------------------------------------------------------------------------


def _identity() -> Graph:
    H, W = gc.Axis("H", 2), gc.Axis("W", 3)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W], name="x")
    y = gc.placeholder(axes=[H, W], name="y")
    return gc.graph([gc.add(x, y, name="x+y")])


def _broadcasting() -> Graph:
    C, H, W, N = gc.Axis("C", 2), gc.Axis("H", 3), gc.Axis("W", 2), gc.Axis("N", 2)
    a = gc.placeholder(axes=[C, H], name="a")
    b = gc.placeholder(axes=[W, H, N], name="b")
    return gc.graph([gc.add(a, b, name="a+b"), gc.add(b, a, name="b+a")])


def _dot() -> Graph:
    """x·y, with x's W written as W instead of W-1: the first task is to fix it."""
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1], name="x")
    y = gc.placeholder(axes=[W, N], name="y")
    graph = gc.graph([gc.dot(x, y, name="x·y")])
    doc = graph.to_json()
    for node in doc["nodes"]:
        if node.get("label") == "x":
            node["tags"][TENSOR_AXES] = {"axes": ["H", "W"]}
    return Graph.from_json(doc)


def _transpose() -> Graph:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1], name="x")
    y = gc.constant(np.arange(12.0).reshape(3, 4), axes=[W, N], name="y")
    z = gc.dot(x, y, name="x·y")
    swapped = gc.dot(gc.transpose(y, name="yᵀ"), gc.transpose(x, name="xᵀ"), name="yᵀ·xᵀ")
    return gc.graph([z, gc.transpose(swapped, name="(yᵀ·xᵀ)ᵀ")])


def _reductions() -> Graph:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(24.0).reshape(2, 3, 4), axes=[H, W, N], name="x")
    return gc.graph([gc.sum(x, reduction_axes=[W], name="sum over W")])


def _pitfall() -> Graph:
    C1, C2, N = gc.Axis("C1", 3), gc.Axis("C2", 3), gc.Axis("N", 2)
    a = gc.placeholder(axes=[C1, N], name="a")
    b = gc.placeholder(axes=[C2, N], name="b")
    return gc.graph([gc.add(a, b, name="a+b")])


def _matmul() -> Graph:
    N, D, F = gc.Axis("N", 8), gc.Axis("D", 16), gc.Axis("F", 32)
    x = gc.placeholder(axes=[N, D], name="x")
    w = gc.placeholder(axes=[D - 1, F], name="w")
    return gc.graph([gc.dot(x, w, name="x·w")])


_MESH = {"name": "two devices", "axes": {"d": 2}}

LESSONS: dict[str, Lesson] = {
    lesson.key: lesson
    for lesson in [
        Lesson(
            "axes-and-identity",
            "Axes and identity",
            "Every dimension is an axis with a name and a length; the name is its identity.",
            _identity,
            (
                Step(
                    "An axis is declared once",
                    "The **Axes** panel lists this graph's axes, `H` (length 2) and `W` "
                    "(length 3). An axis is declared once per graph; every tensor that uses "
                    "`H` means the same dimension.",
                ),
                Step(
                    "Tensors name their dimensions",
                    "`x` and `y` each have the axes `(H, W)`: a tensor lists its axes instead "
                    "of numbering its dimensions, so nothing depends on their position.",
                    ("x", "y"),
                ),
                Step(
                    "Same name, same axis",
                    "`x+y` adds element by element **by axis name**: `x[h, w] + y[h, w]` for "
                    "every `h` in `H` and `w` in `W`. Were `y`'s axes `(W, H)`, the sum would be "
                    "the same numbers: order is layout, not meaning.",
                    ("x+y",),
                ),
                Step(
                    "Try it",
                    "Add `y` and `x` the other way round: **+ Operation**, `add`, then drag "
                    "`y`'s handle onto it first and `x`'s second. The new `y+x` has the axes "
                    "`(H, W)` too: the add matched the axes by name, not by position.",
                    ("x", "y"),
                    {"tensor": "y+x", "axes": ["H", "W"], "clean": True},
                ),
            ),
        ),
        Lesson(
            "broadcasting",
            "Broadcasting by identity",
            "An elementwise op copies each operand along the axes it lacks, by name.",
            _broadcasting,
            (
                Step(
                    "Two operands, different axes",
                    "`a` has `(C, H)` and `b` has `(W, H, N)`. They share only `H`.",
                    ("a", "b"),
                ),
                Step(
                    "The result has every axis once",
                    "`a+b` has `(C, H, W, N)`: the first operand's axes, then the ones only the "
                    "second has. `a` is copied along `W` and `N`, `b` along `C`; cells meet "
                    "where their `H` agrees. No axis is matched by position.",
                    ("a+b",),
                ),
                Step(
                    "Order follows the operands",
                    "`b+a` holds the same numbers with the axes `(W, H, N, C)`. Which one you "
                    "want is a layout choice; geon never guesses a match between `C` and `W`, "
                    "even when their lengths agree.",
                    ("b+a",),
                ),
            ),
        ),
        Lesson(
            "dot-and-duals",
            "dot and duals",
            "dot sums over an axis that one operand has as W and the other as its dual W-1.",
            _dot,
            (
                Step(
                    "A dot that does not check",
                    "`x` has `(H, W)` and `y` has `(W, N)`. Both have `W` at the same level, so "
                    "the dot does not know which `W` to sum over: the Issues panel says to "
                    "mark one side as a dual.",
                    ("x", "x·y"),
                ),
                Step(
                    "Duals pair",
                    "A **dual** `W-1` is the same length as `W` but a different axis. `dot` "
                    "pairs `W-1` in one operand with `W` in the other and sums over them: "
                    "`z[H, N] = Σ_W x[H, W-1] · y[W, N]`. Every other axis is kept.",
                    ("x·y",),
                ),
                Step(
                    "Fix it",
                    "Give `x` the axes `(H, W-1)`. The error goes away and `x·y` has the axes "
                    "`(H, N)`.",
                    ("x",),
                    {"tensor": "x", "axes": ["H", "W-1"], "clean": True},
                ),
            ),
        ),
        Lesson(
            "transpose-rule",
            "The transpose rule",
            "dot(x, y) equals dot(yᵀ, xᵀ)ᵀ: transpose reverses the axes and flips their duals.",
            _transpose,
            (
                Step(
                    "Transpose flips levels",
                    "`xᵀ` is `x` with its axes reversed and each level flipped: `(H, W-1)` "
                    "becomes `(W, H-1)`. A dual becomes its partner, and the partner a dual.",
                    ("x", "xᵀ"),
                ),
                Step(
                    "The same product, the other way round",
                    "`yᵀ·xᵀ` pairs `W-1` of `yᵀ` with `W` of `xᵀ`, and its transpose "
                    "`(yᵀ·xᵀ)ᵀ` has `(H, N)`, the axes of `x·y`. Run the graph: both hold the "
                    "same numbers.",
                    ("x·y", "(yᵀ·xᵀ)ᵀ"),
                ),
            ),
        ),
        Lesson(
            "reductions",
            "Reductions",
            "sum, max and mean remove the axes they reduce over, by name.",
            _reductions,
            (
                Step(
                    "Reduce over an axis",
                    "`sum over W` reads `x (H, W, N)` and writes `(H, N)`: "
                    "`s[H, N] = Σ_W x[H, W, N]`.",
                    ("sum over W",),
                ),
                Step(
                    "Your turn",
                    "Add a sum of `x` that keeps only `W` (reduce over `H` and `N`).",
                    ("x",),
                    {"writtenBy": "op:sum", "axes": ["W"], "clean": True},
                ),
            ),
        ),
        Lesson(
            "cast-axes-pitfall",
            "The cast_axes pitfall",
            "Two axes of equal length are still two axes: a+b over C1 and C2 is an outer sum.",
            _pitfall,
            (
                Step(
                    "An accidental outer sum",
                    "`a` has `(C1, N)`, `b` has `(C2, N)`, both `C`s of length 3. `a+b` has "
                    "`(C1, N, C2)`: nine sums per `N`, not three. The checker warns "
                    "(AccidentalBroadcast).",
                    ("a+b",),
                ),
                Step(
                    "Say they are the same",
                    "If `C2` means `C1`, say so with `cast_axes`: relabel `b` to `(C1, N)` "
                    "(the Issues panel's fix inserts it), and make `a+b` have `(C1, N)`.",
                    ("b", "a+b"),
                    {"tensor": "a+b", "axes": ["C1", "N"], "kernel": "op:cast_axes", "clean": True},
                ),
            ),
        ),
        Lesson(
            "convolution-halos",
            "Convolution windows and halos",
            "Each output cell of a conv reads a window of the input; split the output and the "
            "windows overlap.",
            EXAMPLES["conv2d-halos"].build,
            (
                Step(
                    "Windows",
                    "`features[K, P, Q, N]` reads a 3 by 3 window of `images` per cell "
                    "(`R`, `S`), padded by 1. Select the operation and open its index space.",
                    ("features",),
                ),
                Step(
                    "Two halves, one shared band",
                    "The conv is split over `P` into two applications. Each reads the input rows "
                    "its windows touch: the rows at the cut are read by both. That overlap is "
                    "the **halo**, the data a device must receive from its neighbour.",
                    ("features",),
                ),
            ),
        ),
        Lesson(
            "four-ways-to-shard-a-matmul",
            "Four ways to shard a matmul",
            "Split the batch, the output, the contracted axis or two of them: each needs "
            "different communication.",
            _matmul,
            (
                Step(
                    "The matmul",
                    "`x·w` is `z[N, F] = Σ_D x[N, D] · w[D-1, F]`. The Plans panel holds four "
                    "plans over two devices; switch between them and compare their costs.",
                    ("x·w",),
                ),
                Step(
                    "Split N or F: no collective",
                    "**Split N** (data parallel): each device multiplies its rows of `x` by the "
                    "whole `w`. **Split F**: each computes its columns of `z` from the whole "
                    "`x`. Neither sums across devices.",
                    ("x·w",),
                ),
                Step(
                    "Split D: partial sums and an all-reduce",
                    "**Split D** gives each device half of the sum over `D`: two partial `z`s "
                    "that must be added across devices, an **all-reduce** on the edge into the "
                    "sum. It holds half of `w` per device, at the price of that collective.",
                    ("x·w",),
                ),
                Step(
                    "Split N and D",
                    "Mapping both to the two devices is not possible on a 1-D mesh; on a 2-D "
                    "mesh it combines the two: rows per device row, partial sums reduced along "
                    "the other mesh axis. Compare the plans' step time and memory per device.",
                ),
            ),
            plans=(
                {"name": "Split N (data parallel)", "mesh": _MESH, "axisMapping": {"N": "d"}},
                {"name": "Split F (columns)", "mesh": _MESH, "axisMapping": {"F": "d"}},
                {"name": "Split D (partial sums)", "mesh": _MESH, "axisMapping": {"D": "d"}},
                {
                    "name": "Split N and D (2-D mesh)",
                    "mesh": {"name": "2x2", "axes": {"a": 2, "b": 2}},
                    "axisMapping": {"N": "a", "D": "b"},
                },
            ),
        ),
    ]
}
