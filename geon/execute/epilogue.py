"""Epilogues fused into a conv (issue #34): a conv2d's bias ``add``, and the ``relu`` after it,
run inside the conv's step, on each image's output while the cache still holds it.

The ONNX importer says a ``Conv`` with a bias as ``op:conv2d`` then an ``op:add`` of the bias
along the output channels, and PyTorch's ``ReLU`` after it is one more ``op:relu``: run as
written, each is a pass over the whole output (the benchmark CNN's first conv writes 4 MB). When
the plan is compiled, :func:`fuse_epilogues` folds such an add (and a relu that alone reads its
result) into the conv's unit: the unit reads the bias as a third operand and writes the last
fused op's tensor, and :func:`~geon.execute.kernels._lower_conv` adds the bias and clamps each
image's ``(K, P·Q)`` block right after its product (``local["epilogue"]``: whether it clamps).
The tensors in between are neither computed, nor inputs, nor outputs; the plan has no step and
the run no timing for the fused ops (their seconds are in the conv's).

Only logical plans fuse (a sharded plan's steps stay one per operation, as the measured moves
count them), and only what runs exactly as the three kernels would: one conv unit and one
reader per fused tensor, none of them kept, the bias a 1-D operand along the conv's output
channels, every tensor of one floating dtype, the add's result in the conv's order of dims.
"""

from __future__ import annotations

from collections.abc import Callable

from geon.execute.contract import FLOATS
from geon.execute.regions import Read, Unit

__all__ = ["fuse_epilogues"]


def _only_reader(units: list[Unit], readers: dict[int, list[int]], w: Unit) -> int | None:
    """The unit that alone reads all of ``w``'s output (once, whole), else None."""
    rs = readers.get(w.out[0], [])
    if len(rs) != 1:
        return None
    reads = [r for r in units[rs[0]].reads if r.tensor == w.out[0]]
    if len(reads) != 1 or reads[0].region != w.out[1] or reads[0].inside != w.out[1]:
        return None
    return rs[0]


def _bias(conv: Unit, add: Unit) -> Read | None:
    """The bias ``add`` adds to ``conv``'s result: its other operand, when that is 1-D along
    the conv's output channels and the add keeps the conv's order of dims."""
    assert conv.inf is not None and add.inf is not None
    if len(add.reads) != 2 or add.out[1].shape != conv.out[1].shape:
        return None
    first = 0 if add.reads[0].tensor == conv.out[0] else 1
    bias = add.reads[1 - first]
    maps = [[int(d) for d in m] for m in add.inf.plan["align"]]
    channel = int(conv.inf.plan["out"]["channelout"])
    k = conv.out[1].shape[channel]
    if maps[first] != list(range(len(conv.out[1].shape))) or maps[1 - first] != [channel]:
        return None
    if bias.region.shape != (k,) or bias.inside != bias.region:
        return None
    return bias


def _clamps(relu: Unit, add: Unit, dtype_of: Callable[[int], str]) -> bool:
    """Whether ``relu`` (the one reader of ``add``'s result) is a relu that may be fused."""
    return (
        relu.kernel == "op:relu"
        and relu.app is None
        and relu.out[1].shape == add.out[1].shape
        and dtype_of(relu.out[0]) == dtype_of(add.out[0])
    )


def fuse_epilogues(
    units: list[Unit], keep: set[int], dtype_of: Callable[[int], str]
) -> tuple[list[Unit], set[int]]:
    """``units`` with every conv's bias add (and the relu after it) folded into the conv's unit
    (see the module's rules), and the tensors no longer computed."""
    readers: dict[int, list[int]] = {}
    written_at: dict[int, list[int]] = {}
    for n, u in enumerate(units):
        written_at.setdefault(u.out[0], []).append(n)
        for read in u.reads:
            readers.setdefault(read.tensor, []).append(n)
    dropped: set[int] = set()
    gone: set[int] = set()
    for n, conv in enumerate(units):
        if conv.kernel != "op:conv2d" or conv.inf is None or conv.app is not None:
            continue
        a = _only_reader(units, readers, conv)
        if a is None or conv.out[0] in keep or len(written_at[conv.out[0]]) != 1:
            continue
        add = units[a]
        if add.kernel != "op:add" or add.inf is None or add.app is not None:
            continue
        bias = _bias(conv, add)
        if bias is None or any(w >= n for w in written_at.get(bias.tensor, [])):
            continue  # no bias, or one computed after the conv: it is not there yet
        dtypes = {dtype_of(t) for t in (conv.out[0], add.out[0], bias.tensor)}
        if len(dtypes) != 1 or next(iter(dtypes)) not in FLOATS:
            continue
        gone.add(conv.out[0])
        dropped.add(a)
        last = add
        r = _only_reader(units, readers, add)
        if r is not None and add.out[0] not in keep and _clamps(units[r], add, dtype_of):
            gone.add(add.out[0])
            dropped.add(r)
            last = units[r]
        conv.reads = [*conv.reads, bias]
        conv.out = last.out
        conv.local["epilogue"] = last is not add
    return [u for n, u in enumerate(units) if n not in dropped], gone
