"""The named-axes gallery: small graphs that show what geon's axes do, built with the API.

>>> sorted(EXAMPLES)[:3]
['broadcasting-order', 'cast-axes', 'conv2d-halos']
>>> title, description, build = EXAMPLES["dot-2d"]
>>> build().check()
[]

``EXAMPLES`` maps a slug to an :class:`Example` ``(title, description, build)``; ``build()``
returns a fresh :class:`~geon.core.graph.Graph` (new ids each call) that checks clean. Each
example is what a new user sees first, so each one shows one idea and its description says what
to look at. Values are small and fixed (constants inline), except the inputs named in the
description, which are placeholders fed at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from geon import core as gc
from geon.core.graph import Graph
from geon.core.plans.shards import shard

__all__ = ["EXAMPLES", "Example", "build"]


class Example(NamedTuple):
    """One gallery entry: a title, a paragraph for the reader, and a function building it."""

    title: str
    description: str
    build: Callable[[], Graph]


def _dot_2d() -> Graph:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(6.0).reshape(2, 3), axes=[H, W - 1], name="x")
    y = gc.placeholder(axes=[W, N], name="y")
    xy = gc.dot(x, y, name="x·y")
    yx = gc.dot(y, x, name="y·x")
    return gc.graph([xy, yx])


def _dot_4d() -> Graph:
    M, C = gc.Axis("M", 2), gc.Axis("C", 3)
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 2), gc.Axis("N", 4)
    rng = np.random.default_rng(4)
    f = gc.constant(rng.normal(size=(2, 2, 2, 3)).round(2), axes=[M, W - 1, H - 1, C - 1], name="f")
    img = gc.placeholder(axes=[C, H, W, N], name="images")
    return gc.graph([gc.dot(f, img, name="scores")])


def _broadcasting_order() -> Graph:
    C, H, W, N = gc.Axis("C", 2), gc.Axis("H", 3), gc.Axis("W", 2), gc.Axis("N", 2)
    a = gc.placeholder(axes=[C, H], name="a")
    b = gc.placeholder(axes=[W, H, N], name="b")
    return gc.graph([gc.add(a, b, name="a+b"), gc.add(b, a, name="b+a")])


def _reductions() -> Graph:
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 4)
    x = gc.constant(np.arange(24.0).reshape(2, 3, 4), axes=[H, W, N], name="x")
    return gc.graph(
        [
            gc.sum(x, reduction_axes=[W], name="sum over W"),
            gc.max(x, out_axes=[N, H], name="max to (N, H)"),
            gc.mean(x, name="mean of all"),
        ]
    )


def _cast_axes() -> Graph:
    H, K = gc.Axis("H", 3), gc.Axis("K", 3)
    a = gc.constant([1.0, 2.0, 3.0], axes=[H], name="a")
    b = gc.constant([10.0, 20.0, 30.0], axes=[K], name="b")
    outer = gc.add(gc.broadcast(a, [H, K], name="a over (H, K)"), b, name="outer sum (H, K)")
    same = gc.add(a, gc.cast_axes(b, [H], name="b as H"), name="elementwise (H)")
    return gc.graph([outer, same])


def _mlp() -> Graph:
    B = gc.Axis("B", 4, batch=True, doc="examples in a batch")
    F, D, K = gc.Axis("F", 3, doc="features"), gc.Axis("D", 5, doc="hidden"), gc.Axis("K", 2)
    rng = np.random.default_rng(1)
    x = gc.placeholder(axes=[B, F], name="x")
    w1 = gc.constant(rng.normal(size=(3, 5)).round(2), axes=[F + 1, D], name="w1")
    b1 = gc.constant(np.zeros(5), axes=[D], name="b1")
    w2 = gc.constant(rng.normal(size=(5, 2)).round(2), axes=[D + 1, K], name="w2")
    b2 = gc.constant(np.zeros(2), axes=[K], name="b2")
    h = gc.relu(gc.dot(x, w1) + b1, name="hidden")
    y = gc.sigmoid(gc.dot(h, w2) + b2, name="y")
    return gc.graph([y])


def _conv2d() -> Graph:
    C = gc.Axis("C", 2, roles="Channel")
    Y, X = gc.Axis("Y", 8, roles="Height"), gc.Axis("X", 8, roles="Width")
    N = gc.Axis("N", 2, batch=True)
    R, S = gc.Axis("R", 3, roles="Height"), gc.Axis("S", 3, roles="Width")
    K = gc.Axis("K", 4, roles="Channelout")
    P, Q = gc.Axis("P", 8, roles="Height"), gc.Axis("Q", 8, roles="Width")
    rng = np.random.default_rng(2)
    img = gc.placeholder(axes=[C, Y, X, N], name="images")
    f = gc.constant(rng.normal(size=(2, 3, 3, 4)).round(2), axes=[C - 1, R, S, K], name="filter")
    out = gc.conv2d(img, f, [K, P, Q, N], padding=1, name="features")
    g = gc.graph([out])
    assert out.op_id is not None
    shard(g, out.op_id, dim="P", parts=2)
    return g


def _pad() -> Graph:
    T, T2 = gc.Axis("T", 4, roles="Time"), gc.Axis("T2", 7, roles="Time")
    C = gc.Axis("C", 2, roles="Channel")
    x = gc.constant(np.arange(1.0, 9.0).reshape(4, 2), axes=[T, C], name="signal")
    padded = gc.pad(x, {T: (2, 1)}, axes={T: T2}, name="padded")
    g = gc.graph([padded])
    assert padded.op_id is not None
    shard(g, padded.op_id, dim="T2", sizes=[2, 3, 2])
    return g


EXAMPLES: dict[str, Example] = {
    "dot-2d": Example(
        "Dual-axis dot in 2-D",
        "x has axes (H, W-1) and y has (W, N). W-1 is W's dual: dot pairs W-1 with W, multiplies "
        "and sums. The pair's lower level is in x, so x·y is (H, N); in y·x the lower level is in "
        "the second operand, whose free axes come first — both orders give (H, N).",
        _dot_2d,
    ),
    "dot-4d": Example(
        "Dual-axis dot in 4-D, duals in any order",
        "(M, W-1, H-1, C-1)·(C, H, W, N) pairs each dual with its axis wherever it stands and "
        "gives (M, N): no transposes, no einsum string.",
        _dot_4d,
    ),
    "broadcasting-order": Example(
        "Broadcasting order",
        "Elementwise results take the first operand's axes, then each next operand's new axes in "
        "its order: (C, H) + (W, H, N) is (C, H, W, N), and (W, H, N) + (C, H) is (W, H, N, C). "
        "Matching is by axis, never by position.",
        _broadcasting_order,
    ),
    "reductions": Example(
        "Reductions with reduction_axes and out_axes",
        "sum over W leaves (H, N); max to out_axes (N, H) keeps exactly those, in that order; a "
        "reduction with neither reduces everything. A reduced axis is not an index axis, so its "
        "projection row is zero and its shape is the full length.",
        _reductions,
    ),
    "cast-axes": Example(
        "cast_axes avoids the accidental outer product",
        "a has axis H and b has K, both of length 3. a + b alone would be an outer sum over "
        "(H, K), and the checker warns about it (AccidentalBroadcast: the operands share no "
        "axis). Broadcasting a to (H, K) first says the outer sum is meant; relabelling b as H "
        "(cast_axes, no data moves) gives the elementwise sum.",
        _cast_axes,
    ),
    "mlp": Example(
        "A small MLP",
        "x (B, F) through two dense layers: dot with weights (F+1, D) and (D+1, K), biases added "
        "by axis, relu and sigmoid. F+1 is F's dual one level up, so dot pairs it with x's F; "
        "the lower level is in x, so x's free axes come first: (B, D), then (B, K).",
        _mlp,
    ),
    "conv2d-halos": Example(
        "conv2d sharded over height, with halos",
        "A 3x3 convolution of images (C, Y, X, N) into (K, P, Q, N) with padding 1, so the "
        "output keeps the input's height and width (P and Q are 8, like Y and X), cut into two "
        "applications over the output height P. Each shard reads a window of input rows: the "
        "two read ranges overlap by two rows (the halo), and at the image's edge the window "
        "reaches past it into the zero padding, so a shard reads only the rows that exist. The "
        "output shards partition (K, P, Q, N).",
        _conv2d,
    ),
    "pad-new-axis": Example(
        "pad gives a new axis",
        "Zero-padding the signal (T, C) by 2 before and 1 after along T changes its length from "
        "4 to 7, so the result needs a new axis: T2. Reusing T for a different length would be "
        "an error. Cut into three applications over T2, the first shard lies wholly in the "
        "padding and reads no row of the signal: its projection [-2:0] is clipped to the "
        "signal's range, which leaves nothing to read.",
        _pad,
    ),
}
"""The gallery, by slug, in the order it is shown."""


def build(slug: str) -> Graph:
    """Build the gallery example ``slug``; :class:`~geon.core.errors.GeonError` names the valid
    slugs when there is no such example."""
    example = EXAMPLES.get(slug)
    if example is None:
        raise gc.GeonError(
            f'gallery example "{slug}" does not exist; expected one of '
            + "("
            + ", ".join(f'"{s}"' for s in EXAMPLES)
            + ")"
        )
    return example.build()
