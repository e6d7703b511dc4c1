"""Training steps: reverse mode over the kernel catalogue and the optimizers (DESIGN.md §11).

>>> import numpy as np
>>> from geon import core as gc
>>> H = gc.Axis("H", 3)
>>> w = gc.variable([H], name="w")
>>> loss = gc.sum(gc.square(w), name="loss")
>>> step = training_step(gc.graph([loss]), optimizer="adam", lr=0.1)
>>> sorted(n.label for n in step.nodes if n.label and n.label.endswith(".next"))
['step.next', 'w.m.next', 'w.next', 'w.v.next']

Modules: :mod:`~geon.core.autodiff.forward` (a document as authoring handles, and merging new
nodes into it), :mod:`~geon.core.autodiff.rules` (one vector-Jacobian rule per kernel, with named
axes) and :mod:`~geon.core.autodiff.step` (reverse mode, the optimizers, :func:`training_step`).
See docs/training.md.
"""

from geon.core.autodiff.forward import AutodiffError, Forward, merge
from geon.core.autodiff.step import (
    OPTIMIZERS,
    Gradients,
    gradient_document,
    gradients,
    training_step,
)

__all__ = [
    "OPTIMIZERS",
    "AutodiffError",
    "Forward",
    "Gradients",
    "gradient_document",
    "gradients",
    "merge",
    "training_step",
]
