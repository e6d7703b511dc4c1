"""The shipped puzzles, written with the builder: each has a reference and a plausible wrong
answer (what tests use to prove the check explains a failure). ``python -m
geon.learn.content.shipped DIR`` writes ``DIR/<slug>.json`` (the puzzles, as shipped in
``geon/learn/content/puzzles/``) and ``DIR/wrong/<slug>.json`` (the wrong answers).

In the spirit of Sasha Rush's Tensor Puzzles (https://github.com/srush/Tensor-Puzzles),
written for named axes: the student builds a graph instead of a one-line NumPy expression,
and the checker, not a notebook assertion, explains the first difference.

>>> sorted(PUZZLES)[:3]
['broadcast_add', 'cast_axes_pitfall', 'center_rows']
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from geon import core as gc
from geon.core.graph import Graph

__all__ = ["PUZZLES", "Puzzle", "write"]

Builder = Callable[[], Graph]


class Puzzle(NamedTuple):
    """A shipped puzzle: its text, axes, inputs, kernels, reference and a wrong answer."""

    title: str
    description: str
    axes: dict[str, tuple[int, int]]
    inputs: dict[str, list[str]]
    allowed: list[str]
    reference: Builder
    wrong: Builder


def _ax(*names: str) -> list[gc.Axis]:
    return [gc.Axis(n, 2) for n in names]


def _outer(op: Callable[..., Any]) -> Builder:
    def build() -> Graph:
        i, j = _ax("I", "J")
        a, b = gc.placeholder(axes=[i], name="a"), gc.placeholder(axes=[j], name="b")
        return gc.graph([op(a, b, axes=[i, j], name="out")])

    return build


def _reduce(fn: Callable[..., Any], axis: str) -> Builder:
    def build() -> Graph:
        H, W = _ax("H", "W")
        x = gc.placeholder(axes=[H, W], name="x")
        return gc.graph([fn(x, reduction_axes=[{"H": H, "W": W}[axis]], name="out")])

    return build


def _bias(op: Callable[..., Any], label: str) -> Builder:
    def build() -> Graph:
        H, W = _ax("H", "W")
        x, b = gc.placeholder(axes=[H, W], name="x"), gc.placeholder(axes=[W], name=label)
        return gc.graph([op(x, b, name="out")])

    return build


def _matvec(right: bool) -> Builder:
    def build() -> Graph:
        H, W = _ax("H", "W")
        m = gc.placeholder(axes=[H, W - 1], name="m")
        v = gc.placeholder(axes=[W], name="v")
        if right:
            return gc.graph([gc.dot(m, v, name="out")])
        rows = gc.sum(m, reduction_axes=[W - 1])
        return gc.graph([gc.multiply(rows, gc.sum(v, reduction_axes=[W]), name="out")])

    return build


def _transpose_rule(right: bool) -> Builder:
    def build() -> Graph:
        H, W, N = _ax("H", "W", "N")
        x = gc.placeholder(axes=[H, W - 1], name="x")
        y = gc.placeholder(axes=[W, N], name="y")
        if right:
            return gc.graph([gc.transpose(gc.dot(y.T, x.T), name="out")])
        return gc.graph([gc.dot(y.T, x.T, name="out")])

    return build


def _transpose_reference() -> Graph:
    H, W, N = _ax("H", "W", "N")
    x = gc.placeholder(axes=[H, W - 1], name="x")
    y = gc.placeholder(axes=[W, N], name="y")
    return gc.graph([gc.dot(x, y, name="out")])


def _mean(axis: str, fn: Callable[..., Any] = gc.mean) -> Builder:
    def build() -> Graph:
        B, F = _ax("B", "F")
        x = gc.placeholder(axes=[B, F], name="x")
        return gc.graph([fn(x, reduction_axes=[{"B": B, "F": F}[axis]], name="out")])

    return build


def _softmax(axis: str) -> Builder:
    def build() -> Graph:
        N, K = _ax("N", "K")
        x = gc.placeholder(axes=[N, K], name="x")
        over = {"N": N, "K": K}[axis]
        shifted = gc.subtract(x, gc.max(x, reduction_axes=[over]))
        e = gc.exp(shifted)
        return gc.graph([gc.divide(e, gc.sum(e, reduction_axes=[over]), axes=[N, K], name="out")])

    return build


def _pitfall(right: bool) -> Builder:
    def build() -> Graph:
        H, N = _ax("H", "N")
        a, b = gc.placeholder(axes=[H, N], name="a"), gc.placeholder(axes=[H, N], name="b")
        if right:
            return gc.graph([gc.sum(gc.subtract(a, b), reduction_axes=[N], name="out")])
        H2 = gc.Axis("H2", 2)
        b2 = gc.cast_axes(b, [H2, N])
        return gc.graph([gc.sum(gc.subtract(a, b2), reduction_axes=[N, H2], name="out")])

    return build


def _inner(right: bool) -> Builder:
    def build() -> Graph:
        (N,) = _ax("N")
        a, b = gc.placeholder(axes=[N - 1], name="a"), gc.placeholder(axes=[N], name="b")
        if right:
            return gc.graph([gc.dot(a, b, name="out")])
        return gc.graph([gc.sum(gc.multiply(a, b), name="out")])

    return build


def _center(axis: str) -> Builder:
    def build() -> Graph:
        H, W = _ax("H", "W")
        x = gc.placeholder(axes=[H, W], name="x")
        over = {"H": H, "W": W}[axis]
        return gc.graph([gc.subtract(x, gc.mean(x, reduction_axes=[over]), name="out")])

    return build


_SMALL = (1, 5)

PUZZLES: dict[str, Puzzle] = {
    "outer_product": Puzzle(
        "Outer product",
        "a has axis I and b has axis J. Build out[I, J] = a[I] · b[J]. Elementwise operations "
        "line axes up by name, so operands with no axis in common meet cell by cell.",
        {"I": _SMALL, "J": _SMALL},
        {"a": ["I"], "b": ["J"]},
        ["op:multiply", "op:add"],
        _outer(gc.multiply),
        _outer(gc.add),
    ),
    "row_sums": Puzzle(
        "Row sums",
        "x has axes (H, W). Build out[H] = Σ_W x[H, W]: name the axis you sum away.",
        {"H": _SMALL, "W": _SMALL},
        {"x": ["H", "W"]},
        ["op:sum"],
        _reduce(gc.sum, "W"),
        _reduce(gc.sum, "H"),
    ),
    "column_max": Puzzle(
        "Column maxima",
        "x has axes (H, W). Build out[W] = max over H of x[H, W].",
        {"H": _SMALL, "W": _SMALL},
        {"x": ["H", "W"]},
        ["op:max", "op:min"],
        _reduce(gc.max, "H"),
        _reduce(gc.min, "H"),
    ),
    "broadcast_add": Puzzle(
        "Broadcast add (a bias)",
        "x has axes (H, W) and b has W. Build out[H, W] = x[H, W] + b[W]: b is copied along H, "
        "the axis it lacks.",
        {"H": _SMALL, "W": _SMALL},
        {"x": ["H", "W"], "b": ["W"]},
        ["op:add", "op:multiply"],
        _bias(gc.add, "b"),
        _bias(gc.multiply, "b"),
    ),
    "scale_columns": Puzzle(
        "Scale each column",
        "x has axes (H, W) and s has W. Build out[H, W] = x[H, W] · s[W].",
        {"H": _SMALL, "W": _SMALL},
        {"x": ["H", "W"], "s": ["W"]},
        ["op:add", "op:multiply"],
        _bias(gc.multiply, "s"),
        _bias(gc.add, "s"),
    ),
    "matvec_dual": Puzzle(
        "Matrix-vector product with a dual",
        "m has axes (H, W-1) and v has W. W-1 is W's dual: dot pairs them, multiplies and sums. "
        "Build out[H] = Σ_W m[H, W-1] · v[W].",
        {"H": _SMALL, "W": _SMALL},
        {"m": ["H", "W-1"], "v": ["W"]},
        ["op:dot", "op:multiply", "op:sum", "op:cast_axes"],
        _matvec(True),
        _matvec(False),
    ),
    "inner_product": Puzzle(
        "Inner product",
        "a has axis N-1 and b has N. Build the scalar Σ_N a[N-1] · b[N]. Careful: N-1 and N are "
        "different axes to an elementwise multiply (an outer product); dot pairs them.",
        {"N": (1, 8)},
        {"a": ["N-1"], "b": ["N"]},
        ["op:dot", "op:multiply", "op:sum", "op:cast_axes"],
        _inner(True),
        _inner(False),
    ),
    "transpose_rule": Puzzle(
        "The transpose rule",
        "x has (H, W-1) and y has (W, N). Compute x·y, which has axes (H, N), using dot only on "
        "the transposes x.T and y.T: the rule dot(x, y) = dot(y.T, x.T).T.",
        {"H": _SMALL, "W": _SMALL, "N": _SMALL},
        {"x": ["H", "W-1"], "y": ["W", "N"]},
        ["op:dot", "op:transpose"],
        _transpose_reference,
        _transpose_rule(False),
    ),
    "mean_over_batch": Puzzle(
        "Mean over an axis",
        "x has axes (B, F). Build out[F] = the mean of x over the batch axis B.",
        {"B": _SMALL, "F": _SMALL},
        {"x": ["B", "F"]},
        ["op:mean", "op:sum", "op:divide"],
        _mean("B"),
        _mean("B", gc.sum),
    ),
    "center_rows": Puzzle(
        "Centre each row",
        "x has axes (H, W). Build out[H, W] = x[H, W] - mean over W of x[H, W]: reduce, then "
        "broadcast back by name.",
        {"H": _SMALL, "W": _SMALL},
        {"x": ["H", "W"]},
        ["op:mean", "op:subtract"],
        _center("W"),
        _center("H"),
    ),
    "softmax": Puzzle(
        "Softmax over an axis",
        "x has axes (N, K). Build out[N, K] = exp(x[N, K]) / Σ_K exp(x[N, K]) without the "
        "softmax kernel (subtract the max over K first to keep exp small).",
        {"N": _SMALL, "K": _SMALL},
        {"x": ["N", "K"]},
        ["op:exp", "op:sum", "op:divide", "op:max", "op:subtract"],
        _softmax("K"),
        _softmax("N"),
    ),
    "cast_axes_pitfall": Puzzle(
        "The cast_axes pitfall",
        "a and b both have axes (H, N). Build out[H] = Σ_N (a[H, N] - b[H, N]). Relabelling b's "
        "H as a new axis H2 would make the subtraction an outer one over H and H2: keep one axis.",
        {"H": _SMALL, "N": _SMALL},
        {"a": ["H", "N"], "b": ["H", "N"]},
        ["op:subtract", "op:sum", "op:cast_axes"],
        _pitfall(True),
        _pitfall(False),
    ),
}
"""The shipped puzzles by slug."""


def write(directory: Path) -> list[Path]:
    """Write every puzzle to ``directory/<slug>.json`` and its wrong answer to
    ``directory/wrong/<slug>.json``; returns the puzzle files."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "wrong").mkdir(exist_ok=True)
    out = []
    for slug, p in PUZZLES.items():
        doc = {
            "title": p.title,
            "description": p.description,
            "axes": {n: {"min": lo, "max": hi} for n, (lo, hi) in p.axes.items()},
            "inputs": {k: {"axes": v, "dtype": "float64"} for k, v in p.inputs.items()},
            "allowedKernels": p.allowed,
            "reference": p.reference().to_json(),
        }
        path = directory / f"{slug}.json"
        path.write_text(json.dumps(doc, indent=1) + "\n")
        (directory / "wrong" / f"{slug}.json").write_text(
            json.dumps(p.wrong().to_json(), indent=1) + "\n"
        )
        out.append(path)
    return out


if __name__ == "__main__":  # pragma: no cover - a maintenance script
    for written in write(Path(sys.argv[1])):
        print(written)
