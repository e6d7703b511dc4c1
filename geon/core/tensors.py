"""Tensor descriptions: dtype, named axes and a strided layout over a base buffer (DESIGN.md §2).

>>> from geon.core.axes import Axis
>>> H, W = Axis("H", 2), Axis("W", 3)
>>> t = TensorDesc.contiguous("float32", [H, W])
>>> t.strides, t.transpose().strides, str(t.transpose().axes)
((3, 1), (1, 3), '(W-1, H-1)')
>>> t.broadcast([Axis("N", 4), H, W]).strides
(0, 3, 1)
>>> t.slice({W: slice(1, 3)}, axes={W: Axis("W2", 2)}).offset
1

Views never copy: broadcast is stride 0, dimshuffle and transpose permute strides, slice moves the
offset and multiplies strides by the step, cast relabels, flatten merges strides when the group is
contiguous (otherwise :class:`~geon.core.errors.ShapeError`: copy first), unflatten splits them.
Pad is a *complex view*: it keeps the base's layout and records the widths; positions outside
the base read zeros (:meth:`TensorDesc.materialize` shows the semantics on a NumPy buffer).
Strides and offsets count elements, not bytes. Row-major (``"C"``) is the default; ``"F"`` gives
column-major strides.

The view rules are the same as the kernels' (:func:`geon.core.ops.infer`): a view's derived
projection says which base coordinate each result index reads, so its strides are
``Σ_d stride_d · coefficient_d`` and its offset ``offset + Σ_d stride_d · offset_d``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from geon.core.axes import Axes, Axis, AxisRef, CompositeRef, Ref, RefLike, to_ref
from geon.core.dtypes import DTYPES
from geon.core.errors import ShapeError
from geon.core.ops import Inference, infer

__all__ = ["TensorDesc", "column_major_strides", "row_major_strides"]


def row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-ordered array: ``(2, 3, 4)`` -> ``(12, 4, 1)``.

    >>> row_major_strides((2, 3, 4))
    (12, 4, 1)
    """
    out: list[int] = []
    step = 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def column_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of an F-ordered array: ``(2, 3, 4)`` -> ``(1, 2, 6)``.

    >>> column_major_strides((2, 3, 4))
    (1, 2, 6)
    """
    out: list[int] = []
    step = 1
    for n in shape:
        out.append(step)
        step *= n
    return tuple(out)


def _ref_key(item: RefLike | str) -> str:
    return item if isinstance(item, str) else str(to_ref(item))


@dataclass(frozen=True, slots=True)
class TensorDesc:
    """A tensor's description: dtype, axes, strides (elements), offset, and the base it views.

    ``base`` is None for a tensor that owns its buffer; a view's ``base`` is the owning tensor.
    ``pad`` is empty, or per dim ``(before, after)`` for the complex view of :meth:`pad`.
    """

    dtype: str
    axes: Axes
    strides: tuple[int, ...]
    offset: int = 0
    base: TensorDesc | None = None
    pad_widths: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ShapeError(f'dtype "{self.dtype}" is unknown; expected one of {DTYPES}')
        if len(self.strides) != len(self.axes):
            raise ShapeError(
                f"{len(self.strides)} strides for {len(self.axes)} axes {self.axes}; "
                "expected one stride per axis"
            )

    @classmethod
    def contiguous(
        cls,
        dtype: str,
        axes: Axes | Iterable[RefLike],
        order: Literal["C", "F"] = "C",
    ) -> TensorDesc:
        """A tensor owning a fresh buffer, row-major (``"C"``) or column-major (``"F"``)."""
        ax = Axes.of(axes)
        shape = ax.shape
        if order not in ("C", "F"):
            raise ShapeError(f'order "{order}" is unknown; expected "C" or "F"')
        strides = row_major_strides(shape) if order == "C" else column_major_strides(shape)
        return cls(dtype, ax, strides)

    def replace(self, **changes: Any) -> TensorDesc:
        """A copy with the given fields changed."""
        return replace(self, **changes)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.axes.shape

    @property
    def root(self) -> TensorDesc:
        """The tensor owning the buffer."""
        return self if self.base is None else self.base

    @property
    def is_view(self) -> bool:
        return self.base is not None

    @property
    def is_row_major(self) -> bool:
        """Whether the elements are dense and C-ordered from ``offset``."""
        return self.strides == row_major_strides(self.shape) and not self.pad_widths

    # -- views -------------------------------------------------------------------------------

    def _view(
        self, kernel: str, params: Mapping[str, Any], axes: Iterable[Axis] = ()
    ) -> TensorDesc:
        if self.pad_widths:
            raise ShapeError(
                f"{kernel} cannot view a padded tensor {self.axes} without copying; copy it first"
            )
        declared = {a.name: a for a in axes}
        inf = infer(kernel, {"tensor": [self.axes]}, params, declared)
        return self._through(inf)

    def _through(self, inf: Inference) -> TensorDesc:
        dims = inf.operand_dims("tensor")
        rank = len(inf.index)
        strides = [0] * rank
        offset = self.offset
        for stride, dim in zip(self.strides, dims, strict=True):
            for col, coef in dim.terms:
                strides[col] += stride * coef
            if dim.merged:
                step = stride
                for col, part in reversed(dim.merged):
                    strides[col] += step
                    step *= part.length or 0
            offset += stride * dim.offset
        return TensorDesc(self.dtype, inf.result, tuple(strides), offset, self.root)

    def broadcast(self, axes: Iterable[RefLike]) -> TensorDesc:
        """New axes get stride 0."""
        refs = [to_ref(a) for a in axes]
        return self._view("op:broadcast", {"axes": [str(r) for r in refs]}, _declared(refs))

    def dimshuffle(self, axes: Iterable[RefLike]) -> TensorDesc:
        """The same axes in another order: permuted strides."""
        refs = [to_ref(a) for a in axes]
        return self._view("op:dimshuffle", {"axes": [str(r) for r in refs]}, _declared(refs))

    def transpose(self) -> TensorDesc:
        """Reversed axes, levels mapped k -> -1-k: reversed strides."""
        return self._view("op:transpose", {})

    @property
    def T(self) -> TensorDesc:
        return self.transpose()

    def cast(self, axes: Iterable[RefLike]) -> TensorDesc:
        """Relabel: same strides, new axes."""
        refs = [to_ref(a) for a in axes]
        return self._view("op:cast_axes", {"axes": [str(r) for r in refs]}, _declared(refs))

    def slice(
        self,
        slices: Mapping[RefLike | str, slice | int],
        axes: Mapping[RefLike | str, RefLike] | None = None,
    ) -> TensorDesc:
        """Offset + step: ``{H: slice(0, 2)}`` (an int drops the axis), renamed by ``axes``."""
        spec: dict[str, Any] = {}
        for key, s in slices.items():
            if isinstance(s, slice):
                spec[_ref_key(key)] = {"start": s.start, "stop": s.stop, "step": s.step}
            else:
                spec[_ref_key(key)] = s
        params: dict[str, Any] = {"slices": spec}
        new = [to_ref(v) for v in (axes or {}).values()]
        if axes:
            params["axes"] = {_ref_key(k): str(to_ref(v)) for k, v in axes.items()}
        return self._view("op:slice", params, _declared(new))

    def flatten(self, axes: Sequence[RefLike]) -> TensorDesc:
        """Merge adjacent axes into ``A*B``; needs the group to be contiguous among itself."""
        refs = [to_ref(a) for a in axes]
        inf = infer("op:flatten", {"tensor": [self.axes]}, {"axes": [str(r) for r in refs]})
        first = int(inf.plan["first"])
        count = int(inf.plan["count"])
        lengths = self.shape
        for i in range(first, first + count - 1):
            if self.strides[i] != self.strides[i + 1] * lengths[i + 1]:
                raise ShapeError(
                    f"flatten of {[str(r) for r in refs]} needs them contiguous, but "
                    f'"{self.axes[i]}" has stride {self.strides[i]} and "{self.axes[i + 1]}" '
                    f"stride {self.strides[i + 1]} with length {lengths[i + 1]}; copy first"
                )
        strides = (
            *self.strides[:first],
            self.strides[first + count - 1],
            *self.strides[first + count :],
        )
        return TensorDesc(self.dtype, inf.result, strides, self.offset, self.root)

    def unflatten(self, axes: Sequence[CompositeRef] | None = None) -> TensorDesc:
        """Split composite axes back into their parts."""
        params = {} if axes is None else {"axes": [str(a) for a in axes]}
        return self._view("op:unflatten", params)

    def pad(
        self,
        widths: Mapping[RefLike | str, tuple[int, int]],
        axes: Mapping[RefLike | str, RefLike] | None = None,
    ) -> TensorDesc:
        """A complex view: the base's layout plus ``(before, after)`` zeros per padded axis."""
        if self.pad_widths:
            raise ShapeError(f"cannot pad the padded tensor {self.axes} again; copy it first")
        params: dict[str, Any] = {"pad": {_ref_key(k): list(w) for k, w in widths.items()}}
        new = [to_ref(v) for v in (axes or {}).values()]
        if axes:
            params["axes"] = {_ref_key(k): str(to_ref(v)) for k, v in axes.items()}
        inf = infer("op:pad", {"tensor": [self.axes]}, params, {a.name: a for a in _declared(new)})
        pads = tuple(tuple(w) for w in inf.plan["pad"])
        return TensorDesc(
            self.dtype,
            inf.result,
            self.strides,
            self.offset,
            self.root,
            tuple((int(a), int(b)) for a, b in pads),
        )

    # -- reading a buffer --------------------------------------------------------------------

    def materialize(self, buffer: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The values this description reads from the root's flat ``buffer`` (a copy).

        >>> from geon.core.axes import Axis
        >>> t = TensorDesc.contiguous("float64", [Axis("H", 2), Axis("W", 3)])
        >>> t.transpose().materialize(np.arange(6.0)).tolist()
        [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        """
        flat = np.asarray(buffer).reshape(-1)
        if not self.pad_widths:
            return _gather(flat, self.shape, self.strides, self.offset)
        inner = tuple(n - a - b for n, (a, b) in zip(self.shape, self.pad_widths, strict=True))
        core = _gather(flat, inner, self.strides, self.offset)
        return np.pad(core, self.pad_widths)


def _gather(
    flat: np.ndarray[Any, Any], shape: Sequence[int], strides: Sequence[int], offset: int
) -> np.ndarray[Any, Any]:
    index = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        view = [1] * len(shape)
        view[d] = n
        index = index + (np.arange(n, dtype=np.int64) * s).reshape(view)
    return flat[index]


def _declared(refs: Iterable[Ref]) -> list[Axis]:
    out: list[Axis] = []
    for r in refs:
        out.extend(r.axes if isinstance(r, (AxisRef, CompositeRef)) else ())
    return out
