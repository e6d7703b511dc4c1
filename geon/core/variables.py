"""Variables: trainable parameters (DESIGN.md §11).

A ``Variable`` tag (``urn:geon:2026-11:tag_types.jsd#/tags/Variable``) marks a leaf Tensor as a
trainable parameter. Its value is ``{}`` (the variable is fed like an input) or
``{"init": {"kind": "zeros" | "ones" | "normal" | "uniform", "scale"?: number}}``: a variable
that a run is not given is then initialised, seeded, by that rule (``normal``: standard normal
times ``scale``, default 1; ``uniform``: uniform in ``[-scale, scale)``; ``zeros``/``ones``
ignore the scale).

>>> value = initial_value({"kind": "ones"}, (2,), "float32", seed=0, index=3)
>>> value.tolist(), value.dtype.name
([1.0, 1.0], 'float32')
>>> check_init({"kind": "glorot"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
geon.core.errors.GeonError: variable init kind "glorot" is unknown; expected one of ("zeros", ...

Each initialised variable draws from its own generator, seeded by ``(seed, tensor index)``, so a
variable's first value does not depend on which other variables were fed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from geon.core.dtypes import numpy_dtype
from geon.core.errors import GeonError
from geon.core.nodes import VARIABLE

__all__ = ["INIT_KINDS", "VARIABLE", "check_init", "initial_value", "is_variable"]

INIT_KINDS = ("zeros", "ones", "normal", "uniform")
MAX_SCALE = 1_000_000.0


def _kinds() -> str:
    return "(" + ", ".join(f'"{k}"' for k in INIT_KINDS) + ")"


def check_init(init: Any) -> dict[str, Any]:
    """``init`` as a Variable tag's ``init`` value, or :class:`GeonError` naming what is wrong."""
    if isinstance(init, str):
        init = {"kind": init}
    if not isinstance(init, Mapping):
        raise GeonError(
            f'variable init "{init!r}" is not a rule; expected a kind {_kinds()} or '
            '{"kind": ..., "scale": number}'
        )
    extra = sorted(set(init) - {"kind", "scale"})
    if extra:
        raise GeonError(f'variable init has unknown keys {extra}; expected "kind" and "scale"')
    kind = init.get("kind")
    if kind not in INIT_KINDS:
        raise GeonError(f'variable init kind "{kind}" is unknown; expected one of {_kinds()}')
    out: dict[str, Any] = {"kind": kind}
    if "scale" in init:
        scale = init["scale"]
        if (
            isinstance(scale, bool)
            or not isinstance(scale, (int, float))
            or not 0 <= scale <= MAX_SCALE
        ):
            raise GeonError(
                f'variable init scale "{scale!r}" is invalid; expected a number in [0, '
                f"{MAX_SCALE:g}]"
            )
        out["scale"] = float(scale)
    return out


def is_variable(tags: Mapping[str, Any] | None) -> bool:
    """Whether a node's tags mark it as a variable."""
    return bool(tags) and isinstance(tags.get(VARIABLE), Mapping)  # type: ignore[union-attr]


def initial_value(
    init: Mapping[str, Any], shape: tuple[int, ...], dtype: str, *, seed: int, index: int
) -> np.ndarray[Any, Any]:
    """The first value of a variable by its ``init`` rule (seeded by ``(seed, index)``)."""
    rule = check_init(init)
    dt = numpy_dtype(dtype)
    scale = float(rule.get("scale", 1.0))
    kind = rule["kind"]
    if kind == "zeros":
        return np.zeros(shape, dtype=dt)
    if kind == "ones":
        return np.ones(shape, dtype=dt)
    rng = np.random.default_rng((int(seed), int(index)))
    if kind == "normal":
        return (rng.standard_normal(shape) * scale).astype(dt)
    return rng.uniform(-scale, scale, size=shape).astype(dt)
