"""The inference rule of ``op:conv2d``: axis roles, window lengths, stride and padding
(DESIGN.md §4: a conv window has ``shape`` = window and the stride in the projection).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from geon.core.axes import Axes, AxisRef, Ref, format_axes, quote_axes
from geon.core.errors import AxisError, KernelError, ShapeError
from geon.core.ops.catalogue import Kernel
from geon.core.ops.inference import Dim, Inference, Operands, make_inference
from geon.core.ops.params import Resolver, no_duplicates, only_params, ref_names


def _pair_ints(value: Any, name: str, default: int, minimum: int) -> tuple[int, int]:
    if value is None:
        return (default, default)
    pair = [value, value] if isinstance(value, int) and not isinstance(value, bool) else value
    if (
        not isinstance(pair, (list, tuple))
        or len(pair) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in pair)
    ):
        raise KernelError(
            f'op:conv2d {name} "{value!r}" is invalid; expected an integer >= {minimum} or '
            f"[height, width]"
        )
    return (int(pair[0]), int(pair[1]))


def _one_role(axes: Axes, role: str, what: str, exclude: Iterable[Ref] = ()) -> AxisRef:
    skip = set(exclude)
    found = [r for r in axes if isinstance(r, AxisRef) and role in r.roles and r not in skip]
    if len(found) != 1:
        got = "none" if not found else "several: " + format_axes(found)
        raise AxisError(
            f'op:conv2d {what} needs exactly one axis with role "{role}"; found {got} among '
            f"{format_axes(axes)}"
        )
    return found[0]


def infer_conv2d(
    k: Kernel,
    ins: Operands,
    x: Axes,
    f: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    only_params(p, ("out_axes", "stride", "padding"), k.name)
    stride = _pair_ints(p.get("stride"), "stride", 1, 1)
    padding = _pair_ints(p.get("padding"), "padding", 0, 0)
    if "out_axes" not in p:
        raise KernelError(
            'op:conv2d needs params "out_axes"; expected the output axes, e.g. ["K", "P", "Q", "N"]'
        )
    out = res.refs(p["out_axes"], 'op:conv2d params "out_axes"')
    no_duplicates(out, 'op:conv2d params "out_axes"')
    c = _one_role(x, "Channel", 'input "x"')
    h = _one_role(x, "Height", 'input "x"')
    w = _one_role(x, "Width", 'input "x"')
    batch = [r for r in x if r not in (c, h, w)]
    fc = [r for r in f if r == c.shift(-1) or r == c.shift(1)]
    if len(fc) != 1:
        raise AxisError(
            f'op:conv2d filter must carry the input\'s channel "{c}" as a dual ("{c.shift(-1)}" '
            f'or "{c.shift(1)}"); found {format_axes(f)}'
        )
    fh = _one_role(f, "Height", 'filter "filter"', exclude=fc)
    fw = _one_role(f, "Width", 'filter "filter"', exclude=fc)
    fk = _one_role(f, "Channelout", 'filter "filter"', exclude=fc)
    others = [r for r in f if r not in (fc[0], fh, fw, fk)]
    if others:
        raise AxisError(
            f"op:conv2d filter has unexpected axes {quote_axes(others)}; expected a dual of the "
            "channel and axes with roles Height, Width and Channelout"
        )
    for r in batch:
        if r not in out:
            raise AxisError(
                f'op:conv2d out_axes {quote_axes(out)} lack the input\'s batch axis "{r}"'
            )
    if fk not in out:
        raise AxisError(
            f'op:conv2d out_axes {quote_axes(out)} lack the filter\'s Channelout axis "{fk}"'
        )
    rest = Axes(tuple(r for r in out if r not in batch and r != fk))
    oh = _one_role(rest, "Height", "out_axes")
    ow = _one_role(rest, "Width", "out_axes")
    extra = [r for r in rest if r not in (oh, ow)]
    if extra:
        raise AxisError(
            f"op:conv2d out_axes have unexpected axes {quote_axes(extra)}; expected the batch "
            "axes, the Channelout axis and one Height and one Width axis"
        )
    for o, i, win, s, pad in (
        (oh, h, fh, stride[0], padding[0]),
        (ow, w, fw, stride[1], padding[1]),
    ):
        if i.length is None or win.length is None:
            continue
        n = (i.length + 2 * pad - win.length) // s + 1
        if n < 1:
            raise ShapeError(
                f'op:conv2d window "{win}" of length {win.length} is longer than "{i}" '
                f"(length {i.length}) plus padding {pad} on each side"
            )
        if o.length is not None and o.length != n:
            raise ShapeError(
                f'op:conv2d output axis "{o}" has length {o.length}; the window "{win}" '
                f'(length {win.length}) over "{i}" (length {i.length}) with stride {s} and '
                f"padding {pad} gives {n}"
            )
    result = Axes(tuple(out))
    col = {r: j for j, r in enumerate(result)}
    x_dims = []
    for r in x:
        if r == c:
            x_dims.append(Dim(extent=c))
        elif r == h:
            x_dims.append(Dim(terms=((col[oh], stride[0]),), offset=-padding[0], extent=fh))
        elif r == w:
            x_dims.append(Dim(terms=((col[ow], stride[1]),), offset=-padding[1], extent=fw))
        else:
            x_dims.append(Dim(terms=((col[r], 1),)))
    f_dims = tuple(Dim(terms=((col[r], 1),)) if r == fk else Dim(extent=r) for r in f)
    params = {
        "out_axes": ref_names(out),
        "stride": list(stride),
        "padding": list(padding),
    }
    plan = {
        "x": {"channel": x.index(c), "height": x.index(h), "width": x.index(w)},
        "filter": {
            "channel": f.index(fc[0]),
            "height": f.index(fh),
            "width": f.index(fw),
            "channelout": f.index(fk),
        },
        "out": {
            "channelout": result.index(fk),
            "height": result.index(oh),
            "width": result.index(ow),
            "batch": [result.index(r) for r in batch],
        },
        "batch": [x.index(r) for r in batch],
    }
    return make_inference(
        k, ins, result, result, params, {"x": [tuple(x_dims)], "filter": [f_dims]}, plan=plan
    )
