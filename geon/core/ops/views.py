"""Inference rules of the view kernels: cast_axes, broadcast, dimshuffle, transpose, slice, pad,
flatten and unflatten (DESIGN.md §2, §4: views move no data, or only a window of it).

>>> from geon.core.axes import Axes, Axis
>>> from geon.core.ops import infer
>>> H, W = Axis("H", 2), Axis("W", 3)
>>> str(infer("op:transpose", {"tensor": [Axes.of([H, W])]}).result)
'(W-1, H-1)'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from geon.core.axes import Axes, CompositeRef, Ref, format_axes, quote_axes
from geon.core.errors import AxisError, KernelError, ShapeError
from geon.core.ops.catalogue import Kernel
from geon.core.ops.inference import Dim, Inference, Operands, identity_dims, make_inference
from geon.core.ops.params import Resolver, no_duplicates, only_params, ref_names


def _view_axes(p: Mapping[str, Any], k: Kernel, res: Resolver) -> list[Ref]:
    only_params(p, k.params, k.name)
    if "axes" not in p:
        raise KernelError(f'{k.name} needs params "axes"; expected a list of axis references')
    refs = res.refs(p["axes"], f'{k.name} params "axes"')
    no_duplicates(refs, f'{k.name} params "axes"')
    return refs


def _cast_axes(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    new = _view_axes(p, k, res)
    if len(new) != len(a):
        raise AxisError(
            f"cast_axes to {quote_axes(new)} has {len(new)} axes but the input {format_axes(a)} "
            f"has {len(a)}; name one new axis per input axis"
        )
    for old, r in zip(a, new, strict=True):
        if old.length is not None and r.length is not None and old.length != r.length:
            raise ShapeError(
                f'cast_axes cannot relabel "{old}" (length {old.length}) as "{r}" (length '
                f"{r.length}); the lengths must agree position by position"
            )
    result = Axes(tuple(new))
    return make_inference(
        k, ins, result, result, {"axes": ref_names(new)}, {"tensor": [identity_dims(len(a))]}
    )


def _reordered(k: Kernel, ins: Operands, a: Axes, new: Sequence[Ref]) -> Inference:
    """A view whose result axes are ``new`` and whose input dims follow them by identity."""
    result = Axes(tuple(new))
    dims = tuple(Dim(terms=((result.index(r), 1),)) for r in a)
    return make_inference(k, ins, result, result, {"axes": ref_names(new)}, {"tensor": [dims]})


def _broadcast(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    new = _view_axes(p, k, res)
    missing = [r for r in a if r not in new]
    if missing:
        raise AxisError(
            f"broadcast to {quote_axes(new)} is missing the input's {quote_axes(missing)}; "
            "the target axes must include every input axis"
        )
    return _reordered(k, ins, a, new)


def _dimshuffle(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    new = _view_axes(p, k, res)
    missing = [r for r in a if r not in new]
    extra = [r for r in new if r not in a]
    if missing or extra:
        raise AxisError(
            f"dimshuffle to {quote_axes(new)} is not an order of the input {quote_axes(a)}"
            + (f"; missing {quote_axes(missing)}" if missing else "")
            + (f"; not in the input {quote_axes(extra)}" if extra else "")
        )
    return _reordered(k, ins, a, new)


def _transpose(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    only_params(p, k.params, k.name)
    result = a.T
    n = len(a)
    dims = tuple(Dim(terms=((n - 1 - i, 1),)) for i in range(n))
    return make_inference(k, ins, result, result, {}, {"tensor": [dims]})


def _renames(k: Kernel, p: Mapping[str, Any], a: Axes, res: Resolver) -> dict[Ref, Ref]:
    raw = p.get("axes", {})
    if not isinstance(raw, Mapping):
        raise KernelError(
            f'{k.name} params "axes" is "{raw!r}"; expected an object mapping old axis to new'
        )
    out: dict[Ref, Ref] = {}
    for old_s, new_s in raw.items():
        old = res.ref(old_s, f'{k.name} params "axes"')
        if old not in a:
            raise AxisError(
                f'{k.name} renames "{old}", which is not an axis of the input; expected one of '
                f"{quote_axes(a)}"
            )
        out[old] = res.ref(new_s, f'{k.name} params "axes"')
    return out


def _new_axis(k: Kernel, old: Ref, new_len: int, renames: Mapping[Ref, Ref], example: str) -> Ref:
    new = renames.get(old)
    if new is None:
        if old.length is not None and old.length != new_len:
            verb = "slicing" if k.name == "op:slice" else "padding"
            raise AxisError(
                f'{verb} axis "{old}" changes its length from {old.length} to {new_len}; name a '
                f'new axis for it, e.g. axes={{"{old}": "{example}"}}'
            )
        return old
    if new.length is not None and new.length != new_len:
        raise ShapeError(
            f'{k.name} maps axis "{old}" to "{new}" of length {new.length}, but the result has '
            f'{new_len} elements along it; declare "{new}" with length {new_len}'
        )
    return new


def _slice(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    only_params(p, k.params, k.name)
    raw = p.get("slices")
    if not isinstance(raw, Mapping):
        raise KernelError(
            f'{k.name} params "slices" is "{raw!r}"; expected an object such as '
            '{"H": {"start": 0, "stop": 2, "step": 1}} or {"H": 0}'
        )
    specs: dict[Ref, tuple[int, int, int] | int] = {}
    for name, spec in raw.items():
        ref = res.ref(name, f'{k.name} params "slices"')
        if ref not in a:
            raise AxisError(
                f'op:slice slices "{ref}", which is not an axis of the input; expected one of '
                f"{quote_axes(a)}"
            )
        length = ref.length
        if isinstance(spec, int) and not isinstance(spec, bool):
            if length is not None and not -length <= spec < length:
                raise ShapeError(
                    f'op:slice index {spec} is out of range for axis "{ref}" of length {length}; '
                    f"expected {-length} <= index < {length}"
                )
            specs[ref] = spec if spec >= 0 or length is None else spec + length
            continue
        if not isinstance(spec, Mapping) or any(
            key not in ("start", "stop", "step") for key in spec
        ):
            raise KernelError(
                f'op:slice spec "{spec!r}" for axis "{ref}" is invalid; expected an integer or '
                '{"start", "stop", "step"}'
            )
        parts = [spec.get("start"), spec.get("stop"), spec.get("step")]
        for v in parts:
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise KernelError(
                    f'op:slice spec "{spec!r}" for axis "{ref}" has "{v!r}"; expected integers '
                    "or null"
                )
        if parts[2] == 0:
            raise KernelError(f'op:slice step for axis "{ref}" is 0; expected a nonzero integer')
        if length is None:
            raise ShapeError(
                f'op:slice cannot slice axis "{ref}" before it has a length; bind it first'
            )
        specs[ref] = slice(*parts).indices(length)
    renames = _renames(k, p, a, res)
    for old in renames:
        if old not in specs:
            raise AxisError(
                f'op:slice renames "{old}" but does not slice it; rename axes with cast_axes'
            )
    result: list[Ref] = []
    for r in a:
        spec = specs.get(r)
        if isinstance(spec, int):
            if r in renames:
                raise AxisError(
                    f'op:slice drops axis "{r}" with an integer index, so it cannot be renamed'
                )
            continue
        if spec is None:
            result.append(r)
            continue
        n = len(range(*spec))
        if n == 0:
            raise ShapeError(f'op:slice selects no elements of axis "{r}"; an axis has length >= 1')
        result.append(_new_axis(k, r, n, renames, f"{r}{n}"))
    out = Axes(tuple(result))
    dims: list[Dim] = []
    col = 0
    canon: dict[str, Any] = {}
    for r in a:
        spec = specs.get(r)
        if isinstance(spec, int):
            dims.append(Dim(offset=spec))
            canon[str(r)] = spec
        elif spec is None:
            dims.append(Dim(terms=((col, 1),)))
            col += 1
        else:
            start, _, step = spec
            dims.append(Dim(terms=((col, step),), offset=start))
            n = len(range(*spec))
            stop = start + step * n
            # a negative step running past 0 stops "before the start" — null, not -1
            canon[str(r)] = {"start": start, "stop": stop if stop >= 0 else None, "step": step}
            col += 1
    params: dict[str, Any] = {"slices": canon}
    if renames:
        params["axes"] = {str(o): str(n) for o, n in renames.items()}
    plan = {"slices": [specs.get(r) for r in a]}
    return make_inference(k, ins, out, out, params, {"tensor": [tuple(dims)]}, plan=plan)


def _pad(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    only_params(p, k.params, k.name)
    raw = p.get("pad")
    if not isinstance(raw, Mapping):
        raise KernelError(
            f'op:pad params "pad" is "{raw!r}"; expected an object such as {{"H": [1, 1]}}'
        )
    widths: dict[Ref, tuple[int, int]] = {}
    for name, w in raw.items():
        ref = res.ref(name, 'op:pad params "pad"')
        if ref not in a:
            raise AxisError(
                f'op:pad pads "{ref}", which is not an axis of the input; expected one of '
                f"{quote_axes(a)}"
            )
        if (
            not isinstance(w, (list, tuple))
            or len(w) != 2
            or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in w)
        ):
            raise KernelError(
                f'op:pad widths "{w!r}" for axis "{ref}" are invalid; expected [before, after] '
                "with integers >= 0"
            )
        if ref.length is None:
            raise ShapeError(f'op:pad cannot pad axis "{ref}" before it has a length; bind it')
        widths[ref] = (int(w[0]), int(w[1]))
    renames = _renames(k, p, a, res)
    result: list[Ref] = []
    for r in a:
        if r in widths:
            n = (r.length or 0) + sum(widths[r])
            result.append(_new_axis(k, r, n, renames, f"{r}{n}"))
        elif r in renames:
            raise AxisError(f'op:pad renames "{r}" but does not pad it; rename with cast_axes')
        else:
            result.append(r)
    out = Axes(tuple(result))
    dims = tuple(
        Dim(terms=((i, 1),), offset=-widths[r][0] if r in widths else 0) for i, r in enumerate(a)
    )
    params: dict[str, Any] = {"pad": {str(r): list(w) for r, w in widths.items()}}
    if renames:
        params["axes"] = {str(o): str(n) for o, n in renames.items()}
    plan = {"pad": [list(widths.get(r, (0, 0))) for r in a]}
    return make_inference(k, ins, out, out, params, {"tensor": [dims]}, plan=plan)


def _flatten(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    group = _view_axes(p, k, res)
    if len(group) < 2:
        raise AxisError(
            f"flatten needs at least two adjacent axes; got {quote_axes(group)} from "
            f"{format_axes(a)}"
        )
    strangers = [r for r in group if r not in a]
    if strangers:
        raise AxisError(
            f"flatten axes {quote_axes(strangers)} are not axes of the input; expected adjacent "
            f"axes from {quote_axes(a)}"
        )
    first = a.index(group[0])
    if list(a[first : first + len(group)]) != group:
        raise AxisError(
            f"flatten axes {quote_axes(group)} are not adjacent in this order in "
            f"{format_axes(a)}; dimshuffle them next to each other first"
        )
    comp = CompositeRef.of(group)
    result = Axes((*a[:first], comp, *a[first + len(group) :]))
    out_dims: list[Dim] = [Dim(terms=((i, 1),)) for i in range(first)]
    out_dims.append(Dim(merged=tuple((first + j, ref) for j, ref in enumerate(group))))
    out_dims += [Dim(terms=((i, 1),)) for i in range(first + len(group), len(a))]
    return make_inference(
        k,
        ins,
        result,
        a,
        {"axes": ref_names(group)},
        {"tensor": [identity_dims(len(a))]},
        out_dims=tuple(out_dims),
        plan={"first": first, "count": len(group)},
    )


def _unflatten(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    only_params(p, k.params, k.name)
    if "axes" in p:
        chosen = res.refs(p["axes"], 'op:unflatten params "axes"')
        for r in chosen:
            if not isinstance(r, CompositeRef) or r not in a:
                comps = [c for c in a if isinstance(c, CompositeRef)]
                raise AxisError(
                    f'unflatten axis "{r}" is not a composite axis of the input; expected one of '
                    f"{quote_axes(comps)}"
                )
    else:
        chosen = [r for r in a if isinstance(r, CompositeRef)]
        if not chosen:
            raise AxisError(
                f"unflatten found no composite axis (such as H*W) in {format_axes(a)}; flatten "
                "first"
            )
    result: list[Ref] = []
    for r in a:
        if r in chosen and isinstance(r, CompositeRef):
            result.extend(r.parts)
        else:
            result.append(r)
    out = Axes(tuple(result))
    dims: list[Dim] = []
    for r in a:
        if r in chosen and isinstance(r, CompositeRef):
            dims.append(Dim(merged=tuple((out.index(part), part) for part in r.parts)))
        else:
            dims.append(Dim(terms=((out.index(r), 1),)))
    return make_inference(k, ins, out, out, {"axes": ref_names(chosen)}, {"tensor": [tuple(dims)]})


ViewRule = Callable[
    [Kernel, Operands, Axes, Mapping[str, Any], Resolver],
    Inference,
]

VIEW_RULES: dict[str, ViewRule] = {
    "op:cast_axes": _cast_axes,
    "op:broadcast": _broadcast,
    "op:dimshuffle": _dimshuffle,
    "op:transpose": _transpose,
    "op:slice": _slice,
    "op:pad": _pad,
    "op:flatten": _flatten,
    "op:unflatten": _unflatten,
}
