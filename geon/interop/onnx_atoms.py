"""Axes of the ONNX importer (:mod:`geon.interop.onnx_import`): the union-find of dims, the
factoring of dims into atomic axes across reshapes, and the naming of axes.

The rule (issue #20, the head axis). Unification makes one class of every set of dims an
operator forces equal. A ``Reshape`` (or ``Flatten``) matches its dims in groups of equal
product (:func:`~geon.interop.onnx_rewrite.reshape_groups`); a group of several dims on either
side makes each dim a product of **atoms**: the coarsest factoring on which both sides agree.
PyTorch's attention reshapes ``q (S, B, E)`` to ``(S, B*H, Dh)``: the group ``(B, E) -> (B*H,
Dh)`` has cumulative products ``2, 64`` and ``8, 64``, so both sides split at ``2, 8, 64``: ``E``
becomes ``H x Dh``, the fused ``B*H`` becomes ``B x H``, and the reshape that later splits
``B*H`` back into ``(B, H)`` finds the same atoms. Every tensor carries the atoms of its dims as
separate geon axes, so heads are one axis from the projection that makes them (its weight's
``96`` is ``3 x H x Dh``) to the projection that contracts them, and a reshape between
matching atoms is no operation at all. Factoring is global: an atom split by one reshape is
split in every tensor that holds it. A group is left as it was (``flatten``, ``cast_axes``,
``unflatten`` over fresh axes) when its cumulative products do not divide each other (``(2, 3,
4) -> (4, 6)``: no common factoring) or when lining its atoms up would give one tensor the same
axis twice (attention's queries and keys keep two sequence axes).

Weights and constants are stored in their atoms' shape (the ``.npz`` the importer writes holds
``(32, 3, 4, 8)`` for an ONNX ``(32, 96)`` projection); graph inputs and outputs keep the ONNX
shape: a factored input is ``unflatten``-ed after it is read, a factored output ``flatten``-ed
before it is written. Operators the importer maps atom by atom (elementwise, Transpose,
MatMul, Gemm, reductions, Softmax, LayerNormalization, Reshape, Squeeze, Unsqueeze, Gather)
read the atoms; the others see each factored dim as one composite axis ``A*B`` (a ``flatten``)
and their result is unflattened.

>>> f = Factors()
>>> a, b = f.new(2, {"x"}), f.new(32, {"x"})
>>> bh, dh = f.new(8, {"y"}), f.new(8, {"y"})
>>> f.line_up([a, b], [bh, dh])
True
>>> [f.length[x] for x in f.expand(b)], [f.length[x] for x in f.expand(bh)]
([4, 8], [2, 4])
>>> f.find(f.expand(bh)[1]) == f.find(f.expand(b)[0])
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from geon.core.axes import Axis, AxisRef, CompositeRef, Ref
from geon.core.builder import Tensor
from geon.core.builder import functions as F

_Importer = Any  # geon.interop.onnx_import._Importer (imported there, not here: no cycle)


class UnionFind:
    """Dims ``(value, i)`` with cannot-link: two dims of one value never share a class."""

    def __init__(self) -> None:
        self.parent: dict[tuple[str, int], tuple[str, int]] = {}
        self.values: dict[tuple[str, int], set[str]] = {}

    def add(self, value: str, rank: int) -> None:
        for i in range(rank):
            key = (value, i)
            if key not in self.parent:
                self.parent[key] = key
                self.values[key] = {value}

    def find(self, key: tuple[str, int]) -> tuple[str, int]:
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:
            self.parent[key], key = root, self.parent[key]
        return root

    def union(self, a: tuple[str, int], b: tuple[str, int]) -> None:
        if a not in self.parent or b not in self.parent:
            return
        ra, rb = self.find(a), self.find(b)
        if ra == rb or self.values[ra] & self.values[rb]:
            return
        if len(self.values[ra]) < len(self.values[rb]):
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.values[ra] |= self.values.pop(rb)


class Factors:
    """Atoms: a union-find whose leaves can be split into children (an atom of length 32 into
    atoms of 4 and 8), with cannot-link on the values holding them."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.length: list[int] = []
        self.children: dict[int, list[int]] = {}
        self.values: dict[int, set[str]] = {}
        self.fixed: set[int] = set()  # roots that may not be split (a conv's channels...)

    def new(self, length: int, values: set[str]) -> int:
        self.parent.append(len(self.parent))
        self.length.append(length)
        self.values[len(self.parent) - 1] = set(values)
        return len(self.parent) - 1

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def expand(self, a: int) -> list[int]:
        """The leaf atoms of ``a``, in order."""
        r = self.find(a)
        kids = self.children.get(r)
        return [r] if kids is None else [x for k in kids for x in self.expand(k)]

    def _split_at(self, seq: list[int], cuts: list[int]) -> bool:
        p = 1
        for a in seq:
            lo, hi = p, p * self.length[a]
            inner = [c for c in cuts if lo < c < hi]
            if inner and a in self.fixed:
                return False
            if inner:
                bounds = [lo, *inner, hi]
                pieces = [hi_ // lo_ for lo_, hi_ in pairwise(bounds)]
                self.children[a] = [self.new(k, self.values[a]) for k in pieces]
            p = hi
        return True

    def _roll_back(self, n0: int) -> None:
        for k in [k for k in self.children if max(self.children[k]) >= n0]:
            del self.children[k]
        for k in range(n0, len(self.parent)):
            del self.values[k]
        del self.parent[n0:], self.length[n0:]

    def line_up(self, left: Sequence[int], right: Sequence[int]) -> bool:
        """Split the atoms of ``left`` and ``right`` (same product) to their common factoring
        and unite them position by position; False, and nothing changed, when there is no
        common factoring or when a union would give one value the same atom twice."""
        n0 = len(self.parent)
        seq = lambda xs: [y for x in xs for y in self.expand(x)]  # noqa: E731
        a, b = seq(left), seq(right)
        cuts = sorted(set(_cumulative(self.length, a)) | set(_cumulative(self.length, b)))
        if any(hi % lo for lo, hi in pairwise(cuts)):
            return False
        if not (self._split_at(a, cuts) and self._split_at(seq(right), cuts)):
            self._roll_back(n0)
            return False
        a, b = seq(left), seq(right)
        rep: dict[int, int] = {}
        vals: dict[int, set[str]] = {}

        def top(x: int) -> int:
            while x in rep:
                x = rep[x]
            return x

        pairs = list(zip(a, b, strict=True))
        for x, y in pairs:
            x, y = top(x), top(y)
            if x == y:
                continue
            vx, vy = vals.get(x, self.values[x]), vals.get(y, self.values[y])
            if vx & vy:
                self._roll_back(n0)
                return False
            rep[y], vals[x] = x, vx | vy
        for x, y in pairs:
            rx, ry = self.find(x), self.find(y)
            if rx != ry:
                self.parent[ry] = rx
                self.values[rx] |= self.values.pop(ry)
                if ry in self.fixed:
                    self.fixed.add(rx)
        return True


def _cumulative(length: list[int], seq: list[int]) -> list[int]:
    out, p = [], 1
    for a in seq:
        p *= length[a]
        out.append(p)
    return out


def refine(imp: _Importer) -> None:
    """Factor the dim classes across the importer's reshape groups (``imp.reshapes``): sets
    ``imp.atoms_of`` (class root -> leaf atoms) on ``imp.factors``. The dims of a Conv or pool
    (and of :data:`~geon.interop.onnx_common.LAYERED` operators) are never split."""
    from geon.interop.onnx_common import LAYERED, WINDOWED

    uf, f = imp.uf, imp.factors
    atom: dict[tuple[str, int], int] = {}

    def of(key: tuple[str, int]) -> int:
        root = uf.find(key)
        if root not in atom:
            atom[root] = f.new(imp.shapes[root[0]][root[1]], uf.values[root])
        return atom[root]

    for key in uf.parent:
        of(key)
    for n in imp.nodes:  # their kernels need each dim whole (roles, a concatenated axis...)
        if n.op_type in (*WINDOWED, *LAYERED):
            for v in (*n.input, *n.output):
                for i in range(len(imp.shapes.get(v, ())) if (v, 0) in uf.parent else 0):
                    f.fixed.add(of((v, i)))
    for src, dst, gi, go in imp.reshapes:
        if all((src, i) in uf.parent for i in gi) and all((dst, j) in uf.parent for j in go):
            f.line_up([of((src, i)) for i in gi], [of((dst, j)) for j in go])
    imp.atoms_of = {root: f.expand(a) for root, a in atom.items()}


def name_axes(imp: _Importer) -> None:
    """One :class:`Axis` per atom, named after a ``dim_param`` of a class that is that one atom
    (``batch``) or ``d<length>``; sets ``imp.refs`` (one reference per ONNX dim, a composite
    for a factored dim) and ``imp.parts`` (the atoms of each dim)."""
    uf, f = imp.uf, imp.factors
    members: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for key in uf.parent:
        members.setdefault(uf.find(key), []).append(key)
    sole: dict[int, list[tuple[str, int]]] = {}
    for root, atoms in imp.atoms_of.items():
        if len(atoms) == 1:
            sole.setdefault(atoms[0], []).append(root)
    used: set[str] = set()
    tried: dict[str, int] = {}  # per base name, the last suffix tried (no rescans: issue #34)
    axis_of: dict[int, Axis] = {}
    order = {v.name: k for k, v in enumerate(imp.g.input)}
    for root, _ in sorted(
        members.items(), key=lambda kv: min(order.get(k[0], 1 << 30) for k in kv[1])
    ):
        for a in imp.atoms_of[root]:
            if a in axis_of:
                continue
            keys = [k for r in sole.get(a, []) for k in members[r]]
            names = sorted({imp.params[k] for k in keys if k in imp.params})
            base = _ident(names[0]) if names else f"d{f.length[a]}"
            name, n = base, tried.get(base, 1)
            while name in used:
                n += 1
                name = f"{base}_{n}"
            tried[base] = n
            used.add(name)
            roles = sorted({r for k in keys for r in imp.roles.get(k, ())})
            axis_of[a] = Axis(name, f.length[a], roles=roles)
    for v, shape in imp.shapes.items():
        if v in imp.arguments or ((v, 0) not in uf.parent and shape):
            continue
        dims = [[AxisRef(axis_of[a]) for a in imp.atoms_of[uf.find((v, i))]]
                for i in range(len(shape))]  # fmt: skip
        imp.parts[v] = dims
        imp.refs[v] = [d[0] if len(d) == 1 else CompositeRef.of(d) for d in dims]


def _ident(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return s if re.match(r"[A-Za-z_]", s) else f"a_{s}"


# -- tensors in atoms ----------------------------------------------------------------------
def flat(dims: Sequence[Sequence[Ref]]) -> list[Ref]:
    """The atoms of ``dims``, in order."""
    return [a for d in dims for a in d]


def grouped(t: Tensor, counts: Sequence[int]) -> list[list[Ref]]:
    """``t``'s axes grouped by ONNX dim (``counts`` atoms each)."""
    out, p = [], 0
    for c in counts:
        out.append(list(t.axes[p : p + c]))
        p += c
    return out


def counts(dims: Sequence[Sequence[Ref]]) -> list[int]:
    return [len(d) for d in dims]


def _strs(refs: Sequence[Any]) -> list[str]:
    return [str(r) for r in refs]


def conform_dims(t: Tensor, have: Sequence[int], want: Sequence[Sequence[Ref]]) -> Tensor:
    """``t`` (its axes: ``have[i]`` atoms per dim) relabelled so its axes are ``want``'s atoms:
    a ``cast_axes`` where each dim keeps its atoms' lengths, else that dim is flattened, cast to
    the composite of the wanted atoms and unflattened."""
    if _strs(t.axes) == _strs(flat(want)):
        return t
    now: list[Any] = []
    split: list[CompositeRef] = []
    p = 0
    for c, w in zip(have, want, strict=True):
        part = list(t.axes[p : p + c])
        if [r.length for r in part] == [r.length for r in w]:
            now += w
            p += c
            continue
        if c > 1:
            t = F.flatten(t, part)
        whole: Any = w[0] if len(w) == 1 else CompositeRef.of(w)
        if len(w) > 1:
            split.append(whole)
        now.append(whole)
        p += 1
    if _strs(t.axes) != _strs(now):
        t = F.cast_axes(t, now)
    return F.unflatten(t, split) if split else t


def emit_reshape(imp: _Importer, n: Any) -> Tensor:
    """A Reshape or Flatten: each dim group's atoms relabelled to the output's (nothing where
    the reshape only regroups atoms; flatten, cast and unflatten where it is opaque)."""
    from geon.interop.onnx_rewrite import reshape_groups

    src, out = n.input[0], n.output[0]
    x = imp.atoms(src)
    s, so = imp.shapes[src], imp.shapes[out]
    din, dout = imp.parts[src], imp.parts[out]
    g = grouped(x, counts(din))
    ones: dict[Any, Any] = {g[i][0]: 0 for i, d in enumerate(s) if d == 1}
    if ones:
        x = F.slice(x, ones)
    have, want = [], []
    for gi, go in reshape_groups(s, so):
        have.append(sum(len(din[i]) for i in gi))
        want.append([a for j in go for a in dout[j]])
    x = conform_dims(x, have, want)
    if len(x.axes) != len(flat(dout)):
        x = F.broadcast(x, flat(dout))
    return x
