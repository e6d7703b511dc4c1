"""The inference rules of ``op:conv2d`` and the pooling kernels ``op:max_pool2d`` and
``op:avg_pool2d``: axis roles, window lengths, stride and padding (DESIGN.md §4: a conv window has
``shape`` = window and the stride in the projection).

>>> from geon.core.axes import Axes, Axis
>>> from geon.core.ops import infer
>>> C, H = Axis("C", 2), Axis("H", 6, roles="Height")
>>> W, P, Q = Axis("W", 6, roles="Width"), Axis("P", 3, roles="Height"), Axis("Q", 3, roles="Width")
>>> inf = infer("op:max_pool2d", {"tensor": [Axes.of([C, H, W])]},
...             {"out_axes": ["C", "P", "Q"], "kernel_size": 2}, {"P": P, "Q": Q})
>>> entry = inf.signature()["inputs"]["tensor"][0]
>>> inf.params["stride"], entry["affineMap"]["projection"], entry["shape"]
([2, 2], [[1, 0, 0], [0, 2, 0], [0, 0, 2]], [1, 2, 2])

A pooling window reads ``kernel_size`` cells of the input's Height and Width axes from
``stride * out - padding``: the same derived projection as a conv window, so a pooled op split
over its output Height reads overlapping input rows (halos). The other input axes (batch,
channels) pass through one to one and must all be in ``out_axes``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from geon.core.axes import Axes, AxisRef, Ref, format_axes, quote_axes
from geon.core.errors import AxisError, KernelError, ShapeError
from geon.core.ops.catalogue import Kernel
from geon.core.ops.inference import Dim, Inference, Operands, make_inference
from geon.core.ops.params import Resolver, no_duplicates, only_params, ref_names


def _pair_ints(
    value: Any, name: str, default: int | tuple[int, int], minimum: int, kname: str = "op:conv2d"
) -> tuple[int, int]:
    if value is None:
        return default if isinstance(default, tuple) else (default, default)
    pair = [value, value] if isinstance(value, int) and not isinstance(value, bool) else value
    if (
        not isinstance(pair, (list, tuple))
        or len(pair) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in pair)
    ):
        raise KernelError(
            f'{kname} params "{name}" is "{value!r}"; expected an integer >= {minimum} or '
            f"[height, width]"
        )
    return (int(pair[0]), int(pair[1]))


def _one_role(
    axes: Axes, role: str, what: str, exclude: Iterable[Ref] = (), kname: str = "op:conv2d"
) -> AxisRef:
    skip = set(exclude)
    found = [r for r in axes if isinstance(r, AxisRef) and role in r.roles and r not in skip]
    if len(found) != 1:
        got = "none" if not found else "several: " + format_axes(found)
        raise AxisError(
            f'{kname} {what} needs exactly one axis with role "{role}"; found {got} among '
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
    only_params(p, k.params, k.name)
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
        if win.length is not None:
            named = (
                f'window "{win}" of length {win.length}',
                f'the window "{win}" (length {win.length})',
            )
            _check_window("op:conv2d", o, i, win.length, s, pad, named)
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


def _check_window(
    kname: str, o: AxisRef, i: AxisRef, win: int, s: int, pad: int, named: tuple[str, str]
) -> None:
    """The one rule of a window's output length (conv2d's and the pools'): ``(len(i) + 2·pad -
    win) // s + 1`` must be at least 1, and ``o``'s length when it has one; ``named`` is how
    the window reads in the two messages."""
    if i.length is None:
        return
    n = (i.length + 2 * pad - win) // s + 1
    if n < 1:
        raise ShapeError(
            f'{kname} {named[0]} is longer than "{i}" (length {i.length}) plus padding {pad} on '
            "each side"
        )
    if o.length is not None and o.length != n:
        raise ShapeError(
            f'{kname} output axis "{o}" has length {o.length}; {named[1]} over "{i}" (length '
            f"{i.length}) with stride {s} and padding {pad} gives {n}"
        )


def _pool_options(kname: str, p: Mapping[str, Any]) -> None:
    """Refuse ``dilation`` other than 1 and ``ceil_mode`` other than false, naming the value."""
    if "dilation" in p and _pair_ints(p["dilation"], "dilation", 1, 1, kname) != (1, 1):
        raise KernelError(
            f'{kname} params "dilation" is "{p["dilation"]!r}"; geon pools with dilation 1 only '
            "(windows of adjacent cells)"
        )
    if "ceil_mode" in p and p["ceil_mode"] is not False:
        raise KernelError(
            f'{kname} params "ceil_mode" is "{p["ceil_mode"]!r}"; geon pools with ceil_mode '
            "false only (the output length rounds down: (length + 2*padding - kernel_size) "
            "// stride + 1)"
        )


def infer_pool2d(
    k: Kernel, ins: Operands, x: Axes, p: Mapping[str, Any], res: Resolver
) -> Inference:
    """``op:max_pool2d`` / ``op:avg_pool2d`` over the input's Height and Width axes (roles).

    Params: ``out_axes`` (the result axes: the input's other axes and one new Height and Width
    axis), ``kernel_size`` (n or [kh, kw]), ``stride`` (default ``kernel_size``, as PyTorch's),
    ``padding`` (default 0, each less than the window so every window holds an input cell), for
    avg ``count_include_pad`` (default true, as PyTorch's: padded cells count in the divisor).
    """
    kname = k.name
    avg = kname == "op:avg_pool2d"
    only_params(p, k.params, kname)
    _pool_options(kname, p)
    if "kernel_size" not in p:
        raise KernelError(f'{kname} needs params "kernel_size"; expected an integer or [kh, kw]')
    size = _pair_ints(p["kernel_size"], "kernel_size", 1, 1, kname)
    stride = _pair_ints(p.get("stride"), "stride", size, 1, kname)
    padding = _pair_ints(p.get("padding"), "padding", 0, 0, kname)
    for pad, win in zip(padding, size, strict=True):
        if pad >= win:
            raise KernelError(
                f'{kname} padding "{list(padding)}" is not less than kernel_size "{list(size)}"; '
                "expected padding < kernel_size, so every window holds a cell of the input"
            )
    include = p.get("count_include_pad", True)
    if avg and not isinstance(include, bool):
        raise KernelError(
            f'{kname} params "count_include_pad" is "{include!r}"; expected true or false'
        )
    if "out_axes" not in p:
        raise KernelError(
            f'{kname} needs params "out_axes"; expected the output axes, e.g. ["N", "C", "P", "Q"]'
        )
    out = res.refs(p["out_axes"], f'{kname} params "out_axes"')
    no_duplicates(out, f'{kname} params "out_axes"')
    h = _one_role(x, "Height", 'input "tensor"', kname=kname)
    w = _one_role(x, "Width", 'input "tensor"', kname=kname)
    kept = [r for r in x if r not in (h, w)]
    for r in kept:
        if r not in out:
            raise AxisError(f'{kname} out_axes {quote_axes(out)} lack the input\'s axis "{r}"')
    rest = Axes(tuple(r for r in out if r not in kept))
    oh = _one_role(rest, "Height", "out_axes", kname=kname)
    ow = _one_role(rest, "Width", "out_axes", kname=kname)
    extra = [r for r in rest if r not in (oh, ow)]
    if extra:
        raise AxisError(
            f"{kname} out_axes have unexpected axes {quote_axes(extra)}; expected the input's "
            "axes other than Height and Width, and one Height and one Width axis"
        )
    for o, i, win, s, pad in ((oh, h, size[0], stride[0], padding[0]),
                              (ow, w, size[1], stride[1], padding[1])):  # fmt: skip
        _check_window(kname, o, i, win, s, pad, (f"window of length {win}", f"a window of {win}"))
    result = Axes(tuple(out))
    col = {r: j for j, r in enumerate(result)}
    dims = []
    for r in x:
        if r == h:
            dims.append(Dim(terms=((col[oh], stride[0]),), offset=-padding[0], extent=size[0]))
        elif r == w:
            dims.append(Dim(terms=((col[ow], stride[1]),), offset=-padding[1], extent=size[1]))
        else:
            dims.append(Dim(terms=((col[r], 1),)))
    params: dict[str, Any] = {
        "out_axes": ref_names(out),
        "kernel_size": list(size),
        "stride": list(stride),
        "padding": list(padding),
    }
    if avg:
        params["count_include_pad"] = include
    plan = {
        "height": x.index(h),
        "width": x.index(w),
        "out": [col[r] for r in x if r not in (h, w)],
        "out_height": result.index(oh),
        "out_width": result.index(ow),
    }
    return make_inference(k, ins, result, result, params, {"tensor": [tuple(dims)]}, plan=plan)
