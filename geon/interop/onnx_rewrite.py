"""Rewrites of the ONNX importer (:mod:`geon.interop.onnx_import`) before the mapping: PyTorch's
erf form of GELU folded into one ``Gelu`` node, and the dim groups of a ``Reshape``.
"""

from __future__ import annotations

from typing import Any

_Importer = Any  # geon.interop.onnx_import._Importer (imported there, not here: no cycle)


def reshape_groups(s: tuple[int, ...], so: tuple[int, ...]) -> list[tuple[list[int], list[int]]]:
    """Matching groups of a reshape's non-1 dims: input dims -> output dims of equal product.

    >>> reshape_groups((10, 2, 32), (10, 8, 8))
    [([0], [0]), ([1, 2], [1, 2])]
    """
    ins = [i for i, d in enumerate(s) if d != 1]
    outs = [j for j, d in enumerate(so) if d != 1]
    groups: list[tuple[list[int], list[int]]] = []
    a = b = 0
    while a < len(ins) and b < len(outs):
        gi, go = [ins[a]], [outs[b]]
        pi, po = s[ins[a]], so[outs[b]]
        a, b = a + 1, b + 1
        while pi != po:
            if pi < po and a < len(ins):
                gi.append(ins[a])
                pi *= s[ins[a]]
                a += 1
            elif po < pi and b < len(outs):
                go.append(outs[b])
                po *= so[outs[b]]
                b += 1
            else:
                raise _error(f"cannot reshape {s} to {so}: the sizes do not match")
        groups.append((gi, go))
    return groups


def _error(message: str) -> Exception:
    from geon.interop.onnx_common import OnnxImportError

    return OnnxImportError(message)


def gelu_patterns(imp: _Importer) -> None:
    """``x * 0.5 * (1 + erf(x / sqrt 2))`` (as PyTorch exports GELU) becomes one Gelu."""
    from onnx import helper

    users: dict[str, list[Any]] = {}
    for n in imp.nodes:
        for i in n.input:
            users.setdefault(i, []).append(n)

    def only(value: str, op: str) -> Any:
        us = users.get(value, [])
        return us[0] if len(us) == 1 and us[0].op_type == op else None

    def const_near(value: str, target: float) -> bool:
        c = imp.consts.get(value)
        return c is not None and c.size == 1 and abs(float(c.reshape(-1)[0]) - target) < 1e-3

    by_out = {o: n for n in imp.nodes for o in n.output}
    drop: set[int] = set()
    replace: dict[int, Any] = {}
    for erf in imp.nodes:
        if erf.op_type != "Erf":
            continue
        div = by_out.get(erf.input[0])
        add = only(erf.output[0], "Add")
        if div is None or div.op_type != "Div" or add is None:
            continue
        x = div.input[0]
        if not const_near(div.input[1], 2**0.5):
            continue
        if not any(const_near(i, 1.0) for i in add.input if i != erf.output[0]):
            continue
        m1 = only(add.output[0], "Mul")
        if m1 is None:
            continue
        m2 = only(m1.output[0], "Mul")
        halves = [i for i in (m1.input if x in m1.input else ()) if i not in (x, add.output[0])]
        if m2 is not None and x in m1.input and any(const_near(i, 0.5) for i in m2.input):
            last = m2
        elif any(const_near(i, 0.5) for i in halves):
            last = m1
        else:
            continue
        chain = [div, erf, add, m1] + ([m2] if last is m2 else [])
        if len(users.get(div.output[0], [])) != 1:
            continue
        for c in chain:
            drop.add(id(c))
        replace[id(last)] = helper.make_node(
            "Gelu", [x], [last.output[0]], name=last.name or erf.name
        )
    imp.nodes = [replace.get(id(n), n) for n in imp.nodes
                  if id(n) not in drop or id(n) in replace]  # fmt: skip


def einsum_terms(n: Any, ranks: list[int]) -> tuple[list[str], str]:
    """The letters of each operand and of the result of an ``Einsum`` node (explicit ``->``, no
    ellipsis, no letter twice in one term, one or two operands); refused otherwise.

    >>> from onnx import helper
    >>> einsum_terms(helper.make_node("Einsum", ["a", "b"], ["c"], equation="ij, jk"), [2, 2])
    (['ij', 'jk'], 'ik')
    """
    from onnx import helper

    eq = ""
    for a in n.attribute:
        if a.name == "equation":
            value = helper.get_attribute_value(a)
            eq = value.decode() if isinstance(value, bytes) else str(value)
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:  # implicit output: the letters used once, in alphabetical order
        letters = "".join(terms)
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    bad = (
        "..." in eq
        or len(terms) not in (1, 2)
        or len(terms) != len(ranks)
        or any(len(t) != r for t, r in zip(terms, ranks, strict=False))
        or any(len(set(t)) != len(t) for t in [*terms, rhs])
        or not set(rhs) <= set("".join(terms))
    )
    if bad:
        raise _error(
            f'Einsum "{n.name}" equation "{eq}" is refused; geon imports one or two operands '
            "with explicit letters, none repeated within a term (no ellipsis, no diagonal)"
        )
    return terms, rhs
