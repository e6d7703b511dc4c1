"""Inference rules of the arithmetic families: elementwise (n-ary, binary, unary), dot and
reductions (DESIGN.md §2: result axes, dual-level contraction, reduction axes).

>>> from geon.core.axes import Axes, Axis
>>> from geon.core.ops import infer
>>> H, W = Axis("H", 2), Axis("W", 3)
>>> str(infer("op:sum", {"tensor": [Axes.of([H, W])]}, {"out_axes": ["W"]}).result)
'(W)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from geon.core.axes import Axes, AxisRef, Ref, quote_axes
from geon.core.errors import AxisError, KernelError
from geon.core.ops.catalogue import Kernel
from geon.core.ops.inference import Dim, Inference, Operands, identity_dims, make_inference
from geon.core.ops.params import Resolver, axes_of_input, no_duplicates, only_params, ref_names

GELU_FORMS = ("none", "tanh")
"""``op:gelu``'s ``approximate`` param, as PyTorch names it: the exact erf form or the tanh one."""


def infer_unary(k: Kernel, ins: Operands, a: Axes, p: Mapping[str, Any]) -> Inference:
    """A unary kernel keeps its operand's axes; only ``op:gelu`` has a param (``approximate``).

    >>> from geon.core.axes import Axis
    >>> from geon.core.ops import infer
    >>> infer("op:gelu", {"tensor": [Axes.of([Axis("H", 2)])]}).params
    {'approximate': 'none'}
    """
    params: dict[str, Any] = {}
    if k.name == "op:gelu":
        only_params(p, k.params, k.name)
        form = p.get("approximate", "none")
        if not isinstance(form, str) or form not in GELU_FORMS:
            raise KernelError(
                f'op:gelu params "approximate" is "{form!r}"; expected "none" (the exact erf form) '
                'or "tanh"'
            )
        params["approximate"] = form
    else:
        only_params(p, k.params, k.name)
    return make_inference(k, ins, a, a, params, {"tensor": [identity_dims(len(a))]})


def infer_elementwise(
    k: Kernel,
    ins: Operands,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    only_params(p, k.params, k.name)
    operands = [a for _, group in ins for a in group]
    result: list[Ref] = list(operands[0])
    maps: list[list[int]] = [list(range(len(result)))]
    for axes in operands[1:]:
        before = len(result)
        claimed = {r for r in axes if r in result}
        m: list[int] = []
        for r in axes:
            if r in result:
                m.append(result.index(r))
                continue
            found = None
            if isinstance(r, AxisRef) and r.cls is not None:
                for i in range(before):
                    a = result[i]
                    if (
                        isinstance(a, AxisRef)
                        and a.axis != r.axis
                        and a.cls == r.cls
                        and a.length is not None
                        and a.length == r.length
                        and a not in claimed
                    ):
                        found = i
                        break
            if found is None:
                result.append(r)
                m.append(len(result) - 1)
            else:
                claimed.add(result[found])
                m.append(found)
        maps.append(m)
    params: dict[str, Any] = {}
    order = result_order(k, result, p, res)
    if order is not None:
        perm = [order.index(r) for r in result]
        maps = [[perm[i] for i in m] for m in maps]
        result = order
        params["axes"] = ref_names(order)
    out = Axes(tuple(result))
    in_dims: dict[str, list[tuple[Dim, ...]]] = {}
    it = iter(maps)
    for key, group in ins:
        in_dims[key] = [tuple(Dim(terms=((c, 1),)) for c in next(it)) for _ in group]
    return make_inference(k, ins, out, out, params, in_dims, plan={"align": maps})


def result_order(
    k: Kernel, result: Sequence[Ref], p: Mapping[str, Any], res: Resolver
) -> list[Ref] | None:
    """``params.axes``: another order of the inferred ``result`` axes (None when not given);
    an :class:`AxisError` names what is missing from it or not in the result."""
    if "axes" not in p:
        return None
    order = res.refs(p["axes"], f'{k.name} params "axes"')
    no_duplicates(order, f'{k.name} params "axes"')
    missing = [r for r in result if r not in order]
    extra = [r for r in order if r not in result]
    if missing or extra:
        raise AxisError(
            f"{k.name} params axes {quote_axes(order)} are not an order of the result axes "
            f"{quote_axes(result)}"
            + (f"; missing {quote_axes(missing)}" if missing else "")
            + (f"; not in the result {quote_axes(extra)}" if extra else "")
        )
    return list(order)


def infer_dot(
    k: Kernel,
    ins: Operands,
    x: Axes,
    y: Axes,
    p: Mapping[str, Any] | None = None,
    res: Resolver | None = None,
) -> Inference:
    """``op:dot``: pairs each axis with its dual across the operands and sums over them; the
    result is x's free axes then y's (y's first when y holds every lower level), or
    ``params.axes``, another order of them."""
    # Pair x's A^k with y's A^(k+1) or A^(k-1); record which side holds the lower level.
    pairs: list[tuple[int, int, str]] = []  # (x dim, y dim, "x" | "y": side of the lower level)
    y_partner: dict[int, int] = {}
    for i, a in enumerate(x):
        found = [(j, b) for j, b in enumerate(y) if b == a.shift(1) or b == a.shift(-1)]
        if len(found) > 1:
            raise AxisError(
                f'axis "{a}" of x could pair with both {quote_axes(b for _, b in found)} of y; '
                f'keep only one of them, e.g. "{found[0][1]}"'
            )
        if found:
            j, b = found[0]
            if j in y_partner:
                raise AxisError(
                    f'axis "{b}" of y could pair with both "{x[y_partner[j]]}" and "{a}" of x; '
                    f'keep only one of them, e.g. "{x[y_partner[j]]}"'
                )
            y_partner[j] = i
            pairs.append((i, j, "x" if b == a.shift(1) else "y"))
    paired_x = {i for i, _, _ in pairs}
    paired_y = {j for _, j, _ in pairs}
    free_x = [a for i, a in enumerate(x) if i not in paired_x]
    free_y = [b for j, b in enumerate(y) if j not in paired_y]
    for a in free_x:
        if a in free_y:
            raise AxisError(
                f'axis "{a}" appears in both operands at level {a.level}; mark one side as a '
                f"dual, e.g. {a.shift(-1)}"
            )
    sides = {s for _, _, s in pairs}
    if len(sides) > 1:
        lx = next((i, j) for i, j, s in pairs if s == "x")
        ly = next((i, j) for i, j, s in pairs if s == "y")
        raise AxisError(
            f'dot pairs disagree on which operand holds the lower level: "{x[lx[0]]}" of x pairs '
            f'with "{y[lx[1]]}" of y, but "{y[ly[1]]}" of y pairs with "{x[ly[0]]}" of x; put '
            f'every lower level on one side, e.g. write "{y[ly[1]]}" in x and "{x[ly[0]]}" in y'
        )
    y_first = sides == {"y"}
    result = Axes(tuple(free_y + free_x) if y_first else tuple(free_x + free_y))
    params: dict[str, Any] = {}
    order = result_order(k, list(result), p, res) if p and res is not None else None
    if order is not None:
        result = Axes(tuple(order))
        params["axes"] = ref_names(order)
    col = {r: c for c, r in enumerate(result)}
    x_dims = tuple(
        Dim(extent=a) if i in paired_x else Dim(terms=((col[a], 1),)) for i, a in enumerate(x)
    )
    y_dims = tuple(
        Dim(extent=b) if j in paired_y else Dim(terms=((col[b], 1),)) for j, b in enumerate(y)
    )
    plan = {"pairs": [[i, j] for i, j, _ in pairs], "lower": "y" if y_first else "x"}
    dims = {"x": [x_dims], "y": [y_dims]}
    return make_inference(k, ins, result, result, params, dims, plan=plan)


def infer_reduction(
    k: Kernel,
    ins: Operands,
    a: Axes,
    p: Mapping[str, Any],
    res: Resolver,
) -> Inference:
    """sum, prod, max, min, mean over ``reduction_axes`` (or onto ``out_axes``).

    With ``params.parts = {"axis": R, "into": P}`` (``R`` one of the reduced axes) it is the
    *partial* reduction of a plan that splits ``R`` (:mod:`geon.core.plans.contract`): the result
    leads with ``P``, and the dim of ``R`` reads ``len(R) / len(P)`` elements from ``chunk·p``,
    so the same reduction over ``P`` gives the whole one (for mean too: the parts are equal).

    >>> from geon.core.axes import Axis
    >>> from geon.core.ops import infer
    >>> N, R, P = Axis("N", 2), Axis("R", 6), Axis("R_over_tp", 3)
    >>> inf = infer("op:sum", {"tensor": [Axes.of([N, R])]},
    ...             {"reduction_axes": ["R"], "parts": {"axis": "R", "into": "R_over_tp"}},
    ...             {"R_over_tp": P})
    >>> str(inf.result), inf.signature()["inputs"]["tensor"][0]["affineMap"]["projection"]
    ('(R_over_tp, N)', [[0, 1], [2, 0]])
    """
    only_params(p, k.params, k.name)
    red = (
        res.refs(p["reduction_axes"], f"{k.name} reduction_axes") if "reduction_axes" in p else None
    )
    out = res.refs(p["out_axes"], f"{k.name} out_axes") if "out_axes" in p else None
    for name, group in (("reduction_axes", red), ("out_axes", out)):
        if group is None:
            continue
        no_duplicates(group, f"{k.name} {name}")
        axes_of_input(group, a, f"{k.name} {name}")
    if red is not None and out is not None:
        both = [r for r in red if r in out]
        if both:
            raise AxisError(
                f"{k.name} axes {quote_axes(both)} appear in both reduction_axes and out_axes; "
                "each input axis goes to exactly one of them"
            )
        neither = [r for r in a if r not in red and r not in out]
        if neither:
            raise AxisError(
                f"{k.name} input axes {quote_axes(neither)} are in neither reduction_axes nor "
                "out_axes; each input axis goes to exactly one of them"
            )
    if out is None:
        reduced = list(a) if red is None else red
        out = [r for r in a if r not in reduced]
    else:
        reduced = [r for r in a if r not in out]
    result = Axes(tuple(out))
    dims = tuple(Dim(terms=((result.index(r), 1),)) if r in result else Dim(extent=r) for r in a)
    params: dict[str, Any] = {
        "reduction_axes": ref_names(r for r in a if r in reduced),
        "out_axes": ref_names(out),
    }
    plan: dict[str, Any] = {"reduced": [i for i, r in enumerate(a) if r not in result]}
    if "parts" not in p:
        return make_inference(k, ins, result, result, params, {"tensor": [dims]}, plan=plan)
    name = _parts_spec(k, p, "reduced")["axis"]
    split = next(
        (i for i in plan["reduced"] if isinstance(a[i], AxisRef) and a[i].axis.name == name), None
    )
    if split is None:
        raise AxisError(
            f'{k.name} parts axis "{name}" is not reduced by this operation; expected one of '
            f"{quote_axes([a[i] for i in plan['reduced']])}"
        )
    into, chunk = _parts_of(k, p, res, a[split].length, result)
    parts = Axes((into, *result))
    params["parts"] = {"axis": name, "into": str(into)}
    plan["parts"] = {"dim": split, "chunk": chunk}
    return make_inference(
        k, ins, parts, parts, params, {"tensor": [_shifted(dims, split, chunk)]}, plan=plan
    )


def _parts_spec(k: Kernel, p: Mapping[str, Any], split: str) -> Mapping[str, Any]:
    """``params.parts`` of a partial dot or reduction, checked for shape (``split`` says what
    kind of axis it splits: contracted or reduced)."""
    parts = p.get("parts")
    if not isinstance(parts, Mapping) or set(parts) != {"axis", "into"}:
        raise KernelError(
            f'{k.name} params "parts" is "{parts!r}"; expected {{"axis": {split} axis name, '
            '"into": the declared axis counting the parts}'
        )
    return parts


def _parts_of(
    k: Kernel, p: Mapping[str, Any], res: Resolver, length: int | None, result: Axes
) -> tuple[AxisRef, int]:
    """The parts axis of ``params.parts`` (a new plain axis, not in ``result``) and the chunk
    each part reads of the split axis of ``length``: the parts count must divide it."""
    parts = p["parts"]
    into = res.ref(parts["into"], f'{k.name} params "parts" "into"')
    if not isinstance(into, AxisRef) or into.axis.name in {
        r.axis.name for r in result if isinstance(r, AxisRef)
    }:
        raise AxisError(f'{k.name} parts axis "{into}" must be a new plain axis of its own')
    count = into.length
    if length is None or count is None or count < 1 or length % count:
        raise KernelError(
            f'{k.name} cannot split "{parts["axis"]}" of length {length} into {count} equal '
            "parts; the parts count must divide the length"
        )
    return into, length // count


def _shifted(dims: tuple[Dim, ...], split: int, chunk: int) -> tuple[Dim, ...]:
    """An operand's dims under a parts axis put first: dim ``split`` reads ``chunk`` elements
    from ``chunk·p``, the others follow the result's columns one further on."""
    part = Dim(terms=((0, chunk),), extent=chunk)
    return tuple(
        part if n == split else Dim(terms=tuple((c + 1, s) for c, s in d.terms), extent=d.extent)
        for n, d in enumerate(dims)
    )


def infer_dot_partial(
    k: Kernel, ins: Operands, x: Axes, y: Axes, p: Mapping[str, Any], res: Resolver
) -> Inference:
    """``op:dot_partial``: the dot's partial products over equal parts of one contracted axis.

    ``params.parts = {"axis": F, "into": P}`` names the contracted axis ``F`` (its name; the pair
    holding it) and the declared axis ``P`` counting the parts. The index space and the result are
    ``(P, <the dot's result axes>)``; the operand dims of ``F`` read ``chunk = len(F) / len(P)``
    elements starting at ``chunk·p`` (row coefficient ``chunk``, shape ``chunk``), so summing the
    result over ``P`` gives the dot (:mod:`geon.core.plans.contract` writes that pair).

    >>> from geon.core.axes import Axis
    >>> from geon.core.ops import infer
    >>> N, F, P = Axis("N", 2), Axis("F", 6), Axis("F_over_tp", 3)
    >>> inf = infer("op:dot_partial", {"x": [Axes.of([N, F])], "y": [Axes.of([F - 1])]},
    ...             {"parts": {"axis": "F", "into": "F_over_tp"}}, {"F_over_tp": P})
    >>> str(inf.result), inf.signature()["inputs"]["x"][0]["affineMap"]["projection"]
    ('(F_over_tp, N)', [[0, 1], [2, 0]])
    """
    only_params(p, k.params, k.name)
    name = _parts_spec(k, p, "contracted")["axis"]
    base = infer_dot(k, ins, x, y)
    pair = next(
        (
            (i, j)
            for i, j in base.plan["pairs"]
            if isinstance(x[i], AxisRef) and x[i].axis.name == name
        ),
        None,
    )
    if pair is None:
        contracted = [str(x[i]) for i, _ in base.plan["pairs"]]
        raise AxisError(
            f'{k.name} parts axis "{name}" is not contracted by this dot; expected one of '
            f"{quote_axes(contracted)}"
        )
    into, chunk = _parts_of(k, p, res, x[pair[0]].length, base.result)
    result = Axes((into, *base.result))
    dims = {
        "x": [_shifted(base.operand_dims("x"), pair[0], chunk)],
        "y": [_shifted(base.operand_dims("y"), pair[1], chunk)],
    }
    plan = {**base.plan, "parts": {"x": pair[0], "y": pair[1], "chunk": chunk}}
    params = {"parts": {"axis": name, "into": str(into)}}
    return make_inference(k, ins, result, result, params, dims, plan=plan)
