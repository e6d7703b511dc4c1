"""The array-API executor: logical and sharded runs of geon / LoomGraph documents.

>>> import numpy as np
>>> from geon import core as gc
>>> from geon.execute import run
>>> H, W = gc.Axis("H", 2), gc.Axis("W", 3)
>>> x = gc.placeholder(axes=[H, W], name="x")
>>> y = gc.relu(x - 1.0)
>>> result = run(gc.graph([y]), {"x": np.arange(6.0).reshape(2, 3)})
>>> result.outputs[y.id].tolist()
[[0.0, 0.0, 1.0], [2.0, 3.0, 4.0]]

Public surface: :func:`run` (what the CLI and the Celery task call), :func:`evaluate_graph`
(what ``gc.evaluate`` calls; the reference evaluator's contract), :func:`compile_graph` and
:class:`Plan` (compile once, run many times), :class:`Limits`, :func:`select_backend`,
:func:`plan_memory`, :func:`measure_moves` (what a sharded run moved between devices). See
``README.md`` in this package for the design.
"""

from __future__ import annotations

from geon.execute.backend import BACKENDS, Backend, available_backends, select_backend
from geon.execute.limits import Limits
from geon.execute.memory import Buffer, MemoryPlan, Slot, plan_memory
from geon.execute.plan import Plan, compile_graph
from geon.execute.program import Progress
from geon.execute.regions import TensorInfo
from geon.execute.runner import (
    Moved,
    RunResult,
    compile_run,
    evaluate_graph,
    generate_input,
    max_abs_diff,
    measure_moves,
    resolve_inputs,
    run,
    run_compiled,
    tensor_keys,
)

__all__ = [
    "BACKENDS",
    "Backend",
    "Buffer",
    "Limits",
    "MemoryPlan",
    "Moved",
    "Plan",
    "Progress",
    "RunResult",
    "Slot",
    "TensorInfo",
    "available_backends",
    "compile_graph",
    "compile_run",
    "evaluate_graph",
    "generate_input",
    "max_abs_diff",
    "measure_moves",
    "plan_memory",
    "resolve_inputs",
    "run",
    "run_compiled",
    "select_backend",
    "tensor_keys",
]
