"""The kernel catalogue: IO keys, axis inference and derived index projections (DESIGN.md §2, §4).

>>> from geon.core.axes import Axes, Axis
>>> H, W, N = Axis("H", 2), Axis("W", 3), Axis("N", 4)
>>> inf = infer("op:dot", {"x": [Axes.of([H, W - 1])], "y": [Axes.of([W, N])]})
>>> str(inf.result), str(inf.index)
('(H, N)', '(H, N)')
>>> inf.signature()["inputs"]["x"][0]
{'affineMap': {'projection': [[1, 0], [0, 0]], 'offset': [0, 0]}, 'shape': [1, 3]}

One function, :func:`infer`, serves every consumer:

- the **builder** turns a Python call into canonical JSON ``params`` and calls :func:`infer`, so
  what it writes into a document is exactly what the checker re-derives;
- the **checker** (:mod:`geon.core.checks.axes`) re-runs :func:`infer` on the axes it reads from a
  stored document and reports any :class:`~geon.core.errors.GeonError` as an issue;
- the **executor** reads an :class:`Inference`: the result axes, the canonical params and, per
  operand, one :class:`Dim` per tensor dim saying which index axis (column) it follows, with what
  step and offset, or that it is contracted/reduced (no column; ``extent`` = its full length);
  ``plan`` adds kernel-specific facts (``pairs`` for dot, ``reduced`` for reductions, ...);
- the **editor** mirrors :func:`infer` in TypeScript and runs the same table of cases
  (``tests/core/axis_cases.json``, built by :func:`run_case`).

Modules: :mod:`~geon.core.ops.catalogue` (the kernels and their IO keys),
:mod:`~geon.core.ops.inference` (:class:`Inference`, :class:`Dim`, signatures and selections),
:mod:`~geon.core.ops.params` (reading params), :mod:`~geon.core.ops.dispatch` (:func:`infer`,
:func:`run_case`) and one module of rules per family: :mod:`~geon.core.ops.arithmetic`
(elementwise, dot, reductions), :mod:`~geon.core.ops.normalization` (softmax, layer norm),
:mod:`~geon.core.ops.views`, :mod:`~geon.core.ops.conv` (conv2d and pooling),
:mod:`~geon.core.ops.combine` (concat and where) and
:mod:`~geon.core.ops.positional` (loom's kernels).

Params (JSON, as stored in ``Operation.body.params``; axis references are strings):

=====================  ===========================================================================
kernel                 params
=====================  ===========================================================================
n-ary / binary         ``{"axes"?: [ref...]}`` — another order of the inferred result axes
dot                    ``{"axes"?: [ref...]}`` — another order of the result axes (default: the
                       free axes of the operand holding the lower levels, then the other's)
gelu                   ``{"approximate"?: "none" | "tanh"}`` — the exact erf form by default
dot_partial            ``{"parts": {"axis": F, "into": P}}`` — partial products over P parts of F
reductions             ``{"reduction_axes"?: [ref...], "out_axes"?: [ref...]}`` — neither = all;
                       ``"parts"?: {"axis": R, "into": P}`` — partial, one per part of R
softmax                ``{"reduction_axes": [ref...]}`` — the axes normalised over
layer_norm             ``{"reduction_axes": [ref...], "epsilon"?: number}`` — default 1e-05
cast_axes, broadcast,  ``{"axes": [ref...]}``
dimshuffle
slice                  ``{"slices": {ref: {"start", "stop", "step"} | int}, "axes"?: {ref: ref}}``
pad                    ``{"pad": {ref: [before, after]}, "axes"?: {ref: ref}}``
flatten                ``{"axes": [ref...]}`` — adjacent axes, merged into ``"A*B"``
unflatten              ``{"axes"?: ["A*B", ...]}`` — default every composite axis
conv2d                 ``{"out_axes": [ref...], "stride"?: n | [sh, sw], "padding"?: n | [ph, pw]}``
max_pool2d,            ``{"out_axes": [ref...], "kernel_size": n | [kh, kw], "stride"?: n | [sh,
avg_pool2d             sw], "padding"?: n | [ph, pw]}`` (stride defaults to kernel_size); avg adds
                       ``"count_include_pad"?: bool`` (default true); ``"dilation"`` 1 and
                       ``"ceil_mode"`` false are the only values accepted
concat                 ``{"along": [ref per operand], "axis": ref}`` — the joined axis of each
                       operand, and the result's new axis (length: their sum)
where                  ``{"axes"?: [ref...]}`` — as n-ary (operands ``x``, ``y``, ``condition``)
=====================  ===========================================================================

``Inference.plan`` (kernel facts for the executor; dims are positions in the operand):

- n-ary / binary: ``align`` — per operand, the result position of each of its dims;
- dot: ``pairs`` — ``[x dim, y dim]`` per contracted pair; ``lower`` — ``"x"`` or ``"y"``;
  dot_partial adds ``parts`` — ``{"x": dim, "y": dim, "chunk": n}``, the split pair and its chunk;
- reductions: ``reduced`` — the input dims reduced (the rest keep their order via ``dims``);
  with parts, ``parts`` — ``{"dim": d, "chunk": n}``, the split dim and its chunk;
- softmax, layer_norm: ``reduced`` — the operand dims normalised over; ``scale`` / ``bias`` —
  per dim of that input, the operand dim it is;
- slice: ``slices`` — per input dim ``None`` (kept), an int (dropped at that index) or
  ``(start, stop, step)`` as ``slice.indices`` gives them;
- pad: ``pad`` — per input dim ``[before, after]``;
- flatten: ``first``, ``count`` — the merged group;
- concat: ``dim`` — the result position of the joined axis; ``along`` — per operand, its joined
  dim; ``perm`` — per operand, the permutation putting its dims in the result's order;
- where: ``align`` as n-ary;
- conv2d: ``x`` / ``filter`` / ``out`` — the dims with each role, ``batch`` — x's batch dims;
- max_pool2d, avg_pool2d: ``height`` / ``width`` — the pooled input dims; ``out`` — the result
  position of each other input dim; ``out_height`` / ``out_width`` — the pooled result dims.

Index space. For a named op it is the result axes (``IndexAxes``), with two exceptions written
down here: ``op:flatten``'s index space is its *input* axes, because the composite output dim is
an affine function of them (``H*W`` = ``W·h + w``) while the inverse is not; so a flatten can be
sharded over its outer axis and its output projection is the row-major merge. And a
normalization's (``op:softmax``, ``op:layer_norm``) is its result axes *less the normalised
ones*, which every application reads and writes whole (zero rows of full shape, as a reduction
reads its reduced axes), so no split can cut them (:mod:`~geon.core.ops.normalization`,
docs/kernels.md).

Derived projections (DESIGN.md §4): an operand dim that follows index axis ``i`` has its
coefficient (1, a slice step, a conv stride) in column ``i``; a contracted or reduced dim is a
zero row whose ``shape`` entry is its full length; an index axis an operand lacks (broadcast) is a
zero column; the offset is the selection's ``range.start`` plus slice starts, minus pad widths
(and conv padding); a conv window has ``shape`` = window length and the stride in the projection,
so shards of a conv over height read overlapping rows (halos); a pooling window is the same
row with ``shape`` = ``kernel_size``.
"""

from __future__ import annotations

from geon.core.ops.catalogue import (
    BINARY,
    CATALOGUE,
    NARY,
    NORMALIZATIONS,
    POOLS,
    POSITIONAL,
    REDUCTIONS,
    UNARY,
    VIEWS,
    Family,
    Kernel,
    catalogue_json,
    check_io,
    kernel,
)
from geon.core.ops.dispatch import infer, run_case
from geon.core.ops.inference import Dim, Inference
from geon.core.ops.positional import infer_positional

__all__ = [
    "BINARY",
    "CATALOGUE",
    "NARY",
    "NORMALIZATIONS",
    "POOLS",
    "POSITIONAL",
    "REDUCTIONS",
    "UNARY",
    "VIEWS",
    "Dim",
    "Family",
    "Inference",
    "Kernel",
    "catalogue_json",
    "check_io",
    "infer",
    "infer_positional",
    "kernel",
    "run_case",
]
