"""Engines that run a placed document, side by side with the logical NumPy run (DESIGN.md §10,
docs/engines.md): the JAX engine's run beside the logical one, as ``geon run --engine jax`` and the
worker's JAX runs both ask for it. Above :mod:`geon.execute` and :mod:`geon.interop` (which never
import each other), below the command line and the Django apps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from geon.core.errors import GeonError
from geon.core.graph import Graph

if TYPE_CHECKING:
    from geon.interop.jax_engine import JaxRun

__all__ = ["run_on_jax"]


def run_on_jax(
    graph: Graph, inputs: dict[str, np.ndarray[Any, Any]] | None, seed: int | None
) -> tuple[dict[str, Any], JaxRun]:
    """``graph`` run logically on NumPy and under its plan on JAX with the same inputs: the
    summary (outputs, ``max_abs_diff`` by key, devices, compile and run seconds) and the JAX
    run (outputs by key, the compiled program's text). :class:`GeonError` when jax is missing
    or the program is refused."""
    from geon.execute import compile_graph, max_abs_diff, resolve_inputs, run_compiled, tensor_keys
    from geon.interop.jax_engine import require_jax, run_jax

    require_jax()
    plan = compile_graph(graph)
    host = resolve_inputs(plan, inputs, seed)
    keys = tensor_keys(plan.tensors)
    logical = run_compiled(plan, None, {plan.tensors[t].id: a for t, a in host.items()})
    done = run_jax(graph, {keys[t]: a for t, a in host.items()})
    expected = logical.by_key()
    diffs = {}
    for key, value in expected.items():
        got = done.outputs.get(key)
        if got is None or got.shape != value.shape:
            raise GeonError(f'the JAX program gave no output "{key}" of shape {value.shape}')
        diffs[key] = max_abs_diff(got.astype(value.dtype), value)
    summary = logical.summary()
    return {
        "engine": "jax",
        "outputs": summary["outputs"],
        "max_abs_diff": diffs,
        "devices": done.devices,
        "compileSeconds": done.compile_seconds,
        "runSeconds": done.run_seconds,
    }, done
