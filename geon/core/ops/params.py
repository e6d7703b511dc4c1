"""Reading an op's params: resolving axis names and refusing unknown keys (DESIGN.md §4's
params table, see :mod:`geon.core.ops`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from geon.core.axes import Axes, Axis, AxisRef, CompositeRef, Ref, quote_axes
from geon.core.errors import AxisError, KernelError


class Resolver:
    """Resolves reference strings in params against declarations and the operands' axes."""

    def __init__(
        self,
        declared: Mapping[str, Axis] | Callable[[str], Axis | None] | None,
        operands: Iterable[Axes],
    ) -> None:
        self._known: dict[str, Axis] = {}
        for axes in operands:
            for axis in axes.declared:
                self._known.setdefault(axis.name, axis)
        self._declared = declared

    def axis(self, name: str) -> Axis | None:
        if self._declared is not None:
            found = (
                self._declared.get(name)
                if isinstance(self._declared, Mapping)
                else self._declared(name)
            )
            if found is not None:
                return found
        return self._known.get(name)

    def ref(self, item: Any, what: str) -> Ref:
        if isinstance(item, Axis):
            return AxisRef(item, 0)
        if isinstance(item, (AxisRef, CompositeRef)):
            return item
        if not isinstance(item, str):
            raise KernelError(f'{what} has "{item!r}"; expected an axis reference such as "W-1"')
        return AxisRef.parse(item, self.axis)

    def refs(self, items: Any, what: str) -> list[Ref]:
        if not isinstance(items, (list, tuple)):
            raise KernelError(f'{what} is "{items!r}"; expected a list of axis references')
        return [self.ref(i, what) for i in items]


def params_object(params: Mapping[str, Any] | None, kname: str) -> Mapping[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise KernelError(f'{kname} params are "{params!r}"; expected a JSON object')
    return params


def only_params(params: Mapping[str, Any], allowed: tuple[str, ...], kname: str) -> None:
    for key in params:
        if key not in allowed:
            expected = quote_axes(allowed) if allowed else "no params"
            raise KernelError(f'{kname} has unknown param "{key}"; expected {expected}')


def ref_names(refs: Iterable[object]) -> list[str]:
    return [str(r) for r in refs]


def axes_of_input(refs: Sequence[Ref], a: Axes, what: str) -> None:
    """Refuse references in ``refs`` that are not axes of the input ``a`` (:class:`AxisError`)."""
    strangers = [r for r in refs if r not in a]
    if strangers:
        raise AxisError(
            f"{what} {quote_axes(strangers)} "
            + ("is not an axis" if len(strangers) == 1 else "are not axes")
            + f" of the input; expected axes from {quote_axes(a)}"
        )


def no_duplicates(refs: Sequence[Ref], what: str) -> None:
    seen: set[Ref] = set()
    for r in refs:
        if r in seen:
            raise AxisError(f'axis "{r}" appears twice in {what}; name each axis once')
        seen.add(r)
