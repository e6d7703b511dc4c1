"""Tensor descriptions: strided views over a base buffer (DESIGN.md §2)."""

from __future__ import annotations

import numpy as np
import pytest

from geon.core.axes import Axis
from geon.core.errors import AxisError, ShapeError
from geon.core.tensors import TensorDesc, column_major_strides, row_major_strides

H, W, N = Axis("H", 2), Axis("W", 3), Axis("N", 4)
BUF = np.arange(24.0)
X = BUF.reshape(2, 3, 4)


def base() -> TensorDesc:
    return TensorDesc.contiguous("float64", [H, W, N])


def test_row_and_column_major_strides() -> None:
    assert row_major_strides((2, 3, 4)) == (12, 4, 1)
    assert column_major_strides((2, 3, 4)) == (1, 2, 6)
    t = TensorDesc.contiguous("float32", [H, W, N], order="F")
    assert t.strides == (1, 2, 6)
    assert (
        t.materialize(np.arange(24.0)).tolist()
        == np.arange(24.0).reshape((2, 3, 4), order="F").tolist()
    )


@pytest.mark.parametrize(
    ("view", "strides", "offset", "axes", "expected"),
    [
        (lambda t: t.transpose(), (1, 4, 12), 0, ("N-1", "W-1", "H-1"), X.transpose()),
        (
            lambda t: t.dimshuffle([N, H, W]),
            (1, 12, 4),
            0,
            ("N", "H", "W"),
            X.transpose(2, 0, 1),
        ),
        (
            lambda t: t.broadcast([Axis("B", 2), H, W, N]),
            (0, 12, 4, 1),
            0,
            ("B", "H", "W", "N"),
            np.broadcast_to(X, (2, 2, 3, 4)),
        ),
        (
            lambda t: t.slice({N: slice(1, 4, 2)}, axes={N: Axis("N2", 2)}),
            (12, 4, 2),
            1,
            ("H", "W", "N2"),
            X[:, :, 1:4:2],
        ),
        (lambda t: t.slice({W: 2}), (12, 1), 8, ("H", "N"), X[:, 2, :]),
        (
            lambda t: t.cast([H, Axis("V", 3), N]),
            (12, 4, 1),
            0,
            ("H", "V", "N"),
            X,
        ),
        (lambda t: t.flatten([W, N]), (12, 1), 0, ("H", "W*N"), X.reshape(2, 12)),
        (lambda t: t.flatten([W, N]).unflatten(), (12, 4, 1), 0, ("H", "W", "N"), X),
    ],
    ids=[
        "transpose",
        "dimshuffle",
        "broadcast",
        "slice-step",
        "slice-int",
        "cast",
        "flatten",
        "flatten-unflatten",
    ],
)
def test_views_are_strided(
    view: object, strides: tuple[int, ...], offset: int, axes: tuple[str, ...], expected: object
) -> None:
    # given a row-major tensor, when viewed, then strides/offset change and the values match NumPy
    t = base()
    v = view(t)  # type: ignore[operator]
    assert v.strides == strides
    assert v.offset == offset
    assert v.axes.names == axes
    assert v.base is t
    assert v.materialize(BUF).tolist() == np.asarray(expected).tolist()


def test_pad_is_a_complex_view() -> None:
    t = TensorDesc.contiguous("float64", [H, W])
    H4 = Axis("H4", 4)
    p = t.pad({H: (1, 1)}, axes={H: H4})
    assert p.axes.names == ("H4", "W")
    assert p.pad_widths == ((1, 1), (0, 0))
    assert p.strides == t.strides
    assert (
        p.materialize(np.arange(6.0)).tolist()
        == np.pad(np.arange(6.0).reshape(2, 3), ((1, 1), (0, 0))).tolist()
    )


def test_flatten_needs_contiguous_group() -> None:
    t = base().transpose()
    with pytest.raises(ShapeError) as e:
        t.flatten([N - 1, W - 1])
    assert str(e.value) == (
        "flatten of ['N-1', 'W-1'] needs them contiguous, but \"N-1\" has stride 1 and \"W-1\" "
        "stride 4 with length 3; copy first"
    )


def test_view_errors_come_from_the_kernel_rules() -> None:
    with pytest.raises(AxisError) as e:
        base().slice({N: slice(0, 2)})
    assert str(e.value) == (
        'slicing axis "N" changes its length from 4 to 2; name a new axis for it, '
        'e.g. axes={"N": "N2"}'
    )


def test_unknown_dtype() -> None:
    with pytest.raises(ShapeError) as e:
        TensorDesc.contiguous("float128", [H])
    assert str(e.value).startswith('dtype "float128" is unknown; expected one of (')


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: TensorDesc("float32", base().axes, (1, 2)),
            "2 strides for 3 axes (H, W, N); expected one stride per axis",
        ),
        (
            lambda: TensorDesc.contiguous("float32", [H], order="K"),  # type: ignore[arg-type]
            'order "K" is unknown; expected "C" or "F"',
        ),
        (
            lambda: (
                base()
                .pad({H: (1, 0)}, axes={H: Axis("H3", 3)})
                .pad({W: (1, 0)}, axes={W: Axis("W4", 4)})
            ),
            "cannot pad the padded tensor (H3, W, N) again; copy it first",
        ),
        (
            lambda: base().pad({H: (1, 0)}, axes={H: Axis("H3", 3)}).transpose(),
            "op:transpose cannot view a padded tensor (H3, W, N) without copying; copy it first",
        ),
    ],
    ids=["strides", "order", "pad-twice", "view-of-pad"],
)
def test_description_refusals(make: object, message: str) -> None:
    with pytest.raises(ShapeError) as e:
        make()  # type: ignore[operator]
    assert str(e.value) == message
