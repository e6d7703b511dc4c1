"""geon's axis constraints (AxisDeclarations, TensorAxesAgreement, OperationAxesInference,
KernelSignatureAgreement), registered with the checker in :mod:`geon.core.constraints`."""

from __future__ import annotations

from geon.core.issues import Constraint

CONSTRAINTS: tuple[Constraint, ...] = ()
