"""Shape inference of the positional loom kernels ``op:linear``, ``matmul`` and ``row_sum``:
shapes in, shapes and projections out (DESIGN.md §4); and NumPy's broadcast of the positional
elementwise kernels' operand shapes (:func:`broadcast_shape`), which the checker's
``PositionalKernelAgreement`` and the executor both apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from geon.core.axes import Ref
from geon.core.errors import KernelError, ShapeError
from geon.core.ops.catalogue import Kernel, check_io, kernel
from geon.core.ops.inference import Dim, access_json, identity_dims, operand_start

Shape = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PositionalInference:
    """Shape inference of a positional loom kernel: the result shape and, per operand, dims
    whose extents are plain ints (the ``dims`` of :class:`Inference` with ``int`` extents).

    >>> p = infer_positional("matmul", {"x": [(2, 3)], "y": [(3, 4)]})
    >>> p.result, p.signature()["inputs"]["y"][0]["shape"]
    ((2, 4), [3, 1])
    """

    kernel: str
    result: tuple[int, ...]
    dims: tuple[tuple[str, tuple[tuple[Dim, ...], ...]], ...] = field(hash=False)

    def signature(
        self, starts: Mapping[str, Sequence[Sequence[int]]] | None = None
    ) -> dict[str, Any]:
        """The ``IPFSignature`` (loom's own derivation for these kernels)."""
        sig: dict[str, Any] = {"inputs": {}, "outputs": {}}
        for key, operands in self.dims:
            side = "outputs" if key == "result" else "inputs"
            sig[side][key] = [
                access_json(d, operand_start(starts, key, pos, len(d)), len(self.result), _no_refs)
                for pos, d in enumerate(operands)
            ]
        return sig


def _no_refs(ref: Ref) -> int:  # positional dims carry int extents only
    raise ShapeError(f'positional kernels have no axes; got "{ref}"')


def infer_positional(
    kernel_name: str, shapes: Mapping[str, Sequence[Sequence[int]]]
) -> PositionalInference:
    """Infer a positional kernel (``op:linear``, ``matmul``, ``row_sum``) from operand shapes
    (loom's rules: ``x[*batch, features]·A[features, out] + b[out]``, ``x[n, k]·y[k, m]``,
    ``tensor[n, m] -> [n]``); :class:`ShapeError` names the disagreeing dims."""
    k = kernel(kernel_name)
    if k.named:
        raise KernelError(f'kernel "{k.name}" is named; use infer() with the operands\' axes')
    check_io(k, shapes)
    one = {key: tuple(int(n) for n in group[0]) for key, group in shapes.items() if group}
    ident = identity_dims
    if k.name == "row_sum":
        t = one["tensor"]
        if len(t) != 2:
            raise ShapeError(f"row_sum reads a matrix [n, m]; got shape {list(t)}")
        dims = {"tensor": (Dim(terms=((0, 1),)), Dim(extent=t[1]))}
        return _positional(k, (t[0],), dims)
    if k.name == "matmul":
        x, y = one["x"], one["y"]
        if len(x) != 2 or len(y) != 2 or x[1] != y[0]:
            raise ShapeError(
                f"matmul reads x[n, k] and y[k, m] with the same k; got x {list(x)} and y {list(y)}"
            )
        dims = {
            "x": (Dim(terms=((0, 1),)), Dim(extent=x[1])),
            "y": (Dim(extent=y[0]), Dim(terms=((1, 1),))),
        }
        return _positional(k, (x[0], y[1]), dims)
    x, a = one["x"], one["A"]
    if len(x) < 1 or len(a) != 2 or x[-1] != a[0]:
        raise ShapeError(
            f"op:linear reads x[*batch, features] and A[features, out] with the same features; "
            f"got x {list(x)} and A {list(a)}"
        )
    batch = len(x) - 1
    out = (*x[:-1], a[1])
    lin: dict[str, tuple[Dim, ...]] = {
        "x": (*ident(batch), Dim(extent=x[-1])),
        "A": (Dim(extent=a[0]), Dim(terms=((batch, 1),))),
    }
    if "b" in one:
        if one["b"] != (a[1],):
            raise ShapeError(f"op:linear reads b[out] with out = {a[1]}; got b {list(one['b'])}")
        lin["b"] = (Dim(terms=((batch, 1),)),)
    return _positional(k, out, lin)


def _positional(
    k: Kernel, result: tuple[int, ...], dims: Mapping[str, tuple[Dim, ...]]
) -> PositionalInference:
    ordered = [(key, (dims[key],)) for key in k.inputs if key in dims]
    ordered.append(("result", (identity_dims(len(result)),)))
    return PositionalInference(k.name, result, tuple(ordered))


def broadcast_shape(shapes: Sequence[Shape]) -> Shape | None:
    """NumPy's broadcast of ``shapes`` (aligned from the right), or None when they clash.

    >>> broadcast_shape([(2, 3), (3,)]), broadcast_shape([(2, 3), (2,)])
    ((2, 3), None)
    """
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, n in enumerate(s, start=rank - len(s)):
            if n != 1 and out[i] not in (1, n):
                return None
            out[i] = n if n != 1 else out[i]
    return tuple(out)
